"""Guards every `aorta` command against a flag read as another option's value, and against
stray words before `--`, before Click parses its arguments: Click gives an option whatever token comes next, so `aorta sweep run
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


def refuse_misread_words(command: click.Command, args: Sequence[str], path: str) -> None:
    """Refuse, before Click reads `args` (the tokens after the command's name): on a
    value-taking option, a missing value, or one that starts with `--` (the separator
    included) or is one of the command's own option names (a negative number such as `-0.5`
    stays a value); each option takes the next token, as Click will, so a typed option (a
    choice, a number) is checked before Click converts it. And on a `CommandAfterSeparator`,
    payload words with no `--` before them, or words between aorta's options and `--`."""
    options = {name: p for p in command.params if isinstance(p, click.Option)
               for name in (*p.opts, *p.secondary_opts)}
    words: list[str] = []
    tokens, separated = iter(args), False
    for token in tokens:
        if token == "--":
            separated = True
            break
        name, equals, value = token.partition("=")
        param = options.get(name)
        if param is None and not token.startswith("-"):
            words.append(token)
        if param is None or param.is_flag or param.count:
            continue
        given = value if equals else next(tokens, None)
        metavar = f"{name} {param.make_metavar(click.Context(command))}"
        if given is None:
            raise UserError(f"{path}: {name} needs a value: give {metavar}, or drop {name}")
        if given.startswith("--") or given in options or given == "-h":
            raise UserError(f"{path}: {name} was given {given!r}, which looks like another "
                            f"flag, as its value: give {metavar}, or drop {name}")
    usage = f"{path} [OPTIONS] -- COMMAND [ARGS...]"
    if words and isinstance(command, CommandAfterSeparator) and not separated:
        raise UserError(f"{path}: put '--' before the command, after aorta's options: {usage}")
    if words and isinstance(command, CommandAfterSeparator):
        raise UserError(f"{path}: {words[0]!r} comes before '--' but is not an aorta option: "
                        f"put every word of the command after '--' ({usage})")


class CommandAfterSeparator(click.Command):
    """A command whose payload COMMAND comes only after `--` (`refuse_misread_words`), so
    aorta's flags and the payload's never mix."""
