"""The `aorta` command. Subcommands load lazily so `aorta --help` stays fast.

Errors leave through one door: `main` turns a `UserError` into one line on stderr and its exit
code; anything else is a bug (exit 1) and says so.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from aorta import __version__
from aorta.errors import EXIT_BROKEN, EXIT_INTERRUPTED, EXIT_USAGE, UserError

__all__ = ["main", "COMMANDS", "one_line"]

# name -> (import path of the click command, one-line help shown by `aorta --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "sweep": ("aorta.cli.sweep:sweep", "Run a command many times over a matrix, under profilers."),
    "report": ("aorta.cli.report:report",
               "Report a run: one self-contained HTML page, or Markdown/JSON."),
    "compare": ("aorta.cli.compare:compare",
                "Compare two runs: a verdict per metric and kernel, and a CI gate."),
    "export": ("aorta.cli.export:export",
               "Write a run's trial and kernel tables as CSV or Parquet."),
    "collectors": ("aorta.cli.collectors:collectors",
                   "List collectors, their options and whether each works here."),
    "doctor": ("aorta.cli.doctor:doctor", "Check what can be profiled on this machine, and how to fix the rest."),
    "env": ("aorta.cli.env:env", "Print the environment snapshot a run records."),
    "history": ("aorta.cli.history:history",
                "Record runs in a performance history; trends, detected steps, a CI gate."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [n for n, (path, _) in COMMANDS.items() if _available(path)]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS or not _available(COMMANDS[name][0]):
            return None
        module, _, attr = COMMANDS[name][0].partition(":")
        from aorta.cli.option_guard import guard_command

        command: click.Command = getattr(importlib.import_module(module), attr)
        return guard_command(command)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, COMMANDS[n][1]) for n in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def one_line(text: str) -> str:
    """`text` on one line: newlines and every other control or invisible character escaped,
    so a hostile key or value cannot forge or hide output."""
    import unicodedata

    return "".join(c if c == " " or unicodedata.category(c)[0] not in "CZ"
                   or unicodedata.category(c) == "Zs"
                   else c.encode("unicode_escape").decode("ascii") for c in text)


def _available(path: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(path.partition(":")[0]) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aorta")
def cli() -> None:
    """Profile GPU workloads: run any command under a profiler (rocprofv3, Proton, Nsight
    Compute, Nsight Systems, the PyTorch profiler, cProfile), many times, over a matrix of
    variants, and turn the profiler's files into numbers you can trust and compare.

    Exit codes: 0 done; 1 aorta itself broke; 2 bad usage, bad recipe or a collector that
    cannot measure (nothing ran); 3 --strict and some trial did not pass; 4 compare (or
    history) found a regression beyond its threshold; 130 interrupted.
    """


def main(argv: list[str] | None = None) -> int:
    try:
        result: Any = cli.main(args=argv, prog_name="aorta", standalone_mode=False)
    except UserError as exc:
        click.echo(f"aorta: error: {one_line(str(exc))}", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aorta: interrupted", err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE if exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("aorta: interrupted", err=True)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug in aorta, not the user's fault
        import traceback

        traceback.print_exc(file=sys.stderr)
        click.echo(f"aorta: internal error: {type(exc).__name__}: {exc} (please report this)",
                   err=True)
        return EXIT_BROKEN
    return result if isinstance(result, int) else 0
