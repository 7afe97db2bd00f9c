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
    """`raw` (None means defaults) -> `model`, or `OptionError` with `collect.<name>.<key>: ...`."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise OptionError(f"collect.{name}: options must be a mapping of option -> value, "
                          f"got {type(raw).__name__} ({raw!r})")
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        def allowed(parent: tuple[Any, ...]) -> list[str] | None:
            return list(model.model_fields) if not parent else None

        raise OptionError(format_validation_error(exc, ("collect", name), allowed)) from None


def option_table(model: type[BaseModel]) -> list[tuple[str, str, str]]:
    """(option, default, description) rows, for `aorta collectors` and the docs."""
    rows = []
    for key, field in model.model_fields.items():
        default = "required" if field.is_required() else repr(field.get_default(call_default_factory=True))
        rows.append((key, default, field.description or ""))
    return rows


def split_words(text: str) -> list[str]:
    """A list option written as one string: `"kernel, hip rccl"` -> ["kernel", "hip", "rccl"]."""
    return [part for part in re.split(r"[,\s]+", text) if part]
