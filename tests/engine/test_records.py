"""Records and summaries: atomic files, strict JSON, statistics over passing trials only."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from aorta.base.redaction import PATTERN_ONLY
from aorta.host.snapshot import snapshot, steering_env
from aorta.parsers.kernel_table import KernelTable
from aorta.store.records import RunRecord, TrialResult, trial_result
from aorta.store.record_checks import NewerRecord, checked_run, checked_trial
from aorta.store.files import write_json_file
from aorta.store.lock import RunLock
from aorta.store.run_dir import RunStore
from aorta.base.errors import RunDirError
from aorta.run.summary import summarize_cell


def trial(verdict="pass", wall=1.0, exit_code=0, **metrics):
    return TrialResult(cell="c", index=0, verdict=verdict, reason="r", argv=["x"], command=["x"],
                       env_overlay={}, env_unset=[], exit_code=exit_code, launched=True,
                       wall_s=wall, metrics=metrics)


def test_pass_requires_exit_zero():
    with pytest.raises(ValueError, match="exit code 0"):
        trial("pass", exit_code=1)
    with pytest.raises(ValueError, match="verdict must be one of"):
        trial("maybe")


def test_json_round_trip_and_non_finite_become_null(tmp_path: Path):
    t = trial(x_gpu_time_ms=float("nan"), y=float("inf"), nested={"z": [float("-inf"), 1.0]})
    RunStore(tmp_path).write_trial(t)
    doc = json.loads((tmp_path / "cells/c/trial_0/result.json").read_text())
    assert doc["metrics"] == {"x_gpu_time_ms": None, "y": None, "nested": {"z": [None, 1.0]}}
    assert RunStore(tmp_path).read_slot("c", "trial_0").state == "complete"
    assert not list(tmp_path.glob("cells/c/trial_0/.result.json.*"))   # no temp file left


def test_partial_or_newer_trial_files_are_not_complete(tmp_path: Path):
    store = RunStore(tmp_path)
    (tmp_path / "cells/c/trial_0").mkdir(parents=True)
    (tmp_path / "cells/c/trial_0/result.json").write_text('{"cell": "c", "verd')
    assert store.read_slot("c", "trial_0").state == "corrupt"
    doc = trial().to_json() | {"schema_version": 99}
    write_json_file(tmp_path, ("cells", "c", "trial_0"), "result.json", doc)
    assert store.read_slot("c", "trial_0").state == "newer"
    with pytest.raises(NewerRecord, match="upgrade aorta"):
        trial_result(checked_trial(doc))


def test_cell_statistics_use_passing_trials_only():
    results = [trial(wall=1.0, k_ms=2), trial(wall=3.0, k_ms=4),
               trial("fail", wall=100.0, exit_code=1, k_ms=1000),
               trial("error", wall=None, exit_code=None, flag=True)]
    cell = summarize_cell("c", 5, results, ["k"])
    assert (cell.passed, cell.failed, cell.errored, cell.missing) == (2, 1, 1, 1)
    assert cell.metrics["wall_s"].median == 2.0 and cell.metrics["wall_s"].max == 3.0
    assert cell.metrics["k_ms"].mean == 3.0
    assert math.isclose(cell.metrics["k_ms"].std, math.sqrt(2))
    assert "flag" not in cell.metrics          # booleans are not numbers
    assert cell.unreliable                     # 1 error in 4 finished trials


def test_kernel_table_omits_untrusted_counts_and_bad_values():
    table = KernelTable()
    assert table.add("a", 3e6) and table.add("a", 1e6) and table.add("b", 2e6, calls=None)
    assert not table.add("c", float("nan")) and not table.add("d", -1) and not table.add("", 1)
    m = table.metrics("x")
    assert m["x_gpu_time_ms"] == 6.0 and m["x_top_kernel_ms"] == 4.0
    assert m["x_top_kernels"] == ["a", "b"]
    assert "x_kernel_count" not in m
    assert m["x_kernels"][0] == {"name": "a", "calls": 2, "total_ms": 4.0}
    assert KernelTable().metrics("x") == {}


def test_overflowing_total_publishes_nothing():
    table = KernelTable()
    table.add("a", 1.7e308)
    table.add("b", 1.7e308)
    assert table.metrics("x") == {}


def test_snapshot_never_raises_and_redacts():
    snap = snapshot({"CUDA_VISIBLE_DEVICES": "0", "HF_TOKEN": "hunter2", "HOME": "/root",
                     "NCCL_DEBUG": "INFO", "MY_API_KEY": "k",
                     "TORCH_DB_URL": "postgres://u:pw1234@db/x",
                     "PYTHONPATH": "/opt:https://me:hunter3@git.example/x"})
    assert snap["env_vars"] == {"CUDA_VISIBLE_DEVICES": "0", "NCCL_DEBUG": "INFO",
                                "PYTHONPATH": "/opt:https://me:<redacted>@git.example/x",
                                "TORCH_DB_URL": "postgres://u:<redacted>@db/x"}
    assert snap["schema_version"] == 1 and snap["host"]["cpu_count"]
    assert "hunter2" not in json.dumps(snap) and "pw1234" not in json.dumps(snap)
    assert PATTERN_ONLY.env({"GITHUB_TOKEN": "x", "PATH": "/bin"}) == {"GITHUB_TOKEN": "<redacted>", "PATH": "/bin"}
    assert steering_env({"TRITON_API_TOKEN": "x"}) == {"TRITON_API_TOKEN": "<redacted>"}


def test_lock_is_exclusive_within_a_process(tmp_path: Path):
    with RunLock(tmp_path):
        with pytest.raises(RunDirError, match="another aorta run holds it"):
            RunLock(tmp_path).acquire()
    RunLock(tmp_path).acquire()   # released: free again


def test_unreadable_lock_is_stale(tmp_path: Path):
    (tmp_path / ".aorta.lock").write_text("{half")
    lock = RunLock(tmp_path)
    lock.acquire()
    assert lock.held


def test_overflowing_metric_is_left_out_not_crashing():
    cell = summarize_cell("c", 2, [trial(big=1.7e308), trial(big=1.7e308)])
    assert "big" not in cell.metrics and "wall_s" in cell.metrics


def test_known_secrets_and_byte_streams_are_scrubbed() -> None:
    from aorta.base.redaction import CREDENTIALS_IN_BYTES, REDACTED, Redactor

    assert Redactor(["s3cr3t-value"]).text("x s3cr3t-value y") == f"x {REDACTED} y"
    data = b"log https://u:pw-123456@host/ and ghp_" + b"b" * 36
    assert CREDENTIALS_IN_BYTES.sub(b"#", data) == b"log #host/ and #"


def test_names_are_read_word_by_word() -> None:
    from aorta.base.redaction import looks_secret

    assert [looks_secret(n) for n in ("HF_TOKEN", "myApiKey", "--api-key", "AWS_SECRET_ACCESS_KEY",
                                      "MAX_TOKENS", "num-tokens", "KEYBOARD", "monkey")] == \
        [True, True, True, True, False, False, False, False]


def test_a_version_2_run_record_keeps_its_slurm_block_as_the_executor_block() -> None:
    from aorta.store.reading import RecordError

    doc = json.loads((Path(__file__).parents[1] / "fixtures/records/run_v2_slurm.json")
                     .read_text())
    run = RunRecord(**checked_run(doc))
    assert run.schema_version == 3 and run.status == "interrupted"
    assert run.executor == {"kind": "slurm", **doc["slurm"]}
    assert RunRecord(**checked_run({**doc, "slurm": None})).executor is None
    for corrupt in (5, "x", [1]):
        with pytest.raises(RecordError, match="executor: not an object with a string kind"):
            RunRecord(**checked_run({**doc, "slurm": corrupt}))
    assert RunRecord(**checked_run(run.to_json())) == run  # v3 round-trips


def test_kernel_tables_one_rule_for_report_compare_and_history() -> None:
    from aorta.store.records import Capture, KernelEntry

    rows = [{"name": "k", "calls": 2, "total_ms": 1.5}, {"name": "k", "calls": 1, "total_ms": 0.5},
            {"name": "", "total_ms": 1.0}, {"name": "nan", "total_ms": float("nan")},
            {"name": "neg", "total_ms": -1.0}, {"name": "c", "calls": 2.5, "total_ms": 3}]
    result = TrialResult(cell="c", index=0, verdict="pass", reason="", argv=[], command=[],
                         env_overlay={}, env_unset=[], exit_code=0,
                         metrics={"x_kernels": rows, "y_kernels": rows, "x_gpu_time_ms": 1.0},
                         captures={"x": Capture("ok"), "y": Capture("partial", "cut", skipped=1)})
    assert result.kernel_tables() == {"x_kernels": {"k": KernelEntry(2.0, 3),
                                                    "c": KernelEntry(3.0, None)}}
    assert set(result.kernel_tables(allow_partial=True)) == {"x_kernels", "y_kernels"}


#: One credential per shape in `TOKEN_SHAPES`, in its order: a shape added without a mark
#: for the text gate (or without an example here) fails below.
SHAPE_EXAMPLES = ["ghp_" + "a" * 36, "github_pat_" + "b" * 40, "sk-" + "c" * 32,
                  "AKIAABCDEFGHIJKLMNOP", "xoxb-" + "1" * 20, "hf_" + "d" * 34,
                  "glpat-" + "e" * 20, "AIza" + "f" * 35,
                  "eyJ" + "g" * 12 + ".eyJ" + "h" * 12 + "." + "i" * 12,
                  "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"]


def test_every_credential_shape_passes_the_text_gate_and_is_hidden() -> None:
    from aorta.base.redaction import REDACTED, TOKEN_SHAPES, Redactor

    assert len(SHAPE_EXAMPLES) == len(TOKEN_SHAPES)
    for shape, example in zip(TOKEN_SHAPES, SHAPE_EXAMPLES):
        assert re.fullmatch(shape, example), shape
        assert Redactor().text(f"log: {example} end") == f"log: {REDACTED} end", shape
        assert Redactor.for_inputs(argvs=[["run", example]]).secrets == (example,), shape
    assert Redactor().text("see https://user:pa55word@host/x") == \
        f"see https://user:{REDACTED}@host/x"
