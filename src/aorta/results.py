"""The records a sweep writes (trial results, run metadata) and how they reach disk.

Every file carries a `schema_version` and is written atomically (temp file + `os.replace`), so
a killed run never leaves half a JSON. Readers say who must upgrade when a file is too new.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["TRIAL_SCHEMA", "TrialResult", "Verdict", "atomic_write_text", "write_json",
           "read_json", "read_run_record", "RUN_SCHEMA", "read_trial", "trial_is_complete", "finite_json"]

TRIAL_SCHEMA = 1
Verdict = Literal["pass", "fail", "error"]
VERDICTS = ("pass", "fail", "error")


@dataclass(frozen=True)
class TrialResult:
    """One trial: how it ended, what it cost, what the collectors measured.

    Times are seconds, memory is MiB. `exit_code` is the payload's (None when it never ran or
    was killed by a signal, then `signal` says which)."""

    cell: str
    index: int
    verdict: Verdict
    reason: str
    argv: list[str]                  # what was run, collectors' wrapping included
    command: list[str]               # what the user asked for
    env_overlay: dict[str, str]
    env_unset: list[str]
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    launched: bool = False
    wall_s: float | None = None
    cpu_user_s: float | None = None
    cpu_sys_s: float | None = None
    max_rss_mib: float | None = None
    started_at: str | None = None
    host: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    stderr_tail: str | None = None   # the end of stderr.log when the trial did not pass
    device: str | None = None        # the GPU the trial was pinned to, if any
    baseline: bool = False           # run with no collector, to measure their overhead
    schema_version: int = TRIAL_SCHEMA

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.verdict == "pass" and self.exit_code != 0:
            raise ValueError("a passing trial must have exit code 0")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> TrialResult:
        version = doc.get("schema_version")
        if version != TRIAL_SCHEMA:
            raise ValueError(f"trial schema_version {version!r}; this aorta reads "
                             f"{TRIAL_SCHEMA}{' (upgrade aorta)' if _newer(version) else ''}")
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in doc.items() if k in known})

    def numeric_metrics(self) -> dict[str, float]:
        """The harness's own figures plus every finite numeric collector metric."""
        out = {}
        for key, value in (("wall_s", self.wall_s), ("cpu_user_s", self.cpu_user_s),
                           ("cpu_sys_s", self.cpu_sys_s), ("max_rss_mib", self.max_rss_mib)):
            if value is not None:
                out[key] = float(value)
        for key, value in self.metrics.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and math.isfinite(value):
                out[key] = float(value)
        return out


def _newer(version: Any) -> bool:
    return isinstance(version, int) and version > TRIAL_SCHEMA


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write `text` to `path` so readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_json(path: Path, doc: Any) -> None:
    """Strict JSON (a NaN or infinity becomes null: no reader has to guess), atomically."""
    atomic_write_text(path, json.dumps(finite_json(doc), indent=2, allow_nan=False,
                                       default=str) + "\n")


def finite_json(value: Any) -> Any:
    """`value` with every NaN or infinity replaced by None (strict JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


RUN_SCHEMA = 1


def read_run_record(path: Path, action: str, fix: str = "") -> dict[str, Any]:
    """A run's `run.json`, or `RunDirError` saying why it cannot be used to `action` it
    (unreadable, not a run record, or written by a newer aorta). `fix` ends each message."""
    from aorta.errors import RunDirError

    tail = f"; {fix}" if fix else ""
    try:
        doc = read_json(path)
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{path}: unreadable ({exc}){tail}") from None
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if isinstance(version, int) and version > RUN_SCHEMA:
        raise RunDirError(f"{path}: written by a newer aorta (run schema {version}); upgrade "
                          f"aorta to {action} it")
    if not isinstance(doc, dict) or "run" not in doc:
        raise RunDirError(f"{path}: not an aorta run record{tail}")
    return doc


def read_trial(path: Path) -> TrialResult | None:
    """A trial's `result.json`, or None when it is missing, partial or unreadable."""
    try:
        return TrialResult.from_json(read_json(path))
    except (OSError, ValueError, TypeError):
        return None


def trial_is_complete(trial_dir: Path) -> bool:
    return read_trial(trial_dir / "result.json") is not None
