"""Why a Proton capture is missing or empty: the known Triton traps, spelled out per version.

Facts from the published `triton` wheels (`triton/profiler/proton.py`, `execute_as_main`):

- up to 3.4 the CLI catches an `Exception` from the script, prints "An error occurred while
  executing the script" and exits 0, so a failed payload looks like a pass;
- 3.5 and 3.6 let the exception through: exit 1 and `finalize()` never runs (no file);
- up to 3.6 `SystemExit` (`sys.exit()`, even `sys.exit(0)`) escapes `except Exception`, so
  `finalize()` never runs and no profile is written;
- from 3.7 `finalize()` always runs and the CLI returns the payload's exit code.
"""

from __future__ import annotations

from aorta.collectors.base import TrialOutcome
from aorta.collectors.proton_options import ProtonOptions
from aorta.parsers.hatchet import HatchetSummary

__all__ = ["missing_reason", "empty_reason"]

Release = tuple[int, int] | None


def missing_reason(opts: ProtonOptions, outcome: TrialOutcome, release: Release,
                   others: list[str], offered: tuple[str, ...] = ()) -> str:
    """Why no `.hatchet` (or `.chrome_trace`) was written, as precisely as the facts allow.

    `offered`: the `-b` choices of the installed Triton's CLI, when known."""
    want = ".chrome_trace" if opts.data == "trace" else ".hatchet"
    if not outcome.launched:
        return "the payload never started"
    if outcome.timed_out:
        return f"the trial timed out before Proton wrote its {want} (it writes at finalize)"
    if outcome.signal:
        return f"the payload was killed by signal {outcome.signal} before Proton wrote its {want}"
    if others:
        msgpack = any(o.endswith("_msgpack") for o in others)
        fix = ("finalize with output_format='hatchet'" if msgpack
               else "a payload that starts Proton itself must pass "
                    "data=os.environ['AORTA_PROTON_DATA']")
        return (f"Proton wrote {', '.join(sorted(others))} but no {want}, which data: "
                f"{opts.data} reads; {fix}")
    code = outcome.exit_code
    if opts.mode == "cli" and offered and opts.backend not in offered:
        return (f"the installed Triton's CLI offers -b {', '.join(offered)}, not "
                f"{opts.backend}: it refused the command before the payload ran (exit {code}); "
                f"use backend: auto or a Triton that has {opts.backend}")
    if opts.mode == "env":
        exited = f"; it exited {code}" if code else ""
        return (f"no {want}: under mode: env the payload must call proton.start("
                f"os.environ['AORTA_PROTON_NAME'], ...) and proton.finalize(){exited}")
    reason = f"Proton's CLI wrote no {want}"
    if release is not None and release <= (3, 6):
        version = f"{release[0]}.{release[1]}"
        if code:
            reason += (f": the payload exited {code}, and Triton {version} skips finalize() when "
                       f"the script raises (SystemExit up to 3.6, any exception on 3.5-3.6)")
        else:
            reason += (f" although the payload exited 0: on Triton {version} a script that ends "
                       f"with sys.exit()/raise SystemExit skips Proton's finalize(); return from "
                       f"main() instead, or upgrade to Triton >= 3.7")
    elif code:
        reason += f" (the payload exited {code})"
    return reason + _exit_zero_note(opts, outcome, release)


def empty_reason(summary: HatchetSummary, opts: ProtonOptions, outcome: TrialOutcome,
                 release: Release) -> str:
    """Why a tree that parsed holds nothing to publish."""
    if summary.frames == 0:
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
    elif summary.frames == 0 and opts.backend in ("auto", "roctracer", "rocprofiler"):
        reason += ("; on AMD, roctracer records nothing unless the HIP runtime is up before "
                   "proton.start(), and Triton 3.8 needs triton.profiler imported before torch")
    return reason + _exit_zero_note(opts, outcome, release)


def _exit_zero_note(opts: ProtonOptions, outcome: TrialOutcome, release: Release) -> str:
    if opts.mode != "cli" or outcome.exit_code != 0 or release is None or release > (3, 4):
        return ""
    return (f"; note: Triton {release[0]}.{release[1]}'s CLI reports a failing script as exit 0 "
            f"(it prints 'An error occurred while executing the script'), so check the trial's "
            f"stdout before trusting the pass")
