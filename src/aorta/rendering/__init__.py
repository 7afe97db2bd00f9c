"""The render kit: escaping, numbers, tables, JSON, HTML pages and SVG charts, from plain values
to text or lines, for every command that reports. The bottom layer: it imports nothing else
from aorta."""

from __future__ import annotations

from aorta.rendering.escape import h, href, md_block, md_code, md_text
from aorta.rendering.json_doc import json_text
from aorta.rendering.numbers import (fmt, fmt_interval, fmt_p, fmt_ratio, fmt_with_unit, signed,
                                     spread, spread_text, unit_of)
from aorta.rendering.page import PAGE_END, page_open
from aorta.rendering.short_names import short_name, short_names
from aorta.rendering.tables import html_cells, html_table, md_table, text_table

__all__ = ["h", "href", "md_text", "md_code", "md_block", "json_text", "fmt", "fmt_with_unit",
           "signed", "spread", "spread_text", "fmt_ratio", "fmt_interval", "fmt_p", "unit_of",
           "page_open", "PAGE_END", "short_name", "short_names", "text_table", "md_table",
           "html_table", "html_cells"]
