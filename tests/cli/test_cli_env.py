"""`aorta env`: the snapshot every run records, as JSON off a terminal and a table on one."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

from aorta_testing import REPO, run_aorta

SECRET = "s3cr3t-value-that-must-not-print"


def test_env_prints_the_snapshot_as_json_off_a_terminal():
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "3", "AWS_SECRET_ACCESS_KEY": SECRET}
    proc = run_aorta("env", env=env)
    assert proc.returncode == 0, proc.stderr
    snap = json.loads(proc.stdout)
    assert snap["schema_version"] == 1
    assert {"host", "python", "packages", "env_vars"} <= set(snap)
    assert snap["python"]["executable"] == sys.executable
    assert snap["env_vars"]["CUDA_VISIBLE_DEVICES"] == "3"
    assert SECRET not in proc.stdout


def test_json_flag_gives_the_same_document():
    plain, flagged = run_aorta("env"), run_aorta("env", "--json")
    assert flagged.returncode == 0
    a, b = json.loads(plain.stdout), json.loads(flagged.stdout)
    a.pop("captured_at"), b.pop("captured_at")
    assert a["host"] == b["host"] and a["python"] == b["python"]


def test_on_a_terminal_env_prints_a_table():
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "160"}
    proc = subprocess.Popen([sys.executable, "-m", "aorta", "env"], stdout=slave,
                            stderr=subprocess.PIPE, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:      # EIO: the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=60) == 0
    text = b"".join(chunks).decode("utf-8", "replace")
    assert "host.hostname" in text and "python.version" in text
    assert not text.lstrip().startswith("{")


def test_env_rejects_unknown_flags():
    proc = run_aorta("env", "--bogus")
    assert proc.returncode == 2 and "aorta: error: aorta env: no such option" in proc.stderr


def test_host_facts_are_platforms():
    import platform

    from aorta.host.snapshot import _host

    host, uname = _host(), platform.uname()
    assert (host["hostname"], host["os"], host["kernel"], host["machine"]) == \
        (uname.node, uname.system, uname.release, uname.machine)


def test_the_cuda_version_is_the_number_after_its_label():
    from aorta.host.snapshot import _version_after

    assert _version_after("Cuda compilation tools, release 13.0, V13.0.48", "release ") == "13.0"
    assert _version_after("| Driver Version: 580.1   CUDA Version: 12.8     |",
                          "CUDA Version:") == "12.8"
    assert _version_after("release notes", "release ") is None
    assert _version_after("", "release ") is None
    assert _version_after("prerelease x; Cuda compilation tools, release 12.4", "release ") == "12.4"
