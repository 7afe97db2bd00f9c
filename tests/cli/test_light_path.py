"""The fast path (`aorta.cli.light`) prints what the click group prints, byte for byte.

Each case runs the same argv twice in fresh interpreters: once through `aorta` (the fast path
when the argv is one it handles) and once through `aorta.cli.group.click_main` (always click),
and compares stdout, stderr and the exit code. Other cases check which argv the fast path
takes and which it leaves to click.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aorta.cli.help_render import help_paths, render_help
from aorta.cli.help_texts import HELP
from aorta.cli.light import light_main
from aorta_testing import REPO, run_aorta, write_recipe

_CLICK = "import sys; from aorta.cli.group import click_main; sys.exit(click_main(sys.argv[1:]))"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", "_AORTA_COMPLETE")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    return env | extra


def _both(argv: list[str], **extra: str) -> tuple[subprocess.CompletedProcess[bytes], ...]:
    """(aorta, click) runs of `argv`, output as bytes."""
    env = _env(**extra)
    fast = subprocess.run([sys.executable, "-m", "aorta", *argv], env=env, capture_output=True,
                          timeout=120, check=False)
    slow = subprocess.run([sys.executable, "-c", _CLICK, *argv], env=env, capture_output=True,
                          timeout=120, check=False)
    return fast, slow


def _assert_same(argv: list[str], **extra: str) -> subprocess.CompletedProcess[bytes]:
    fast, slow = _both(argv, **extra)
    assert (fast.stdout, fast.stderr, fast.returncode) == \
        (slow.stdout, slow.stderr, slow.returncode), argv
    return fast


def test_the_help_snapshot_is_what_click_renders() -> None:
    # On failure: python -m aorta.cli.help_render (rewrites src/aorta/cli/help_texts.py)
    assert sorted(HELP) == sorted(help_paths())
    for path in help_paths():
        assert HELP[path] == render_help(path), f"aorta {' '.join(path)} --help is stale"


@pytest.mark.parametrize("path", sorted(HELP), ids=lambda p: " ".join(p) or "aorta")
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_clicks(path: tuple[str, ...], flag: str) -> None:
    done = _assert_same([*path, flag])
    assert done.returncode == 0 and done.stdout.startswith(b"Usage: aorta")


def test_version_is_clicks() -> None:
    assert _assert_same(["--version"]).stdout == b"aorta, version 0.1.0\n"


def _swept(tmp: Path, ticket: str, recipe_extra: str = "") -> Path:
    """A finished run of `python -c pass` named `ticket`, two trials unless told otherwise."""
    recipe = write_recipe(tmp, f"schema_version: 1\nticket: {ticket}\n"
                               + (recipe_extra or "trials: 2\n"))
    done = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp / "out"),
                     "--", sys.executable, "-c", "pass")
    assert done.returncode == 0, done.stderr
    return tmp / "out" / ticket


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _swept(tmp_path_factory.mktemp("light"), "light")


@pytest.mark.parametrize("flags", [[], ["--json"], ["--json", "RUN"]], ids=["text", "json",
                                                                          "json-first"])
def test_sweep_status_is_clicks(finished_run: Path, flags: list[str]) -> None:
    argv = ["sweep", "status", *(str(finished_run) if f == "RUN" else f for f in flags)]
    if "RUN" not in flags:
        argv.insert(2, str(finished_run))
    done = _assert_same(argv)
    assert done.returncode == 0
    assert (b'"counts"' if "--json" in flags else b"2 trial(s)") in done.stdout


@pytest.fixture(scope="module")
def damaged_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run with baselines whose records are damaged in every way a reader meets."""
    run = _swept(tmp_path_factory.mktemp("damaged"), "hurt", "trials: 4\nbaseline: true\n")
    cell = run / "cells" / "default"

    def edit(trial: str, **changes: object) -> None:
        doc = json.loads((cell / trial / "result.json").read_text())
        (cell / trial / "result.json").write_text(json.dumps({**doc, **changes}))

    (cell / "trial_0" / "result.json").write_text('{"schema_version": 2, "cell": "default"\n')
    edit("trial_1", schema_version=9)
    (cell / "trial_2" / "result.json").unlink()
    edit("trial_3", captures={"x": {"state": "bogus"}})
    edit("baseline_1", index=3)
    edit("baseline_2", verdict="fail", reason="exit 3", exit_code=3)
    edit("baseline_3", wall_s=float("nan"))
    (cell / "trial_7").mkdir()
    (cell.parent / "extra" / "trial_0").mkdir(parents=True)
    return run


@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["text", "json"])
def test_sweep_status_of_damaged_records_is_clicks(damaged_run: Path, flags: list[str]) -> None:
    # The fast path reads without `import json`: a record json rejects must still be reported
    # in json's words (the C scanner needs json.decoder loaded to raise its error before 3.12).
    done = _assert_same(["sweep", "status", str(damaged_run), *flags])
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    for expected in ("not valid JSON (Expecting ',' delimiter", "trial schema 9",
                     "capture state 'bogus'", "it records default/baseline_3",
                     "NaN is not strict JSON", "exit 3"):
        assert expected in text, expected
    if not flags:
        assert "2 complete (1 fail, 1 pass), 5 corrupt, 10 not started" in text


@pytest.mark.parametrize("spelling", ["{run}/", "{run}//", "{parent}/./light", "{parent}//light",
                                      "{parent}/../{grand}/light"])
def test_sweep_status_prints_the_run_dir_as_click_does(finished_run: Path, spelling: str) -> None:
    # The fast path prints RUN_DIR as pathlib spells it (trailing slashes dropped) or leaves
    # the spelling to click and pathlib (`.` parts, doubled slashes).
    run_dir = spelling.format(run=finished_run, parent=finished_run.parent,
                              grand=finished_run.parent.name)
    for flags in ([], ["--json"]):
        done = _assert_same(["sweep", "status", run_dir, *flags])
        assert done.returncode == 0, done.stderr


def _without_live_readings(stdout: bytes) -> str:
    """`aorta env`'s JSON with what two runs may read differently masked, in its own key
    order: the capture time, and each GPU's live health readings (clocks, temperatures,
    power) where nvidia-smi is present."""
    doc = json.loads(stdout)
    doc["captured_at"] = "*"
    gpus = doc.get("system_health", {}).get("nvidia")
    for gpu in gpus if isinstance(gpus, list) else ():
        for key in gpu:
            if key not in ("index", "uuid", "ecc.mode.current"):
                gpu[key] = "*"
    return json.dumps(doc, indent=2)


@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["plain", "json"])
def test_env_is_clicks(flags: list[str]) -> None:
    fast, slow = _both(["env", *flags])
    assert (fast.stderr, fast.returncode) == (slow.stderr, slow.returncode) == (b"", 0)
    assert _without_live_readings(fast.stdout) == _without_live_readings(slow.stdout)
    # Byte for byte apart from the masked values: the same layout, the same escaping.
    assert len(fast.stdout.splitlines()) == len(slow.stdout.splitlines())


@pytest.mark.parametrize("argv", [
    ["sweep", "status", "/nonexistent/run"],       # a UserError: click's one line, exit 2
    ["sweep", "status"],                           # a missing argument
    ["sweep", "status", "--bogus", "x"],
    ["--version", "--help"],
    ["nosuch", "--help"],
    ["compare", "--hel"],
], ids=lambda a: " ".join(a))
def test_irregular_invocations_are_left_to_click(argv: list[str]) -> None:
    assert light_main(argv) is None
    _assert_same(argv)


def test_a_repeated_env_flag_is_left_to_click() -> None:
    argv = ["env", "--json", "--json"]
    assert light_main(argv) is None
    fast, slow = _both(argv)
    assert (fast.stderr, fast.returncode) == (slow.stderr, slow.returncode) == (b"", 0)
    assert _without_live_readings(fast.stdout) == _without_live_readings(slow.stdout)


def test_a_file_as_run_dir_is_left_to_click(tmp_path: Path) -> None:
    afile = tmp_path / "file"
    afile.write_text("")
    assert light_main(["sweep", "status", str(afile)]) is None
    assert _assert_same(["sweep", "status", str(afile)]).returncode == 2


def test_a_narrow_terminal_is_left_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    assert light_main(["--help"]) is None
    narrow = _assert_same(["sweep", "run", "--help"], COLUMNS="60")
    assert narrow.stdout != HELP[("sweep", "run")].encode()


def test_shell_completion_is_left_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_AORTA_COMPLETE", "bash_source")
    assert light_main(["--help"]) is None


def test_the_fast_path_answers_what_it_handles(capsys: pytest.CaptureFixture[str],
                                               finished_run: Path) -> None:
    assert light_main(["--version"]) == 0
    assert light_main(["sweep", "status", str(finished_run), "--json"]) == 0
    assert light_main(["env", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("aorta, version 0.1.0\n{")


def test_the_option_tables_snapshot_is_what_the_models_give() -> None:
    # On failure: python -m aorta.cli.help_render (rewrites aorta/collectors/option_tables.py)
    from aorta.cli.help_render import default_child_imports, option_tables
    from aorta.collectors.option_tables import CHILD_IMPORTS, OPTIONS, SUMMARIES

    summaries, tables = option_tables()
    assert (SUMMARIES, OPTIONS) == (summaries, tables)
    assert all(tables.values()) and all(summaries.values())
    assert CHILD_IMPORTS == default_child_imports()
    assert CHILD_IMPORTS["torch"] == ("torch",)


@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["text", "json"])
def test_collectors_is_clicks(flags: list[str]) -> None:
    done = _assert_same(["collectors", *flags])
    assert done.returncode == 0
    assert b"cprofile" in done.stdout and b"interval_ms" in done.stdout


@pytest.mark.parametrize("argv", [["collectors", "--json", "--json"], ["collectors", "--bogus"],
                                  ["collectors", "x"]], ids=lambda a: " ".join(a))
def test_irregular_collectors_invocations_are_left_to_click(argv: list[str]) -> None:
    assert light_main(argv) is None
    _assert_same(argv)


def _plugin_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution on sys.path declaring the entry point group: only the registry loads
    plug-ins. This one re-registers a built-in's name, which the registry ignores, so click
    can answer."""
    info = tmp_path / "plug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Name: plug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[aorta.collectors]\ncprofile = aorta.collectors.cprofile:CProfileCollector\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])


def test_a_plugin_collector_sends_collectors_to_click(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _plugin_installed(tmp_path, monkeypatch)
    assert light_main(["collectors"]) is None
    done = _assert_same(["collectors", "--json"],
                        PYTHONPATH=os.pathsep.join(filter(None, [
                            str(REPO / "src"), str(tmp_path), os.environ.get("PYTHONPATH")])))
    assert [row["name"] for row in json.loads(done.stdout)][0] == "cprofile"


def _pythons(tmp: Path) -> str:
    """A PATH whose `python3` has torch and no triton and whose `python` cannot start: each
    kind of interpreter row, from real processes, the same in any environment."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(
        "#!/bin/sh\ncase \"$2\" in 'import torch') exit 0;; esac\n"
        "echo \"ModuleNotFoundError: No module named 'triton'\" >&2\nexit 1\n")
    (bin_dir / "python").write_text("#!/bin/sh\nexec /nonexistent/python \"$@\"\n")
    for name in ("python3", "python"):
        (bin_dir / name).chmod(0o755)
    return os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])


@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["text", "json"])
def test_doctor_is_clicks(tmp_path: Path, flags: list[str]) -> None:
    done = _assert_same(["doctor", *flags], PATH=_pythons(tmp_path))
    assert done.returncode == 0
    assert b"torch@python3" in done.stdout and b"proton@python" in done.stdout
    if flags:
        rows = {row["check"]: row for row in json.loads(done.stdout)}
        assert rows["torch@python3"]["usable"] is True
        assert rows["proton@python3"]["reason"].endswith("No module named 'triton'")
        assert rows["torch@python"]["usable"] is False


def test_doctor_with_the_proton_interpreter_named_is_clicks(tmp_path: Path) -> None:
    named = tmp_path / "triton-python"
    named.write_text("#!/bin/sh\necho 'ImportError: libcuda.so.1' >&2\nexit 1\n")
    named.chmod(0o755)
    done = _assert_same(["doctor", "--json"], PATH=_pythons(tmp_path),
                        AORTA_PROTON_PYTHON=str(named))
    rows = {row["check"]: row for row in json.loads(done.stdout)}
    assert rows["proton@python3"]["reason"] == \
        f"triton.profiler is not importable by {named}: ImportError: libcuda.so.1"
    assert "proton@python" not in rows          # one interpreter, checked once


@pytest.mark.parametrize("argv", [["doctor", "--json", "--json"], ["doctor", "--collect", "torch"],
                                  ["doctor", "--", "python3", "x.py"], ["doctor", "x"]],
                         ids=lambda a: " ".join(a))
def test_other_doctor_invocations_are_left_to_click(argv: list[str]) -> None:
    assert light_main(argv) is None


def test_a_plugin_collector_sends_doctor_to_click(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _plugin_installed(tmp_path, monkeypatch)
    assert light_main(["doctor"]) is None
