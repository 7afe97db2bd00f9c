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

_GUARDED = "_aorta_option_guard"


def option_stack(*decorators: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """One decorator that applies `decorators` as if stacked in the order given."""
    def apply(fn: Any) -> Any:
        for decorator in reversed(decorators):
            fn = decorator(fn)
        return fn
    return apply


def guard_command(command: click.Command) -> click.Command:
    """Refuse, on every value-taking option of `command` and its subcommands, a value that
    starts with `--` (the separator included) or is one of the command's own option names;
    a negative number such as `-0.5` stays a value."""
    if getattr(command, _GUARDED, False):
        return command
    setattr(command, _GUARDED, True)
    names = {name for p in command.params if isinstance(p, click.Option)
             for name in (*p.opts, *p.secondary_opts)} | {"-h", "--help"}
    for param in command.params:
        if isinstance(param, click.Option) and not param.is_flag and not param.count:
            param.callback = _checked(param.callback, names)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            guard_command(sub)
    return command


def _checked(inner: Any, names: set[str]) -> Any:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        for item in value if isinstance(value, (tuple, list)) else (value,):
            text = str(item) if item is not None else ""
            if text.startswith("--") or text in names:
                opt = max(getattr(param, "opts", None) or [param.name or "?"], key=len)
                raise UserError(
                    f"{ctx.command_path}: {opt} was given {text!r}, which looks like another "
                    f"flag, as its value: give {opt} a value (e.g. {opt} VALUE), or drop {opt}")
        return inner(ctx, param, value) if inner is not None else value
    return callback


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
