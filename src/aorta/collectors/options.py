"""Validating a collector's raw option mapping into its typed, frozen options model."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from aorta.base.errors import OptionError
from aorta.base.schema_errors import format_validation_error

M = TypeVar("M", bound=BaseModel)


def validate_options(name: str, model: type[M], raw: Mapping[str, Any] | None) -> M:
    """`raw` (None means defaults) -> `model`, or `OptionError` with `collect.<name>.<key>: ...`;
    an unknown key first (pydantic would report it last, and a typo is the likelier fix)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise OptionError(f"collect.{name}: options must be a mapping of option -> value, "
                          f"got {type(raw).__name__} ({raw!r})")
    known = model.model_fields
    if (unknown := next((key for key in raw if key not in known), None)) is not None:
        raise OptionError(f"collect.{name}.{unknown}: unknown key; allowed: "
                          f"{', '.join(sorted(known))}")
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        raise OptionError(format_validation_error(
            exc, ("collect", name), lambda parent: None if parent else list(known))) from None


def word_list(value: Any, lower: bool = False) -> Any:
    """A list option written as one string or as a list: `"kernel, hip rccl"` ->
    ["kernel", "hip", "rccl"]; strings stripped (and lower-cased with `lower`), empty ones and
    repeats dropped, order kept. Anything else is returned as it is, for the field's check."""
    if isinstance(value, str):
        value = [part for part in re.split(r"[,\s]+", value) if part]
    if not isinstance(value, (list, tuple)):
        return value
    out: list[Any] = []
    for item in value:
        if isinstance(item, str):
            item = item.strip().lower() if lower else item.strip()
            if not item:
                continue
        if item not in out:
            out.append(item)
    return out


def regex_option(value: str, empty: str) -> str:
    """`value` when it compiles as a regular expression; ValueError `empty` when it is ''."""
    if not value:
        raise ValueError(empty)
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"is not a valid regular expression: {exc}") from None
    return value
