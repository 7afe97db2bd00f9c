"""The Slurm executor's options: the recipe's `executor: {kind: slurm, ...}` block."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from aorta.recipe.schema import MAX_TIMEOUT_S, arguments, plain_text
from aorta.run.executors.base import ExecutorOptions

_MAX_SETUP_FILES = 64
DEFAULT_PROBE_TIMEOUT_S = 600.0


class SlurmOptions(ExecutorOptions):
    kind: str = "slurm"
    partition: str | None = None
    account: str | None = None
    time: str | None = None
    gpus_per_trial: int = Field(0, ge=0, le=1024, strict=True)
    cpus_per_trial: int = Field(1, ge=1, le=100_000, strict=True)
    mem: str | None = None
    max_parallel: int | None = Field(None, ge=1, le=100_000, strict=True)
    sbatch_args: list[str] = Field(default_factory=list)
    #: Scripts sourced, in order, by each job's batch script before aorta starts on the node.
    setup: list[str] = Field(default_factory=list)
    #: Check the sweep's collectors with one short job on a node before submitting the trials.
    remote_probe: bool = Field(True, strict=True)
    probe_timeout: float = Field(DEFAULT_PROBE_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S,
                                 allow_inf_nan=False, strict=True)

    _check_text = field_validator("partition", "account", "time", "mem", mode="before")(plain_text)
    _check_args = field_validator("sbatch_args", mode="before")(arguments)

    @model_validator(mode="before")
    @classmethod
    def _no_gpus(cls, value: Any) -> Any:
        if isinstance(value, dict) and value.get("gpus") is not None:
            raise ValueError("gpus applies to kind: local; for Slurm use gpus_per_trial")
        return value

    @field_validator("setup", mode="before")
    @classmethod
    def _setup(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        if len(value) > _MAX_SETUP_FILES:
            raise ValueError(f"lists {len(value)} scripts; at most {_MAX_SETUP_FILES}")
        for item in value:
            if not isinstance(item, str):
                continue   # the type check names it
            if not item.strip():
                raise ValueError("an entry is empty; give the path of a script")
            if any(ord(c) < 32 or ord(c) == 127 for c in item) or len(item) > 4096:
                raise ValueError(f"{item[:60]!r} is not a usable path (a control character, "
                                 f"or longer than 4096 characters)")
        return value
