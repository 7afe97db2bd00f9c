"""Why a Proton capture is missing or empty, as precisely as the facts allow.

Under `mode: cli` aorta's launcher finalizes Proton however the script ends, so the traps of
Triton's own CLI (triton-lang/triton `third_party/proton/proton/proton.py`, `execute_as_main()`)
are gone. What remains: what no launcher survives (SIGKILL, a crash, SIGTERM in native code), a
session the launcher refused to start, and Proton writing no file.
"""

from __future__ import annotations

from aorta.collectors.attach_failure import last_line_after
from aorta.collectors.base import TrialOutcome, cut_short
from aorta.collectors.proton.options import ProtonOptions
from aorta.parsers.hatchet import METADATA_FRAME, HatchetSummary
from aorta.store.reading import read_tail

Release = tuple[int, int] | None

#: The launcher's own lines on stderr (aorta.launchers.proton_run).
NOT_RUN = "aorta: proton: the payload was not run: "
FINALIZE_FAILED = "aorta: proton: proton.finalize() failed: "
_TAIL_BYTES = 8192


def missing_reason(opts: ProtonOptions, outcome: TrialOutcome, release: Release,
                   others: list[str], offered: tuple[str, ...] = ()) -> str:
    """Why no `.hatchet` (or `.chrome_trace`) was written. `release`: the installed Triton's
    (major, minor); `offered`: its CLI's `-b` choices; each when known."""
    want = ".chrome_trace" if opts.data == "trace" else ".hatchet"
    code = outcome.exit_code
    if not outcome.launched:
        return "the payload never started"
    cli = opts.mode == "cli"
    stderr = (read_tail(outcome.stderr_path, _TAIL_BYTES) or "") if cli else ""
    if cli and offered and opts.backend not in offered:
        return (f"the installed Triton offers the backends {', '.join(offered)} (its CLI's -b "
                f"choices), not {opts.backend}: proton.start() refused it before the payload "
                f"ran (exit {code}); use backend: auto or a Triton that has {opts.backend}")
    if said := last_line_after(stderr, NOT_RUN):
        return f"aorta's launcher did not run the payload: {said}"
    if cli and outcome.timed_out:
        return (f"the trial timed out, and the payload was still in native code when the "
                f"grace period ended, so it was killed before aorta's launcher could "
                f"finalize Proton (no {want})")
    if cli and outcome.signal is not None:
        return (f"the payload was killed by signal {outcome.signal} before aorta's launcher "
                f"could finalize Proton (no {want}); SIGINT and SIGTERM are finalized, "
                f"SIGKILL and crashes cannot be")
    if early := cut_short(outcome, f"Proton wrote its {want} (it writes at finalize)"):
        return early
    if others:
        msgpack = any(o.endswith("_msgpack") for o in others)
        fix = ("finalize with output_format='hatchet'" if msgpack
               else "a payload that starts Proton itself must pass "
                    "data=os.environ['AORTA_PROTON_DATA']")
        return (f"Proton wrote {', '.join(sorted(others))} but no {want}, which data: "
                f"{opts.data} reads; {fix}")
    if not cli:
        exited = f"; it exited {code}" if code else ""
        return (f"no {want}: under mode: env the payload must call proton.start("
                f"os.environ['AORTA_PROTON_NAME'], ...) and proton.finalize(){exited}")
    if failed := last_line_after(stderr, FINALIZE_FAILED):
        return f"proton.finalize() failed, so no {want} was written: {failed}"
    version = f"Triton {release[0]}.{release[1]}'s " if release else ""
    return (f"aorta's launcher finalized Proton, but {version}Proton wrote no {want} (the "
            f"payload exited {code}); see stderr.log")


def empty_reason(summary: HatchetSummary, opts: ProtonOptions, outcome: TrialOutcome,
                 release: Release) -> str:
    """Why a tree that parsed holds nothing to publish."""
    if summary.metadata_frames:
        reason = (f"only Proton's own {METADATA_FRAME} frames ({summary.metadata_frames}, left "
                  f"out as proton-viewer does) held kernels: none of the payload's was recorded")
    elif summary.frames == 0:
        reason = "the tree holds only ROOT: Proton recorded no GPU kernel"
    elif opts.backend == "instrumentation":
        reason = ("no leaf carries cycles: the kernels need pl.enter_scope()/pl.exit_scope() "
                  "(and pl.enable_semantic('triton') for Triton kernels), compiled inside the "
                  "session")
    else:
        reason = "no leaf frame carries a time column: Proton recorded no GPU kernel"
    if opts.mode == "env":
        reason += "; under mode: env the session must be active while the kernels launch"
    if outcome.exit_code:
        reason += f"; the payload exited {outcome.exit_code}"
    elif summary.frames == summary.metadata_frames == 0 and opts.mode == "env" and \
            opts.backend in ("auto", "roctracer", "rocprofiler"):
        # Under mode: cli the launcher imports triton.profiler first and lets Proton pick (and
        # so bring up) the runtime; a payload that starts Proton itself must do both.
        reason += "; on AMD, roctracer records nothing unless the HIP runtime is up before " \
                  "proton.start()"
        if release is None or release >= (3, 8):
            reason += ", and Triton 3.8 needs triton.profiler imported before torch"
    return reason
