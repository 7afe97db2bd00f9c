"""`import aorta` and the commands that run no trial import only what they use: heavy imports
(the schema library, YAML, SQL, pandas, torch, pyarrow, the profilers' bindings) stay inside
the functions that need them, and `aorta --help` loads no subcommand's module.

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

HEAVY = ("pydantic", "yaml", "rich", "sqlalchemy", "pyarrow", "pynvml", "pandas", "polars",
         "numpy", "torch", "triton")
COLLECTORS = ("aorta.collectors.", "aorta.parsers.", "aorta.comparison.", "aorta.report.",
              "aorta.history.", "aorta.recipe.schema", "aorta.run.plan")

_PROBE = textwrap.dedent("""
    import contextlib, io, json, sys
    before = set(sys.modules)
    if sys.argv[1] == "import":
        import aorta
        code = 0
    else:
        from aorta.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(json.loads(sys.argv[1]))
    print(json.dumps({"code": code, "loaded": sorted(set(sys.modules) - before)}))
""")


def _loaded(argv: list[str] | None) -> tuple[int, list[str]]:
    env = {k: v for k, v in os.environ.items()}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", _PROBE,
                           "import" if argv is None else json.dumps(argv)], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return found["code"], found["loaded"]


# Small, import-free modules a command's options need (compare's --correction choices).
LIGHT = ("aorta.stats", "aorta.stats.family")


def _heavy(loaded: list[str], also: tuple[str, ...] = ()) -> list[str]:
    return [m for m in loaded if (m.split(".")[0] in HEAVY or m.startswith(also))
            and m not in LIGHT]


def test_import_aorta_loads_neither_click_nor_anything_heavy() -> None:
    code, loaded = _loaded(None)
    assert _heavy(loaded, ("click", *COLLECTORS, "aorta.run", "aorta.store")) == []


def _commands() -> list[str]:
    from aorta.cli.commands import COMMANDS

    return sorted(COMMANDS)


@pytest.mark.parametrize("argv", [["--help"], ["--version"]]
                         + [[name, "--help"] for name in _commands()]
                         + [["sweep", "run", "--help"], ["sweep", "status", "--help"]],
                         ids=" ".join)
def test_help_loads_nothing_heavy(argv: list[str]) -> None:
    code, loaded = _loaded(argv)
    assert code == 0
    assert _heavy(loaded, COLLECTORS) == []


def test_the_group_help_loads_no_subcommand() -> None:
    code, loaded = _loaded(["--help"])
    assert code == 0
    assert [m for m in loaded if m.startswith("aorta.cli.") and m not in
            ("aorta.cli.group", "aorta.cli.commands", "aorta.cli.option_guard")] == []


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
def test_sweep_status_reads_a_run_without_collectors_or_schemas(
        tmp_path: Path, json_flag: list[str]) -> None:
    recipe = write_recipe(tmp_path, "schema_version: 1\nticket: light\ntrials: 2\n")
    done = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "out"),
                     "--", sys.executable, "-c", "pass")
    assert done.returncode == 0, done.stderr
    code, loaded = _loaded(["sweep", "status", str(tmp_path / "out" / "light"), *json_flag])
    assert code == 0
    assert "aorta.run.status" in loaded
    assert _heavy(loaded, COLLECTORS) == []
