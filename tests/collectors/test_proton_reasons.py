"""Why a Proton capture is missing or empty (`proton_reasons`), per attach mode and ending.

Under `mode: cli` aorta's launcher finalizes Proton however the script ends, so the reasons no
longer blame `sys.exit()` or an exception (issue 12.2: Triton <= 3.6's CLI skipped finalize()
on SystemExit, and the advice was to edit the payload)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aorta.collectors.base import TrialOutcome
from aorta.collectors.proton.collector import ProtonCollector
from aorta.collectors.proton.reasons import empty_reason, missing_reason
from aorta.parsers.hatchet import HatchetSummary

PROTON = ProtonCollector()
OPTS = PROTON.validate(None)
ENV_OPTS = PROTON.validate({"mode": "env"})


def outcome(code: int | None = 0, sig: int | None = None, timed_out: bool = False,
            launched: bool = True, stderr: Path | None = None) -> TrialOutcome:
    return TrialOutcome(code, sig, timed_out, launched, stderr)


@pytest.mark.parametrize(("opts", "how", "release", "expected"), [
    (OPTS, outcome(launched=False), (3, 6), "the payload never started"),
    (OPTS, outcome(None, timed_out=True), (3, 6),
     "the trial timed out, and the payload was still in native code when the grace period "
     "ended, so it was killed before aorta's launcher could finalize Proton (no .hatchet)"),
    (ENV_OPTS, outcome(None, timed_out=True), (3, 6), "timed out before Proton wrote its .hatchet"),
    (OPTS, outcome(None, sig=9), None, "killed by signal 9 before aorta's launcher could "
                                       "finalize Proton (no .hatchet); SIGINT and SIGTERM are "
                                       "finalized, SIGKILL and crashes cannot be"),
    (ENV_OPTS, outcome(None, sig=9), None, "killed by signal 9 before Proton wrote its .hatchet"),
    (ENV_OPTS, outcome(0), (3, 6), "under mode: env the payload must call proton.start("),
    (ENV_OPTS, outcome(4), (3, 7), "proton.finalize(); it exited 4"),
    (OPTS, outcome(3), (3, 6), "aorta's launcher finalized Proton, but Triton 3.6's Proton "
                               "wrote no .hatchet (the payload exited 3); see stderr.log"),
    (OPTS, outcome(0), None, "aorta's launcher finalized Proton, but Proton wrote no .hatchet "
                             "(the payload exited 0)"),
])
def test_missing_reasons(opts: Any, how: TrialOutcome, release: tuple[int, int] | None,
                         expected: str) -> None:
    assert expected in missing_reason(opts, how, release, [])


@pytest.mark.parametrize("how", [outcome(0), outcome(1), outcome(3)])
@pytest.mark.parametrize("release", [(3, 4), (3, 5), (3, 6), None])
def test_cli_mode_no_longer_blames_the_scripts_ending(how: TrialOutcome,
                                                      release: tuple[int, int] | None) -> None:
    """Regression, issue 12.2: the advice to end with a return or upgrade Triton is gone."""
    reason = missing_reason(OPTS, how, release, [])
    for stale in ("skips finalize()", "sys.exit()", "return from main()", "reports a failing "
                  "script as exit 0", "upgrade to Triton"):
        assert stale not in reason


def test_the_launchers_refusal_is_quoted(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.log"
    stderr.write_text("noise\naorta: proton: the payload was not run: can't open file "
                      "'/w/absent.py': no such file\n")
    reason = missing_reason(OPTS, outcome(2, stderr=stderr), (3, 6), [])
    assert reason == ("aorta's launcher did not run the payload: can't open file "
                      "'/w/absent.py': no such file")


def test_a_failed_finalize_is_quoted(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.log"
    stderr.write_text("aorta: proton: proton.finalize() failed: OSError: [Errno 28] No space\n")
    reason = missing_reason(OPTS, outcome(0, stderr=stderr), (3, 6), [])
    assert reason == ("proton.finalize() failed, so no .hatchet was written: "
                      "OSError: [Errno 28] No space")


def test_a_payload_python_without_aorta_is_named(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.log"
    stderr.write_text("/venv/bin/python: Error while finding module specification for "
                      "'aorta.launchers.proton_run' (ModuleNotFoundError: No module named "
                      "'aorta')\n")
    metrics = PROTON.summarize(tmp_path / "proton", OPTS, outcome(1, stderr=stderr))
    reason = metrics["proton_capture_reason"]
    assert reason.startswith("the payload's Python cannot import aorta's launcher")
    assert "$AORTA_PROTON_PYTHON" in reason and "mode: env" in reason
    assert metrics["proton_attach_error"] == reason


def test_stderr_is_not_read_under_env_mode(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.log"
    stderr.write_text("No module named 'aorta'\n")
    assert "proton.start(" in missing_reason(ENV_OPTS, outcome(1, stderr=stderr), (3, 6), [])


def test_a_backend_the_installed_triton_lacks() -> None:
    opts = PROTON.validate({"backend": "rocprofiler"})
    reason = missing_reason(opts, outcome(2), (3, 7), [], ("cupti", "roctracer", "instrumentation"))
    assert reason.startswith("the installed Triton offers the backends cupti, roctracer, "
                             "instrumentation (its CLI's -b choices), not rocprofiler: "
                             "proton.start() refused it")
    assert "(exit 2)" in reason
    assert "offers" not in missing_reason(opts, outcome(2), (3, 8), [],
                                          ("cupti", "roctracer", "rocprofiler"))


def test_empty_reasons() -> None:
    scoped = HatchetSummary(frames=2)
    assert empty_reason(HatchetSummary(), OPTS, outcome(0), (3, 6)).startswith(
        "the tree holds only ROOT")
    assert empty_reason(scoped, OPTS, outcome(0), (3, 6)).startswith(
        "no leaf frame carries a time column")
    assert "pl.enter_scope()" in empty_reason(
        scoped, PROTON.validate({"backend": "instrumentation"}), outcome(0), None)
    assert "session must be active" in empty_reason(HatchetSummary(), ENV_OPTS, outcome(0), None)
    assert "the payload exited 3" in empty_reason(HatchetSummary(), OPTS, outcome(3), None)


def test_the_amd_start_order_advice_is_for_payloads_that_start_proton() -> None:
    """Under mode: cli the launcher imports triton.profiler first and lets Proton bring the
    runtime up; only a payload that starts Proton itself can get that order wrong."""
    empty = HatchetSummary()
    assert "HIP runtime is up" not in empty_reason(empty, OPTS, outcome(0), (3, 8))
    env = empty_reason(empty, ENV_OPTS, outcome(0), (3, 8))
    assert "HIP runtime is up before proton.start()" in env
    assert "Triton 3.8 needs triton.profiler imported before torch" in env
    assert "Triton 3.8" not in empty_reason(empty, ENV_OPTS, outcome(0), (3, 6))


def test_no_stale_exit_zero_note() -> None:
    """Triton <= 3.4's CLI turned a failing script into exit 0; the launcher does not."""
    for reason in (missing_reason(OPTS, outcome(0), (3, 4), []),
                   empty_reason(HatchetSummary(), OPTS, outcome(0), (3, 4))):
        assert "reports a failing script as exit 0" not in reason
