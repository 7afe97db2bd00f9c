"""Whether a collector's launcher failed to attach inside the payload's process, and why, read
from the end of stderr.log: the launcher's own `aorta: <collector>: could not attach: <why>`
line (`aorta.launchers.attach`), or `No module named 'aorta'` when the payload's Python cannot
import the launcher. Either way the payload never ran under the profiler: the trial is an
`error`, not a `fail`.
"""

from __future__ import annotations

from pathlib import Path

from aorta.collectors.base import Metrics, TrialOutcome
from aorta.launchers.attach import attach_line
from aorta.store.reading import read_tail

#: `<collector>_attach_error`: the metric a collector publishes when it could not attach.
ATTACH_ERROR_SUFFIX = "_attach_error"
_TAIL_BYTES = 16384
# `python -m aorta.launchers.torch_profile` where aorta cannot be found prints
# "/usr/bin/python3: Error while finding module specification for 'aorta.launchers.torch_profile'
# (ModuleNotFoundError: No module named 'aorta')".
_NO_AORTA = "No module named 'aorta"


def last_line_after(text: str, prefix: str) -> str | None:
    """The rest of the last line of `text` that starts with `prefix`, stripped; None if none."""
    return next((line[len(prefix):].strip() for line in reversed(text.splitlines())
                 if line.startswith(prefix)), None)


def attach_failure(stderr_path: Path | None, collector: str) -> tuple[str, bool] | None:
    """(why `collector` could not attach, whether its launcher could not even be imported),
    or None."""
    tail = read_tail(stderr_path, _TAIL_BYTES) or ""
    if (said := last_line_after(tail, attach_line(collector))) is not None:
        return said or "no reason given", False
    if _NO_AORTA in tail:
        return "the payload's Python cannot import aorta's launcher (No module named 'aorta')", True
    return None


def with_attach_failure(name: str, metrics: Metrics, outcome: TrialOutcome,
                        fix: str = "install aorta into that interpreter") -> Metrics:
    """`metrics`, plus `<name>_attach_error` when the capture is missing because the
    collector's launcher could not attach inside the payload's process. A launcher the payload's
    Python could not import is the capture's reason too, ending with `fix`."""
    if metrics.get(f"{name}_capture") != "missing" or not outcome.launched:
        return metrics
    if (found := attach_failure(outcome.stderr_path, name)) is None:
        return metrics
    why, unimportable = found
    if unimportable:
        why = f"{why}: {fix}"
        return metrics | {f"{name}_capture_reason": why, f"{name}{ATTACH_ERROR_SUFFIX}": why}
    return metrics | {f"{name}{ATTACH_ERROR_SUFFIX}": why}
