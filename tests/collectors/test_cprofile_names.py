"""cProfile names are the same in every process: addresses (` at 0x...`) are read away, and
entries that then share a name are summed (issue 25: two quickstart runs compared as 62 NEW
and 50 GONE rows)."""

from __future__ import annotations

import json
import marshal
import sys
from pathlib import Path

from aorta.parsers.pstats_file import read_pstats

from aorta_testing import run_aorta, write_recipe

# `__new__` of two types: C functions bound to a type object, which cProfile names with the
# object's address (`namedtuple` classes call `tuple.__new__`).
PAYLOAD = """\
class B(tuple): pass
def work():
    for i in range(20000):
        object.__new__(object); tuple.__new__(B, (i,))
work()
"""


def test_two_runs_of_a_real_payload_compare_without_new_or_gone_rows(tmp_path: Path):
    (tmp_path / "payload.py").write_text(PAYLOAD)
    recipe = write_recipe(tmp_path, """\
        schema_version: 1
        trials: 3
        collect:
          cprofile: {}
    """)
    for run in ("base", "new"):
        done = run_aorta("sweep", "run", "--recipe", str(recipe), "--ticket", run,
                         "--output", str(tmp_path / "out"), "--",
                         sys.executable, str(tmp_path / "payload.py"), timeout=300)
        assert done.returncode == 0, done.stderr
    compared = run_aorta("compare", str(tmp_path / "out" / "base"), str(tmp_path / "out" / "new"),
                         "--format", "json")
    assert compared.returncode == 0, compared.stderr
    rows = json.loads(compared.stdout)["cells"][0]["kernels"]
    names = {row["name"]: row["verdict"] for row in rows}
    assert "<built-in method __new__ of type object>" in names, sorted(names)
    assert not [name for name in names if "0x" in name]
    assert not {"NEW", "GONE"} & {verdict for name, verdict in names.items()
                                  if "of type object" in name}, names


def test_entries_that_differ_only_in_an_address_are_summed(tmp_path: Path):
    dump = tmp_path / "profile.pstats"
    callers: dict = {}
    dump.write_bytes(marshal.dumps({
        ("~", 0, "<built-in method __new__ of type object at 0x7f579045ea00>"):
            (2, 2, 0.25, 0.5, callers),
        ("~", 0, "<built-in method __new__ of type object at 0x55d0c1e2f0a0>"):
            (3, 3, 0.5, 0.75, callers),
        ("job.py", 4, "<lambda>"): (1, 1, 0.125, 0.125, callers),
    }))
    summary = read_pstats(dump)
    assert [(r.name, r.calls, r.self_ms, r.cum_ms) for r in summary.functions] == [
        ("<built-in method __new__ of type object>", 5, 750.0, 1250.0),
        ("job.py:4(<lambda>)", 1, 125.0, 125.0)]
    assert summary.calls == 6 and summary.total_ms == 875.0
