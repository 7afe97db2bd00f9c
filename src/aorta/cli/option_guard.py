"""Guards every `aorta` command against a flag read as another option's value, and against
stray words before `--`: Click gives an option whatever token comes next, so `aorta sweep run
--output --collect rocprof -- cmd` would make a directory named `--collect` and run `rocprof
cmd`, and it joins words given before `--` to the payload's command. Each refusal is a
`UserError`: one line, exit 2, nothing run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from aorta.base.errors import UserError

def option_stack(*decorators: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """One decorator that applies `decorators` as if stacked in the order given."""
    def apply(fn: Any) -> Any:
        for decorator in reversed(decorators):
            fn = decorator(fn)
        return fn
    return apply


def refuse_flag_values(command: click.Command, args: Sequence[str], path: str) -> None:
    """Refuse, on every value-taking option of `command` (given `args`, the tokens after its
    name), a missing value, and a value that starts with `--` (the separator included) or is
    one of the command's own option names; a negative number such as `-0.5` stays a value.
    Read from the tokens as Click will (each option takes the next one, whatever it is), so
    typed options (a choice, a number) are checked before Click converts their value."""
    options = {name: p for p in command.params if isinstance(p, click.Option)
               for name in (*p.opts, *p.secondary_opts)}
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            return
        name, equals, value = token.partition("=")
        param = options.get(name)
        if param is None or param.is_flag or param.count:
            continue
        given = value if equals else next(tokens, None)
        metavar = f"{name} {param.make_metavar(click.Context(command))}"
        if given is None:
            raise UserError(f"{path}: {name} needs a value: give {metavar}, or drop {name}")
        if given.startswith("--") or given in options or given == "-h":
            raise UserError(f"{path}: {name} was given {given!r}, which looks like another "
                            f"flag, as its value: give {metavar}, or drop {name}")


class CommandAfterSeparator(click.Command):
    """A command whose payload COMMAND comes only after `--`: keeps the tokens it was given
    for `check_separator`, so aorta's flags and the payload's never mix."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["aorta_args"] = list(args)
        return super().parse_args(ctx, args)


def check_separator(args: Sequence[str], command: Sequence[str], ctx: click.Context) -> None:
    """Refuse a command without `--`, and words between the options and `--`. `args`: the
    tokens the command was given; `command`: what Click collected as the payload's command."""
    if not command:
        return
    if "--" not in args:
        raise UserError(f"{ctx.command_path}: put '--' before the command, after aorta's "
                        f"options: {ctx.command_path} [OPTIONS] -- COMMAND [ARGS...]")
    after = list(args[list(args).index("--") + 1:])
    stray = list(command[:len(command) - len(after)]) if len(command) > len(after) else []
    if stray or list(command[-len(after):] if after else []) != after:
        word = stray[0] if stray else command[0]
        raise UserError(
            f"{ctx.command_path}: {word!r} comes before '--' but is not an aorta option: put "
            f"every word of the command after '--' ({ctx.command_path} [OPTIONS] -- COMMAND "
            f"[ARGS...])")
