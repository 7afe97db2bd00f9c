"""Issue 24: a full disk never writes a false result. The disk fills (seeded, random) while a
collector's trials run: from inside a payload (at a random trial, after a random share of its
output) or from another program (after a random delay), leaving a random number of bytes, so
the first write that fails is a log, the profile, a record, run.json or a trial's first file.
The run stops with one line (exit 2) or completes; every record written says what the payload
really did, with a complete capture; freeing the space and running the same command again
completes the run with the right verdicts. Runs on a small tmpfs (skipped, with the reason,
where one cannot be mounted)."""

from __future__ import annotations

import json
import os
import random
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from aorta_testing import run_aorta, small_filesystem, write_recipe

# Counts its trials in STATE; at the one plan.json names, fills the disk (as another program
# might) leaving `leave` bytes, after `before` bytes of output. Ends with the exit code asked.
PAYLOAD = textwrap.dedent("""
    import json, os, sys
    state, fill, torch, output, code = sys.argv[1], sys.argv[2], sys.argv[3] == "1", \
        int(sys.argv[4]), int(sys.argv[5])
    count = os.path.join(state, "count")
    n = int(open(count).read()) if os.path.exists(count) else 0
    open(count, "w").write(str(n + 1))
    plan_path = os.path.join(state, "plan.json")
    plan = json.load(open(plan_path)) if os.path.exists(plan_path) else {"at": -1}
    if torch:
        import torch as t
        t.ones(64, 64).matmul(t.ones(64, 64)).sum()

    def say(size):
        sys.stdout.write("o" * size)
        sys.stderr.write("e" * (size // 8))
        sys.stdout.flush()
        sys.stderr.flush()

    before = min(plan["before"], output) if plan["at"] == n else output
    say(before)
    if plan["at"] == n:
        os.remove(plan_path)
        disk = os.statvfs(os.path.dirname(fill))
        try:
            with open(fill, "wb") as fh:
                fh.write(b"x" * max(0, disk.f_bfree * disk.f_frsize - plan["leave"]))
        except OSError:
            pass
    say(output - before)
    sys.exit(code)
""")
RECIPE = """\
    schema_version: 1
    ticket: full
    trials: {trials}
    axes:
      code:
        ok: {{args: ["0"]}}
        bad: {{args: ["3"]}}
"""
EXPECTED = {"ok": "pass", "bad": "fail"}


def _check_records(run: Path, collector: str) -> int:
    """Every record says what the payload did, with a complete capture; how many there are."""
    found = 0
    for path in run.glob("cells/*/*/result.json"):
        record = json.loads(path.read_text())
        cell = path.parent.parent.name
        assert record["verdict"] == EXPECTED[cell], (path, record["reason"])
        assert record["exit_code"] == (0 if cell == "ok" else 3), path
        assert record["captures"][collector]["state"] == "ok", (path, record["captures"])
        assert not any(log.get("problem") for log in record["logs"].values()), path
        found += 1
    return found


def _fill(path: Path, leave: int, delay: float) -> None:
    time.sleep(delay)
    disk = os.statvfs(path.parent)
    try:
        with open(path, "wb") as fh:
            fh.write(b"x" * max(0, disk.f_bfree * disk.f_frsize - leave))
    except OSError:
        pass


def _one_case(tmp_path: Path, seed: int, collector: str, trials: int) -> None:
    rng = random.Random(seed)
    inside = seed % 2 == 0
    output = rng.choice([0, 4 << 10, 48 << 10])   # printed a trial (stdout; an 8th on stderr)
    plan = {"at": rng.randrange(2 * trials) if inside else -1, "before": rng.randrange(48 << 10),
            "leave": rng.randrange(256 << 10), "delay": rng.uniform(0.2, 2.0)}
    state = tmp_path / "state"
    state.mkdir()
    (state / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "payload.py").write_text(PAYLOAD)
    recipe = write_recipe(tmp_path, RECIPE.format(trials=trials))
    with small_filesystem(tmp_path / "disk", "4m") as disk:
        fill = disk / "fill.bin"
        argv = ["sweep", "run", "--recipe", str(recipe), "--output", str(disk / "out"),
                "--collect", collector, "--", sys.executable, str(tmp_path / "payload.py"),
                str(state), str(fill), "1" if collector == "torch" else "0", str(output)]
        run = disk / "out" / "full"
        filler = threading.Thread(target=_fill, args=(fill, plan["leave"], plan["delay"]))
        if not inside:
            filler.start()
        first = run_aorta(*argv)
        if not inside:
            filler.join()
        assert "Traceback" not in first.stderr, (plan, first.stderr)
        assert first.returncode in (0, 2), (plan, first.stderr)
        if first.returncode == 2:
            errors = [line for line in first.stderr.splitlines() if "error" in line.lower()]
            assert len(errors) == 1 and errors[0].startswith("aorta: error: "), first.stderr
            assert "no space left on device" in errors[0], first.stderr
            if (run / "run.json").exists():   # else the disk was full before it began
                assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
            assert not (run / ".aorta.lock").exists()
        _check_records(run, collector)

        fill.unlink(missing_ok=True)
        again = run_aorta(*argv)
        assert again.returncode == 0, (plan, again.stderr)
        assert "Traceback" not in again.stderr
        assert _check_records(run, collector) == 2 * trials
        assert json.loads((run / "run.json").read_text())["status"] == "complete"


@pytest.mark.parametrize("seed", range(12))
def test_cprofile_trials_on_a_disk_that_fills(tmp_path: Path, seed: int) -> None:
    _one_case(tmp_path, seed, "cprofile", trials=3)


def test_torch_trials_on_a_disk_that_fills(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the torch collector needs torch")
    _one_case(tmp_path, 100, "torch", trials=1)


def test_a_payload_that_finds_its_own_disk_full_is_run_again(tmp_path: Path) -> None:
    """Its failure is the disk's, not a verdict on the payload: the run stops, saying so, and
    the trial runs again once the same command is run again (here, with space again)."""
    (tmp_path / "p.py").write_text(textwrap.dedent("""
        import os, sys
        mark = os.path.join(sys.argv[1], "seen")
        if not os.path.exists(mark):
            open(mark, "w").close()
            sys.exit("OSError: [Errno 28] No space left on device: '/scratch/ckpt.pt'")
    """))
    argv = ["sweep", "run", "--output", str(tmp_path / "out"), "--trials", "2", "--collect",
            "none", "--", sys.executable, str(tmp_path / "p.py"), str(tmp_path)]
    first = run_aorta(*argv)
    assert first.returncode == 2, first.stderr
    assert first.stderr.splitlines()[-1] == (
        "aorta: error: no space left on device in trial default/trial_0, whose stderr says "
        "'OSError: [Errno 28] No space left on device: \\'/scratch/ckpt.pt\\'': what finished "
        "is kept; free some space, then rerun the same command to resume")
    assert not list((tmp_path / "out").glob("*/cells/*/*/result.json"))
    again = run_aorta(*argv)
    assert again.returncode == 0, again.stderr
    assert len(list((tmp_path / "out").glob("*/cells/*/*/result.json"))) == 2
