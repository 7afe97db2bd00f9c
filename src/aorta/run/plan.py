"""Recipe + command-line overrides -> Plan: the cells (cartesian product of axes) and trials.
Building a plan checks all that can be checked without running (collector options and
conflicts, axis variables that disagree) and does no I/O."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from aorta.base.errors import RecipeError, UserError
from aorta.base.names import check_name, name_problem, printable, shorten
from aorta.base.redaction import PATTERN_ONLY
from aorta.collectors.base import CollectorOptions
from aorta.recipe.schema import ExecutorBlock, LoadedRecipe, Recipe, Variant, arguments
from aorta.run.overrides import Overrides, apply_overrides

DEFAULT_CELL = "default"
MAX_PLANNED_TRIALS = 100_000   # baseline trials included


@dataclass(frozen=True)
class Cell:
    """One combination of axis variants: its environment and the arguments it appends."""

    name: str
    variants: tuple[tuple[str, str], ...]      # (axis, variant) in axis order
    env: Mapping[str, str]
    args: tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    recipe: Recipe                              # the recipe after overrides
    source: Path | None
    source_sha256: str | None
    run_name: str
    command: tuple[str, ...]
    cells: tuple[Cell, ...]
    collectors: Mapping[str, CollectorOptions]  # outermost first
    #: The executor's checked options (`aorta.run.executors.executor_options`), once known.
    executor: BaseModel | None = None

    @property
    def trials(self) -> int:
        return self.recipe.trials_per_cell

    def fingerprint(self) -> str:
        """Identity of what a trial measures. Trial count and timeout are left out, so a rerun
        with more trials extends a run; credentials are redacted first, so a rotated token
        makes no other run and no hash of a secret reaches run.json."""
        ident = {"command": PATTERN_ONLY.argv(self.command),
                 "cells": [[c.name, PATTERN_ONLY.env(c.env), PATTERN_ONLY.argv(c.args)]
                           for c in self.cells],
                 "collectors": {n: o.model_dump(mode="json") for n, o in self.collectors.items()},
                 "env": PATTERN_ONLY.env(self.recipe.env),
                 "env_passthrough_mode": self.recipe.env_passthrough_mode}
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()

    def resolved_recipe(self) -> dict[str, Any]:
        """The recipe after overrides, with bundles expanded and options typed: reloadable,
        except that credentials are written as `<redacted>`."""
        # As a recipe would say it: the kind unless the default, and non-default options.
        options = self.executor or self.recipe.executor
        executor = options.model_dump(exclude_defaults=True)
        kind = getattr(options, "kind", "local")
        if kind != ExecutorBlock().kind:
            executor = {"kind": kind, **executor}
        doc: dict[str, Any] = {
            "schema_version": self.recipe.schema_version,
            "mode": "probe",
            "ticket": self.recipe.ticket or self.run_name,
            "trials": self.recipe.trials_per_cell,
            "timeout_per_trial": self.recipe.timeout_per_trial,
            "kill_grace_s": self.recipe.kill_grace_s,
            "max_log_mib": self.recipe.max_log_mib,
            "env": PATTERN_ONLY.env(self.recipe.env),
            "command": PATTERN_ONLY.argv(self.command),
            "collect": {n: o.model_dump(mode="json") for n, o in self.collectors.items()},
            "env_passthrough_mode": self.recipe.env_passthrough_mode,
            "axes": {axis: {name: {"env": PATTERN_ONLY.env(v.env),
                                   "args": PATTERN_ONLY.argv(v.args)}
                            for name, v in variants.items()}
                     for axis, variants in self.recipe.all_axes().items()},
            "executor": executor,
            "baseline": self.recipe.baseline,
            "retain": self.recipe.retain.model_dump(),
        }
        if self.recipe.stop_after is not None:
            del doc["trials"]   # max_trials is the cap
            doc["stop_after"] = self.recipe.stop_after.model_dump()
        return doc


def build_plan(loaded: LoadedRecipe, overrides: Overrides) -> Plan:
    """Apply overrides, expand the axes, validate collectors and conflicts."""
    recipe = apply_overrides(loaded.recipe, overrides)
    source = str(loaded.path) if loaded.path else "recipe"
    command = overrides.command or (tuple(recipe.command) if recipe.command else None)
    if not command:
        raise UserError("no command to run: put it after '--' (aorta sweep run --recipe R -- "
                        "python bench.py) or give the recipe a 'command:' key")
    if command[0].startswith("-"):
        raise UserError(f"the command starts with {command[0]!r}, which looks like an aorta "
                        f"option: put aorta's options before '--'")
    try:
        arguments(list(command))
    except ValueError as exc:       # only a caller of aorta.sweep can pass such an argument
        raise UserError(f"the command: {exc}") from None
    collectors = _validate_collectors(recipe.collect, source, overrides.collect is not None)
    cells = _expand_cells(recipe.all_axes(), source)
    planned = len(cells) * recipe.trials_per_cell * (2 if recipe.baseline else 1)
    if planned > MAX_PLANNED_TRIALS:
        raise UserError(f"{source}: {len(cells)} cell(s) x {recipe.trials_per_cell} trial(s)"
                        f"{' x 2 (baseline)' if recipe.baseline else ''} = {planned} trials; at "
                        f"most {MAX_PLANNED_TRIALS} per sweep: use fewer trials or cells")
    return Plan(recipe=recipe, source=loaded.path, source_sha256=loaded.sha256,
                run_name=_run_name(recipe, loaded.path), command=tuple(command),
                cells=cells, collectors=collectors)


def _validate_collectors(raw: Mapping[str, Any], source: str,
                         from_flag: bool) -> dict[str, CollectorOptions]:
    from aorta.collectors.conflicts import check_conflicts
    from aorta.collectors.registry import get, wrap_order

    try:
        validated = {name: get(name).validate(options) for name, options in raw.items()}
        check_conflicts(validated)
    except UserError as exc:
        raise type(exc)(f"{'--collect' if from_flag else source}: {exc}") from None
    return {n: validated[n] for n in wrap_order(list(validated))}


def _expand_cells(axes: Mapping[str, Mapping[str, Variant]], source: str) -> tuple[Cell, ...]:
    if not axes:
        return (Cell(DEFAULT_CELL, (), {}, ()),)
    # Variant names cannot hold "-", so joined cell names are unique.
    cells = []
    for combo in itertools.product(*[[(a, n, v) for n, v in vs.items()] for a, vs in axes.items()]):
        env: dict[str, str] = {}
        owner: dict[str, str] = {}
        args: list[str] = []
        for axis, name, variant in combo:
            for key, value in variant.env.items():
                if key in env and env[key] != value:
                    raise RecipeError(
                        f"{source}: axes: variants {owner[key]} and {axis}.{name} set {key} to "
                        f"different values in one cell; rename the variable in one of them or "
                        f"drop it")
                env[key], owner[key] = value, f"{axis}.{name}"
            args.extend(variant.args)
        variants = tuple((axis, name) for axis, name, _ in combo)
        # A long joined name is shortened with a hash of all of it (the variants are kept).
        cells.append(Cell(shorten("-".join(name for _, name, _ in combo)), variants, env,
                          tuple(args)))
    if len({c.name for c in cells}) != len(cells):
        raise RecipeError(f"{source}: axes: two cells get the same directory name; rename a "
                          f"variant")
    return tuple(cells)


def _run_name(recipe: Recipe, path: Path | None) -> str:
    """The ticket, else the recipe file's name (example recipes are all recipe.yaml, so their
    directory names them better), shortened when long; `UserError` when it cannot be a name."""
    if recipe.ticket:
        return recipe.ticket
    if path is None:
        return "adhoc"
    name = path.resolve().parent.name if path.stem == "recipe" else path.stem
    problem = name_problem(name)
    if problem is not None:
        raise UserError(f"{path}: the run would be named {printable(name)} after the recipe "
                        f"file, which {problem}; add 'ticket: NAME' to the recipe (letters, "
                        f"digits, _ . -) or rename the file")
    return check_name("run name", shorten(name), "add 'ticket: NAME' to the recipe")
