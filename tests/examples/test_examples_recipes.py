"""Every example recipe loads and plans with exactly its own collector, follows the recipe
conventions, and attaches to its README's command; the `--collect` override behaves as the
index README says."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from aorta.collectors.registry import names as collector_names
from aorta.base.errors import ConflictError, SetupError
from aorta.run.overrides import Overrides, parse_collect_flag
from aorta.run.plan import build_plan
from aorta.recipe.schema import load_recipe
from examples_catalog import EXAMPLES, PROTON_EXAMPLES, ROOT, Example, aorta_command

# What the three amd-* recipes must pin, for the reasons the index README gives.
AMD_PINS = {
    "proton/amd-roctracer": {"mode": "env", "backend": "roctracer"},
    "proton/amd-instrumentation": {"mode": "env", "backend": "instrumentation",
                                   "instrumentation_mode": "default", "granularity": None},
    "proton/amd-rocprofiler": {"mode": "env", "backend": "rocprofiler",
                               "backend_mode": "pcsampling"},
}


def collector_missing(name: str) -> str | None:
    """A skip reason when the collector is not registered here, else None."""
    if name not in collector_names():
        return f"collector {name} is not registered; its recipes cannot be planned"
    return None


def needs_collector(name: str) -> None:
    reason = collector_missing(name)
    if reason:
        pytest.skip(reason)


def readme_argv(example: Example) -> tuple[str, ...]:
    return tuple(shlex.split(aorta_command(example).split(" -- ", 1)[1]))


def plan_for(example: Example, collect: tuple[str, ...] | None = None):
    # Recipe paths as the README gives them: relative to the repository root.
    loaded = load_recipe(Path(example.recipe.relative_to(ROOT)))
    return build_plan(loaded, Overrides(command=readme_argv(example), collect=collect))


@pytest.fixture(autouse=True)
def _from_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_recipe_plans_with_exactly_its_own_collector(example: Example):
    needs_collector(example.category)
    plan = plan_for(example)
    assert list(plan.collectors) == [example.category]
    assert plan.command == readme_argv(example)
    assert len(plan.cells) == 1 and plan.trials == 1
    assert plan.run_name == f"PROFILING-{example.category}-{example.directory.name}"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_recipe_follows_the_conventions(example: Example):
    doc = yaml.safe_load(example.recipe.read_text())
    assert doc["schema_version"] == 1 and doc["mode"] == "probe"
    assert doc["ticket"] == f"PROFILING-{example.category}-{example.directory.name}"
    assert doc["trials"] == 1 and doc["env_passthrough_mode"] == "inherit"
    assert 60 <= doc["timeout_per_trial"] <= 1800
    assert list(doc["collect"]) == [example.category], "one collector per example"
    assert doc["collect"][example.category], "the collector's option block is empty"
    assert "command" not in doc, "the command belongs on the README's command line"


def test_tickets_are_unique():
    tickets = [yaml.safe_load(e.recipe.read_text())["ticket"] for e in EXAMPLES]
    assert len(set(tickets)) == len(tickets)


@pytest.mark.parametrize("key", sorted(AMD_PINS))
def test_amd_recipes_pin_their_backend_in_env_mode(key: str):
    needs_collector("proton")
    options = plan_for(Example(key)).collectors["proton"]
    for field, value in AMD_PINS[key].items():
        assert getattr(options, field) == value, field


@pytest.mark.parametrize("example", PROTON_EXAMPLES, ids=lambda e: e.key)
def test_proton_attaches_to_the_readme_command(example: Example, tmp_path: Path):
    needs_collector("proton")
    from aorta.collectors.proton.collector import cli_argv, env_overlay

    options = plan_for(example).collectors["proton"]
    argv = readme_argv(example)
    if options.mode == "cli":
        wrapped = cli_argv(argv, tmp_path, options, python="python")
        assert wrapped[:3] == ("python", "-m", "aorta.launchers.proton_run")
        assert wrapped[-2:] == ("--", argv[1]), "the script comes last, right after `--`"
    else:
        overlay = env_overlay(tmp_path, options)
        assert overlay["AORTA_PROTON_NAME"] == str(tmp_path / "proton")


@pytest.mark.parametrize("example", PROTON_EXAMPLES, ids=lambda e: e.key)
def test_proton_mode_matches_who_starts_the_session(example: Example):
    """`mode: env` payloads call proton.start() themselves; `mode: cli` ones must not need to."""
    mode = yaml.safe_load(example.recipe.read_text())["collect"]["proton"]["mode"]
    starts = "proton.start(" in example.payload.read_text()
    assert starts == (mode == "env"), f"mode: {mode}, payload calls proton.start(): {starts}"


def torch_matmul() -> Example:
    return Example("rocprof/torch-matmul")


def test_collect_override_replaces_the_list_and_drops_other_blocks():
    needs_collector("proton")
    plan = plan_for(torch_matmul(), collect=parse_collect_flag("proton"))
    assert list(plan.collectors) == ["proton"]
    options = plan.collectors["proton"]
    assert (options.mode, options.backend) == ("cli", "auto"), "proton runs on its defaults"


def test_collect_none_runs_without_a_collector():
    plan = plan_for(torch_matmul(), collect=parse_collect_flag("none"))
    assert dict(plan.collectors) == {}


def test_collect_rocprof_with_proton_auto_is_refused():
    needs_collector("rocprof")
    needs_collector("proton")
    with pytest.raises(ConflictError, match="instrumentation"):
        plan_for(torch_matmul(), collect=parse_collect_flag("rocprof,proton"))


def test_proton_cli_refuses_a_native_binary_naming_mode_env(tmp_path: Path):
    needs_collector("proton")
    from aorta.collectors.proton.collector import ProtonWrapError, cli_argv

    options = plan_for(torch_matmul(), collect=("proton",)).collectors["proton"]
    with pytest.raises(ProtonWrapError, match="mode: env") as caught:
        cli_argv(readme_argv(Example("rocprof/hip-gemm")), tmp_path, options)
    assert isinstance(caught.value, SetupError)


@pytest.mark.torch
def test_torch_example_cpu_command_runs_end_to_end(tmp_path: Path):
    """The torch README's CPU command, smaller, through the real CLI: 3 products, 3 aten::mm."""
    example = Example("torch/torch-matmul")
    argv = [sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(example.recipe),
            "--output", str(tmp_path), "--", sys.executable, str(example.payload),
            "--device", "cpu", "--size", "64", "--dtype", "float32", "--iters", "2",
            "--warmup", "1"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False,
                          env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(next(tmp_path.glob("*/cells/*/trial_0/result.json")).read_text())
    metrics = result["metrics"]
    assert result["verdict"] == "pass" and result["captures"]["torch"]["state"] == "ok"
    assert {row["name"]: row["calls"] for row in metrics["torch_ops"]}["aten::mm"] == 3
