"""The `aorta` command.

`main` first offers the invocation to `aorta.cli.light`, which answers a few exactly
well-formed ones (`--help`, `--version`, `env`, `sweep status RUN_DIR`) without importing click;
everything else, and anything irregular, goes to the click group (`aorta.cli.group`), so usage
errors and edge cases are click's. Both paths print the same bytes and exit with the same code
(tests/cli/test_light_path.py).
"""

from __future__ import annotations

import sys

from aorta.cli.commands import COMMANDS, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["main", "COMMANDS", "one_line"]


def main(argv: list[str] | None = None) -> int:
    """Run `aorta` with `argv` (default: the process's arguments); the exit code."""
    from aorta.cli.light import light_main

    done = light_main(sys.argv[1:] if argv is None else list(argv))
    if done is not None:
        return done
    from aorta.cli.group import click_main

    return click_main(argv)


def __getattr__(name: str) -> Any:
    if name == "cli":       # the click group, loaded only when asked for
        from aorta.cli.group import cli

        return cli
    raise AttributeError(f"module 'aorta.cli' has no attribute {name!r}")
