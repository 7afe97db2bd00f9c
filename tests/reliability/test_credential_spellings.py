"""Issue 24: every everyday spelling of a credential's name, planted with a random value in
the caller's environment, the recipe, an axis, the command line (a value starting with `-`
included) and the payload's own output, is found in clear in no file that a sweep, report,
export, compare and history add/report write, the SQLite history database included."""

from __future__ import annotations

import json
import os
import secrets
import stat
import sys
from pathlib import Path

import pytest

from aorta_testing import run_aorta

# Where each name is planted; recipe names are limited to letters, digits and _.
CALLER = ("PGPASSWORD", "MYSQL_PWD", "SSHPASS", "GH_PAT", "PASSWORD1", "API_KEY", "X_AUTH",
          "MY_CREDENTIALS", "DB-PASS", "db.password")
RECIPE = ("DB_PASS2", "Gh_Pat", "KEY", "SERVICE_PASSWD")
AXIS = ("AWS_SECRET_ACCESS_KEY", "MY_CREDENTIAL")
ARGV = ("--password", "--token", "--db-pass", "--auth")
HARMLESS = ("PASSENGER_COUNT", "KEYBOARD_LAYOUT", "MONKEY_NAME", "CUDA_VISIBLE_DEVICES")

PAYLOAD = """
import os, sys
print("argv:", sys.argv)
print("env:", dict(os.environ), file=sys.stderr)
print(*os.environ.values(), *sys.argv, sep=chr(10))
print(*os.environ.values(), *sys.argv, sep=chr(10), file=sys.stderr)
"""


def _value(name: str) -> str:
    return "-" + secrets.token_hex(10) if name.startswith("--") else secrets.token_hex(10)


def test_no_spelling_of_a_credential_reaches_any_file(tmp_path: Path) -> None:
    values = {name: _value(name) for name in (*CALLER, *RECIPE, *AXIS, *ARGV)}
    harmless = {name: f"{name.lower()}-{secrets.token_hex(4)}" for name in HARMLESS}
    (tmp_path / "p.py").write_text(PAYLOAD)
    recipe_env = "".join(f"  {n}: '{values[n]}'\n" for n in RECIPE)
    recipe_env += "".join(f"  {n}: '{v}'\n" for n, v in harmless.items())
    axis_env = ", ".join(f"{n}: '{values[n]}'" for n in AXIS)
    (tmp_path / "r.yaml").write_text(f"""
schema_version: 1
ticket: spellings
trials: 2
collect: [cprofile]
env_passthrough_mode: file
env:
{recipe_env}axes:
  creds:
    planted: {{env: {{{axis_env}}}}}
    flag: {{args: ['--auth', '{values['--auth']}']}}
""")
    env = {**os.environ, **{n: values[n] for n in CALLER}, "PWD": str(tmp_path),
           "OLDPWD": str(tmp_path / "previous-dir"),
           # A known value inside a harmless variable (env.json records TORCH_*) is hidden too.
           "TORCH_EXTRA_ARGS": f"--db-password={values['PGPASSWORD']}"}
    out = tmp_path / "out"
    db = out / "history.sqlite"
    sweep = ("sweep", "run", "--recipe", str(tmp_path / "r.yaml"), "--output", str(out), "--",
             sys.executable, str(tmp_path / "p.py"), "--password", values["--password"],
             f"--token={values['--token']}", "--db-pass", values["--db-pass"])
    dry = run_aorta(*sweep[:2], "--dry-run", *sweep[2:], env=env)
    done = run_aorta(*sweep[:2], "--report", "-v", *sweep[2:], env=env)
    assert dry.returncode == 0 and done.returncode == 0, dry.stderr + done.stderr
    run = out / "spellings"
    printed = [dry.stdout, dry.stderr, done.stdout, done.stderr]
    for args in (("report", str(run), "--format", "md"), ("report", str(run), "--format", "json"),
                 ("export", str(run)), ("export", str(run), "--output", str(out / "export")),
                 ("compare", str(run), str(run)), ("compare", str(run), str(run), "--format", "html"),
                 ("compare", str(run), str(run), "--format", "json"),
                 ("sweep", "status", "--json", str(run)),
                 ("history", "add", "--db", str(db), str(run)), ("history", "show", "--db", str(db)),
                 ("history", "report", "--db", str(db), "--output", str(out / "history.html"))):
        ran = run_aorta(*args, env=env)
        assert ran.returncode == 0, (args, ran.stderr)
        printed += [ran.stdout, ran.stderr]

    files = [p for p in out.rglob("*") if p.is_file()]
    assert db in files and (run / "report.html") in files and (out / "history.html") in files
    env_files = [p for p in files if p.name == "child.env"]
    assert env_files and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in env_files)
    leaks = {str(path.relative_to(out)): [name for name, value in values.items()
                                          if value.encode() in path.read_bytes()]
             for path in files}
    leaked = {path: names for path, names in leaks.items() if names}
    assert not leaked, "in clear: " + json.dumps(leaked)
    for text in printed:
        assert not [name for name, value in values.items() if value in text]

    # The payload printed every value (read back as <redacted>); harmless names, PWD and
    # OLDPWD stay in clear.
    log = (run / "cells/planted/trial_0/stderr.log").read_text()
    assert "'PGPASSWORD': '<redacted>'" in log and "PASSENGER_COUNT" in log
    result = json.loads((run / "cells/planted/trial_0/result.json").read_text())
    assert result["env_overlay"]["AWS_SECRET_ACCESS_KEY"] == "<redacted>"
    assert {n: result["env_overlay"][n] for n in HARMLESS} == harmless
    assert result["argv"][-5:] == ["--password", "<redacted>", "--token=<redacted>",
                                   "--db-pass", "<redacted>"]
    child_env = (run / "cells/planted/trial_0/child.env").read_text().splitlines()
    assert f"PWD={tmp_path}" in child_env and f"OLDPWD={tmp_path / 'previous-dir'}" in child_env
    assert f"PASSENGER_COUNT={harmless['PASSENGER_COUNT']}" in child_env
    assert '"TORCH_EXTRA_ARGS": "--db-password=<redacted>"' in (run / "env.json").read_text()


@pytest.mark.parametrize(("name", "secret"), [
    ("PGPASSWORD", True), ("MYSQL_PWD", True), ("SSHPASS", True), ("GH_PAT", True),
    ("Gh_Pat", True), ("PASSWORD1", True), ("DB-PASS", True), ("db.password", True),
    ("db_passwd", True), ("API_KEY", True), ("AWS_SECRET_ACCESS_KEY", True), ("KEY", True),
    ("X_AUTH", True), ("MY_CREDENTIALS", True), ("credential", True), ("HF_TOKEN", True),
    ("GITHUB_TOKEN2", True), ("CLIENT_SECRET", True), ("myApiKey", True), ("apikey", True),
    ("--api-key", True), ("--password", True), ("DB_PASSPHRASE", True), ("PWD_HASH", True),
    ("PWD", False), ("OLDPWD", False), ("PATH", False), ("HOME", False),
    ("CUDA_VISIBLE_DEVICES", False), ("PASSENGER_COUNT", False), ("KEYBOARD_LAYOUT", False),
    ("MONKEY", False), ("TURKEY_2", False), ("MAX_TOKENS", False), ("num-tokens", False),
    ("TOKENIZERS_PARALLELISM", False), ("AUTHOR", False), ("PATCH_LEVEL", False),
    ("COMPASS_HEADING", False), ("BYPASS_CACHE", False), ("SECRETARY", False),
])
def test_the_name_rule(name: str, secret: bool) -> None:
    from aorta.base.redaction import looks_secret

    assert looks_secret(name) is secret
