"""`env_passthrough_mode: file`: the child inherits aorta's environment, as with `inherit`, and
the trial directory also gets `child.env`, the child's whole environment as `KEY=VALUE` lines
(sorted, mode 0600), whose path the child finds in `AORTA_ENV_FILE`.

Credentials are redacted in the file like everywhere else (`<redacted>`): it documents the
environment and can feed `docker run --env-file` or `env $(cat ...)` after the secrets are
put back by hand; it is never a way to smuggle them to disk.

A line format cannot hold every environment: a name with `=` or a newline, or a value with a
newline (an exported bash function, say), is refused, unless the name marks a credential,
whose value is written as `<redacted>` anyway. The trial is then an `error` whose reason
names the variable (never its value), and the payload does not run. Only the child's
environment counts: a variable a collector unsets for the child is not written, nor checked.
"""

from __future__ import annotations

from collections.abc import Mapping

from aorta.base.errors import UserError
from aorta.base.redaction import Redactor, looks_secret
from aorta.collectors.base import Launch
from aorta.store.run_dir import RunStore

ENV_FILE = "child.env"
ENV_FILE_VARIABLE = "AORTA_ENV_FILE"


def env_file_problem(env: Mapping[str, str]) -> str | None:
    """Why `env` cannot be written as KEY=VALUE lines, or None. Names only, never values."""
    for key in sorted(env):
        if not key or "=" in key or "\n" in key or "\r" in key or "\0" in key:
            shown = key.encode("unicode_escape").decode("ascii")[:80]
            return (f"the variable name {shown!r} cannot be written as a KEY=VALUE line "
                    f"(empty, or holds '=' or a newline)")
        if ("\n" in env[key] or "\r" in env[key]) and not looks_secret(key):
            return (f"the value of {key} holds a newline, which a KEY=VALUE line cannot "
                    f"hold")
    return None


def env_file_text(env: Mapping[str, str], redactor: Redactor) -> str:
    """The file's text: one `KEY=VALUE` line per variable, sorted, credentials redacted."""
    shown = redactor.env(env)
    return "".join(f"{key}={shown[key]}\n" for key in sorted(shown))


def write_env_file(store: RunStore, cell: str, trial: str, env: Mapping[str, str]) -> str:
    """Write `child.env` into the trial directory and return its absolute path.

    Raises `ValueError` (with `env_file_problem`'s reason) when the environment cannot be
    written; nothing is written then."""
    problem = env_file_problem(env)
    if problem is not None:
        raise ValueError(problem)
    path = store.trial_dir(cell, trial) / ENV_FILE
    full = {**env, ENV_FILE_VARIABLE: str(path)}
    store.write_trial_file(cell, trial, ENV_FILE, env_file_text(full, store.redactor),
                           private=True)
    return str(path)


def launch_with_env_file(store: RunStore, cell: str, trial: str, launch: Launch,
                         env: Mapping[str, str]) -> Launch:
    """`launch` with `AORTA_ENV_FILE` added to its overlay, after writing the file for the
    child's environment `env`. `ValueError` when it cannot be written."""
    path = write_env_file(store, cell, trial, env)
    return Launch(launch.argv, {**launch.env, ENV_FILE_VARIABLE: path}, launch.unset)


def refuse_unwritable_env(mode: str, caller_env: Mapping[str, str], launch: Launch) -> None:
    """Before any trial: `UserError` when mode `file` cannot write this environment (the
    caller's, less what the first trial unsets, plus its overlay), instead of one error trial
    after another."""
    if mode != "file":
        return
    child_env = {k: v for k, v in caller_env.items() if k not in launch.unset}
    problem = env_file_problem({**child_env, **launch.env})
    if problem is not None:
        raise UserError(f"env_passthrough_mode file: {problem}; unset it before running aorta, "
                        f"or use env_passthrough_mode inherit")
