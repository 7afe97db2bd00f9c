"""The report as Markdown, for terminals and pull requests: the HTML page's sections, with
trial values written out where the page draws them."""

from __future__ import annotations

from aorta.rendering import (fmt, fmt_with_unit, md_block, md_code, md_table, md_text, spread_text,
                             unit_of)
from aorta.report.model import Failure, Report
from aorta.report.sections import (ALL_PASSED, CELL_HEAD, NO_FIGURE, NO_KERNELS, OVERHEAD_HEAD,
                                   OVERHEAD_NOTE, PATHS_NOTE, SECTIONS, TRIAL_HEAD, capture_text,
                                   cell_flags, chart_note, failure_facts, header_rows,
                                   overhead_rows, repeats_text, verdict_counts, wall_median)


def render_markdown(report: Report) -> str:
    lines = [f"# aorta report: {md_text(report.header.run)}", "", md_text(verdict_counts(report))]
    bodies = {"run": _header(report), "warnings": _warnings(report), "cells": _cells(report),
              "metrics": _metrics(report), "overhead": _overhead(report),
              "plots": _distributions(report), "kernels": _kernels(report),
              "failures": _failures(report), "trials": _trials(report)}
    for key, heading in SECTIONS:
        body = bodies[key]
        if body is not None:
            lines += ["", f"## {heading}", "", *body]
    return "\n".join(lines) + "\n"


def _header(report: Report) -> list[str]:
    h = report.header
    lines = [f"- {key}: {md_code(value)}" for key, value in header_rows(h)]
    if len(h.gpus) > 1 or any(g.index for g in h.gpus):
        lines += [f"  - GPU {md_text(g.index or '?')}: {md_text(g.name)}, driver "
                  f"{md_text(g.driver or '-')}, memory {md_text(g.memory or '-')}"
                  for g in h.gpus]
    return lines


def _warnings(report: Report) -> list[str]:
    if not report.warnings:
        return ["None."]
    return [f"- [{n.kind}] " + (f"{md_code(n.cell)}: " if n.cell else "") + md_text(n.message)
            for n in report.warnings]


def _cells(report: Report) -> list[str]:
    rows = [(md_code(c.name), str(c.planned), str(c.passed), str(c.failed), str(c.errored),
             str(c.missing), wall_median(c), md_text(capture_text(c)),
             md_text(", ".join(cell_flags(c)))) for c in report.cells]
    return md_table(CELL_HEAD, rows, "lrrrrrr")


def _metrics(report: Report) -> list[str]:
    lines = ["Over passing trials: median [min–max] ±standard deviation (n trials).", ""]
    if not report.metrics:
        return lines + [NO_FIGURE]
    rows = [(md_code(key), unit_of(key) or "-",
             *(spread_text(m.median, m.min, m.max, m.std, m.n) if m else "-"
               for m in (c.metrics.get(key) for c in report.cells))) for key in report.metrics]
    head = ("metric", "unit", *(md_code(c.name) for c in report.cells))
    return lines + md_table(head, rows, "ll" + "r" * len(report.cells))


def _overhead(report: Report) -> list[str] | None:
    rows = overhead_rows(report)
    if not rows:
        return None
    return [OVERHEAD_NOTE, "",
            *md_table(OVERHEAD_HEAD, [(md_code(r[0]), md_code(r[1]), *r[2:]) for r in rows],
                      "llrrrlr")]


def _distributions(report: Report) -> list[str]:
    lines = ["Each passing trial's value, by trial index."]
    for key in report.metrics:
        unit = unit_of(key)
        lines += ["", f"{md_code(key)}" + (f" ({unit})" if unit else "") + ":", ""]
        for c in report.cells:
            for m, label in ((c.metrics.get(key), ""), (c.baseline.get(key), " (baseline)")):
                if m:
                    values = ", ".join(f"{p.trial}: {fmt(p.value)}" for p in m.points)
                    lines.append(f"- {md_code(c.name)}{label}: {values}")
    return lines


def _kernels(report: Report) -> list[str]:
    lines = ["Median total time per passing trial; a trial whose table does not list an entry "
             "counts as 0 ms."]
    charts = [(c, chart) for c in report.cells for chart in c.kernels]
    if not charts:
        return lines + ["", NO_KERNELS]
    for cell, chart in charts:
        rows = [(str(rank), md_code(bar.name), fmt(bar.median_ms), fmt(bar.calls),
                 f"{bar.trials}/{chart.trials}") for rank, bar in enumerate(chart.bars, 1)]
        lines += ["", f"### {md_text(cell.name)}: {md_text(chart.table)} ({chart_note(chart)})",
                  "", *md_table(("#", "name", "median ms", "calls", "listed in"), rows, "rlrrr")]
    return lines


def _failures(report: Report) -> list[str]:
    return [line for f in report.failures for line in (*_failure(f), "")] or [ALL_PASSED]


def _failure(f: Failure) -> list[str]:
    facts = failure_facts(f)
    also = f" (and {repeats_text(f)})" if f.repeats else ""
    lines = [f"### {f.verdict}: {md_text(f.cell)}/{f.name}{also}", "",
             md_text(f.reason) + (f" ({facts})" if facts else "")]
    if f.captures:
        lines += ["", *(f"- {md_text(c)} capture {md_text(state)}"
                        for c, state in f.captures.items())]
    lines += ["", "Artifacts: " + (", ".join(md_code(p) for p in f.files.values()) or "none")]
    if f.stdout_tail:     # stderr had no line to read; the payload printed its error there
        return lines + ["", "End of stdout (stderr had no line to read):", "",
                        *md_block(f.stdout_tail.rstrip("\n"))]
    if f.stderr_tail:
        return lines + ["", "End of stderr:", "", *md_block(f.stderr_tail.rstrip("\n"))]
    return lines + ["", "stderr was empty." if f.stderr_tail == "" else "No stderr was kept."]


def _trials(report: Report) -> list[str]:
    rows = [(md_code(t.dir.rstrip("/")), t.verdict, fmt_with_unit(t.wall_s, "s"),
             md_text(t.reason), ", ".join(md_code(label) for label in t.files) or "-")
            for c in report.cells for t in c.trials]
    return [PATHS_NOTE, "", *md_table(TRIAL_HEAD, rows, "llr")]
