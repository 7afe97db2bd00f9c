"""The `aorta` command starts light: each command imports only what it uses (issue 13), and
the ones the fast path answers (`aorta.cli.light`: help, --version, env, sweep status,
collectors) import no click, no schema library and no importlib.metadata.

Each case runs the real command in a fresh interpreter and lists which heavy modules it left
in `sys.modules`. A module-level import added in the wrong place shows up here, long before
anyone times it (bench/bench_startup.py has the figures).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aorta_testing import REPO, run_aorta, write_recipe

# Third-party packages none of the light commands needs, and aorta's own heavy layers.
HEAVY = ("click", "pydantic", "yaml", "rich", "sqlalchemy", "pyarrow", "pynvml",
         "importlib.metadata")
HEAVY_AORTA = ("aorta.collectors.", "aorta.parsers.", "aorta.comparison.", "aorta.recipe",
               "aorta.plan", "aorta.run.trial", "aorta.report.", "aorta.history.")
# Small, import-free modules a command's options need (compare's --correction choices).
LIGHT = ("aorta.comparison.family",)

_PROBE = textwrap.dedent("""
    import contextlib, io, json, sys
    from aorta.cli import main
    argv = json.loads(sys.argv[1])
    # A UTF-8 stream like a real pipe (a StringIO has no encoding, and the fast path leaves
    # non-ASCII output on such a stream to click).
    with contextlib.redirect_stdout(io.TextIOWrapper(io.BytesIO(), encoding="utf-8")):
        code = main(argv) if argv else 0
    loaded = [m for m in sys.modules
              if (m in HEAVY or m.startswith(tuple(h + "." for h in HEAVY))
                  or m.startswith(HEAVY_AORTA)) and m not in LIGHT]
    print(json.dumps({"code": code, "loaded": sorted(loaded)}))
""")


def _loaded(argv: list[str], bin_dir: Path | None = None) -> dict[str, object]:
    # COLUMNS or LINES would send help to click (its wrapping width could change)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if bin_dir is not None:
        env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    code = f"HEAVY = {HEAVY!r}\nHEAVY_AORTA = {HEAVY_AORTA!r}\nLIGHT = {LIGHT!r}\n{_PROBE}"
    done = subprocess.run([sys.executable, "-c", code, json.dumps(argv)], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _help_argvs() -> list[list[str]]:
    from aorta.cli.help_texts import HELP

    return [[*path, "--help"] for path in sorted(HELP)] + [["-h"], ["sweep", "run", "-h"]]


@pytest.mark.parametrize("argv", [
    [],                                   # `import aorta.cli` alone
    ["--version"],
    *_help_argvs(),
    ["env"],
    ["env", "--json"],
], ids=lambda a: " ".join(a) or "import")
def test_light_commands_import_nothing_heavy(argv: list[str]) -> None:
    found = _loaded(argv)
    assert found == {"code": 0, "loaded": []}


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
def test_sweep_status_reads_a_run_without_click_collectors_or_schemas(
        tmp_path: Path, json_flag: list[str]) -> None:
    recipe = write_recipe(tmp_path, "schema_version: 1\nticket: light\ntrials: 2\n")
    done = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "out"),
                     "--", sys.executable, "-c", "pass")
    assert done.returncode == 0, done.stderr
    found = _loaded(["sweep", "status", str(tmp_path / "out" / "light"), *json_flag])
    assert found == {"code": 0, "loaded": []}


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
@pytest.mark.parametrize("tools", ["as found", "ncu and a GPU"])
def test_listing_collectors_loads_no_collector_class_or_schema(
        tmp_path: Path, json_flag: list[str], tools: str) -> None:
    # The fast path probes with aorta.collectors.probes and prints the option tables' snapshot.
    # A profiler that is there is asked what it is (`ncu --version`, Triton's CLI backends,
    # NVML through pynvml) by light helpers: never a collector class or the options models.
    bin_dir = None
    if tools != "as found":
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        for name, text in (("ncu", "echo 'NVIDIA (R) Nsight Compute Command Line Profiler'; "
                                   "echo 'Version 2025.3.1.0 (build 1)'"),
                           ("nvidia-smi", "echo 'GPU 0: NVIDIA H200 (UUID: GPU-0)'")):
            (bin_dir / name).write_text(f"#!/bin/sh\n{text}\n")
            (bin_dir / name).chmod(0o755)
    found = _loaded(["collectors", *json_flag], bin_dir)
    assert found["code"] == 0
    loaded = found["loaded"]
    assert isinstance(loaded, list)
    assert _beyond_the_probes(loaded) == []
    if tools != "as found":
        assert "aorta.collectors.tool_process" in loaded      # the ncu probe ran


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
def test_doctor_loads_no_collector_class_click_or_schema(json_flag: list[str]) -> None:
    # The fast path answers from the light probes, the default options' snapshot and the
    # import checks; the collector classes and their options models stay unloaded.
    found = _loaded(["doctor", *json_flag])
    assert found["code"] == 0
    loaded = found["loaded"]
    assert isinstance(loaded, list)
    assert _beyond_the_probes(loaded, frozenset({"aorta.collectors.child_python",
                                                 "aorta.collectors.import_checks"})) == []


def _beyond_the_probes(loaded: list[str], also: frozenset[str] = frozenset()) -> list[str]:
    """What `loaded` holds beyond the light probes, the option snapshot, pynvml and `also`."""
    light = {"aorta.collectors.builtin", "aorta.collectors.option_tables",
             "aorta.collectors.probes", "aorta.collectors.telemetry_sources",
             "aorta.collectors.tool_process", "aorta.collectors.proton_host",
             "aorta.collectors.proton_backends", *also}
    return [m for m in loaded if m not in light and m != "pynvml" and not m.startswith("pynvml.")]


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
def test_sweep_status_loads_no_heavy_standard_module(tmp_path: Path,
                                                     json_flag: list[str]) -> None:
    # json and re (json imports re) cost half a bare interpreter's start, dataclasses more than
    # a whole one: reading a finished run needs none of them (aorta.strict_json, the plain
    # record fields of aorta.record_checks). -X importtime lists every module a start loads.
    recipe = write_recipe(tmp_path, "schema_version: 1\nticket: light\ntrials: 2\n")
    done = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "out"),
                     "--", sys.executable, "-c", "pass")
    assert done.returncode == 0, done.stderr
    status, added = _importtime(["sweep", "status", str(tmp_path / "out" / "light"), *json_flag])
    assert ('"counts"' if json_flag else "2 trial(s): 2 complete") in status.stdout
    assert "aorta.run.status" in added
    heavy = {"json", "re", "dataclasses", "pathlib", "typing", "inspect", "subprocess", "click"}
    assert sorted(added & heavy) == []


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
@pytest.mark.parametrize("tools", ["as found", "nvidia-smi and nvcc"])
def test_env_loads_no_heavy_standard_module(tmp_path: Path, json_flag: list[str],
                                            tools: str) -> None:
    # json, re, subprocess (which loads locale, re and threading) and platform together cost
    # more than a bare start: the snapshot needs none of them, and runs its tools through
    # aorta.tool_pipe. With stand-in GPU tools their answers are read too.
    bin_dir = None
    if tools != "as found":
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        for name, text in (("nvidia-smi", "echo '0, NVIDIA H200, GPU-0, 580.1, 143771'"),
                           ("nvcc", "echo 'Cuda compilation tools, release 13.0, V13.0.48'")):
            (bin_dir / name).write_text(f"#!/bin/sh\n{text}\n")
            (bin_dir / name).chmod(0o755)
    done, added = _importtime(["env", *json_flag], bin_dir)
    assert "aorta.envsnap" in added
    assert sorted(added & {"json", "re", "subprocess", "platform", "locale", "threading",
                           "signal", "typing", "click"}) == []
    snap = json.loads(done.stdout)
    if bin_dir is not None:
        assert snap["cuda_version"] == "13.0"
        assert snap["nvidia"][0]["name"] == "NVIDIA H200"


def _importtime(argv: list[str], bin_dir: Path | None = None
                ) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`aorta ARGV` run under -X importtime (stdout not a terminal), and the modules it loaded
    that a bare start does not (a site's .pth hooks may load re or typing: not the command's)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if bin_dir is not None:
        env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c",
         "import sys; from aorta.cli import main; sys.exit(main(sys.argv[1:]))", *argv],
        env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    bare = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    return done, _imported(done.stderr) - _imported(bare.stderr)


def _imported(importtime: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in importtime.splitlines()
            if line.startswith("import time:")}
