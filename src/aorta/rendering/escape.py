"""One escaping rule per format for run text (names, reasons, stderr): payload output is
untrusted. Markdown renderers pass HTML through, so the Markdown helpers escape `<>&` too,
and every helper shows control characters escaped (`base.names.visible`): a kernel name
cannot drive the terminal that prints a report or reorder what a reader sees."""

from __future__ import annotations

import re
from html import escape
from urllib.parse import quote

from aorta.base.names import visible

# `_` only where it can start or end emphasis: `__new__` would read as a bold "new", while
# `wall_s` stays as written.
_MD_SPECIAL = re.compile(r"[\\`*\[\]|~]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_HTML_SPECIAL = re.compile(r"[<>&]")
_ENTITIES = str.maketrans({"<": "&lt;", ">": "&gt;", "&": "&amp;"})
# Inside a `<code>` element Markdown still reads links, images and emphasis: all entities.
_CODE_ENTITIES = _ENTITIES | str.maketrans({c: f"&#{ord(c)};" for c in "|`[]*_\\!"})


def h(text: object) -> str:
    """Text for an HTML element or a quoted attribute value (quotes escaped too)."""
    return escape(visible(str(text)), quote=True)


def href(base: str, path: str) -> str:
    """A relative link's attribute value: `base` + `path`, percent-encoded but for `/`."""
    return h(quote(base + path, safe="/"))


def md_text(text: str) -> str:
    """Text on one line, with Markdown's and HTML's active characters escaped."""
    flat = _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), visible(" ".join(str(text).split())))
    return flat.translate(_ENTITIES)


def md_code(text: str) -> str:
    """An inline code span that survives backticks, pipes and HTML in `text`: a `<code>` element
    when it holds `<`, `>` or `&`, else backticks longer than any run of them inside."""
    flat = visible(" ".join(str(text).split()))
    if _HTML_SPECIAL.search(flat):
        return "<code>" + flat.translate(_CODE_ENTITIES) + "</code>"
    flat = flat.replace("|", "\\|")
    ticks = "`" * (_longest_backtick_run(flat) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def md_block(text: str) -> list[str]:
    """A block of text shown as written (a fence), or as an escaped `<pre>` when it holds
    `<`, `>` or `&`, which some renderers would otherwise take for HTML."""
    text = visible(text)
    if _HTML_SPECIAL.search(text):
        return ["<pre>" + text.translate(_ENTITIES) + "</pre>"]
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return [fence + "text", text, fence]


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)
