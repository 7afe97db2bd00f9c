"""`sweep run|plan` flags that replace or overlay a recipe's run settings (see
`aorta.run.overrides` for the rules)."""

from __future__ import annotations

from typing import Any

import click

from aorta.recipe.limits import ENV_MODES


def run_setting_options() -> list[Any]:
    return [
        click.option("--ticket", metavar="NAME",
                     help="Name the run directory (<output>/<NAME>/); replaces the recipe's "
                          "ticket."),
        click.option("--env-passthrough-mode", type=click.Choice(ENV_MODES),
                     help="The child's environment: inherit (aorta's own), clean (a minimal "
                          "one plus the recipe's), or file (inherit, and write it, secrets "
                          "redacted, to the trial's child.env, named by AORTA_ENV_FILE). "
                          "Replaces the recipe's env_passthrough_mode."),
        click.option("--stop-after-events", type=click.IntRange(min=1), metavar="K",
                     help="Stop a cell once K of its trials ended with stop_after's "
                          "event_verdict (default fail); needs a cap (--max-trials or the "
                          "recipe's stop_after.max_trials)."),
        click.option("--max-trials", type=click.IntRange(min=1), metavar="N",
                     help="With stop_after: run at most N trials per cell."),
    ]
