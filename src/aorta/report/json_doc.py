"""The report as JSON for scripts: the `Report` record itself, plus where the run lives.

Numbers stay raw (no rounding); a value that is not finite becomes null, never NaN.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from aorta.report.model import Report

__all__ = ["json_document", "render_json"]


def json_document(report: Report, run_dir: Path) -> dict[str, Any]:
    """`{"schema_version": 1, "run_dir": ..., "header": ..., "cells": [...], ...}`."""
    doc = report.to_json()
    return {"schema_version": doc.pop("schema_version"), "run_dir": str(run_dir), **doc}


def render_json(report: Report, run_dir: Path) -> str:
    return json.dumps(_finite(json_document(report, run_dir)), indent=2, allow_nan=False) + "\n"


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
