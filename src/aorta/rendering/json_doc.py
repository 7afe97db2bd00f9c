"""JSON for scripts: strict (a value that is not finite becomes null, never NaN), indented,
numbers raw (no rounding)."""

from __future__ import annotations

import json
import math
from typing import Any


def json_text(doc: Any) -> str:
    """`doc` as indented strict JSON, without a final newline."""
    return json.dumps(finite(doc), indent=2, allow_nan=False)


def finite(value: Any) -> Any:
    """`value` with every NaN or infinity replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value
