"""What `aorta sweep status` prints, as text: shared by the click command and the fast path
(`aorta.cli.light`), so both print the same bytes. Imports no click."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os

    from aorta.run.status import RunStatus

__all__ = ["status_text", "status_lines"]


def status_text(run_dir: str | os.PathLike[str], as_json: bool) -> str:
    """The whole output for RUN_DIR, newline-terminated: JSON, or `status_lines`. Raises
    `UserError` when RUN_DIR is not a run."""
    from aorta.run.status import run_status

    status = run_status(run_dir)
    if as_json:
        from aorta.strict_json import dumps_indented

        return dumps_indented(status.to_json()) + "\n"
    return "".join(line + "\n" for line in status_lines(status))


def status_lines(status: RunStatus) -> list[str]:
    """A header, the counts, then one aligned row per trial."""
    from aorta.run.status import STATES

    counts = status.counts()
    verdicts = status.verdicts()
    done = counts.get("complete", 0)
    parts = [f"{done} complete" + (" (" + ", ".join(f"{n} {v}" for v, n in
                                                   sorted(verdicts.items())) + ")"
                                  if verdicts else "")]
    parts += [f"{counts[s]} {s}" for s in STATES[1:] if counts.get(s)]
    when = f"finished {status.finished_at}" if status.finished_at \
        else f"started {status.started_at}"
    based = sum(t.name.startswith("baseline_") for t in status.trials)
    kinds = f" ({len(status.trials) - based} profiled, {based} baseline with no collector)" \
        if based else ""
    lines = [f"run {status.run} ({status.run_dir}): {status.status}, {when}",
             f"{len(status.trials)} trial(s){kinds}: " + ", ".join(parts)]
    if status.note:
        lines.append(f"aorta: {status.note}")
    rows = [("cell", "trial", "state", "verdict", "job", "host", "reason")]
    rows += [(t.cell, t.name, t.state, t.verdict or "-", t.job or "-", t.host or "-",
              t.reason or "") for t in status.trials]
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[6] for r in rows]
    return [line.rstrip() for line in lines]
