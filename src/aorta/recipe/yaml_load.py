"""Reading a recipe's YAML safely: the only place YAML text is parsed. A recipe is small, so
anything huge or strange is refused before it costs time or memory: the file's size, nesting
(PyYAML's composer recurses, and would crash deeper), aliases once expanded (a "billion laughs"
file of a few hundred bytes expands to billions), a key written twice (PyYAML would silently
keep the last one), long integers. Every refusal is a `RecipeError` with the file, the line
and column where known, and the rule; the limits: docs/reliability.md, "Limits on a recipe".
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

from aorta.base.errors import RecipeError

MAX_RECIPE_BYTES = 1 << 20
MAX_DEPTH = 32
MAX_NODES = 100_000
MAX_INT_DIGITS = 30


def read_recipe_bytes(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise RecipeError(f"{path}: cannot read the recipe ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise RecipeError(f"{path}: not a regular file; give the path of a recipe file")
        data = fh.read(MAX_RECIPE_BYTES + 1)
    if len(data) > MAX_RECIPE_BYTES:
        raise RecipeError(f"{path}: larger than {MAX_RECIPE_BYTES >> 10} KiB; a recipe is a "
                          f"short YAML file")
    return data


# libyaml's parser when PyYAML was built with it (PyPI's wheels are): ten times faster.
_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_Base):  # type: ignore[valid-type,misc]
    """SafeLoader that refuses duplicate keys and absurd integers."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue   # `<<: *defaults`: keys written here may override merged ones
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "a mapping key must be a plain value", key_node.start_mark)
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} appears twice in one mapping; keep one",
                    key_node.start_mark)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


def _construct_int(loader: yaml.SafeLoader, node: Any) -> Any:
    digits = sum(c.isdigit() for c in str(node.value))
    if digits > MAX_INT_DIGITS:
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of {digits} digits; at most {MAX_INT_DIGITS} are accepted",
            node.start_mark)
    return yaml.SafeLoader.construct_yaml_int(loader, node)


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _check_shape(data: bytes) -> None:
    """Depth and alias expansion, from the event stream (no recursion, no expansion)."""
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = [[None, 0]]     # [anchor, expanded size] per open collection
    for event in yaml.parse(data, Loader=_Base):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append([event.anchor, 1])
            if len(stack) - 1 > MAX_DEPTH:
                raise _shape_error(f"nested more than {MAX_DEPTH} levels deep", event)
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size = stack.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, size = event.anchor, 1
        elif isinstance(event, yaml.AliasEvent):
            if any(frame[0] == event.anchor for frame in stack):
                raise _shape_error(f"the alias *{event.anchor} sits inside the value it names "
                                   f"(a recursive document)", event)
            anchor, size = None, sizes.get(str(event.anchor), 1)
        else:
            continue
        if anchor is not None:
            sizes[anchor] = size
        stack[-1][1] += size
        if stack[-1][1] > MAX_NODES:
            raise _shape_error(f"more than {MAX_NODES} values once its aliases are expanded "
                               f"(an alias bomb?)", event)


def _shape_error(rule: str, event: Any) -> RecipeError:
    mark = event.start_mark
    return RecipeError(f"at line {mark.line + 1}, column {mark.column + 1}: {rule}")


def load_yaml(data: bytes, source: str) -> Any:
    """The parsed document; `RecipeError` naming `source` for anything refused."""
    try:
        _check_shape(data)
        return yaml.load(data, Loader=_StrictLoader)   # noqa: S506 (a SafeLoader subclass)
    except RecipeError as exc:
        raise RecipeError(f"{source}: not an acceptable recipe {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RecipeError(f"{source}: not valid YAML{where}: {problem}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise RecipeError(f"{source}: not a readable recipe ({type(exc).__name__}: "
                          f"{str(exc)[:120]})") from None
