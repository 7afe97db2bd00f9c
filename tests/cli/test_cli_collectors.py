"""`aorta collectors`: every collector, its options with defaults, usable here or why not."""

from __future__ import annotations

import json
import os
from pathlib import Path

from aorta_testing import run_aorta

NAMES = ["cprofile", "ncu", "nsys", "proton", "rocprof", "telemetry", "torch"]


def test_json_lists_every_collector_with_its_options():
    proc = run_aorta("collectors", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["name"] for r in rows] == NAMES
    for row in rows:
        assert {"name", "summary", "usable", "version", "reason", "fix", "options"} <= set(row)
        assert row["summary"], row["name"]
        for opt in row["options"]:
            assert set(opt) == {"key", "required", "default", "description"}
    cprofile = rows[0]
    assert cprofile["usable"] is True
    assert {"key": "sort", "default": "tottime"}.items() <= cprofile["options"][0].items()


def test_json_defaults_are_json_values_not_python_reprs():
    """Issue 25: defaults were repr strings ("'tottime'", "None", "100")."""
    options = {(r["name"], o["key"]): o["default"]
               for r in json.loads(run_aorta("collectors", "--json").stdout) for o in r["options"]}
    assert options[("telemetry", "interval_ms")] == 100
    assert options[("ncu", "set")] is None
    assert options[("ncu", "metrics")] == ["gpu__time_duration.sum"]
    assert options[("rocprof", "stats")] is True
    assert not any(isinstance(v, str) and (v in ("None", "True", "False") or v[:1] in "'[")
                   for v in options.values())


def test_text_names_each_collector_its_state_and_its_fix(tmp_path: Path):
    env = {**os.environ, "PATH": str(tmp_path), "NCU_BIN": ""}
    proc = run_aorta("collectors", env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    heads = [line for line in lines if not line.startswith(" ")]
    assert [h.split(":")[0].split()[0] for h in heads] == NAMES
    assert heads[0].startswith("cprofile ") and ": usable" in heads[0]
    ncu = lines.index(next(h for h in heads if h.startswith("ncu")))
    assert "not usable" in lines[ncu]
    assert any(line.startswith("  fix: ") for line in lines[ncu:ncu + 3])
    assert '    sort = "tottime"' in proc.stdout
