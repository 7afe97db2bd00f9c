"""Everything a sweep does before its first trial: overrides, plan, executor and its checks,
the first trial's launch. `aorta.sweep`, `aorta.plan` and `aorta sweep run|plan` all go through
`prepare`: the same validation, in the same order, with the same messages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from aorta.base.errors import UserError
from aorta.collectors.base import Launch
from aorta.recipe.schema import LoadedRecipe, Recipe, load_recipe
from aorta.run.executors import executor_class, executor_options
from aorta.run.executors.base import Executor
from aorta.run.launch import refuse_unwritable_env
from aorta.run.overrides import Overrides
from aorta.run.plan import Plan, build_plan
from aorta.run.progress import Progress
from aorta.run.summary_text import plan_lines
from aorta.run.sweep import SweepOutcome, pending_trials, plan_redactor, run_sweep, trial_specs


@dataclass(frozen=True)
class PreparedSweep:
    """A sweep that passed every check before its first trial."""

    plan: Plan
    executor: Executor
    output: Path                 # resolved
    caller_env: Mapping[str, str]
    first: Launch                # the first trial's launch as the collectors wrap it
    notes: tuple[str, ...]       # what the executor wants said about the plan

    @property
    def run_dir(self) -> Path:
        return self.output / self.plan.run_name

    def plan_lines(self, fresh: bool = False) -> list[str]:
        """What a dry run prints: the plan, the first launch, how many trials would run now."""
        return plan_lines(self.plan, self.run_dir, self.first,
                          plan_redactor(self.plan, self.caller_env),
                          pending_trials(self.plan, self.run_dir, fresh)) + list(self.notes)

    def run(self, progress: Progress, fresh: bool = False) -> SweepOutcome:
        """Run every trial without a complete result yet (all of them with `fresh`)."""
        return run_sweep(self.plan, self.output, self.caller_env, progress, fresh, self.executor)


def prepare(recipe: Path | None, overrides: Overrides, output: Path,
            caller_env: Mapping[str, str]) -> PreparedSweep:
    """Load and check everything before the first trial; `UserError` (exit 2) naming what is
    wrong and the fix. `caller_env` is the environment trials start from (never changed)."""
    loaded = load_recipe(recipe) if recipe is not None else LoadedRecipe(
        recipe=Recipe.model_validate({"schema_version": 1}), path=None, sha256=None)
    plan = build_plan(loaded, overrides)
    by_flag = overrides.executor is not None or overrides.gpus is not None   # who set it
    source = "--executor/--gpus" if by_flag else str(loaded.path) if loaded.path else "recipe"
    options = executor_options(plan.recipe.executor.model_dump(), source)
    if overrides.skip_remote_probe:
        if "remote_probe" not in type(options).model_fields:
            raise UserError("--skip-remote-probe applies only to an executor that checks the "
                            "collectors on a remote node first (--executor slurm): this one "
                            "checks them on this machine; drop the flag")
        options = options.model_copy(update={"remote_probe": False})
    plan = replace(plan, executor=options)
    executor = executor_class(options.kind)(options)
    output = output.resolve()
    first = trial_specs(plan, output / plan.run_name)[0]
    launch, notes = executor.preflight(plan, first, caller_env)
    refuse_unwritable_env(first.env_mode, caller_env, launch)
    return PreparedSweep(plan, executor, output, caller_env, launch, tuple(notes))

