"""`aorta doctor`, run as a user runs it: its rows, its exit codes, --json, and the checks it
makes with the interpreter the payload's command will really run (issue 14)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from aorta_testing import bare_python, bin_dir_with_python, run_aorta

COLLECTORS = {"cprofile", "ncu", "nsys", "proton", "rocprof", "telemetry", "torch"}


def _path_env(first: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{first}{os.pathsep}{os.environ['PATH']}"}


def test_doctor_lists_every_collector_and_exits_0(tmp_path: Path):
    proc = run_aorta("doctor")
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line[:3] in ("ok ", "NO ")]
    assert {line[4:].split()[0] for line in rows} >= COLLECTORS
    assert any(line.startswith("ok  cprofile") for line in rows)
    for line, after in zip(proc.stdout.splitlines(), proc.stdout.splitlines()[1:] + [""]):
        if line.startswith("NO ") and "@" not in line.split()[1]:
            assert "fix:" in after, line     # every refusal names the next action


def test_doctor_json_rows_have_one_shape():
    proc = run_aorta("doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {r["check"] for r in rows} >= COLLECTORS
    for row in rows:
        assert set(row) == {"check", "usable", "version", "reason", "fix"}
        assert isinstance(row["usable"], bool)


def test_collect_names_a_collector_that_cannot_measure_exit_2(tmp_path: Path):
    env = {**os.environ, "PATH": str(tmp_path), "NCU_BIN": ""}
    proc = run_aorta("doctor", "--collect", "ncu", env=env)
    assert proc.returncode == 2, proc.stdout
    assert proc.stdout.startswith("NO  ncu") and "fix:" in proc.stdout
    assert run_aorta("doctor", "--collect", "cprofile").returncode == 0


def test_a_command_needs_the_separator():
    proc = run_aorta("doctor", "python3", "x.py")
    assert proc.returncode == 2 and "put '--' before the command" in proc.stderr


def test_torch_is_checked_with_the_commands_own_interpreter(tmp_path: Path):
    """Issue 14: doctor said torch was fine while the command's python3 could not import it."""
    bare = bare_python(tmp_path / "venv")
    proc = run_aorta("doctor", "--collect", "torch", "--", str(bare), "train.py")
    assert proc.returncode == 2, proc.stdout
    row = next(line for line in proc.stdout.splitlines() if "torch@command" in line)
    assert row.startswith("NO ") and f"torch is not importable by {bare}" in row
    assert "No module named 'torch'" in row
    assert f"fix: install torch into {bare}" in proc.stdout


@pytest.mark.torch
def test_without_a_command_python3_on_path_is_checked(tmp_path: Path):
    bare = bare_python(tmp_path / "venv")
    bin_dir = bin_dir_with_python(tmp_path / "bin", bare)
    proc = run_aorta("doctor", "--collect", "torch", "--json", env=_path_env(bin_dir))
    assert proc.returncode == 0, proc.stderr    # only a given command's checks gate the exit
    rows = {r["check"]: r for r in json.loads(proc.stdout)}
    assert rows["torch@python3"]["usable"] is False
    assert str(bin_dir / "python3") in rows["torch@python3"]["reason"]


@pytest.mark.torch
def test_an_interpreter_with_torch_passes():
    proc = run_aorta("doctor", "--collect", "torch", "--", sys.executable, "train.py")
    assert proc.returncode == 0, proc.stdout
    assert f"ok  torch@command  torch importable by {sys.executable}" in proc.stdout


TRITON_STANDIN = {
    "triton/__init__.py": '__version__ = "3.6.0"\n',
    "triton/profiler/__init__.py": "",
    "triton/profiler/proton.py": """\
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("-b", "--backend", type=str, choices=["cupti", "instrumentation"])
        """,
    "triton-3.6.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: triton\nVersion: 3.6.0\n",
}


def test_proton_backends_each_get_a_row(tmp_path: Path):
    """Doctor reads `details["backends"]`; proton fills it from the Triton CLI's choices."""
    site = tmp_path / "site"
    for name, text in TRITON_STANDIN.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(textwrap.dedent(text))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: stand-in'\n")
    (bin_dir / "nvidia-smi").chmod(0o755)
    # The stand-in first; what the caller's PYTHONPATH holds (aorta's dependencies) behind it.
    env = {**_path_env(bin_dir),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    proc = run_aorta("doctor", "--collect", "proton", "--json", env=env)
    rows = {r["check"]: r for r in json.loads(proc.stdout)}
    assert rows["proton"]["version"] == "3.6.0", proc.stdout
    assert rows["proton:cupti"]["usable"] is True
    assert rows["proton:instrumentation"]["usable"] is True
    assert rows["proton:roctracer"]["usable"] is False
    assert "does not offer it" in rows["proton:roctracer"]["reason"]


def test_a_bare_proton_interpreter_name_is_looked_up_on_path_never_in_the_cwd(tmp_path: Path):
    # $AORTA_PROTON_PYTHON=python3 with a `python3` in the working directory: the check (on
    # the fast path and click's, started early or not) runs the python3 on PATH.
    here = tmp_path / "cwd"
    here.mkdir()
    decoy = here / "python3"
    decoy.write_text(f"#!/bin/sh\ntouch {tmp_path}/decoy-ran\nexit 0\n")
    decoy.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text("#!/bin/sh\necho 'ModuleNotFoundError: no triton' >&2\n"
                                     "exit 1\n")
    (bin_dir / "python3").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "AORTA_PROTON_PYTHON": "python3"}
    for argv in (["doctor", "--json"], ["doctor", "--collect", "proton", "--json"]):
        proc = run_aorta(*argv, env=env, cwd=here)
        rows = {row["check"]: row for row in json.loads(proc.stdout)}
        assert rows["proton@python3"]["reason"] == \
            "triton.profiler is not importable by python3: ModuleNotFoundError: no triton", argv
    assert not (tmp_path / "decoy-ran").exists()
