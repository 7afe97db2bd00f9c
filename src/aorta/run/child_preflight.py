"""Before any trial: can each cell's command interpreter import what the collectors'
launchers need? A `python3` on the trial's PATH without torch would otherwise end every
torch trial as an error after it started; here the sweep is refused at once, naming the
interpreter, what it could not import, and the fix."""

from __future__ import annotations

from collections.abc import Mapping

from aorta.base.errors import SetupError
from aorta.collectors.child_python import check_import
from aorta.run.launch import child_environment
from aorta.run.plan import Plan


def check_child_imports(plan: Plan, caller_env: Mapping[str, str]) -> None:
    """Raise `SetupError` when a collector's launcher cannot import its profiler in the
    interpreter a cell's command runs. A check that cannot finish (a timeout) refuses
    nothing: the trial's own record will say what happened."""
    from aorta.collectors.registry import get

    for cell in plan.cells:
        env = child_environment(plan.recipe.env_passthrough_mode, caller_env,
                                {**plan.recipe.env, **cell.env})
        argv = plan.command + cell.args
        for name, options in plan.collectors.items():
            collector = get(name)
            modules = collector.child_imports(options)
            python = collector.child_python(argv, env) if modules else None
            for module in modules if python else ():
                found = check_import(python or "", module, env)
                if found.ok is False:
                    raise SetupError(
                        f"collector {name} cannot attach: {module} is not importable by "
                        f"{python} (the interpreter the command {argv[0]!r} runs on the "
                        f"trial's PATH{f', cell {cell.name}' if len(plan.cells) > 1 else ''})"
                        f": {found.problem}; install {module.split('.')[0]} into that "
                        f"interpreter, or give the command the Python that has it "
                        f"(-- /path/to/python ...), or use --collect none")
