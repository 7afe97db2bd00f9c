"""Recipe + command-line overrides -> Plan: the cells (cartesian product of axes) and trials.

Building a plan validates everything that can be checked without running: collector options,
collector conflicts, axis variables that disagree. It does no I/O.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from aorta.collectors.base import CollectorOptions
from aorta.errors import RecipeError, UserError
from aorta.recipe import ExecutorConfig, LoadedRecipe, Recipe, Variant
from aorta.schema_errors import format_validation_error

__all__ = ["Cell", "Overrides", "Plan", "build_plan", "parse_collect_flag"]

DEFAULT_CELL = "default"


@dataclass(frozen=True)
class Cell:
    """One combination of axis variants: its environment and the arguments it appends."""

    name: str
    variants: tuple[tuple[str, str], ...]      # (axis, variant) in axis order
    env: Mapping[str, str]
    args: tuple[str, ...]


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


@dataclass(frozen=True)
class Plan:
    recipe: Recipe                              # the recipe after overrides
    source: Path | None
    source_sha256: str | None
    run_name: str
    command: tuple[str, ...]
    cells: tuple[Cell, ...]
    collectors: Mapping[str, CollectorOptions]  # outermost first
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def trials(self) -> int:
        return self.recipe.trials

    def trial_ids(self) -> list[tuple[Cell, int]]:
        return [(cell, i) for cell in self.cells for i in range(self.trials)]

    def fingerprint(self) -> str:
        """Identity of what a trial measures. Trial count and timeout are left out, so a rerun
        with more trials extends a run instead of being refused."""
        ident = {
            "command": list(self.command),
            "cells": [[c.name, dict(c.env), list(c.args)] for c in self.cells],
            "collectors": {n: o.model_dump(mode="json") for n, o in self.collectors.items()},
            "env": self.recipe.env,
            "env_passthrough_mode": self.recipe.env_passthrough_mode,
        }
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()

    def resolved_recipe(self) -> dict[str, Any]:
        """The recipe after overrides, with bundles expanded and options typed: reloadable."""
        doc: dict[str, Any] = {
            "schema_version": self.recipe.schema_version,
            "mode": "probe",
            "ticket": self.recipe.ticket or self.run_name,
            "trials": self.recipe.trials,
            "timeout_per_trial": self.recipe.timeout_per_trial,
            "kill_grace_s": self.recipe.kill_grace_s,
            "env": dict(self.recipe.env),
            "command": list(self.command),
            "collect": {n: o.model_dump(mode="json") for n, o in self.collectors.items()},
            "env_passthrough_mode": self.recipe.env_passthrough_mode,
            "axes": {axis: {name: v.model_dump() for name, v in variants.items()}
                     for axis, variants in self.recipe.all_axes().items()},
            "executor": self.recipe.executor.model_dump(exclude_defaults=True),
            "baseline": self.recipe.baseline,
        }
        return doc


def parse_collect_flag(value: str) -> tuple[str, ...]:
    """`--collect a,b` -> ("a", "b"); `--collect none` -> () (no collector at all)."""
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    if names == ("none",):
        return ()
    if "none" in names:
        raise UserError("--collect: 'none' means no collector and cannot be combined with names")
    if len(set(names)) != len(names):
        raise UserError(f"--collect: a collector is named twice in {value!r}")
    return names


def build_plan(loaded: LoadedRecipe, overrides: Overrides) -> Plan:
    """Apply overrides, expand the axes, validate collectors and conflicts."""
    recipe = loaded.recipe
    source = str(loaded.path) if loaded.path else "recipe"
    updates: dict[str, Any] = {}
    if overrides.trials is not None:
        updates["trials"] = overrides.trials
    if overrides.timeout is not None:
        updates["timeout_per_trial"] = overrides.timeout
    if overrides.collect is not None:
        # The seed's rule: the flag replaces the list; survivors keep their option blocks.
        updates["collect"] = {n: recipe.collect.get(n) for n in overrides.collect}
    if overrides.baseline is not None:
        updates["baseline"] = overrides.baseline
    if overrides.executor is not None or overrides.gpus is not None:
        updates["executor"] = _executor_override(recipe, overrides)
    if updates:
        recipe = recipe.model_copy(update=updates)
    command = overrides.command or (tuple(recipe.command) if recipe.command else None)
    if not command:
        raise UserError("no command to run: put it after '--' (aorta sweep run --recipe R -- "
                        "python bench.py) or give the recipe a 'command:' key")
    if command[0].startswith("-"):
        raise UserError(f"the command starts with {command[0]!r}, which looks like an aorta "
                        f"option: put aorta's options before '--'")
    collectors = _validate_collectors(recipe.collect, source, overrides.collect is not None)
    return Plan(recipe=recipe, source=loaded.path, source_sha256=loaded.sha256,
                run_name=_run_name(recipe, loaded.path), command=tuple(command),
                cells=_expand_cells(recipe.all_axes(), source), collectors=collectors)


def _executor_override(recipe: Recipe, overrides: Overrides) -> ExecutorConfig:
    fields = recipe.executor.model_dump(exclude_unset=True)
    if overrides.executor is not None and overrides.executor != recipe.executor.kind:
        fields = {"kind": overrides.executor}   # another kind: the recipe's settings do not apply
    if overrides.gpus is not None:
        fields["gpus"] = overrides.gpus
    try:
        return ExecutorConfig.model_validate(fields)
    except ValidationError as exc:
        raise UserError(f"--executor/--gpus: {format_validation_error(exc, ('executor',))}") from None


def _validate_collectors(raw: Mapping[str, Any], source: str,
                         from_flag: bool) -> dict[str, CollectorOptions]:
    from aorta.collectors.conflicts import check_conflicts
    from aorta.collectors.registry import get, wrap_order

    where = "--collect" if from_flag else source
    validated: dict[str, CollectorOptions] = {}
    for name, options in raw.items():
        try:
            validated[name] = get(name).validate(options)
        except UserError as exc:
            raise type(exc)(f"{where}: {exc}") from None
    try:
        check_conflicts(validated)
    except UserError as exc:
        raise type(exc)(f"{where}: {exc}") from None
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
        cells.append(Cell("-".join(name for _, name, _ in combo), variants, env, tuple(args)))
    return tuple(cells)


def _run_name(recipe: Recipe, path: Path | None) -> str:
    if recipe.ticket:
        return recipe.ticket
    if path is None:
        return "adhoc"
    # Example recipes are all called recipe.yaml: their directory names them better.
    if path.stem == "recipe" and path.parent.name:
        return path.parent.resolve().name
    return path.stem
