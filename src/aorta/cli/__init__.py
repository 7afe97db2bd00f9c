"""The `aorta` command: a click group whose subcommands load lazily (`aorta.cli.group`)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run `aorta` with `argv` (default: the process's arguments); the exit code."""
    from aorta.cli.group import click_main

    return click_main(sys.argv[1:] if argv is None else list(argv))
