"""The executor contract: where and how a sweep's trials run. The recipe's `executor:` block
(or `--executor`) picks one and its `options_model` checks that block. The sweep calls
`preflight`, `attach`, `launch`, and `cancel` when stopped; `aorta sweep status`, `trial_states`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from aorta.collectors.base import Launch
from aorta.run.launch import child_environment
from aorta.run.plan import Plan
from aorta.run.trial import TrialSpec, spec_launch
from aorta.run.warden import Warden
from aorta.store.records import TrialResult

OnStart = Callable[[TrialSpec], None]
OnDone = Callable[[TrialResult], None]
Save = Callable[[dict[str, Any]], None]


class ExecutorOptions(BaseModel):
    """Base of every executor's options (`executor:`): strict, frozen, unknown keys refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str


@dataclass(frozen=True)
class TrialState:
    """Where a trial stands, as its executor knows it (`aorta sweep status`): a state of
    `aorta.run.status.STATES`, the job that runs (or ran) it, its host, and why."""

    state: str
    job: str | None = None
    host: str | None = None
    reason: str | None = None


class Executor(ABC):
    kind: ClassVar[str]
    options_model: ClassVar[type[ExecutorOptions]]

    def __init__(self, options: ExecutorOptions) -> None:
        self.options = options

    def preflight(self, plan: Plan, first: TrialSpec, caller_env: Mapping[str, str]
                  ) -> tuple[Launch, list[str]]:
        """Refuse (`SetupError`) a sweep that cannot measure where its trials run; the first
        trial's launch as it will be wrapped, and notes for the dry run."""
        return spec_launch(first, child_environment(first.env_mode, caller_env, first.env)), []

    def attach(self, run_dir: Path, block: Mapping[str, Any] | None, save: Save) -> None:
        """Take over this executor's state from run.json (`block`, None for a new run);
        `save(block)` writes it back."""
        save({"kind": self.kind})

    @abstractmethod
    def launch(self, specs: Sequence[TrialSpec], caller_env: Mapping[str, str],
               on_start: OnStart, on_done: OnDone, warden: Warden) -> None:
        """Run every spec, calling `on_start` and `on_done` as each starts and ends; raise
        KeyboardInterrupt (after cleaning up) when interrupted. `warden` starts and contains
        the payloads of trials run on this host."""

    def cancel(self) -> None:
        """Stop what `launch` started; safe to call more than once."""

    @classmethod
    def trial_states(cls, run_dir: Path, block: Mapping[str, Any], pending: Sequence[str]
                     ) -> tuple[dict[str, TrialState], str | None]:
        """For `aorta sweep status`: where each of `pending` (`cells/<cell>/<trial>`, no result)
        stands beyond "not started", the job of a recorded trial, and a note when unknown."""
        return {}, None
