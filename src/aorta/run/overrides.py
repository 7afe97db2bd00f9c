"""What the command line (or `aorta.sweep`'s arguments) changes in a recipe: `Overrides`. A
flag replaces the recipe's value; `--collect` replaces the collector list (survivors keep their
option blocks); the two stop-after flags overlay their halves of `stop_after`, which must end
up with both (the loop needs a cap)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from aorta.base.errors import UserError
from aorta.base.names import printable
from aorta.base.schema_errors import format_validation_error
from aorta.recipe.limits import ENV_MODES, MAX_TRIALS_PER_CELL
from aorta.recipe.schema import MAX_TIMEOUT_S, ExecutorBlock, Recipe


@dataclass(frozen=True)
class Overrides:
    """What the command line changes in a recipe. None means: keep the recipe's."""

    command: tuple[str, ...] | None = None
    trials: int | None = None
    timeout: float | None = None
    collect: tuple[str, ...] | None = None     # REPLACES the recipe's collector list
    gpus: str | None = None                    # "all" or "0,1": local trials in parallel
    executor: str | None = None                # local | slurm
    baseline: bool | None = None
    ticket: str | None = None                  # replaces the recipe's ticket
    env_mode: str | None = None                # replaces env_passthrough_mode
    stop_after_events: int | None = None       # overlay halves of the recipe's stop_after
    max_trials: int | None = None
    skip_remote_probe: bool = False            # submit without checking a remote node first


_FLAGS = {  # recipe key -> the flag that sets it, with what it allows
    "trials": f"--trials (1 to {MAX_TRIALS_PER_CELL})",
    "timeout_per_trial": f"--timeout (seconds above 0, at most {MAX_TIMEOUT_S:g})",
    "ticket": "--ticket",
    "env_passthrough_mode": f"--env-passthrough-mode ({', '.join(ENV_MODES)})",
    "stop_after": "--stop-after-events/--max-trials",
}


def parse_collect_flag(value: str) -> tuple[str, ...]:
    """`--collect a,b` -> ("a", "b"); `--collect none` -> () (no collector at all). An empty
    value, an empty name (`''`, `,`, `a,`) or one with spaces is refused, never read as no
    collector: `none` is how that is asked for."""
    if value == "none":
        return ()
    names = tuple(value.split(","))
    if not all(names) or any(c.isspace() for c in value):
        raise UserError(f"--collect: {printable(value)} has an empty collector name or a space; "
                        f"give names separated by commas without spaces (cprofile,torch), or "
                        f"none for no collector")
    if "none" in names:
        raise UserError("--collect: 'none' means no collector and cannot be combined with names")
    if len(set(names)) != len(names):
        raise UserError(f"--collect: a collector is named twice in {printable(value)}")
    return names


def apply_overrides(recipe: Recipe, overrides: Overrides) -> Recipe:
    """`recipe` with the flags' values, checked by its rules; `UserError` naming the flag."""
    plain = {"trials": overrides.trials, "timeout_per_trial": overrides.timeout,
             "baseline": overrides.baseline, "ticket": overrides.ticket,
             "env_passthrough_mode": overrides.env_mode}
    updates: dict[str, Any] = {k: v for k, v in plain.items() if v is not None}
    if overrides.collect is not None:
        updates["collect"] = {n: recipe.collect.get(n) for n in overrides.collect}
    if overrides.executor is not None or overrides.gpus is not None:
        updates["executor"] = _executor_override(recipe, overrides)
    stop_after = _stop_after(recipe, overrides)
    if stop_after is not None:
        updates["stop_after"] = stop_after
    if overrides.trials is not None and (stop_after or recipe.stop_after) is not None:
        raise UserError("--trials: with stop_after the cap on trials per cell is max_trials; "
                        "use --max-trials instead")
    if not updates:
        return recipe
    # With stop_after the recipe's trials is unused; left out so a new max_trials is no clash.
    kept = recipe.model_dump(exclude_unset=True, exclude={"trials"} if stop_after else None)
    try:
        return Recipe.model_validate({**kept, **updates})
    except ValidationError as exc:
        loc = exc.errors()[0]["loc"] or ("",)
        raise UserError(f"{_FLAGS.get(str(loc[0]), 'the flags')}: "
                        f"{format_validation_error(exc)}") from None


def _stop_after(recipe: Recipe, overrides: Overrides) -> dict[str, Any] | None:
    if overrides.stop_after_events is None and overrides.max_trials is None:
        return None
    block: dict[str, Any] = recipe.stop_after.model_dump() if recipe.stop_after else {}
    if overrides.stop_after_events is not None:
        block["events"] = overrides.stop_after_events
    if overrides.max_trials is not None:
        block["max_trials"] = overrides.max_trials
    if "max_trials" not in block:
        raise UserError("--stop-after-events requires --max-trials (or stop_after.max_trials "
                        "in the recipe): the loop needs a hard cap on trials per cell")
    if "events" not in block:
        raise UserError("--max-trials requires --stop-after-events (or stop_after.events in "
                        "the recipe): the number of trials with the event verdict that stops "
                        "a cell")
    return block


def _executor_override(recipe: Recipe, overrides: Overrides) -> ExecutorBlock:
    """The executor block the flags leave (checked against its kind's options when the sweep
    is prepared): another kind drops the recipe's settings, which do not apply to it."""
    fields = recipe.executor.model_dump(exclude_unset=True)
    if overrides.executor is not None and overrides.executor != recipe.executor.kind:
        fields = {"kind": overrides.executor}
    if overrides.gpus is not None:
        fields["gpus"] = overrides.gpus
    return ExecutorBlock(**fields)
