"""Making sure a payload's Python can import aorta's launchers (`python -m aorta.launchers...`).

When aorta is installed in a site directory the child finds it by itself. When it runs from a
source tree (`PYTHONPATH=src`, tests), the tree is put in front of the child's PYTHONPATH; a
whole site-packages is never added, since that would shadow the payload's standard library.
"""

from __future__ import annotations

import os

from aorta.base.errors import SetupError
from aorta.base.source_tree import aorta_root
from aorta.collectors.base import Launch, TrialContext

INSTALL_FIX = "install aorta (pip install -e .) in the payload's Python"


def importable_by_child(launch: Launch, ctx: TrialContext, flags: tuple[str, ...],
                        error: type[SetupError] = SetupError, fix: str = INSTALL_FIX) -> Launch:
    """`launch` with aorta's source tree on the child's PYTHONPATH when that is needed;
    `error` ending with `fix` when the interpreter's `flags` make it ignore PYTHONPATH."""
    root = aorta_root()
    if root is None:
        return launch
    ignoring = sorted({"-I", "-E"} & set(flags))
    if ignoring:
        raise error(f"the interpreter option {' '.join(ignoring)} ignores PYTHONPATH, and aorta "
                    f"is not installed (it runs from {root}), so the payload's Python could not "
                    f"import aorta's launcher; {fix}, or drop {ignoring[0]}")
    inherited = "" if "PYTHONPATH" in launch.unset else ctx.base_env.get("PYTHONPATH", "")
    current = launch.env.get("PYTHONPATH", inherited)
    entries = [root] + [p for p in current.split(os.pathsep) if p and p != root]
    return launch.with_env({"PYTHONPATH": os.pathsep.join(entries)})
