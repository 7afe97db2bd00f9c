"""The chrome of aorta's self-contained HTML pages (the run report, the history): the head,
the inlined stylesheet, the end. No script, and no file or font is fetched."""

from __future__ import annotations

from aorta.rendering.escape import h

PAGE_END = ["</body>", "</html>"]

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:14px;color:#1a1a1a;
 margin:24px auto;max-width:1180px;padding:0 16px;line-height:1.4}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;
 padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
nav{margin:8px 0 4px;font-size:13px}a{color:#1f5fa8}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #ddd;padding:3px 8px;
 text-align:left;vertical-align:top}th{background:#f6f6f6;font-weight:600}
table.kv th{width:150px}table.metrics td{white-space:nowrap}
td.bad{background:#fde2e1;font-weight:600}td.warn,.warn{background:#fff4d6}td.none{color:#999}
.scroll{overflow-x:auto}small{color:#555}
.lead{font-size:15px;color:#333;margin:2px 0 8px}
.status{font-size:13px;padding:2px 8px;border-radius:10px;vertical-align:middle;
 background:#eee;color:#333}
.status.complete{background:#dff3e1;color:#17622a}.status.interrupted,.status.running,
.status.unknown{background:#fff1c7;color:#7a5200}
.verdict{padding:1px 6px;border-radius:8px;font-size:12px;background:#eee}
.verdict.pass{background:#dff3e1;color:#17622a}.verdict.fail{background:#fde2e1;color:#9c1c17}
.verdict.error{background:#f3e1fd;color:#5e1c9c}.verdict.missing{background:#fff1c7;color:#7a5200}
ul.warnings{padding-left:18px}ul.warnings li{margin:3px 0}
.tag{font-size:11px;text-transform:uppercase;background:#fff1c7;color:#7a5200;padding:1px 5px;
 border-radius:4px}
.ok{color:#17622a}
.failure{border-left:4px solid #d9534f;padding:2px 12px;margin:10px 0;background:#fffafa}
pre{background:#f7f7f7;border:1px solid #e3e3e3;padding:8px;overflow-x:auto;max-height:420px;
 font-size:12px;white-space:pre-wrap;word-break:break-all}
figure{margin:10px 0 18px}.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));
 gap:4px 28px}svg.chart{max-width:100%;height:auto;display:block}
details summary{cursor:pointer;margin:6px 0}
"""


def page_open(title: str, extra_css: str = "") -> list[str]:
    """The page's first lines, through `<body>`: its `<title>` and the inlined stylesheet."""
    return ["<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{h(title)}</title>", f"<style>{CSS}{extra_css}</style>", "</head>",
            "<body>"]
