"""Whether a collector's launcher failed to attach inside the payload's process, and why.

Two signs, read from the end of the trial's stderr.log:

- the launcher's own line, `aorta: <collector>: could not attach: <why>`
  (`aorta.launchers.attach`), e.g. `torch is not importable by /usr/bin/python3: ...`;
- the interpreter could not even import the launcher: `No module named 'aorta'` (aorta is not
  installed in the payload's Python and runs from a source tree that is not on its path).

Either way the payload never ran under the profiler: the trial is an `error`, not a `fail`.
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


def attach_failure(stderr_path: Path | None, collector: str, python_hint: str = "") -> str | None:
    """Why `collector` could not attach, or None. `python_hint` names the payload's
    interpreter for the `No module named 'aorta'` case."""
    tail = read_tail(stderr_path, _TAIL_BYTES) or ""
    prefix = attach_line(collector)
    for line in reversed(tail.splitlines()):
        if line.startswith(prefix):
            return line[len(prefix):].strip() or "no reason given"
    if _NO_AORTA in tail:
        who = f" ({python_hint})" if python_hint else ""
        return (f"the payload's Python{who} cannot import aorta's launcher (No module named "
                f"'aorta'): install aorta into that interpreter")
    return None


def with_attach_failure(name: str, metrics: Metrics, outcome: TrialOutcome) -> Metrics:
    """`metrics`, plus `<name>_attach_error` when the capture is missing because the
    collector's launcher could not attach inside the payload's process."""
    if metrics.get(f"{name}_capture") != "missing" or not outcome.launched:
        return metrics
    why = attach_failure(outcome.stderr_path, name)
    return metrics | {f"{name}{ATTACH_ERROR_SUFFIX}": why} if why else metrics
