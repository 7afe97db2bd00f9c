"""The words every rendering of a comparison shares: cell formats, the method, guarantee and
summary lines. They only read the rows; every number was computed before."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from aorta.comparison.gate import Gate
from aorta.comparison.model import CellComparison, Comparison, Row, TrialCounts
from aorta.rendering import fmt, fmt_interval, fmt_p, fmt_ratio, signed


def interval_text(row: Row) -> str:
    """The ratio's interval; `[unbounded]` when the test ran but bounds none, `-` untested."""
    if row.ci_low is None and row.ci_high is None:
        return "-" if row.p_value is None else "[unbounded]"
    return fmt_interval(row.ci_low, row.ci_high)


def deciding_p(row: Row) -> float | None:
    """The p the verdict was held to: adjusted under --correction, else the row's own."""
    return row.p_adjusted if row.p_adjusted is not None else row.p_value


def p_head(comparison: Comparison) -> str:
    correction = comparison.settings.correction
    return "p" if correction == "none" else f"p ({correction})"


def verdict_text(row: Row) -> str:
    """UNCERTAIN carries its advice: `(12-40 more/side)`, or `(12+ more/side)` unbounded."""
    if row.verdict != "UNCERTAIN" or row.more_trials is None:
        return row.verdict
    low, high = row.more_trials, row.more_trials_high
    span = f"{low}+" if high is None else (f"{low}" if high == low else f"{low}-{high}")
    return f"UNCERTAIN ({span} more/side)"


def method_line(comparison: Comparison) -> str:
    s = comparison.settings
    return (f"ratio = new median / base median; {1 - s.alpha:.0%} interval: the bootstrap's, "
            f"computed exactly (no resampling); Mann-Whitney p; SAME within "
            f"+/-{s.threshold:.1%}; alpha {s.alpha:g}")


def family_line(comparison: Comparison, gate: Gate | None = None) -> str:
    """What the false-alarm guarantee covers, and how many rows it was spread over."""
    s, tested = comparison.settings, comparison.tested
    gated = (f"; {gate.gated} gated by --fail-on {','.join(gate.fail_on)}"
             if gate is not None and gate.fail_on else "")
    if s.correction == "holm":
        return (f"false alarms: Holm-adjusted p, so with nothing changed a FASTER or SLOWER "
                f"anywhere among the {tested} tested rows has chance <= {s.alpha:g}{gated}")
    if s.correction == "bh":
        return (f"false alarms: Benjamini-Hochberg-adjusted p over the {tested} tested rows "
                f"less those SAME by their interval, so about {s.alpha:g} or less of the "
                f"FASTER or SLOWER calls fall on unchanged rows (simulated){gated}")
    hint = ("; so among many unchanged rows one can come out FASTER or SLOWER by chance "
            "(--correction holm bounds the whole comparison)") if tested > 1 else ""
    return (f"false alarms: bounded per row (alpha {s.alpha:g} each), over {tested} tested "
            f"row(s){gated}{hint}")


def gate_line(gate: Gate) -> str:
    return f"regressions ({', '.join(gate.fail_on)}): {len(gate.failing)}"


def summary_line(comparison: Comparison) -> str:
    return "summary: " + (", ".join(f"{n} {v}" for v, n in comparison.tally().items())
                          or "no rows")


def kernel_groups(cell: CellComparison, top: int) -> list[tuple[str, list[Row], list[Row]]]:
    """Per kernel table: (table, rows shown, rows left out), largest change first; `top` 0: all."""
    ranked = cell.kernel_rows()
    groups = []
    for table in dict.fromkeys(r.table or "" for r in ranked):
        rows = [r for r in ranked if r.table == table]
        groups.append((table, rows[:top], rows[top:]) if top > 0 else (table, rows, []))
    return groups


def cell_header(cell: CellComparison) -> str:
    def side(name: str, t: TrialCounts) -> str:
        extra = [f"{n} {w}" for n, w in ((t.failed, "failed"), (t.errored, "errored"),
                                         (t.missing, "missing")) if n]
        return f"{name} {t.passed}/{t.total} passed" + (f" ({', '.join(extra)})" if extra else "")

    return f"cell {cell.label}: {side('base', cell.base_trials)}, {side('new', cell.new_trials)}"


def metric_head(p: str) -> tuple[str, ...]:
    return ("metric", "base", "new", "ratio", "interval", p, "verdict", "note")


def kernel_head(table: str, p: str) -> tuple[str, ...]:
    """Column names for a kernel table; cProfile's table holds functions, not kernels."""
    first = "function" if table.endswith("_functions") else "kernel"
    return (first, "base ms", "new ms", "change ms", "ratio", "interval", p, "verdict", "note")


def metric_cells(row: Row) -> tuple[str, ...]:
    return (row.name, fmt(row.base_median), fmt(row.new_median), fmt_ratio(row.ratio),
            interval_text(row), fmt_p(deciding_p(row)), verdict_text(row), row.note)


def kernel_cells(row: Row) -> tuple[str, ...]:
    return (row.name, fmt(row.base_median), fmt(row.new_median), signed(row.change),
            fmt_ratio(row.ratio), interval_text(row), fmt_p(deciding_p(row)), verdict_text(row),
            row.note)


def left_out_line(left_out: Sequence[Row]) -> str:
    tally = Counter(r.verdict for r in left_out)
    return (f"... {len(left_out)} more row(s) ("
            + ", ".join(f"{n} {v}" for v, n in sorted(tally.items())) + "); --top 0 lists all")
