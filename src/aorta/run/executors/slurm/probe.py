"""What a Slurm sweep's probe job runs on a node: `python -m aorta.run.executors.slurm.probe
MANIFEST ANSWER_NAME`. It checks MANIFEST's first trial and writes `<its folder>/ANSWER_NAME`:
    {"schema_version": 1, "node": "n07", "ok": false, "collectors": ["rocprof"],
     "rows": [...], "lines": ["NO  rocprof  no AMD GPU here (/dev/kfd is missing)", ...],
     "refused": "rocprof", "wrap_error": null, "error": null, ...}
`rows` and `lines`: what `aorta doctor --collect <them>` prints there; `wrap_error`: why the
trial's launch cannot be wrapped there (a tool missing from the job's PATH); `error`: why the
manifest could not be read."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aorta.base.errors import SetupError, UserError
from aorta.base.version import VERSION as __version__
from aorta.run.executors.slurm.worker import pin_slurm_gpus, read_manifest, spec_from_json
from aorta.run.launch import child_environment
from aorta.run.trial import TrialSpec, spec_launch, trial_redactor
from aorta.store.run_dir import RunStore

ANSWER_SCHEMA = 1


def node_answer(spec: TrialSpec, env: Mapping[str, str]) -> dict[str, Any]:
    """What this node says about the trial's collectors: doctor's rows and lines, and, when
    they can all measure, whether they can wrap the trial's command here."""
    from aorta.collectors.doctor import doctor_lines, doctor_refusal, doctor_rows

    names = list(spec.collectors)
    spec = pin_slurm_gpus(spec, env)
    child_env = child_environment(spec.env_mode, env, {**spec.env, **spec.device_env})
    # The node's interpreter for the command too, in the trial's environment and options.
    rows = doctor_rows(names, spec.command, child_env, spec.collectors)
    answer = _answer(ok=True, collectors=names, rows=rows, lines=doctor_lines(rows))
    refused = doctor_refusal(rows, with_command=True)
    if refused is not None:
        return answer | {"ok": False, "refused": str(refused["check"])}
    try:
        spec_launch(spec, child_env)
    except SetupError as exc:
        return answer | {"ok": False, "wrap_error": str(exc)}
    return answer


def _answer(**fields: Any) -> dict[str, Any]:
    return {"schema_version": ANSWER_SCHEMA, "node": socket.gethostname(),
            "aorta_version": __version__, "python": sys.executable, "collectors": [],
            "rows": [], "lines": [], "refused": None, "wrap_error": None, "error": None, **fields}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or "/" in args[1] or args[1] in ("", ".", ".."):
        print("usage: python -m aorta.run.executors.slurm.probe MANIFEST ANSWER_NAME", file=sys.stderr)
        return 2
    manifest, name = Path(args[0]), args[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AORTA_SECRET_")}
    try:
        _, trials = read_manifest(manifest)
        spec = spec_from_json(trials[0])
    except (UserError, OSError, ValueError, IndexError, KeyError) as exc:
        answer = _answer(ok=False, error=f"cannot read {manifest}: {exc}")
        RunStore(manifest.parent.parent).write_json(name, answer, parts=(manifest.parent.name,))
        return 0
    RunStore(spec.run_dir, trial_redactor(spec, env)).write_json(
        name, node_answer(spec, env), parts=(manifest.parent.name,))
    return 0   # a refusal is an answer too: the driver reads it


if __name__ == "__main__":
    sys.exit(main())
