"""The `proton` collector's options, checked in a fixed order so each message names the real fix:
unknown keys first (`validate_options`, since pydantic reports them last), then each value, then
combinations (`combination_problem`). The order: docs/collectors/proton.md, "Options".

Backend and mode facts: triton-lang/triton `third_party/proton/docs/backends-and-modes.md` and
the `triton` wheels 3.0-3.9 (`triton/profiler/proton.py`, `profile.py`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from aorta.collectors.base import CollectorOptions

BACKEND_MODES: dict[str, tuple[str, ...]] = {
    "cupti": ("pcsampling", "periodic_flushing"),
    "rocprofiler": ("pcsampling", "periodic_flushing"),
    "roctracer": ("periodic_flushing",),
}
#: Backends `mode: cli` cannot pin: the session starts as Proton's CLI starts it, which brings the
#: HIP runtime up only when Proton picks the backend (`_select_backend()`), and roctracer
#: records nothing without it.
CLI_UNPINNABLE = frozenset({"roctracer"})

Backend = Literal["auto", "cupti", "roctracer", "rocprofiler", "instrumentation"]
Granularity = Literal["cta", "warp", "warp_2", "warp_4", "warp_8", "warp_group", "warp_group_2",
                      "warp_group_4", "warp_group_8"]


class ProtonOptions(CollectorOptions):
    """Typed options of the `proton` collector; see docs/collectors/proton.md."""

    mode: Literal["cli", "env"] = Field(
        "cli", description="cli: aorta's launcher runs the script inside a Proton session "
                           "and finalizes it however the script ends; env: hand the payload "
                           "AORTA_PROTON_* variables; it calls proton.start() itself")
    backend: Backend = Field(
        "auto", description="Proton backend; auto omits -b and lets Proton pick the one of the "
                            "active runtime (recorded as proton_backend)")
    backend_mode: Literal["pcsampling", "periodic_flushing"] | None = Field(
        None, description="the backend's --mode (cupti, rocprofiler: pcsampling or "
                          "periodic_flushing; roctracer: periodic_flushing)")
    context: Literal["shadow", "python"] = Field(
        "shadow", description="shadow: proton.scope names; python: file:line@function call paths")
    data: Literal["tree", "trace"] = Field(
        "tree", description="tree: a .hatchet call tree; trace: a .chrome_trace timeline")
    instrumentation_mode: Literal["default", "mma", "pcsampling"] | None = Field(
        None, description="intra-kernel mode of backend: instrumentation")
    granularity: Granularity | None = Field(
        None, description="intra-kernel granularity of backend: instrumentation")
    hook: Literal["triton"] | None = Field(
        None, description="triton: record launch metadata (flops, bytes) of Triton kernels")

    @field_validator("*", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _combination(self) -> ProtonOptions:
        if (problem := combination_problem(self)) is not None:
            key, message = problem
            raise ValidationError.from_exception_data("ProtonOptions", [InitErrorDetails(
                type=PydanticCustomError("proton_combination", message),
                loc=(key,), input=getattr(self, key))])
        return self


def combination_problem(options: ProtonOptions) -> tuple[str, str] | None:
    """(key, message) for the first rule that `options` break together, else None."""
    knobs = [k for k in ("instrumentation_mode", "granularity") if getattr(options, k)]
    if options.backend_mode and knobs:
        return "backend_mode", (
            f"cannot be combined with {' and '.join(knobs)}: both render Proton's single "
            f"--mode; keep backend_mode for a tracing backend or the intra-kernel knobs for "
            f"backend: instrumentation")
    if knobs and options.backend != "instrumentation":
        return knobs[0], (
            f"is an intra-kernel knob and needs backend: instrumentation (backend is "
            f"{options.backend!r}); set backend: instrumentation or drop {knobs[0]}")
    if options.backend_mode:
        if (allowed := BACKEND_MODES.get(options.backend)) is None:
            modes = "; ".join(f"{b}: {', '.join(m)}" for b, m in BACKEND_MODES.items())
            return "backend_mode", (
                f"needs an explicit backend that has modes ({modes}), and backend is "
                f"{options.backend!r}")
        if options.backend_mode not in allowed:
            return "backend_mode", (
                f"must be one of {list(allowed)} for backend: {options.backend}")
    problem = cli_pin_problem(options)
    return None if problem is None else ("backend", problem)


def cli_pin_problem(options: ProtonOptions) -> str | None:
    """Why `options` pin a backend that Proton's CLI front-end cannot attach, else None."""
    if options.mode != "cli" or options.backend not in CLI_UNPINNABLE:
        return None
    return (f"{options.backend} cannot be pinned under mode: cli: the session starts as "
            f"Proton's CLI starts it, which initialises the HIP runtime only when Proton picks "
            f"the backend itself (_select_backend()), so a {options.backend} pin writes an "
            f"empty ROOT-only tree and exits 0 on Triton <= 3.7; use mode: env (the payload "
            f"calls proton.start() after the runtime is up) or backend: auto")


def mode_argument(options: ProtonOptions) -> str | None:
    """What Proton's `--mode` (or `start(mode=...)`) gets, or None: `backend_mode`, else
    `<instrumentation_mode or default>[:granularity=<g>]`."""
    if options.backend_mode:
        return options.backend_mode
    if not (options.instrumentation_mode or options.granularity):
        return None
    rendered: str = options.instrumentation_mode or "default"
    if options.granularity:
        rendered += f":granularity={options.granularity}"
    return rendered
