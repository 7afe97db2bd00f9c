"""Where a sweep's trials run. One line a kind: the module and class of its `Executor`
(`base.py` says what an executor does); `executor_class` finds the one a plan asks for."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aorta.run.executors.base import Executor, ExecutorOptions

EXECUTORS = {"local": "aorta.run.executors.local:LocalExecutor",
             "slurm": "aorta.run.executors.slurm.executor:SlurmExecutor"}


def executor_class(kind: str) -> type[Executor]:
    module, _, name = EXECUTORS[kind].partition(":")
    cls: type[Executor] = getattr(importlib.import_module(module), name)
    return cls


def executor_options(block: Mapping[str, Any], where: str) -> ExecutorOptions:
    """The `executor:` block checked against its kind's options; `UserError` naming `where`
    (the recipe, or the flags that changed it) and the key."""
    from pydantic import ValidationError

    from aorta.base.errors import UserError
    from aorta.base.names import printable
    from aorta.base.schema_errors import format_validation_error

    kind = block.get("kind", "local")
    if kind not in EXECUTORS:
        raise UserError(f"{where}: executor.kind: {printable(str(kind))} is not one of "
                        f"{', '.join(EXECUTORS)}")
    model = executor_class(kind).options_model
    try:
        return model.model_validate({**block, "kind": kind})
    except ValidationError as exc:   # an unknown key: the block's own keys are listed
        keys = sorted(model.model_fields)
        message = format_validation_error(exc, ("executor",), lambda p: None if p else keys)
        raise UserError(f"{where}: {message}") from None
