"""The command-line flags that replace or overlay a recipe's run settings: `--ticket`,
`--env-passthrough-mode`, `--stop-after-events` and `--max-trials`.

`--ticket` and `--env-passthrough-mode` replace the recipe's value when given. The two
stop-after flags overlay their halves of the recipe's `stop_after` block (the verdict stays
the recipe's, else `fail`); both halves must end up known: a block without a cap is refused,
since the loop needs one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from aorta.errors import UserError
from aorta.recipe import ENV_MODES, Recipe, StopAfter
from aorta.schema_errors import format_validation_error
from aorta.store.names import MAX_NAME_BYTES, is_plain_name, printable

if TYPE_CHECKING:
    from aorta.plan import Overrides

__all__ = ["apply_run_overrides"]


def apply_run_overrides(recipe: Recipe, overrides: Overrides) -> Recipe:
    """`recipe` with the flags' values in place; `UserError` naming the flag when bad."""
    updates: dict[str, Any] = {}
    if overrides.ticket is not None:
        updates["ticket"] = _ticket(overrides.ticket)
    if overrides.env_mode is not None:
        if overrides.env_mode not in ENV_MODES:
            raise UserError(f"--env-passthrough-mode: {printable(overrides.env_mode)} is not "
                            f"one of {', '.join(ENV_MODES)}")
        updates["env_passthrough_mode"] = overrides.env_mode
    stop_after = _stop_after(recipe, overrides)
    if stop_after is not None:
        updates["stop_after"] = stop_after
    if (overrides.trials is not None and (stop_after or recipe.stop_after) is not None):
        raise UserError("--trials: with stop_after the cap on trials per cell is max_trials; "
                        "use --max-trials instead")
    return recipe.model_copy(update=updates) if updates else recipe


def _ticket(value: str) -> str:
    if not is_plain_name(value) or len(value.encode()) > MAX_NAME_BYTES:
        raise UserError(f"--ticket: {printable(value)} is not a directory-safe name (letters, "
                        f"digits, _ . -, not starting with . or -, at most {MAX_NAME_BYTES} "
                        f"characters)")
    return value


def _stop_after(recipe: Recipe, overrides: Overrides) -> StopAfter | None:
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
    try:
        return StopAfter.model_validate(block)
    except ValidationError as exc:
        raise UserError(f"--stop-after-events/--max-trials: "
                        f"{format_validation_error(exc, ('stop_after',))}") from None
