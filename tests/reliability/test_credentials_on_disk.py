"""Issue 11: no credential is written in clear anywhere: fifteen secrets planted in every
channel (the caller's environment, the recipe's, an axis', the command line in `--k=v` and
`--k v` forms, URLs with passwords) are searched for in every file of the run directory and
in every report, after a sweep whose payload prints them and fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from aorta_testing import REPO, run_aorta

SECRETS = {
    "caller_token": "hf_CALLERabcdefghijklmnopqrstuvwxyz012345",
    "caller_github": "ghp_CALLER0123456789abcdefghijklmnopqrstuv",
    "caller_password": "caller-password-2718",
    "caller_db": "caller-db-pw-3141",
    "caller_path": "path-cred-1618",
    "recipe_secret": "recipe-secret-value-42",
    "recipe_db": "recipe-db-pw-271828",
    "axis_aws": "axisAWSsecretKEYvalue1234567890",
    "axis_key": "AKIAABCDEFGHIJKLMNOP",
    "argv_eq": "sk-ARGVabcdefghijklmnopqrstuvwxyz0123",
    "argv_space": "argv-token-value-5772",
    "argv_password": "argv-password-1414",
    "argv_url": "argv-url-pw-1732",
    "argv_jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXZhbHVl",
    "recipe_api_key": "recipe-api-key-662607",
}

PAYLOAD = """
import os, sys
print("argv:", sys.argv)
print("env:", {k: v for k, v in os.environ.items()}, file=sys.stderr)
sys.exit(1 if "fail" in sys.argv else 0)
"""


def test_no_secret_reaches_any_file(tmp_path: Path) -> None:
    s = SECRETS
    (tmp_path / "p.py").write_text(PAYLOAD)
    (tmp_path / "r.yaml").write_text(f"""
schema_version: 1
ticket: secrets
trials: 2
baseline: true
env:
  MY_SECRET: {s['recipe_secret']}
  DATABASE_URL: postgres://app:{s['recipe_db']}@db.example:5432/prod
  SERVICE_API_KEY: {s['recipe_api_key']}
axes:
  creds:
    aws: {{env: {{AWS_SECRET_ACCESS_KEY: {s['axis_aws']}, AWS_ACCESS_KEY_ID: {s['axis_key']}}}}}
    plain: {{args: [fail]}}
""")
    env = {**os.environ, "HF_TOKEN": s["caller_token"], "GITHUB_TOKEN": s["caller_github"],
           "MY_PASSWORD": s["caller_password"],
           "TORCH_DB_URL": f"postgres://u:{s['caller_db']}@db/x",
           "PYTHONPATH": os.pathsep.join([str(REPO / "src"),
                                          f"https://me:{s['caller_path']}@git.example/lib"])}
    out = tmp_path / "out"
    done = run_aorta(
        "sweep", "run", "--report", "--recipe", str(tmp_path / "r.yaml"), "--output", str(out),
        "--", sys.executable, str(tmp_path / "p.py"), f"--api-key={s['argv_eq']}",
        "--token", s["argv_space"], f"--password={s['argv_password']}",
        f"https://user:{s['argv_url']}@host.example/x", s["argv_jwt"], env=env)
    assert done.returncode == 0, done.stderr
    run = out / "secrets"
    reports = [run_aorta("report", str(run), "--format", fmt, env=env).stdout
               for fmt in ("md", "json")]
    reports.append(run_aorta("sweep", "status", "--json", str(run), env=env).stdout)
    reports.append(run_aorta("compare", str(run), str(run), env=env).stdout)
    reports += [done.stdout, done.stderr]
    files = [p for p in run.rglob("*") if p.is_file()]
    assert len(files) > 30 and (run / "report.html").is_file()
    for name, secret in s.items():
        for path in files:
            assert secret.encode() not in path.read_bytes(), f"{name} in {path}"
        for text in reports:
            assert secret not in text, name
    # The payload really saw them (the records hide them, the trial did not lose them).
    log = (run / "cells/plain/trial_0/stderr.log").read_text()
    assert "<redacted>" in log and "MY_SECRET" in log
    result = json.loads((run / "cells/aws/trial_0/result.json").read_text())
    assert result["env_overlay"]["AWS_SECRET_ACCESS_KEY"] == "<redacted>"
    assert result["env_overlay"]["DATABASE_URL"] == "postgres://app:<redacted>@db.example:5432/prod"
    assert "--api-key=<redacted>" in result["argv"]


def test_rerun_sh_takes_credentials_from_the_caller(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text("import os, sys\nprint(os.environ['MY_TOKEN'], sys.argv[1])\n")
    (tmp_path / "r.yaml").write_text("schema_version: 1\nticket: rr\nenv: {MY_TOKEN: tok-123456789}\n")
    out = tmp_path / "out"
    done = run_aorta("sweep", "run", "--recipe", str(tmp_path / "r.yaml"), "--output", str(out),
                     "--", sys.executable, str(tmp_path / "p.py"), "--key=sk-abcdefghijklmnopqrstuvwxyz")
    assert done.returncode == 0, done.stderr
    script = out / "rr/cells/default/trial_0/rerun.sh"
    text = script.read_text()
    assert "tok-123456789" not in text and "sk-abcdefghijklmnopqrstuvwxyz" not in text
    assert '"${MY_TOKEN:?set MY_TOKEN}"' in text and "AORTA_ARG_2" in text
    again = subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "MY_TOKEN": "tok-123456789",
                                "AORTA_ARG_2": "--key=sk-abcdefghijklmnopqrstuvwxyz"})
    assert again.stdout == "tok-123456789 --key=sk-abcdefghijklmnopqrstuvwxyz\n", again.stderr
