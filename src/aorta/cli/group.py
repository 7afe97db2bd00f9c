"""The click group behind `aorta`; a subcommand's module is imported only when it runs or its
help is asked for. Errors leave through one door: `click_main` turns a `UserError`, a usage
error Click found, and an OSError the filesystem caused (`filesystem_error`), into one line on
stderr and its exit code; anything else is a bug (exit 1)."""

from __future__ import annotations

import importlib
import signal
import sys
from typing import Any, cast

import click

from aorta.base.errors import (EXIT_BROKEN, EXIT_INTERRUPTED, EXIT_USAGE, Interrupted, UserError,
                               exit_codes_text, filesystem_error)
from aorta.base.names import visible
from aorta.base.version import VERSION as __version__
from aorta.cli.commands import COMMANDS
from aorta.cli.option_guard import refuse_misread_words


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, _, attr = COMMANDS[name][0].partition(":")
        return cast(click.Command, getattr(importlib.import_module(module), attr))

    def invoke(self, ctx: click.Context) -> Any:
        """A sweep stopped by a signal (`Interrupted`) says so here: click would take it for
        Ctrl-C, print a blank line and lose which signal it was."""
        try:
            return super().invoke(ctx)
        except Interrupted as exc:
            click.echo(f"aorta: interrupted by {signal.Signals(exc.signum).name}; what finished "
                       f"is kept, and the same command resumes the run", err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED - signal.SIGINT + exc.signum) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, COMMANDS[n][1]) for n in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=exit_codes_text("3", "4"))
@click.version_option(__version__, prog_name="aorta")
def cli() -> None:
    """Profile GPU workloads: run any command under a profiler (rocprofv3, Proton, Nsight
    Compute, Nsight Systems, the PyTorch profiler, cProfile), many times, over a matrix of
    variants, and turn the profiler's files into numbers you can trust and compare.
    """


def click_main(args: list[str]) -> int:
    try:
        command, words = _resolve(args)
        try:
            refuse_misread_words(command, args[len(words):], " ".join(["aorta", *words]))
            result: Any = cli.main(args=args, prog_name="aorta", standalone_mode=False)
        except OSError as exc:   # one the command did not put in words itself
            raise filesystem_error(exc, f"{' '.join(words) or 'aorta'} failed on") or exc
    except UserError as exc:
        click.echo(f"aorta: error: {visible(str(exc), keep='')}", err=True)
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("aorta: interrupted by Ctrl-C (SIGINT)", err=True)
        return EXIT_INTERRUPTED
    except click.UsageError as exc:
        if isinstance(exc, click.exceptions.NoArgsIsHelpError):
            exc.show()    # the help text, asked for by giving no arguments
        else:             # one line, as every other bad input: not Click's usage and hint
            path = exc.ctx.command_path if exc.ctx else "aorta"
            said = exc.format_message().rstrip(".")
            click.echo(f"aorta: error: {path}: {visible(said[:1].lower() + said[1:], keep='')}; "
                       f"see {path} --help", err=True)
        return EXIT_USAGE
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE if exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except Exception as exc:  # a bug in aorta, not the user's fault
        import traceback

        traceback.print_exc(file=sys.stderr)
        click.echo(f"aorta: internal error: {type(exc).__name__}: {exc} (please report this)",
                   err=True)
        return EXIT_BROKEN
    return result if isinstance(result, int) else 0


def _resolve(args: list[str]) -> tuple[click.Command, list[str]]:
    """The command `args` name and the subcommand words naming it (`sweep`, `run`)."""
    words: list[str] = []
    command: click.Command = cli
    for word in args:
        sub = command.get_command(click.Context(command), word) \
            if isinstance(command, click.Group) else None
        if sub is None:
            break
        command = sub
        words.append(word)
    return command, words
