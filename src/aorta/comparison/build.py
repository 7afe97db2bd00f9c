"""Compute a comparison: pair cells, then judge every shared metric and kernel.

Pure computation over loaded samples; nothing here prints or reads files. Every row is first
measured on its own (medians, exact interval, rank test), then, once every row's p is known,
adjusted across rows under `--correction`, then decided. Without a correction a row's verdict
depends on its own samples only, never on which other rows were compared.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from aorta.base.errors import UserError
from aorta.comparison.family import adjust
from aorta.comparison.kinds import metric_kind
from aorta.comparison.load import CellSamples, LoadedRun, TrialTable, pair_cells
from aorta.comparison.model import CellComparison, CompareSettings, Comparison, Row
from aorta.comparison.names import normalise
from aorta.comparison.stats import can_reach, median
from aorta.comparison.verdict import Judgement, Measurement, decide, measure
from aorta.rendering import fmt


@dataclass(frozen=True)
class _Pending:
    """A row waiting for its verdict: what it measured, and how to make the Row."""

    measured: Measurement | Judgement
    make: Callable[[Judgement], Row]


def compare_runs(base: LoadedRun, new: LoadedRun, settings: CompareSettings) -> Comparison:
    """Compare two loaded runs. Raises UserError for nothing to compare (no common cell, no
    passing trial on both sides of any cell, or an asked-for metric neither side has)."""
    pairs = pair_cells(base, new)
    if not any(b.trials.passed and n.trials.passed for _, b, n in pairs):
        raise UserError("nothing to compare: no cell has a passing trial in both runs ("
                        + "; ".join(f"{label}: base {b.trials.passed}, new {n.trials.passed} "
                                    f"passed" for label, b, n in pairs) + ")")
    _check_metrics_exist(settings.metrics, pairs)
    notes = []
    if not (base.ref.cell or new.ref.cell):
        only_base = [c for c in base.cells if c not in new.cells]
        only_new = [c for c in new.cells if c not in base.cells]
        if only_base:
            notes.append(f"cells only in base (not compared): {', '.join(only_base)}")
        if only_new:
            notes.append(f"cells only in new (not compared): {', '.join(only_new)}")
    with _collector_paused():
        pending = [_compare_cell(label, b, n, settings) for label, b, n in pairs]
        judged, tested = _decide_all([p for _, rows in pending for p in rows], settings)
    cells, start = [], 0
    for cell, rows in pending:
        cells.append(CellComparison(cell.label, cell.base_cell, cell.new_cell, cell.base_trials,
                                    cell.new_trials, tuple(judged[start:start + len(rows)]),
                                    cell.notes))
        start += len(rows)
    return Comparison(base.ref.label, new.ref.label, settings, tuple(cells), tuple(notes), tested)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while the statistics run. They make millions of
    short-lived tuples and no reference cycles, and each collection they trigger would walk
    the just-loaded runs again (a few per cent of the command, bench/README.md)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _decide_all(pending: Sequence[_Pending], settings: CompareSettings) -> tuple[list[Row], int]:
    """Every row's Row, with p-values adjusted across the family (see `family`), and the
    family's size: the rows whose test could reach alpha on its own."""
    family = [(k, p.measured) for k, p in enumerate(pending)
              if isinstance(p.measured, Measurement)
              and can_reach(settings.alpha, len(p.measured.base), len(p.measured.new))]
    raw = [m.test.p_value for _, m in family]
    adjusted = dict(zip((k for k, _ in family), adjust(raw, settings.correction)))
    rows = []
    for k, p in enumerate(pending):
        if isinstance(p.measured, Judgement):
            rows.append(p.make(p.measured))
        elif settings.correction == "none" or k not in adjusted:
            rows.append(p.make(decide(p.measured, settings)))
        else:
            q, own = adjusted[k], p.measured.test.p_value
            # The level the row's own p had to reach: alpha scaled as the correction scaled p.
            level = settings.alpha * own / q if q > 0 else settings.alpha
            rows.append(p.make(decide(p.measured, settings, q, min(settings.alpha, level))))
    return rows, len(family)


def _check_metrics_exist(wanted: Sequence[str],
                         pairs: Sequence[tuple[str, CellSamples, CellSamples]]) -> None:
    known = sorted({m for _, b, n in pairs for m in b.metrics if m in n.metrics})
    for metric in wanted:
        if metric not in known:
            raise UserError(f"--metric {metric}: no compared cell has it in both runs; "
                            f"metrics both have: {', '.join(known) or '(none)'}")


def _compare_cell(label: str, base: CellSamples, new: CellSamples,
                  settings: CompareSettings) -> tuple[CellComparison, list[_Pending]]:
    """The cell (rows still empty) and its rows waiting for their verdicts."""
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
        across = _across_profilers(base, new)
        if across is not None:
            pairs.append(across)
            notes.append(f"kernels of {across[0]} compared with {across[1]}: two profilers, "
                         f"whose timings need not agree to the last percent")
        for b, n in pairs:
            table = b if b == n else f"{b} vs {n}"
            rows += _kernel_rows(label, table, base.tables[b], new.tables[n], settings)
        paired = {side: {p[i] for p in pairs} for i, side in enumerate(("base", "new"))}
        for side, mine in (("base", base), ("new", new)):
            lonely = sorted(t for t in mine.tables if t not in paired[side])
            if lonely:
                notes.append(f"kernel tables only in {side}: {', '.join(lonely)}")
    return (CellComparison(label, base.name, new.name, base.trials, new.trials, (),
                           tuple(notes)), rows)


def _across_profilers(base: CellSamples, new: CellSamples) -> tuple[str, str] | None:
    """When each side has exactly one GPU kernel table (`<collector>_kernels`) and they differ
    (a Proton run against a torch run), the pair to compare: kernel names match across
    profilers once demangled and normalised."""
    def kernel_tables(cell: CellSamples, other: CellSamples) -> list[str]:
        return [t for t in cell.tables if t.endswith("_kernels") and t not in other.tables]

    mine, theirs = kernel_tables(base, new), kernel_tables(new, base)
    return (mine[0], theirs[0]) if len(mine) == 1 and len(theirs) == 1 else None


def _metric_row(cell: str, metric: str, base: CellSamples, new: CellSamples,
                settings: CompareSettings) -> _Pending:
    kind = metric_kind(metric)
    b, n = base.metrics.get(metric, ()), new.metrics.get(metric, ())

    def make(j: Judgement) -> Row:
        return Row(cell, "metric", metric, kind, j.verdict, len(b), len(n), j.base_median,
                   j.new_median, j.ratio, j.ci_low, j.ci_high, j.p_value, j.more_trials,
                   j.more_trials_high, j.note, p_adjusted=j.p_adjusted)

    return _Pending(measure(b, n, kind, settings), make)


def _kernel_rows(cell: str, table: str, base: Sequence[TrialTable], new: Sequence[TrialTable],
                 settings: CompareSettings) -> list[_Pending]:
    base_trials = [_normalised(t, settings.match_templates) for t in base]
    new_trials = [_normalised(t, settings.match_templates) for t in new]
    names = dict.fromkeys(k for t in base_trials + new_trials for k in t)
    return [_kernel_row(cell, table, name, base_trials, new_trials, settings) for name in names]


# normalised name -> (total ms, calls or None, original names)
_Merged = dict[str, tuple[float, int | None, frozenset[str]]]


def _normalised(table: TrialTable, match_templates: bool) -> _Merged:
    keys = [normalise(raw, match_templates) for raw in table]
    if len(set(keys)) == len(keys):              # the usual case: no two names merge
        return {key: (entry.total_ms, entry.calls, frozenset((raw,)))
                for key, (raw, entry) in zip(keys, table.items())}
    out: _Merged = {}
    for key, (raw, entry) in zip(keys, table.items()):
        total, calls, raws = out.get(key, (0.0, 0, frozenset()))
        merged_calls = None if calls is None or entry.calls is None else calls + entry.calls
        out[key] = (total + entry.total_ms, merged_calls, raws | {raw})
    return out


def _kernel_row(cell: str, table: str, name: str, base: Sequence[_Merged],
                new: Sequence[_Merged], settings: CompareSettings) -> _Pending:
    # A trial whose table lacks the kernel ran it zero times: that is a measurement of 0 ms.
    b = [t[name][0] if name in t else 0.0 for t in base]
    n = [t[name][0] if name in t else 0.0 for t in new]
    seen_b, seen_n = sum(name in t for t in base), sum(name in t for t in new)
    raws = tuple(sorted(set().union(*(t[name][2] for t in list(base) + list(new) if name in t))))
    calls_b, calls_n = _median_calls(base, name), _median_calls(new, name)
    if not seen_b or not seen_n:
        side, seen, total = ("new", seen_n, len(n)) if not seen_b else ("base", seen_b, len(b))
        gone = Row(cell, "kernel", name, "time", "NEW" if not seen_b else "GONE", len(b), len(n),
                   None if not seen_b else median(b), None if not seen_n else median(n),
                   note=f"only in {side} ({seen} of {total} trials)", table=table,
                   base_calls=calls_b, new_calls=calls_n, raw_names=raws)
        return _Pending(Judgement(gone.verdict, None, None), lambda _: gone)
    extra = []
    if seen_b < len(b) or seen_n < len(n):
        extra.append(f"ran in {seen_b}/{len(b)} base and {seen_n}/{len(n)} new trials")
    if calls_b is not None and calls_n is not None and calls_b != calls_n:
        extra.append(f"calls {fmt(calls_b)} -> {fmt(calls_n)}")

    def make(j: Judgement) -> Row:
        return Row(cell, "kernel", name, "time", j.verdict, len(b), len(n), j.base_median,
                   j.new_median, j.ratio, j.ci_low, j.ci_high, j.p_value, j.more_trials,
                   j.more_trials_high, "; ".join(([j.note] if j.note else []) + extra),
                   table=table, base_calls=calls_b, new_calls=calls_n, raw_names=raws,
                   p_adjusted=j.p_adjusted)

    return _Pending(measure(b, n, "time", settings), make)


def _median_calls(trials: Sequence[_Merged], name: str) -> float | None:
    counts = [t[name][1] for t in trials if name in t]
    if not counts or any(c is None for c in counts):
        return None
    return median([float(c) for c in counts if c is not None])

