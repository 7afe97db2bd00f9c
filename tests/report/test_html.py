"""The HTML page: self-contained, escaped, and every link leads to a file of the run."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

from aorta.store.records import Capture
from aorta.report import build_report, render_html, write_html, write_report
from report_helpers import HOSTILE, kernels, trial


class _Tags(HTMLParser):
    """Every start tag with its attributes, and the page's visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    parser.close()
    return parser


def test_page_has_no_external_reference_and_no_script(real_run: Path) -> None:
    page = write_report(real_run).read_text()
    tags = _parse(page).tags
    assert not [t for t, _ in tags if t in ("script", "link", "img", "iframe", "object")]
    refs = [a.get(k) or "" for _, a in tags for k in ("src", "href") if k in a]
    assert refs and not [r for r in refs if re.match(r"(?i)\s*([a-z]+:|//)", r)]
    assert "url(" not in page and "@import" not in page


def test_every_artifact_link_resolves_inside_the_run(real_run: Path) -> None:
    page = write_report(real_run).read_text()
    parsed = _parse(page)
    ids = {a["id"] for _, a in parsed.tags if a.get("id")}
    links = [a["href"] or "" for t, a in parsed.tags if t == "a" and "href" in a]
    for href in links:
        if href.startswith("#"):
            assert href[1:] in ids, href
        else:
            target = (real_run / unquote(href)).resolve()
            assert target.exists() and real_run.resolve() in target.parents, href
    assert sum(not h.startswith("#") for h in links) >= 9 * 4   # logs and dirs of 9 trials


def test_hostile_payload_text_is_escaped(make_run) -> None:
    hostile_kernel = '<img src="http://evil.example/x.png" onerror="alert(1)">'
    run_dir = make_run({"a": [
        trial("a", 0, metrics={"nsys_kernels": kernels((hostile_kernel, 1, 2.0))}),
        trial("a", 1, "fail", stderr_tail=HOSTILE,
              captures={"nsys": Capture("unparsed", "<marquee>bad</marquee> csv")}),
    ]})
    page = write_report(run_dir).read_text()
    parsed = _parse(page)
    assert not [t for t, _ in parsed.tags if t in ("script", "img", "marquee")]
    assert not [a for _, a in parsed.tags if any(k.startswith("on") for k in a)]
    text = "".join(parsed.text)
    assert "<script>alert('x')</script>" in text          # shown, as text
    assert hostile_kernel in text or hostile_kernel[:40] in text
    assert "<marquee>bad</marquee> csv" in text
    assert "\x1b" not in page


def test_svg_charts_are_well_formed_and_carry_hover_values(real_run: Path) -> None:
    page = render_html(build_report(real_run))
    charts = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    assert len(charts) >= 8   # 7 metrics with values, plus kernel bars per passing cell
    for chart in charts:
        root = ET.fromstring(chart)
        assert root.get("viewBox")
    strip = next(c for c in charts if "wall_s (s)" in c)
    titles = [t.text for t in ET.fromstring(strip).iter("title")]
    assert any(t and t.startswith("c1024 trial_0: ") and t.endswith(" s") for t in titles)
    assert "c4096" in strip and "bad" not in re.findall(r">([^<]+)</text>", strip)


def test_page_content(real_run: Path) -> None:
    text = "".join(_parse(render_html(build_report(real_run))).text)
    for expected in ("python3 softmax.py", "NVIDIA H200", "580.159.04", "torch", "2.11.0",
                     "triton", "3.6.0", "CUDA", "13.0", "proton_gpu_time_ms", "softmax_kernel",
                     "--rows must be in 1..1048576", "trial_1, trial_2 the same way",
                     "proton capture missing", "6/9 trials passed"):
        assert expected in text, expected


def test_page_written_elsewhere_links_back_to_the_run(real_run: Path, tmp_path: Path) -> None:
    target = write_html(build_report(real_run), real_run, tmp_path / "out" / "r.html")
    hrefs = [a["href"] for t, a in _parse(target.read_text()).tags
             if t == "a" and not (a.get("href") or "#").startswith("#")]
    assert hrefs and all((target.parent / unquote(h or "")).exists() for h in hrefs)


def test_interrupted_run_page(make_run) -> None:
    run_dir = make_run({"a": [trial("a", 0), None]}, status="interrupted")
    text = "".join(_parse(render_html(build_report(run_dir))).text)
    assert "interrupted" in text and "1 of 2 planned trial(s) have no result" in text
    assert "not run yet" in text


def test_no_passing_trial_at_all(make_run) -> None:
    run_dir = make_run({"a": [trial("a", 0, "fail", stderr_tail="boom")]})
    text = "".join(_parse(render_html(build_report(run_dir))).text)
    assert "No trial passed" in text and "boom" in text


def test_overhead_section_and_its_link_only_with_baseline_trials(make_run) -> None:
    plain = render_html(build_report(make_run({"a": [trial("a", 0)]}, name="plain")))
    assert 'href="#overhead"' not in plain and 'id="overhead"' not in plain
    run_dir = make_run({"a": [trial("a", i, wall_s=2.0) for i in range(3)]}, name="based",
                       baseline={"a": [trial("a", i, wall_s=1.0, baseline=True)
                                       for i in range(3)]})
    page = render_html(build_report(run_dir))
    assert '<a href="#overhead">Overhead</a>' in page and '<section id="overhead">' in page
