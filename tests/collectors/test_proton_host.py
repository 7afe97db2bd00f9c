"""What the machine says: installed Triton (in another interpreter), CLI backends, GPU vendor,
what `auto` resolves to, and the collector's `resolved()` and `probe()` built on them."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from aorta.collectors.base import TrialContext
from aorta.collectors.proton.collector import ProtonCollector
from aorta.collectors.binaries import gpu_vendor
from aorta.collectors.proton.host import (TritonInstall, argparse_choices, cli_backends,
                                          find_triton, resolve_backend, torch_build_vendor,
                                          version_tuple)

PROTON = ProtonCollector()

# The backend argument of triton/profiler/proton.py as the wheels spell it.
CLI_3_3 = '''
def parse_arguments():
    parser.add_argument("-n", "--name", type=str, help="Name of the profiling session")
    parser.add_argument("-b", "--backend", type=str, help="Profiling backend", default=None,
                        choices=["cupti", "cupti_pcsampling", "roctracer"])
    parser.add_argument("-d", "--data", type=str, help="Profiling data", default="tree", choices=["tree"])
'''
CLI_3_6 = '''
def parse_arguments():
    parser.add_argument("-b", "--backend", type=str, help="Profiling backend", default=None,
                        choices=("cupti", "roctracer", "instrumentation"))
    parser.add_argument("-d", "--data", type=str, default="tree", choices=["tree", "trace"])
'''
CLI_3_8 = '''
from triton._C.libproton import proton as libproton
def parse_arguments():
    parser.add_argument("-b", "--backend", type=str, help="Profiling backend", default=None,
                        choices=libproton.get_available_profilers())
'''


def fake_triton(root: Path, version: str | None, cli: str | None = CLI_3_6,
                dist: str = "triton") -> dict[str, str]:
    """A `triton` package (and its metadata) under `root/site`; the env that finds it, with
    AORTA_PROTON_PYTHON naming an interpreter other than this one (a link to it)."""
    site = root / "site"
    (site / "triton").mkdir(parents=True)
    (site / "triton" / "__init__.py").write_text("")
    if cli is not None:
        (site / "triton" / "profiler").mkdir()
        (site / "triton" / "profiler" / "proton.py").write_text(textwrap.dedent(cli))
    if version is not None:
        meta = site / f"{dist.replace('-', '_')}-{version}.dist-info"
        meta.mkdir()
        (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (root / "bin").mkdir()
    python = root / "bin" / "python3"
    python.symlink_to(sys.executable)
    return {"AORTA_PROTON_PYTHON": str(python), "PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}


# --- the installed Triton --------------------------------------------------------------------

def test_this_interpreter_has_no_triton() -> None:
    install = find_triton()
    assert install.version is None and install.problem == "no triton package"


def test_triton_of_another_interpreter(tmp_path: Path) -> None:
    env = fake_triton(tmp_path, "3.6.0")
    install = find_triton(env["AORTA_PROTON_PYTHON"], env)
    assert (install.version, install.distribution, install.release) == ("3.6.0", "triton", (3, 6))
    assert install.package_dir == tmp_path / "site" / "triton"


def test_pytorch_triton_rocm_distribution_is_found(tmp_path: Path) -> None:
    env = fake_triton(tmp_path, "3.2.0+git4b3bb1f8", dist="pytorch-triton-rocm")
    install = find_triton(env["AORTA_PROTON_PYTHON"], env)
    assert (install.version, install.distribution) == ("3.2.0+git4b3bb1f8", "pytorch-triton-rocm")
    assert install.release == (3, 2)


def test_an_interpreter_that_cannot_run(tmp_path: Path) -> None:
    install = find_triton(str(tmp_path / "no-such-python"), {})
    assert install.version is None and "cannot ask" in install.problem


@pytest.mark.parametrize(("version", "release"), [
    ("3.6.0", (3, 6)), ("3.10.1", (3, 10)), ("3.8.0.dev20250101", (3, 8)), ("", None),
    (None, None), ("nightly", None),
])
def test_version_tuple(version: str | None, release: tuple[int, int] | None) -> None:
    assert version_tuple(version) == release


@pytest.mark.parametrize(("source", "choices"), [
    (CLI_3_3, ("cupti", "cupti_pcsampling", "roctracer")),
    (CLI_3_6, ("cupti", "roctracer", "instrumentation")),
    (CLI_3_8, None),
    ("x = 1\n", None),
])
def test_argparse_choices(source: str, choices: tuple[str, ...] | None) -> None:
    assert argparse_choices(source, "--backend") == choices


def test_data_choices_say_whether_trace_exists() -> None:
    assert argparse_choices(CLI_3_3, "--data") == ("tree",)
    assert argparse_choices(CLI_3_6, "--data") == ("tree", "trace")


def test_cli_backends_from_the_source(tmp_path: Path) -> None:
    env = fake_triton(tmp_path, "3.6.0")
    backends, source = cli_backends(find_triton(env["AORTA_PROTON_PYTHON"], env))
    assert backends == ("cupti", "roctracer", "instrumentation")
    assert source.startswith("argparse choices in ")


def test_cli_backends_computed_at_runtime_fall_back_to_the_table(tmp_path: Path) -> None:
    # No libproton here: get_available_profilers() fails in the child, the table answers.
    env = fake_triton(tmp_path, "3.8.0", CLI_3_8)
    backends, source = cli_backends(find_triton(env["AORTA_PROTON_PYTHON"], env))
    assert backends == ("cupti", "roctracer", "rocprofiler", "instrumentation")
    assert source == "version table for Triton 3.8.0"


@pytest.mark.parametrize(("version", "backends"), [
    ("3.1.0", ("cupti",)),
    ("3.4.0", ("cupti", "cupti_pcsampling", "roctracer")),
    ("3.7.1", ("cupti", "roctracer", "instrumentation")),
    ("2.3.0", ()),
])
def test_cli_backends_version_table(version: str, backends: tuple[str, ...]) -> None:
    assert cli_backends(TritonInstall("python3", version))[0] == backends


# --- GPU vendor and auto ---------------------------------------------------------------------

@pytest.mark.parametrize(("nodes", "smi", "vendor"), [
    (["kfd"], False, "amd"),
    (["nvidiactl"], False, "nvidia"),
    ([], True, "nvidia"),
    (["kfd", "nvidiactl"], False, "both"),
    ([], False, None),
])
def test_gpu_vendor(tmp_path: Path, nodes: list[str], smi: bool, vendor: str | None) -> None:
    dev, bin_dir = tmp_path / "dev", tmp_path / "bin"
    dev.mkdir()
    bin_dir.mkdir()
    for node in nodes:
        (dev / node).touch()
    if smi:
        (bin_dir / "nvidia-smi").write_text("#!/bin/sh\n")
        (bin_dir / "nvidia-smi").chmod(0o755)
    assert gpu_vendor(dev, str(bin_dir)) == vendor


@pytest.mark.parametrize(("requested", "vendor", "version", "backend"), [
    ("auto", "nvidia", "3.6.0", "cupti"),
    ("auto", "amd", "3.6.0", "roctracer"),
    ("auto", "amd", "3.7.1", "roctracer"),
    ("auto", "amd", "3.8.0", "rocprofiler"),
    ("auto", "amd", "3.10.0", "rocprofiler"),
    ("auto", "amd", None, "auto (unresolved: Triton version unknown; roctracer below 3.8, "
                          "rocprofiler from 3.8)"),
    ("auto", None, "3.6.0", "auto (unresolved: no GPU found)"),
    ("cupti", None, None, "cupti"),
    ("instrumentation", "amd", "3.6.0", "instrumentation"),
])
def test_resolve_backend(requested: str, vendor: str | None, version: str | None,
                         backend: str) -> None:
    assert resolve_backend(requested, vendor, version) == backend


def test_both_vendors_are_settled_by_the_torch_build_or_left_unresolved() -> None:
    expected = {"amd": "roctracer", "nvidia": "cupti",
                None: "auto (unresolved: both AMD and NVIDIA devices found)"}
    assert resolve_backend("auto", "both", "3.6.0") == expected[torch_build_vendor()]


# --- resolved() and probe() ------------------------------------------------------------------

def context(env: dict[str, str]) -> TrialContext:
    return TrialContext("c", 0, Path("/runs/t"), env)


def test_resolved_records_backend_and_triton_version(tmp_path: Path) -> None:
    env = fake_triton(tmp_path, "3.6.0")
    out = PROTON.resolved(PROTON.validate({"backend": "cupti"}), context(env))
    assert out == {"proton_backend": "cupti", "proton_triton_version": "3.6.0"}


def test_resolved_without_triton() -> None:
    out = PROTON.resolved(PROTON.validate(None), context({}))
    assert out["proton_triton_version"] == "unknown (no triton package)"
    assert out["proton_backend"].startswith("auto") or out["proton_backend"] in (
        "cupti", "roctracer", "rocprofiler")


START_3_2 = "def start(name=None, *, context='shadow', data='tree', backend=None, hook=None):\n    pass\n"
START_3_6 = ("def start(name=None, *, context='shadow', data='tree', backend=None, mode=None,\n"
             "          hook=None):\n    pass\n")


@pytest.mark.parametrize("version", ["3.6.0", "3.7.1"])
def test_resolved_has_no_mode_note_where_start_takes_the_mode(tmp_path: Path,
                                                             version: str) -> None:
    """aorta's launcher hands --mode to proton.start(mode=...): nothing is dropped (Triton's
    own CLI parsed --mode and dropped it before 3.8)."""
    env = fake_triton(tmp_path, version)
    (tmp_path / "site" / "triton" / "profiler" / "profile.py").write_text(START_3_6)
    out = PROTON.resolved(PROTON.validate({"backend": "cupti", "backend_mode": "pcsampling"}),
                          context(env))
    assert "proton_mode_note" not in out


def test_resolved_notes_a_start_without_mode(tmp_path: Path) -> None:
    env = fake_triton(tmp_path, "3.2.0")
    (tmp_path / "site" / "triton" / "profiler" / "profile.py").write_text(START_3_2)
    out = PROTON.resolved(PROTON.validate({"backend": "cupti", "backend_mode": "pcsampling"}),
                          context(env))
    assert out["proton_mode_note"].startswith(
        "aorta: Triton 3.2.0's proton.start() takes no mode, so aorta's launcher does not run "
        "the payload with --mode pcsampling (exit 2)")
    env_mode = PROTON.validate({"mode": "env", "backend": "cupti", "backend_mode": "pcsampling"})
    assert "proton_mode_note" not in PROTON.resolved(env_mode, context(env))
    no_mode = PROTON.validate({"backend": "cupti"})
    assert "proton_mode_note" not in PROTON.resolved(no_mode, context(env))


def test_resolved_carries_the_device_note() -> None:
    out = PROTON.resolved(PROTON.validate({"mode": "env", "backend": "rocprofiler"}),
                          context({"HIP_VISIBLE_DEVICES": "1"}))
    assert out["proton_device_note"].startswith("aorta: Proton's rocprofiler backend refuses")


def test_probe_without_triton(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AORTA_PROTON_PYTHON", raising=False)
    capability = PROTON.probe()
    assert not capability.usable
    assert capability.reason.startswith("Triton is not installed for ")
    assert "pip install triton" in capability.fix and "AORTA_PROTON_PYTHON" in capability.fix


def test_probe_with_a_triton_without_profiler(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    env = fake_triton(tmp_path, "3.6.0", cli=None)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    capability = PROTON.probe()
    assert not capability.usable and "has no profiler package" in capability.reason


def test_probe_with_triton_but_no_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if gpu_vendor() is not None:
        pytest.skip("this machine has a GPU")
    env = fake_triton(tmp_path, "3.6.0")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    capability = PROTON.probe()
    assert (capability.usable, capability.version) == (False, "3.6.0")
    assert capability.reason.startswith("no GPU found")
