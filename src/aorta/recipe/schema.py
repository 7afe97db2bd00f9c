"""The recipe: a strict, typed description of a sweep, and `load_recipe`, the only YAML reader.
Every error names the file, the dotted key path, the bad value and what is allowed, on one line.
Every key, its default and meaning, in a sample recipe: docs/sweep.md, "Recipes".
"""

from __future__ import annotations

import hashlib
import math
import re
import shlex
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from aorta.base.errors import RecipeError
from aorta.base.names import MAX_NAME_BYTES, is_plain_name
from aorta.base.schema_errors import format_validation_error
from aorta.recipe.limits import MAX_TRIALS_PER_CELL

SCHEMA_VERSION = 1
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VARIANT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.]*")
MAX_CELLS = 10_000
MAX_TIMEOUT_S = 7 * 24 * 3600.0
MAX_GRACE_S = 3600.0
MAX_LOG_MIB = 1024
_MAX_NAME_CHARS = 64
_MAX_VALUE_BYTES = 128 << 10       # Linux's limit for one argument or environment string
_MAX_ITEMS = 4096

#: Named environment bundles for ROCm/aorta's `mitigation_axis` / `diagnostic_axis` keys.
BUNDLES: dict[str, dict[str, str]] = {
    "none": {},
    "tf32_off": {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "0", "NVIDIA_TF32_OVERRIDE": "0"},
    "xnack": {"HSA_XNACK": "1"},
    "launch_blocking": {"CUDA_LAUNCH_BLOCKING": "1", "AMD_SERIALIZE_KERNEL": "3"},
}


def _env_mapping(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("must be a mapping of NAME: value")
    if len(value) > _MAX_ITEMS:
        raise ValueError(f"has {len(value)} variables; at most {_MAX_ITEMS}")
    out = {}
    for key, val in value.items():
        if not isinstance(key, str) or not _ENV_NAME.fullmatch(key) or len(key) > 256:
            raise ValueError(f"{key!r} is not a valid environment variable name "
                             f"(letters, digits, _; not starting with a digit)")
        if isinstance(val, bool) or not isinstance(val, (str, int, float)) or (
                isinstance(val, float) and not math.isfinite(val)):
            raise ValueError(f"the value of {key} must be a string (quote it in YAML)")
        if "\0" in str(val):
            raise ValueError(f"the value of {key} contains a NUL byte")
        if len(str(val).encode("utf-8", "surrogateescape")) > _MAX_VALUE_BYTES:
            raise ValueError(f"the value of {key} is longer than {_MAX_VALUE_BYTES >> 10} KiB")
        out[key] = str(val)
    return out


def arguments(value: Any) -> Any:
    """A list of command-line arguments: strings without NUL, of a size exec accepts."""
    if not isinstance(value, list):
        return value
    if len(value) > _MAX_ITEMS:
        raise ValueError(f"has {len(value)} arguments; at most {_MAX_ITEMS}")
    for arg in value:
        if isinstance(arg, str) and "\0" in arg:
            raise ValueError("an argument contains a NUL byte")
        if isinstance(arg, str) and len(arg.encode("utf-8", "surrogateescape")) > _MAX_VALUE_BYTES:
            raise ValueError(f"an argument is longer than {_MAX_VALUE_BYTES >> 10} KiB")
    return value


def plain_text(value: Any) -> Any:
    """A setting passed to another program: no control characters."""
    if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError("contains a control character")
    return value


def _check_cells(cells: int) -> None:
    if cells > MAX_CELLS:
        raise ValueError(f"the axes make {cells} cells; at most {MAX_CELLS} are accepted "
                         f"(use fewer axes or variants, or several recipes)")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Variant(_Strict):
    """One value of an axis: environment variables and arguments appended to the command."""

    env: dict[str, str] = Field(default_factory=dict)
    args: list[str] = Field(default_factory=list)

    _check_env = field_validator("env", mode="before")(_env_mapping)
    _check_args = field_validator("args", mode="before")(arguments)


class ExecutorBlock(BaseModel):
    """`executor:`, where trials run: `kind` names an executor (`aorta.run.executors`), the
    other keys are that executor's options, checked against them when the plan is built."""

    model_config = ConfigDict(extra="allow", frozen=True)

    kind: str = "local"


RetainLevel = Literal["none", "log", "summary", "full"]


class RetainPolicy(_Strict):
    """What each trial keeps once its metrics are read, by verdict (`RETAIN_LEVELS`)."""

    on_pass: RetainLevel = "full"
    on_fail: RetainLevel = "full"
    on_error: RetainLevel = "full"

    def level(self, verdict: str) -> str:
        return str(getattr(self, f"on_{verdict}"))


class StopAfter(_Strict):
    """Stop a cell early: once `events` of its trials ended with `event_verdict`, or
    `max_trials` ran, its remaining trials are skipped."""

    events: int = Field(ge=1, le=MAX_TRIALS_PER_CELL, strict=True)
    max_trials: int = Field(ge=1, le=MAX_TRIALS_PER_CELL, strict=True)
    event_verdict: Literal["pass", "fail", "error"] = "fail"

    @model_validator(mode="after")
    def _cap(self) -> StopAfter:
        if self.max_trials < self.events:
            raise ValueError(f"max_trials ({self.max_trials}) is below events "
                             f"({self.events}): the cell could never stop on events; raise "
                             f"max_trials or lower events")
        return self


class Recipe(_Strict):
    schema_version: int
    mode: str = "probe"
    ticket: str | None = None
    trials: int = Field(1, ge=1, le=MAX_TRIALS_PER_CELL, strict=True)
    timeout_per_trial: float | None = Field(None, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False,
                                            strict=True)
    kill_grace_s: float = Field(10.0, ge=0, le=MAX_GRACE_S, allow_inf_nan=False, strict=True)
    max_log_mib: int = Field(32, ge=1, le=MAX_LOG_MIB, strict=True)  # per log: head + tail
    env: dict[str, str] = Field(default_factory=dict)
    command: list[str] | None = None
    collect: dict[str, dict[str, Any] | None] = Field(default_factory=dict)
    env_passthrough_mode: Literal["inherit", "clean", "file"] = "inherit"
    retain: RetainPolicy = Field(default_factory=lambda: RetainPolicy())
    stop_after: StopAfter | None = None
    axes: dict[str, dict[str, Variant]] = Field(default_factory=dict)
    mitigation_axis: list[str] | None = None
    diagnostic_axis: list[str] | None = None
    executor: ExecutorBlock = Field(default_factory=lambda: ExecutorBlock())
    baseline: bool = Field(False, strict=True)   # interleave no-collector trials: overhead

    _check_env = field_validator("env", mode="before")(_env_mapping)

    @field_validator("retain", "stop_after", mode="before")
    @classmethod
    def _block(cls, value: Any, info: Any) -> Any:
        if value is not None and not isinstance(value, (dict, BaseModel)):
            shape = ("{on_pass, on_fail, on_error}, each none, log, summary or full"
                     if info.field_name == "retain" else
                     "{events, max_trials, event_verdict}")
            raise ValueError(f"must be a mapping {shape}")
        return value

    @field_validator("schema_version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> int:
        if value != SCHEMA_VERSION or isinstance(value, bool):
            raise ValueError(f"this aorta reads schema_version {SCHEMA_VERSION}; upgrade aorta "
                             f"for a newer recipe or rewrite it for version {SCHEMA_VERSION}")
        return int(value)

    @field_validator("mode")
    @classmethod
    def _mode(cls, value: str) -> str:
        if value != "probe":
            raise ValueError("only mode 'probe' (run a command over axes of variants) is "
                             "supported; remove the key or set it to probe")
        return value

    @field_validator("ticket")
    @classmethod
    def _ticket(cls, value: str | None) -> str | None:
        if value is not None and not is_plain_name(value):
            raise ValueError("must be a directory-safe name (letters, digits, _ . -, not "
                             "starting with . or -)")
        if value is not None and len(value.encode()) > MAX_NAME_BYTES:
            raise ValueError(f"is longer than {MAX_NAME_BYTES} characters")
        return value

    @field_validator("command", mode="before")
    @classmethod
    def _command(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = shlex.split(value)  # a convenience for writing; nothing runs through a shell
        if isinstance(value, list) and not value:
            raise ValueError("must not be empty")
        return arguments(value)

    @field_validator("collect", mode="before")
    @classmethod
    def _collect(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, str):
            raise ValueError("must be a list of collector names or a mapping of name: options")
        if isinstance(value, list):
            if not all(isinstance(v, str) for v in value):
                raise ValueError("a list of collector names must hold only strings")
            if len(set(value)) != len(value):
                raise ValueError("a collector is named twice")
            return {name: None for name in value}
        return value

    @field_validator("axes", mode="before")
    @classmethod
    def _axes_size(cls, value: Any) -> Any:
        """Counted before any variant is built, so a huge matrix is refused at once."""
        if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
            _check_cells(math.prod(max(1, len(v)) for v in value.values()))
        return value

    @field_validator("axes")
    @classmethod
    def _axes(cls, value: dict[str, dict[str, Variant]]) -> dict[str, dict[str, Variant]]:
        for axis, variants in value.items():
            if not _VARIANT_NAME.fullmatch(axis) or len(axis) > _MAX_NAME_CHARS:
                raise ValueError(f"axis name {axis[:_MAX_NAME_CHARS]!r} must use letters, "
                                 f"digits, _ and . (at most {_MAX_NAME_CHARS})")
            if not variants:
                raise ValueError(f"axis {axis!r} has no variants")
            for name in variants:
                if not _VARIANT_NAME.fullmatch(name) or len(name) > _MAX_NAME_CHARS:
                    raise ValueError(f"variant name {name[:_MAX_NAME_CHARS]!r} of axis "
                                     f"{axis!r} must use letters, digits, _ and . (at most "
                                     f"{_MAX_NAME_CHARS}; it becomes part of a directory name)")
        return value

    @field_validator("mitigation_axis", "diagnostic_axis")
    @classmethod
    def _bundles(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("must name at least one bundle (use [none] for the baseline)")
        if unknown := [v for v in value if v not in BUNDLES]:
            raise ValueError(f"unknown bundle(s) {unknown}; known: {', '.join(sorted(BUNDLES))}")
        return value

    @model_validator(mode="after")
    def _one_trial_count(self) -> Recipe:
        if self.stop_after is not None and "trials" in self.model_fields_set \
                and self.trials != self.stop_after.max_trials:
            raise ValueError(f"trials ({self.trials}) and stop_after.max_trials "
                             f"({self.stop_after.max_trials}) disagree: with stop_after the "
                             f"cap on trials per cell is max_trials; drop trials")
        return self

    @property
    def trials_per_cell(self) -> int:
        return self.stop_after.max_trials if self.stop_after is not None else self.trials

    @model_validator(mode="after")
    def _no_axis_name_clash(self) -> Recipe:
        for sugar in ("mitigation", "diagnostic"):
            if getattr(self, f"{sugar}_axis") is not None and sugar in self.axes:
                raise ValueError(f"axes.{sugar} clashes with {sugar}_axis; keep one of them")
        _check_cells(math.prod(len(v) for v in self.all_axes().values()))
        return self

    def all_axes(self) -> dict[str, dict[str, Variant]]:
        """Every axis in cell-name order: the bundle axes first, then `axes` as written."""
        out: dict[str, dict[str, Variant]] = {}
        for sugar in ("mitigation", "diagnostic"):
            if (names := getattr(self, f"{sugar}_axis")) is not None:
                out[sugar] = {n: Variant(env=BUNDLES[n]) for n in names}
        out.update(self.axes)
        return out


class LoadedRecipe(BaseModel):
    model_config = ConfigDict(frozen=True)

    recipe: Recipe
    path: Path | None
    sha256: str | None


def load_recipe(path: Path) -> LoadedRecipe:
    """Read and validate a YAML (or JSON) recipe; `RecipeError` with a one-line message."""
    from aorta.recipe.yaml_load import load_yaml, read_recipe_bytes

    data = read_recipe_bytes(path)
    recipe = recipe_from_mapping(load_yaml(data, str(path)), str(path))
    return LoadedRecipe(recipe=recipe, path=path, sha256=hashlib.sha256(data).hexdigest())


def recipe_from_mapping(doc: Any, source: str) -> Recipe:
    """Validate an already-parsed recipe document; errors start with `source`."""
    if not isinstance(doc, dict):
        raise RecipeError(f"{source}: a recipe must be a mapping of keys, got "
                          f"{type(doc).__name__}")
    if "schema_version" not in doc:
        raise RecipeError(f"{source}: schema_version: required key is missing (add "
                          f"'schema_version: {SCHEMA_VERSION}')")
    try:
        return Recipe.model_validate(doc)
    except ValidationError as exc:
        raise RecipeError(f"{source}: {format_validation_error(exc, (), _allowed_keys)}") from None


def _allowed_keys(parent: tuple[Any, ...]) -> list[str] | None:
    blocks: dict[tuple[Any, ...], type[BaseModel]] = {
        (): Recipe, ("retain",): RetainPolicy, ("stop_after",): StopAfter}
    model = Variant if parent[:1] == ("axes",) and len(parent) == 3 else blocks.get(parent)
    return None if model is None else list(model.model_fields)
