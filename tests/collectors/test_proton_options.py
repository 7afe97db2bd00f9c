"""Proton's options: every key's validation and message, the order of the checks, conflicts."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from pydantic import ValidationError

from aorta.collectors.conflicts import check_conflicts
from aorta.collectors.proton.collector import ProtonCollector
from aorta.collectors.proton.options import ProtonOptions, mode_argument
from aorta.base.errors import ConflictError, OptionError

PROTON = ProtonCollector()


def error_of(raw: Any) -> str:
    with pytest.raises(OptionError) as caught:
        PROTON.validate(raw)
    return str(caught.value)


def test_defaults() -> None:
    opts = PROTON.validate(None)
    assert opts == ProtonOptions()
    assert opts.model_dump() == {
        "mode": "cli", "backend": "auto", "backend_mode": None, "context": "shadow",
        "data": "tree", "instrumentation_mode": None, "granularity": None, "hook": None}


def test_values_are_stripped_and_lowercased() -> None:
    opts = PROTON.validate({"mode": " ENV ", "backend": "Cupti", "backend_mode": "PCSampling",
                            "context": "Python", "data": "TRACE", "hook": "Triton"})
    assert (opts.mode, opts.backend, opts.backend_mode, opts.context, opts.data, opts.hook) == \
        ("env", "cupti", "pcsampling", "python", "trace", "triton")


def test_options_are_frozen() -> None:
    with pytest.raises(ValidationError):
        PROTON.validate(None).backend = "cupti"  # type: ignore[misc]


@pytest.mark.parametrize(("key", "value", "allowed"), [
    ("mode", "shell", "'cli' or 'env'"),
    ("backend", "cuda", "'auto', 'cupti', 'roctracer', 'rocprofiler' or 'instrumentation'"),
    ("backend", "cupti_pcsampling", "'auto', 'cupti', 'roctracer', 'rocprofiler' or 'instrumentation'"),
    ("backend_mode", "sampling", "'pcsampling' or 'periodic_flushing'"),
    ("context", "stack", "'shadow' or 'python'"),
    ("data", "msgpack", "'tree' or 'trace'"),
    ("instrumentation_mode", "fast", "'default', 'mma' or 'pcsampling'"),
    ("granularity", "block", "'cta', 'warp', 'warp_2'"),
    ("hook", "launch", "'triton'"),
])
def test_enum_messages_name_key_value_and_allowed(key: str, value: str, allowed: str) -> None:
    raw = {key: value}
    if key in ("instrumentation_mode", "granularity"):
        raw["backend"] = "instrumentation"
    message = error_of(raw)
    assert message.startswith(f"collect.proton.{key}: Input should be ")
    assert allowed in message
    assert message.endswith(f"got {value!r}")


@pytest.mark.parametrize("value", [1, True, ["cupti"], {"a": 1}])
def test_non_string_values_are_refused(value: Any) -> None:
    message = error_of({"backend": value})
    assert message.startswith("collect.proton.backend: ") and repr(value) in message


def test_unknown_key_is_reported_before_any_bad_value() -> None:
    message = error_of({"backend": "nope", "sampling": "x", "data": "bad"})
    assert message == ("collect.proton.sampling: unknown key; allowed: backend, backend_mode, "
                       "context, data, granularity, hook, instrumentation_mode, mode")


def test_options_must_be_a_mapping() -> None:
    assert error_of(["cupti"]).startswith("collect.proton: options must be a mapping")


def test_enum_errors_come_before_combination_rules() -> None:
    message = error_of({"backend_mode": "pcsampling", "granularity": "warp", "context": "x"})
    assert message.startswith("collect.proton.context:")


def test_backend_mode_with_an_intra_kernel_knob_is_checked_first() -> None:
    # Breaks three rules; the conflict is named, since it is the one the fix depends on.
    message = error_of({"backend_mode": "pcsampling", "instrumentation_mode": "mma",
                        "granularity": "warp"})
    assert message.startswith("collect.proton.backend_mode: cannot be combined with "
                              "instrumentation_mode and granularity")
    assert "single --mode" in message and message.endswith("got 'pcsampling'")


@pytest.mark.parametrize("knob", ["instrumentation_mode", "granularity"])
@pytest.mark.parametrize("backend", ["auto", "cupti", "rocprofiler"])
def test_intra_kernel_knob_needs_instrumentation(knob: str, backend: str) -> None:
    value = "mma" if knob == "instrumentation_mode" else "warp_group_2"
    message = error_of({"backend": backend, knob: value})
    assert message.startswith(f"collect.proton.{knob}: is an intra-kernel knob and needs "
                              f"backend: instrumentation (backend is {backend!r})")


@pytest.mark.parametrize("backend", ["auto", "instrumentation"])
def test_backend_mode_needs_an_explicit_backend_with_modes(backend: str) -> None:
    message = error_of({"mode": "env", "backend": backend, "backend_mode": "periodic_flushing"})
    assert message.startswith("collect.proton.backend_mode: needs an explicit backend that has "
                              "modes (cupti: pcsampling, periodic_flushing; rocprofiler: "
                              "pcsampling, periodic_flushing; roctracer: periodic_flushing)")
    assert f"backend is {backend!r}" in message


def test_backend_mode_must_suit_the_backend() -> None:
    message = error_of({"mode": "env", "backend": "roctracer", "backend_mode": "pcsampling"})
    assert message == ("collect.proton.backend_mode: must be one of ['periodic_flushing'] for "
                       "backend: roctracer, got 'pcsampling'")


@pytest.mark.parametrize(("backend", "backend_mode"), [
    ("cupti", "pcsampling"), ("cupti", "periodic_flushing"), ("rocprofiler", "pcsampling"),
    ("rocprofiler", "periodic_flushing"), ("roctracer", "periodic_flushing"),
])
def test_every_allowed_backend_mode(backend: str, backend_mode: str) -> None:
    opts = PROTON.validate({"mode": "env", "backend": backend, "backend_mode": backend_mode})
    assert mode_argument(opts) == backend_mode


def test_roctracer_pin_under_cli_is_refused_at_load() -> None:
    message = error_of({"backend": "roctracer"})
    assert message.startswith("collect.proton.backend: roctracer cannot be pinned under "
                              "mode: cli")
    for part in ("_select_backend()", "empty ROOT-only tree", "Triton <= 3.7", "mode: env"):
        assert part in message


def test_roctracer_under_env_and_other_pins_under_cli_are_accepted() -> None:
    assert PROTON.validate({"mode": "env", "backend": "roctracer"}).backend == "roctracer"
    for backend in ("auto", "cupti", "rocprofiler", "instrumentation"):
        assert PROTON.validate({"backend": backend}).mode == "cli"


def test_mode_knobs_are_accepted_under_cli() -> None:
    # aorta's launcher passes the mode to proton.start(mode=...) on every Triton whose start()
    # takes one (proton_mode_note says when it does not).
    opts = PROTON.validate({"backend": "cupti", "backend_mode": "pcsampling"})
    assert opts.mode == "cli"


@pytest.mark.parametrize(("raw", "rendered"), [
    ({}, None),
    ({"mode": "env", "backend": "cupti", "backend_mode": "pcsampling"}, "pcsampling"),
    ({"backend": "instrumentation", "instrumentation_mode": "mma"}, "mma"),
    ({"backend": "instrumentation", "granularity": "warp"}, "default:granularity=warp"),
    ({"backend": "instrumentation", "instrumentation_mode": "pcsampling",
      "granularity": "warp_group_8"}, "pcsampling:granularity=warp_group_8"),
    ({"backend": "instrumentation"}, None),
])
def test_mode_argument(raw: dict[str, str], rendered: str | None) -> None:
    assert mode_argument(PROTON.validate(raw)) == rendered


# --- conflicts -------------------------------------------------------------------------------

@pytest.mark.parametrize(("backend", "claims"), [
    ("auto", {"hsa-queue", "cupti"}),
    ("rocprofiler", {"hsa-queue"}),
    ("roctracer", {"hsa-queue"}),
    ("cupti", {"cupti"}),
    ("instrumentation", set()),
])
def test_claims(backend: str, claims: set[str]) -> None:
    opts = PROTON.validate({"mode": "env", "backend": backend})
    assert PROTON.claims(opts) == claims


def test_describe_names_the_backend() -> None:
    assert PROTON.describe(PROTON.validate(None)) == (
        "proton (backend: auto, which resolves to rocprofiler or roctracer on AMD and cupti "
        "on NVIDIA)")
    assert PROTON.describe(PROTON.validate({"backend": "cupti"})) == "proton (backend: cupti)"


def test_no_conflict_with_cprofile() -> None:
    from aorta.collectors.registry import get
    check_conflicts({"proton": PROTON.validate(None), "cprofile": get("cprofile").validate(None)})


rocprof_present = importlib.util.find_spec("aorta.collectors.rocprof.collector") is not None


@pytest.mark.skipif(not rocprof_present, reason="the rocprof collector is not in this tree yet")
@pytest.mark.parametrize("backend", ["auto", "rocprofiler", "roctracer"])
def test_rocprof_with_a_queue_intercepting_backend_is_refused(backend: str) -> None:
    from aorta.collectors.registry import get
    opts = PROTON.validate({"mode": "env", "backend": backend})
    with pytest.raises(ConflictError) as caught:
        check_conflicts({"rocprof": get("rocprof").validate(None), "proton": opts})
    message = str(caught.value)
    assert f"proton (backend: {backend}" in message and "HSA queue" in message
    assert "proton: {backend: instrumentation}" in message


@pytest.mark.skipif(not rocprof_present, reason="the rocprof collector is not in this tree yet")
def test_rocprof_with_instrumentation_is_allowed() -> None:
    from aorta.collectors.registry import get
    check_conflicts({"rocprof": get("rocprof").validate(None),
                     "proton": PROTON.validate({"backend": "instrumentation"})})
