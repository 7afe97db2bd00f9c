"""The lines printed under a finished trial's progress line: where its stderr.log is when it
did not pass, and with `--verbose` what exactly ran (the wrapped argv, the environment the
collectors and the recipe changed, the variables they removed). Values are the trial record's,
so credentials are already redacted."""

from __future__ import annotations

import shlex
from pathlib import Path

from aorta.store.layout import trial_log
from aorta.store.records import TrialResult


def trial_details(result: TrialResult, run_dir: Path | None, verbose: int = 0) -> list[str]:
    lines = []
    if result.verdict != "pass" and result.launched and run_dir is not None:
        lines.append(f"stderr: {run_dir / trial_log(result.cell, result.name)}")
    if verbose:
        lines.append(f"argv: {shlex.join(result.argv)}")
        if result.env_overlay:
            lines.append("env: " + " ".join(f"{k}={shlex.quote(v)}"
                                            for k, v in sorted(result.env_overlay.items())))
        if result.env_unset:
            lines.append("unset: " + " ".join(result.env_unset))
        for name, capture in result.captures.items():
            lines.append(f"{name}: capture {capture.state}"
                         + (f" ({capture.reason})" if capture.reason else ""))
    return lines
