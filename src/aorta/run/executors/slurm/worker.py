"""What a Slurm job of a sweep runs: `python -m aorta.run.executors.slurm.worker MANIFEST`. It
runs entry `$SLURM_ARRAY_TASK_ID` of the manifest (`<run>/slurm/submit_<n>.json`) as a local
trial runs and, on a node other than the driver's host, writes that node's snapshot as
`node_env.json` beside `result.json`. Slurm's SIGTERM (scancel, time limit, preemption) leaves
no `result.json`, so the driver records why the job ended.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aorta.base.errors import DiskFullError, UserError, WardenLost
from aorta.base.redaction import Redactor, looks_secret
from aorta.run.process import Cancelled
from aorta.run.trial import TrialSpec, run_trial, trial_redactor
from aorta.store.reading import read_json_file
from aorta.store.run_dir import RunStore

MANIFEST_SCHEMA = 1
SECRET_KEY = "$secret"
_EXIT_STOPPED = 143   # 128 + SIGTERM, what a shell reports for a job stopped this way
_PIN_VARIABLES = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")


def spec_to_json(spec: TrialSpec) -> dict[str, Any]:
    """A trial spec as plain JSON; collector options by value, so the node re-validates them."""
    doc: dict[str, Any] = {}
    for f in dataclasses.fields(spec):
        value = getattr(spec, f.name)
        if f.name == "collectors":
            value = {name: opts.model_dump(mode="json") for name, opts in value.items()}
        elif isinstance(value, Path):
            value = str(value)
        elif isinstance(value, Mapping):
            value = dict(value)
        elif isinstance(value, tuple):
            value = list(value)
        doc[f.name] = value
    return doc


def spec_from_json(doc: Mapping[str, Any], env: Mapping[str, str] | None = None) -> TrialSpec:
    """The inverse of `spec_to_json` (placeholders filled from `env`). Raises UserError for
    options this aorta refuses or a credential the job's environment lacks."""
    from aorta.collectors.registry import get

    doc = _reveal(dict(doc), os.environ if env is None else env)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(TrialSpec):
        if f.name not in doc:
            continue
        value = doc[f.name]
        if f.name == "collectors":
            value = {name: get(name).validate(raw) for name, raw in value.items()}
        elif f.name == "run_dir":
            value = Path(value)
        elif isinstance(value, list) and str(f.type).startswith("tuple"):
            value = tuple(value)
        kwargs[f.name] = value
    return TrialSpec(**kwargs)


def write_manifest(store: RunStore, name: str, specs: Sequence[TrialSpec], driver_host: str,
                   caller_env: Mapping[str, str]) -> dict[str, str]:
    """Write `<run>/slurm/<name>`. A credential in a trial's environment or command is
    written as `{"$secret": "AORTA_SECRET_<n>"}`; the returned variables carry the values
    to the jobs through their environment (sbatch exports the submitting environment)."""
    secrets: dict[str, str] = {}
    trials = [_hide_secrets(spec_to_json(s), trial_redactor(s, caller_env), secrets) for s in specs]
    store.write_json(name, {"schema_version": MANIFEST_SCHEMA, "driver_host": driver_host,
                            "trials": trials}, parts=("slurm",))
    return {var: value for value, var in secrets.items()}


def _hide_secrets(doc: dict[str, Any], redactor: Redactor, secrets: dict[str, str]
                  ) -> dict[str, Any]:
    def placeholder(value: str) -> dict[str, str]:
        var = secrets.setdefault(value, f"AORTA_SECRET_{len(secrets)}")
        return {SECRET_KEY: var}

    for key in ("env", "device_env"):
        doc[key] = {k: placeholder(v) if looks_secret(k) or redactor.text(v) != v else v
                    for k, v in doc[key].items()}
    shown = redactor.argv(doc["command"])
    doc["command"] = [arg if arg == seen else placeholder(arg)
                      for arg, seen in zip(doc["command"], shown)]
    return doc


def _reveal(value: Any, env: Mapping[str, str]) -> Any:
    """A manifest value with its `{"$secret": VAR}` placeholders filled from `env`."""
    if isinstance(value, dict) and set(value) == {SECRET_KEY}:
        var = str(value[SECRET_KEY])
        if var not in env:
            raise UserError(f"${var} (a credential of the trial) is not in the job's "
                            f"environment: do not pass --export=NONE in sbatch_args")
        return env[var]
    if isinstance(value, dict):
        return {k: _reveal(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_reveal(v, env) for v in value]
    return value


def read_manifest(path: Path) -> tuple[str, list[dict[str, Any]]]:
    """(driver host, trial docs). Raises ValueError naming what is wrong."""
    doc = read_json_file(path)
    if not isinstance(doc, dict) or doc.get("schema_version") != MANIFEST_SCHEMA:
        raise ValueError(f"{path}: not a version-{MANIFEST_SCHEMA} aorta Slurm manifest "
                         f"(the node runs another aorta than the driver?)")
    return str(doc.get("driver_host")), list(doc["trials"])


def pin_slurm_gpus(spec: TrialSpec, env: Mapping[str, str]) -> TrialSpec:
    """`spec` pinned to the GPUs Slurm allocated this job (its pin variables; the device ids as
    `device`), unchanged when it allocated none: a CUDA_VISIBLE_DEVICES exported from the
    driver is not a pin."""
    device = env.get("SLURM_JOB_GPUS") or env.get("SLURM_STEP_GPUS")
    pin = {k: env[k] for k in _PIN_VARIABLES if env.get(k)}
    if not device or not pin:
        return spec
    return dataclasses.replace(spec, device_env={**pin, **spec.device_env}, device=device)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m aorta.run.executors.slurm.worker MANIFEST", file=sys.stderr)
        return 2
    task = os.environ.get("SLURM_ARRAY_TASK_ID", "0")
    try:
        driver_host, trials = read_manifest(Path(args[0]))
        spec = spec_from_json(trials[int(task)])
    except (UserError, OSError, ValueError, IndexError, KeyError) as exc:
        # One line in the job's .err file, which the driver quotes in the trial's record.
        print(f"aorta: error: cannot run task {task} of {args[0]}: {exc}", file=sys.stderr)
        return 2
    env = {k: v for k, v in os.environ.items() if not k.startswith("AORTA_SECRET_")}
    spec = pin_slurm_gpus(spec, env)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    try:
        run_trial(spec, env, cancel=stop)
        wrote = True
    except Cancelled:
        wrote = False
    except WardenLost as exc:    # the job ends with no result: the driver records its end
        print(f"aorta: error: {exc}", file=sys.stderr)
        return 1
    except DiskFullError as exc:   # the trial is not recorded; the driver stops the run
        print(f"aorta: error: {exc}", file=sys.stderr)
        return 2
    if stop.is_set():
        if wrote:
            # The payload died of Slurm's SIGTERM before the worker saw it: that verdict
            # is Slurm's doing, not the payload's, so the driver records the job's end.
            RunStore(spec.run_dir).forget_result(spec.cell, spec.name)
        print(f"aorta: trial {spec.cell}/{spec.trial_dir.name} stopped by Slurm (SIGTERM)",
              file=sys.stderr)
        return _EXIT_STOPPED
    if socket.gethostname() != driver_host:
        from aorta.host.snapshot import snapshot

        RunStore(spec.run_dir, trial_redactor(spec, env)).write_json(
            "node_env.json", snapshot(env), parts=("cells", spec.cell, spec.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
