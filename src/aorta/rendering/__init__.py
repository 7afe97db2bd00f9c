"""The render kit: how aorta writes what it read, for every command that reports (report,
compare, history, the sweep's summaries).

One rule per format for escaping run-derived text (`escape`), one way to write numbers
(`numbers`), tables for text, Markdown and HTML (`tables`), strict JSON (`json_doc`), the
chrome of the HTML pages (`page`), inline SVG charts (`svg`, `trend`) and kernel names short
enough for a column (`short_names`). Callers compute first and hand plain values here; every
function returns text or lines. The bottom layer: it imports nothing else from aorta.
"""

from __future__ import annotations

from aorta.rendering.escape import h, href, md_block, md_code, md_text
from aorta.rendering.json_doc import json_text
from aorta.rendering.numbers import (fmt, fmt_interval, fmt_p, fmt_ratio, fmt_with_unit, signed,
                                     spread, spread_text, unit_of)
from aorta.rendering.page import PAGE_END, page_open
from aorta.rendering.short_names import short_name, short_names
from aorta.rendering.tables import html_table, md_table, text_table

__all__ = ["h", "href", "md_text", "md_code", "md_block", "json_text", "fmt", "fmt_with_unit",
           "signed", "spread", "spread_text", "fmt_ratio", "fmt_interval", "fmt_p", "unit_of",
           "page_open", "PAGE_END", "short_name", "short_names", "text_table", "md_table",
           "html_table"]
