"""The fast path of `aorta`: exactly well-formed invocations of the commands that run no trial,
answered without importing click (whose import alone costs three bare Python starts).

Handled here, and nothing else:

    aorta --help | -h            aorta CMD [SUB] --help | -h      aorta --version
    aorta env [--json]           aorta sweep status RUN_DIR [--json]

Everything else returns None and `aorta.cli.main` hands it to the click group unchanged: any
other command or word, an option given twice or as `--opt=value`, a RUN_DIR shaped like a flag
or naming a file, `_AORTA_COMPLETE` (shell completion), a terminal narrower than 80 columns or
COLUMNS set (click would wrap help differently), `aorta env` on a terminal without --json (a
rich table), output click would re-encode or strip (non-ASCII on a non-UTF-8 stdout, ANSI
escapes). A command that raises falls through too, so click reports its error its own way.
The texts printed are click's: help comes from the snapshot `help_texts` (regenerated and
checked against click by `help_render` and tests/cli/test_light_path.py); the commands'
output comes from the same functions their click commands call.
"""

from __future__ import annotations

import os
import sys

from aorta.errors import EXIT_INTERRUPTED, EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["light_main"]

Answer = tuple[str, int]          # (everything printed on stdout, exit code)
_HELP = ("--help", "-h")


def light_main(argv: list[str]) -> int | None:
    """Answer `argv` and return the exit code, or None when click must answer it."""
    if "_AORTA_COMPLETE" in os.environ or sys.stdout is None:
        return None
    handler = _route(argv)
    if handler is None:
        return None
    try:
        answer = handler()
    except KeyboardInterrupt:
        sys.stderr.write("\naorta: interrupted\n")   # click's blank line, then the message
        sys.stderr.flush()
        return EXIT_INTERRUPTED
    except Exception:  # click reruns the command and reports the error as it always does
        return None
    if answer is None or not _prints_as_click(answer[0]):
        return None
    sys.stdout.write(answer[0])
    sys.stdout.flush()
    return answer[1]


def _route(argv: list[str]) -> Callable[[], Answer | None] | None:
    if argv == ["--version"]:
        return _version
    if argv and argv[-1] in _HELP:
        return _help(tuple(argv[:-1]))
    if argv[:1] == ["env"] and argv[1:] in ([], ["--json"]):
        return lambda: _env(argv[1:] == ["--json"])
    if argv[:2] == ["sweep", "status"]:
        return _sweep_status(argv[2:])
    return None


def _version() -> Answer:
    from aorta import __version__

    return f"aorta, version {__version__}\n", EXIT_OK


def _help(path: tuple[str, ...]) -> Callable[[], Answer | None] | None:
    from aorta.cli.help_texts import HELP

    if path not in HELP or _help_width() != 78:
        return None
    return lambda: (HELP[path], EXIT_OK)


def _help_width() -> int:
    """The width click wraps help at: `shutil.get_terminal_size()` clipped to 80, minus 2;
    0 (unknown) when COLUMNS or LINES is set, which the fast path leaves to click."""
    if "COLUMNS" in os.environ or "LINES" in os.environ:
        return 0
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 80
    return max(min(columns or 80, 80) - 2, 50)


def _env(as_json: bool) -> Answer | None:
    if not as_json and sys.stdout.isatty():
        return None                       # the terminal table is rich's
    import json

    from aorta.envsnap import snapshot

    return json.dumps(snapshot(), indent=2) + "\n", EXIT_OK


def _sweep_status(rest: list[str]) -> Callable[[], Answer | None] | None:
    as_json = "--json" in rest
    words = [w for w in rest if w != "--json"]
    if len(words) != 1 or len(rest) - len(words) > 1:
        return None
    run_dir = words[0]
    if not run_dir or run_dir.startswith("-") or os.path.isfile(run_dir):
        return None                       # click parses or refuses these
    from pathlib import Path

    from aorta.cli.sweep_status_text import status_text

    return lambda: (status_text(Path(run_dir), as_json), EXIT_OK)


def _prints_as_click(text: str) -> bool:
    """click.echo writes `text` to this stdout unchanged: no ANSI escape for it to strip, and
    ASCII or a UTF-8 stream (click re-wraps an ASCII-configured one)."""
    if "\x1b" in text:
        return False
    if text.isascii():
        return True
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    if encoding != "utf8":
        return False
    try:
        text.encode("utf-8", getattr(sys.stdout, "errors", None) or "strict")
    except UnicodeError:
        return False
    return True
