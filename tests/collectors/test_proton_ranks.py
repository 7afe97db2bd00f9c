"""Proton under a multi-rank launcher: one file per rank, and the roll-up over ranks."""

from __future__ import annotations

import shutil
from pathlib import Path

from aorta.collectors.base import RANK_TOKEN, Launch, TrialContext, TrialOutcome
from aorta.collectors.proton.collector import ProtonCollector

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "proton" / "h200"
C = ProtonCollector()
OK = TrialOutcome(0, None, False, True)


def test_each_rank_gets_its_own_name_in_both_modes(tmp_path: Path):
    ctx = TrialContext("c", 0, tmp_path, {}, per_rank=True)
    cli = C.wrap(Launch(("python3", "t.py")), tmp_path, C.validate({}), ctx)
    assert str(tmp_path / f"proton.rank{RANK_TOKEN}") in cli.argv
    env = C.wrap(Launch(("python3", "t.py")), tmp_path, C.validate({"mode": "env"}), ctx)
    assert env.env["AORTA_PROTON_NAME"] == str(tmp_path / f"proton.rank{RANK_TOKEN}")


def test_rank_files_roll_up(tmp_path: Path):
    tree = FIXTURES / "cli-tree" / "proton.hatchet"
    shutil.copy(tree, tmp_path / "proton.rank0.hatchet")
    shutil.copy(tree, tmp_path / "proton.rank1.hatchet")
    single = C.summarize(FIXTURES / "cli-tree", C.validate({}), OK)
    m = C.summarize(tmp_path, C.validate({}), OK)
    assert m["proton_capture"] == "ok" and m["proton_rank_count"] == 2
    assert m["proton_kernel_count"] == 2 * single["proton_kernel_count"] == 56
    assert m["proton_gpu_time_ms"] == single["proton_gpu_time_ms"]     # the slowest rank
    assert m["proton_rank_skew"] == 1.0 and m["proton_gpu_time_spread_ms"] == 0.0


def test_one_empty_rank_makes_the_capture_empty(tmp_path: Path):
    shutil.copy(FIXTURES / "cli-tree" / "proton.hatchet", tmp_path / "proton.rank0.hatchet")
    shutil.copy(FIXTURES / "empty" / "proton.hatchet", tmp_path / "proton.rank1.hatchet")
    m = C.summarize(tmp_path, C.validate({}), OK)
    assert m["proton_capture"] == "empty" and m["proton_capture_reason"].startswith("rank 1:")
    assert set(m["proton_ranks"]) == {"0", "1"}


def test_a_partial_rank_makes_the_roll_up_partial(tmp_path: Path):
    """A damaged rank's figures count as partial in the roll-up, with its skipped frames."""
    tree = (FIXTURES / "cli-tree" / "proton.hatchet").read_text()
    shutil.copy(FIXTURES / "cli-tree" / "proton.hatchet", tmp_path / "proton.rank0.hatchet")
    damaged = tree.replace('"count": 10,', '"count": "ten",', 1)
    assert damaged != tree
    (tmp_path / "proton.rank1.hatchet").write_text(damaged)
    m = C.summarize(tmp_path, C.validate({}), OK)
    assert (m["proton_capture"], m["proton_skipped"]) == ("partial", 1)
    assert m["proton_capture_reason"].startswith("rank 1:")
    assert "proton_kernel_count" not in m and "proton_gpu_time_ms" in m


def test_the_worst_rank_gives_the_state(tmp_path: Path):
    tree = (FIXTURES / "cli-tree" / "proton.hatchet").read_text()
    (tmp_path / "proton.rank0.hatchet").write_text(tree.replace('"count": 10,', '"count": -1,'))
    (tmp_path / "proton.rank1.hatchet").write_text(tree[:500])
    m = C.summarize(tmp_path, C.validate({}), OK)
    assert m["proton_capture"] == "unparsed" and m["proton_capture_reason"].startswith("rank 1:")
