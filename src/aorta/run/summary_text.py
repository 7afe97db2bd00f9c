"""Text renderings of plans and sweep outcomes. Each returns lines; the CLI prints them."""

from __future__ import annotations

import shlex
from pathlib import Path

from aorta.base.redaction import PATTERN_ONLY, Redactor
from aorta.collectors.base import Launch
from aorta.rendering import fmt, text_table
from aorta.run.plan import Plan
from aorta.run.summary import cell_gpu_notes
from aorta.run.sweep import Pending, SweepOutcome


def plan_lines(plan: Plan, run_dir: Path, first: Launch,
               redactor: Redactor = PATTERN_ONLY, pending: Pending | None = None) -> list[str]:
    """What a dry run prints, credentials redacted."""
    lines = [f"run directory: {run_dir}", f"recipe: {plan.source or '(none: defaults)'}",
             f"command: {shlex.join(redactor.argv(plan.command))}",
             f"trials per cell: {plan.trials}   timeout per trial: "
             f"{plan.recipe.timeout_per_trial or 'none'}   environment: "
             f"{plan.recipe.env_passthrough_mode}"]
    retain = plan.recipe.retain
    if any(retain.level(v) != "full" for v in ("pass", "fail", "error")):
        lines.append(f"retain: pass {retain.on_pass}, fail {retain.on_fail}, error "
                     f"{retain.on_error} (none < log < summary < full)")
    rule = plan.recipe.stop_after
    if rule is not None:
        lines.append(f"stop_after: a cell stops after {rule.events} {rule.event_verdict} "
                     f"trial(s), at most {rule.max_trials} trial(s)")
    lines.append(f"collectors (outermost first): {', '.join(plan.collectors) or 'none'}")
    for name, options in plan.collectors.items():
        lines.append(f"  {name}: {options.model_dump(mode='json')}")
    lines.append(f"cells ({len(plan.cells)}):")
    for cell in plan.cells:
        extra = []
        if cell.env:
            extra.append(" ".join(f"{k}={v}" for k, v in redactor.env(cell.env).items()))
        if cell.args:
            extra.append("args: " + shlex.join(redactor.argv(cell.args)))
        lines.append(f"  {cell.name}" + (f"  ({'; '.join(extra)})" if extra else ""))
    lines.append(f"first trial launch ({plan.cells[0].name}/trial_0):")
    lines.append(f"  argv: {shlex.join(redactor.argv(first.argv))}")
    if first.env:
        lines.append("  env: " + " ".join(f"{k}={shlex.quote(v)}"
                                          for k, v in redactor.env(first.env).items()))
    if first.unset:
        lines.append("  unset: " + " ".join(sorted(first.unset)))
    total = len(plan.cells) * plan.trials * (2 if plan.recipe.baseline else 1)
    would = f"; {pending.line()}" if pending is not None else ""
    lines.append(f"total: {'up to ' if plan.recipe.stop_after else ''}{total} trial(s)"
                 f"{' (half of them baseline)' if plan.recipe.baseline else ''}"
                 f"{would}; nothing was run (dry run)")
    return lines


def summary_lines(outcome: SweepOutcome) -> list[str]:
    rows = [("cell", "pass", "fail", "error", "wall median (s)")]
    for c in outcome.cells:
        wall = c.metrics.get("wall_s")
        rows.append((c.name, str(c.passed), str(c.failed), str(c.errored),
                     fmt(wall.median) if wall else "-"))
    lines = text_table(rows, right=(1, 2, 3, 4))
    total = sum(c.trials - c.skipped for c in outcome.cells)
    passed = sum(c.passed for c in outcome.cells)
    skipped = sum(c.skipped for c in outcome.cells)
    status = "interrupted: rerun the same command to resume" if outcome.status == "interrupted" \
        else "complete"
    based = sum(c.baseline_trials for c in outcome.cells)
    baseline = f", baseline (no collector) {sum(c.baseline_passed for c in outcome.cells)}/" \
        f"{based} passed" if based else ""
    lines.append(f"{passed}/{total} trial(s) passed{baseline} ({outcome.ran} run now"
                 + (", baseline included" if based and outcome.ran else "")
                 + (f"; {skipped} skipped by stop_after" if skipped else "") + f"); {status}")
    for c in outcome.cells:
        notes = [c.stop_note] if c.stop_note else []
        lines += [f"  {c.name}: {note}" for note in notes + c.reasons]
        for collector, states in c.captures.items():
            bad = {s: n for s, n in states.items() if s != "ok"}
            if bad:
                lines.append(f"  {c.name}: {collector} capture "
                             + ", ".join(f"{s} in {n} trial(s)" for s, n in bad.items()))
    lines += [f"  aorta: {note}" for note in cell_gpu_notes(outcome.cells)]
    lines.append(f"results: {outcome.run_dir} (perf.md, matrix.json)")
    if outcome.status != "interrupted" and outcome.none_passed:
        lines.append("aorta: no trial passed, so nothing was measured (exit 3); the reasons "
                     "are above and in each trial's stderr.log (or stdout.log)")
    return lines
