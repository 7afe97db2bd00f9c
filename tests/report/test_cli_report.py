"""`aorta report`: in process through the CLI's one door, and end to end after a real sweep."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from aorta.cli import main
from aorta.cli.commands import COMMANDS
from aorta.cli.report import ReportOptions, run
from aorta.base.errors import EXIT_USAGE, RunDirError

REPORT_ENTRY = ("aorta.cli.report:report", "Report a run as one HTML page, Markdown or JSON.")


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch):
    """`main(argv)` with the report verb registered (whether or not the table has it yet)."""
    monkeypatch.setitem(COMMANDS, "report", COMMANDS.get("report", REPORT_ENTRY))
    return main


def test_html_goes_into_the_run_directory_and_its_path_is_printed(cli, real_run, capsys) -> None:
    assert cli(["report", str(real_run)]) == 0
    out = capsys.readouterr().out
    assert out == f"{real_run / 'report.html'}\n"
    assert (real_run / "report.html").read_text().startswith("<!doctype html>")


def test_md_and_json_print_to_stdout(cli, real_run, capsys) -> None:
    assert cli(["report", str(real_run), "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith("# aorta report: gpu-report\n")
    assert cli(["report", str(real_run), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["header"]["run"] == "gpu-report"
    assert not (real_run / "report.html").exists()


def test_output_file(cli, real_run, tmp_path, capsys) -> None:
    target = tmp_path / "elsewhere" / "r.md"
    assert cli(["report", str(real_run), "--format", "md", "--output", str(target)]) == 0
    assert capsys.readouterr().out == f"{target}\n"
    assert "## Failures" in target.read_text()


@pytest.mark.parametrize("make_dir", [
    lambda p: p / "missing",
    lambda p: p,
    lambda p: (p / "run.json").write_text("not json") and p,
])
def test_not_a_run_exits_2_with_one_line(cli, tmp_path, capsys, make_dir) -> None:
    target = make_dir(tmp_path)
    assert cli(["report", str(target)]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("aorta: error: ") and str(target) in lines[0]


def test_bad_format_is_a_usage_error(cli, real_run) -> None:
    assert cli(["report", str(real_run), "--format", "pdf"]) == EXIT_USAGE


def test_run_raises_for_a_non_run(tmp_path) -> None:
    with pytest.raises(RunDirError):
        run(ReportOptions(tmp_path))


def test_report_after_a_real_sweep_with_failures(tmp_path, capsys) -> None:
    payload = tmp_path / "bench.py"
    payload.write_text(textwrap.dedent("""\
        import sys
        mode = sys.argv[sys.argv.index("--mode") + 1]
        sum(i * i for i in range(20000))
        if mode == "bad":
            sys.stderr.write("<script>alert(1)</script>\\n")
            raise RuntimeError("payload says no")
        print("ok")
        """))
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(textwrap.dedent("""\
        schema_version: 1
        ticket: e2e
        trials: 2
        timeout_per_trial: 60
        collect:
          cprofile: {}
        axes:
          mode:
            good: {args: [--mode, good]}
            bad: {args: [--mode, bad]}
        """))
    assert main(["sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "out"),
                 "--", sys.executable, str(payload)]) == 0
    run_dir = tmp_path / "out" / "e2e"
    capsys.readouterr()
    assert run(ReportOptions(run_dir, "json")) == 0
    doc = json.loads(capsys.readouterr().out)
    good, bad = doc["cells"]
    assert (good["passed"], bad["failed"]) == (2, 2)
    assert "cprofile_time_ms" in good["metrics"] and good["kernels"][0]["table"] == \
        "cprofile_functions"
    [failure] = doc["failures"]
    assert "payload says no" in failure["stderr_tail"] and failure["repeats"] == ["trial_1"]
    assert run(ReportOptions(run_dir)) == 0
    page = (run_dir / "report.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>" not in page
