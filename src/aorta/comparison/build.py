"""Compute a comparison: pair cells, then judge every shared metric and kernel; nothing here
prints or reads files. Each row is measured on its own (medians, exact interval, rank test),
its p adjusted across rows under `--correction` once all are known, then decided. Without a
correction a row's verdict depends on its own samples only, not on which rows were compared.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from statistics import median
from typing import Any

from aorta.base.errors import UserError
from aorta.comparison.kinds import metric_kind
from aorta.comparison.load import CellSamples, LoadedRun, TrialTable, pair_cells
from aorta.comparison.model import CellComparison, CompareSettings, Comparison, Row
from aorta.comparison.names import normalise
from aorta.comparison.verdict import Judgement, Measurement, decide, measure
from aorta.parsers.demangle import demangle_all
from aorta.rendering import fmt
from aorta.stats.family import adjust
from aorta.stats.rank_test import can_reach


@dataclass(frozen=True)
class _Pending:
    """A row awaiting its verdict: its measurement, the Row's other fields, extra notes."""

    measured: Measurement | Judgement
    fields: dict[str, Any]
    notes: tuple[str, ...] = ()

    def row(self, j: Judgement) -> Row:
        note = "; ".join(([j.note] if j.note else []) + list(self.notes))
        return Row(**self.fields, **j._replace(note=note)._asdict())


def compare_runs(base: LoadedRun, new: LoadedRun, settings: CompareSettings) -> Comparison:
    """Compare two loaded runs. Raises UserError for nothing to compare (no common cell, no
    passing trial on both sides of any cell, or an asked-for metric neither side has)."""
    pairs = pair_cells(base, new)
    if not any(b.trials.passed and n.trials.passed for _, b, n in pairs):
        raise UserError("nothing to compare: no cell has a passing trial in both runs ("
                        + "; ".join(f"{label}: base {b.trials.passed}, new {n.trials.passed} "
                                    f"passed" for label, b, n in pairs) + ")")
    known = sorted({m for _, b, n in pairs for m in b.metrics if m in n.metrics})
    for metric in settings.metrics:
        if metric not in known:
            raise UserError(f"--metric {metric}: no compared cell has it in both runs; "
                            f"metrics both have: {', '.join(known) or '(none)'}")
    notes = []
    if not (base.ref.cell or new.ref.cell):
        for side, mine, theirs in (("base", base, new), ("new", new, base)):
            only = [c for c in mine.cells if c not in theirs.cells]
            if only:
                notes.append(f"cells only in {side} (not compared): {', '.join(only)}")
    # The statistics make millions of short-lived tuples and no cycles; each collection would
    # walk the loaded runs again (14% of the time at 1000 trials a side): the collector pauses.
    was_on = gc.isenabled()
    gc.disable()
    try:
        pending = [_cell_rows(b, n, label, settings) for label, b, n in pairs]
        judged, tested = _decide_all([p for _, rows in pending for p in rows], settings)
    finally:
        if was_on:
            gc.enable()
    cells, verdicts = [], iter(judged)
    for (label, b, n), (cell_notes, rows) in zip(pairs, pending):
        cells.append(CellComparison(label, b.name, n.name, b.trials, n.trials,
                                    tuple(islice(verdicts, len(rows))), cell_notes))
    return Comparison(base.ref.label, new.ref.label, settings, tuple(cells), tuple(notes), tested)


def _decide_all(pending: Sequence[_Pending], settings: CompareSettings) -> tuple[list[Row], int]:
    """Every Row, p adjusted across the family, and its size: the rows whose test could reach
    alpha (one that can never be significant can never be a false alarm). BH skips rows SAME
    by their interval whatever p: as BH's discoveries they would loosen its cut-off for the
    rest."""
    family = [(k, p.measured) for k, p in enumerate(pending)
              if isinstance(p.measured, Measurement)
              and can_reach(settings.alpha, len(p.measured.base), len(p.measured.new))]
    chosen = [(k, m) for k, m in family
              if settings.correction != "bh" or decide(m, settings).verdict != "SAME"]
    raw = [m.test.p_value for _, m in chosen]
    adjusted = dict(zip((k for k, _ in chosen), adjust(raw, settings.correction)))
    rows = []
    for k, p in enumerate(pending):
        if isinstance(p.measured, Judgement):
            rows.append(p.row(p.measured))
        elif settings.correction == "none" or k not in adjusted:
            rows.append(p.row(decide(p.measured, settings)))
        else:
            q, own = adjusted[k], p.measured.test.p_value
            # The level the row's own p had to reach: alpha scaled as the correction scaled p.
            level = settings.alpha * own / q if q > 0 else settings.alpha
            rows.append(p.row(decide(p.measured, settings, q, min(settings.alpha, level))))
    return rows, len(family)


def _cell_rows(base: CellSamples, new: CellSamples, label: str,
               settings: CompareSettings) -> tuple[tuple[str, ...], list[_Pending]]:
    notes = []
    for side, cell in (("base", base), ("new", new)):
        t = cell.trials
        if t.passed < t.total:
            left_out = ", ".join(f"{n} {word}" for n, word in (
                (t.failed, "failed"), (t.errored, "errored"), (t.missing, "missing")) if n)
            notes.append(f"{side}: only the {t.passed} passing trial(s) of {t.total} are "
                         f"compared ({left_out})")
    names = settings.metrics or tuple(m for m in base.metrics if m in new.metrics)
    rows = [_metric_row(label, m, base, new, settings) for m in names]
    for side, mine, theirs in (("base", base, new), ("new", new, base)):
        lonely = sorted(m for m in mine.metrics if m not in theirs.metrics)
        if lonely and not settings.metrics:
            notes.append(f"metrics only in {side}: {', '.join(lonely)}")
    if settings.kernels:
        pairs = [(t, t) for t in base.tables if t in new.tables]
        # One `<collector>_kernels` table of its own on each side (Proton against torch): kernel
        # names match across profilers once demangled and normalised.
        own_b = [t for t in base.tables if t.endswith("_kernels") and t not in new.tables]
        own_n = [t for t in new.tables if t.endswith("_kernels") and t not in base.tables]
        if len(own_b) == 1 and len(own_n) == 1:
            pairs.append((own_b[0], own_n[0]))
            notes.append(f"kernels of {own_b[0]} compared with {own_n[0]}: two profilers, "
                         f"whose timings need not agree to the last percent")
        for b, n in pairs:
            table = b if b == n else f"{b} vs {n}"
            rows += _kernel_rows(label, table, base.tables[b], new.tables[n], settings)
        for i, (side, cell) in enumerate((("base", base), ("new", new))):
            lonely = sorted(t for t in cell.tables if all(p[i] != t for p in pairs))
            if lonely:
                notes.append(f"kernel tables only in {side}: {', '.join(lonely)}")
    return tuple(notes), rows


def _metric_row(cell: str, metric: str, base: CellSamples, new: CellSamples,
                settings: CompareSettings) -> _Pending:
    kind = metric_kind(metric)
    b, n = base.metrics.get(metric, ()), new.metrics.get(metric, ())
    return _Pending(measure(b, n, kind, settings), dict(
        cell=cell, scope="metric", name=metric, kind=kind, base_n=len(b), new_n=len(n)))


def _kernel_rows(cell: str, table: str, base: Sequence[TrialTable], new: Sequence[TrialTable],
                 settings: CompareSettings) -> list[_Pending]:
    demangle_all({raw for t in (*base, *new) for raw in t})   # one batch (c++filt: one process)
    base_kernels, new_kernels = (_by_kernel(side, settings.match_templates) for side in (base, new))
    return [_kernel_row(cell, table, name, base_kernels.get(name, _ABSENT), len(base),
                        new_kernels.get(name, _ABSENT), len(new), settings)
            for name in dict.fromkeys([*base_kernels, *new_kernels])]


# One normalised kernel on one side: trial position -> (total ms, calls), the names merged.
_Kernel = tuple[dict[int, tuple[float, int | None]], set[str]]
_ABSENT: _Kernel = ({}, set())
_NONE = (0.0, None)     # a trial that did not run the kernel


def _by_kernel(trials: Sequence[TrialTable], match_templates: bool) -> dict[str, _Kernel]:
    """Each normalised kernel, in one pass (names that normalise alike summed per trial)."""
    out: dict[str, _Kernel] = {}
    for position, table in enumerate(trials):
        for raw, entry in table.items():
            seen, raws = out.setdefault(normalise(raw, match_templates), ({}, set()))
            raws.add(raw)
            total, calls = seen.get(position, (0.0, 0))
            seen[position] = (total + entry.total_ms, None if calls is None or entry.calls is None
                              else calls + entry.calls)
    return out


def _kernel_row(cell: str, table: str, name: str, base: _Kernel, base_n: int, new: _Kernel,
                new_n: int, settings: CompareSettings) -> _Pending:
    # A trial whose table lacks the kernel ran it zero times: that is a measurement of 0 ms.
    b = [base[0].get(i, _NONE)[0] for i in range(base_n)]
    n = [new[0].get(i, _NONE)[0] for i in range(new_n)]
    seen_b, seen_n = len(base[0]), len(new[0])
    calls_b, calls_n = _median_calls(base), _median_calls(new)
    fields = dict(cell=cell, scope="kernel", name=name, kind="time", base_n=len(b),
                  new_n=len(n), table=table, base_calls=calls_b, new_calls=calls_n,
                  raw_names=tuple(sorted(base[1] | new[1])))
    if not seen_b:
        return _Pending(Judgement("NEW", None, median(n), note=f"only in new ({seen_n} of "
                                  f"{len(n)} trials)"), fields)
    if not seen_n:
        return _Pending(Judgement("GONE", median(b), None, note=f"only in base ({seen_b} of "
                                  f"{len(b)} trials)"), fields)
    extra = []
    if seen_b < len(b) or seen_n < len(n):
        extra.append(f"ran in {seen_b}/{len(b)} base and {seen_n}/{len(n)} new trials")
    if calls_b is not None and calls_n is not None and calls_b != calls_n:
        extra.append(f"calls {fmt(calls_b)} -> {fmt(calls_n)}")
    return _Pending(measure(b, n, "time", settings), fields, tuple(extra))


def _median_calls(kernel: _Kernel) -> float | None:
    counts = [calls for _, calls in kernel[0].values()]
    if not counts or None in counts:
        return None
    return median([float(c) for c in counts if c is not None])
