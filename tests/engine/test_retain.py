"""Issue 14: `retain` prunes a trial's heavier files by verdict once its metrics are read;
result.json is never deleted, records what went, and no link is followed out of the trial."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from aorta.run.retain import file_class, prune_trial
from aorta_testing import run_aorta, trial_result, write_recipe

# Under env_passthrough_mode: file the payload finds its trial directory through
# AORTA_ENV_FILE; it plants a heavy file and links to things outside the trial there.
PAYLOAD = """
import os, pathlib, sys
trial = pathlib.Path(os.environ["AORTA_ENV_FILE"]).parent
outside = pathlib.Path(sys.argv[1])
(trial / "cprofile" / "big.trace").write_bytes(b"x" * 5000)
(trial / "cprofile" / "kernel_stats.csv").write_text("name,ms\\n")
os.symlink(outside / "precious.txt", trial / "link-to-file")
os.symlink(outside, trial / "cprofile" / "link-to-dir")
sys.exit(int(sys.argv[2]))
"""


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me")
    (folder / "big.trace").write_text("keep me too")
    return folder


def _sweep(tmp_path: Path, payload, outside: Path, retain: str) -> Path:
    script = payload(PAYLOAD)
    recipe = write_recipe(tmp_path, f"""
        schema_version: 1
        ticket: kept
        env_passthrough_mode: file
        collect: [cprofile]
        retain: {retain}
        axes:
          exit:
            ok: {{args: ["0"]}}
            bad: {{args: ["3"]}}
    """)
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--", sys.executable, str(script), str(outside))
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "o" / "kept"


def _files(trial: Path) -> set[str]:
    return {str(p.relative_to(trial)) for p in trial.rglob("*")
            if p.is_file() and not p.is_symlink()}


def test_levels_by_verdict_and_the_record_of_what_went(tmp_path: Path, payload, outside: Path):
    run_dir = _sweep(tmp_path, payload, outside, "{on_pass: none, on_fail: summary}")
    ok, bad = run_dir / "cells" / "ok" / "trial_0", run_dir / "cells" / "bad" / "trial_0"
    assert _files(ok) == {"result.json"}
    assert _files(bad) == {"result.json", "stdout.log", "stderr.log", "rerun.sh", "child.env",
                           "cprofile/kernel_stats.csv"}
    passed, failed = trial_result(run_dir, "ok", 0), trial_result(run_dir, "bad", 0)
    assert passed["verdict"] == "pass" and failed["verdict"] == "fail"
    # The metrics were read before the profile went.
    assert passed["captures"]["cprofile"]["state"] == "ok"
    assert passed["metrics"]["cprofile_call_count"] > 0
    removed = passed["retention"]
    assert removed["level"] == "none"
    assert set(removed["files"]) == {"stdout.log", "stderr.log", "rerun.sh", "child.env",
                                     "cprofile/big.trace", "cprofile/kernel_stats.csv",
                                     "cprofile/profile.pstats"}
    assert removed["file_count"] == 7 and removed["bytes"] > 5000
    assert failed["retention"]["files"] == ["cprofile/big.trace", "cprofile/profile.pstats"]
    # Links: neither followed nor removed; what they point at is intact.
    for trial in (ok, bad):
        assert (trial / "link-to-file").is_symlink() and (trial / "cprofile" / "link-to-dir").is_symlink()
    assert (outside / "precious.txt").read_text() == "keep me"
    assert (outside / "big.trace").read_text() == "keep me too"
    status = run_aorta("sweep", "status", str(run_dir))
    assert status.returncode == 0 and "2 complete" in status.stdout


def test_full_is_the_default_and_keeps_everything(tmp_path: Path, payload, outside: Path):
    run_dir = _sweep(tmp_path, payload, outside, "{on_fail: full}")
    trial = run_dir / "cells" / "ok" / "trial_0"
    assert {"cprofile/big.trace", "cprofile/profile.pstats", "stdout.log"} <= _files(trial)
    assert trial_result(run_dir, "ok", 0)["retention"] is None


def test_prune_never_enters_a_link_and_keeps_the_record(tmp_path: Path):
    run = tmp_path / "run"
    trial = run / "cells" / "c" / "trial_0"
    (trial / "proton").mkdir(parents=True)
    (trial / "result.json").write_text("{}")
    (trial / "proton" / "proton.hatchet").write_text("{}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "data.hatchet").write_text("outside")
    os.symlink(elsewhere, trial / "proton" / "escape")
    os.symlink(elsewhere / "data.hatchet", trial / "stdout.log")
    kept = prune_trial(run, ("cells", "c", "trial_0"), "none")
    assert kept.files == ["proton/proton.hatchet"] and kept.bytes == 2
    assert (trial / "result.json").exists()
    assert (elsewhere / "data.hatchet").read_text() == "outside"
    assert (trial / "stdout.log").is_symlink() and (trial / "proton" / "escape").is_symlink()


def test_a_link_as_the_trial_directory_is_refused(tmp_path: Path):
    from aorta.base.errors import RunDirError

    run = tmp_path / "run"
    (run / "cells" / "c").mkdir(parents=True)
    target = tmp_path / "target"
    target.mkdir()
    (target / "big.trace").write_text("x")
    os.symlink(target, run / "cells" / "c" / "trial_0")
    with pytest.raises(RunDirError):
        prune_trial(run, ("cells", "c", "trial_0"), "none")
    assert (target / "big.trace").exists()


@pytest.mark.parametrize("path, cls", [
    ("result.json", "record"), ("stdout.log", "log"), ("child.env", "log"),
    ("rerun.sh", "log"), ("rocprof/aorta_1_kernel_stats.csv", "summary"),
    ("rocprof/rocprof_summary.csv", "summary"), ("nsys/kern_cuda_gpu_kern_sum.csv", "summary"),
    ("cprofile/profile.pstats", "heavy"), ("proton/proton.hatchet", "heavy"),
    ("nsys/report.nsys-rep", "heavy"), ("torch/trace.json", "heavy"), ("ncu/ncu.log", "log"),
])
def test_file_classes(path: str, cls: str):
    assert file_class(path) == cls


def test_a_very_deep_tree_and_a_vanished_trial_directory_are_no_crash(tmp_path: Path):
    """A payload's 200-level tree is pruned to a bounded depth (deeper files are kept), and a
    trial directory the payload removed gives an empty record, not a traceback."""
    trial = tmp_path / "run" / "cells" / "c" / "trial_0"
    trial.mkdir(parents=True)
    (trial / "trace.json").write_text("x" * 100)
    fd = os.open(trial, os.O_RDONLY)
    for _ in range(200):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    with open(os.open("deep.bin", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
        fh.write("y")
    os.close(fd)
    kept = prune_trial(tmp_path / "run", ("cells", "c", "trial_0"), "log")
    assert kept.files == ["trace.json"] and kept.bytes == 100
    gone = prune_trial(tmp_path / "run", ("cells", "c", "trial_9"), "log")
    assert (gone.files, gone.file_count, gone.bytes) == ([], 0, 0)
