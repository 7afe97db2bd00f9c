"""Generated hostile recipes: wrong types at every key, aliases, huge numbers, control
characters, long and traversal names, garbage bytes. Each case is (id, file name, bytes)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import yaml

BASE: dict[str, Any] = {
    "schema_version": 1, "mode": "probe", "ticket": "hostile", "trials": 2,
    "timeout_per_trial": 5, "kill_grace_s": 1, "max_log_mib": 4, "env": {"A": "1"},
    "command": ["true"], "env_passthrough_mode": "inherit",
    "axes": {"x": {"a": {"args": ["1"]}, "b": {"env": {"B": "2"}}}},
    "mitigation_axis": ["none", "tf32_off"], "baseline": False,
    "executor": {"gpus": None}, "collect": {},
}

PATHS = [("schema_version",), ("mode",), ("ticket",), ("trials",), ("timeout_per_trial",),
         ("kill_grace_s",), ("max_log_mib",), ("env",), ("env", "A"), ("command",),
         ("command", 0), ("env_passthrough_mode",), ("axes",), ("axes", "x"),
         ("axes", "x", "a"), ("axes", "x", "a", "args"), ("axes", "x", "b", "env"),
         ("mitigation_axis",), ("baseline",), ("executor",), ("executor", "gpus"),
         ("collect",)]

VALUES: list[tuple[str, Any]] = [
    ("null", None), ("true", True), ("neg", -1), ("zero", 0), ("huge", 10**12),
    ("int64", 2**63), ("bigfloat", 1e308), ("inf", float("inf")), ("nan", float("nan")),
    ("long", "x" * 70_000), ("nul", "a\0b"), ("newline", "a\nb"), ("traversal", "../../x"),
    ("bidi", "a\u202eb"), ("emptylist", []), ("emptymap", {}), ("nested", [[[["deep"]]]]),
    ("map", {"k": {"k": {"k": 1}}}), ("digits", "\u0663"), ("float", 2.5),
]


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    target: Any = doc
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value


def _dump(doc: Any) -> bytes:
    return yaml.safe_dump(doc, allow_unicode=True, width=10**9).encode()


def generated() -> Iterator[tuple[str, str, bytes]]:
    for path in PATHS:
        for label, value in VALUES:
            doc = copy.deepcopy(BASE)
            _set(doc, path, value)
            yield f"{'.'.join(map(str, path))}={label}", "recipe.yaml", _dump(doc)
    for key in ("ticket", "axes-key", "variant", "env-key"):
        for label, name in (("255", "n" * 300), ("newline", "ok\n"), ("dotdot", ".."),
                            ("slash", "a/b"), ("nul", "a\0b"), ("dash", "--x")):
            doc = copy.deepcopy(BASE)
            if key == "ticket":
                doc["ticket"] = name
            elif key == "axes-key":
                doc["axes"] = {name: {"a": {}}}
            elif key == "variant":
                doc["axes"] = {"x": {name: {}}}
            else:
                doc["env"] = {name: "1"}
            yield f"name:{key}={label}", "recipe.yaml", _dump(doc)
    yield from _texts()
    yield from _file_names()


def _texts() -> Iterator[tuple[str, str, bytes]]:
    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n"
        for p, c in zip("abcdefghi", "bcdefghij")) + "schema_version: 1\nticket: *j\n"
    texts = {
        "alias-bomb": bomb.encode(),
        "recursive-alias": b"schema_version: 1\nenv: &e {A: *e}\n",
        "deep-2000": b"schema_version: 1\nenv: " + b"[" * 2000 + b"]" * 2000 + b"\n",
        "deep-maps": b"schema_version: 1\naxes: " + b"{a: " * 500 + b"1" + b"}" * 500 + b"\n",
        "int-5000": b"schema_version: 1\ntrials: " + b"1" * 5000 + b"\n",
        "duplicate-key": b"schema_version: 1\ntrials: 1\ntrials: 2\n",
        "unknown-key-newline": b'schema_version: 1\n"bad\\nkey": 1\n',
        "garbage": bytes(range(256)) * 4,
        "empty": b"",
        "only-null": b"null\n",
        "a-list": b"- 1\n- 2\n",
        "two-documents": b"schema_version: 1\n---\nschema_version: 1\n",
        "bom-tabs": b"\xef\xbb\xbfschema_version: 1\n\ttrials: 2\n",
        "python-tag": b"schema_version: 1\nticket: !!python/object/apply:os.system [true]\n",
        "binary-tag": b"schema_version: 1\nenv: {A: !!binary aGVsbG8=}\n",
        "timestamp": b"schema_version: 1\nticket: 2026-01-01\n",
        "cells-2^40": ("schema_version: 1\naxes:\n" + "".join(
            f"  ax{i}: {{a: {{}}, b: {{}}}}\n" for i in range(40))).encode(),
        "trials-10^7": b"schema_version: 1\ntrials: 10000000\n",
        "trials-2^63": b"schema_version: 1\ntrials: 9223372036854775808\n",
        "timeout-1e30": b"schema_version: 1\ntimeout_per_trial: 1e30\n",
        "timeout-inf": b"schema_version: 1\ntimeout_per_trial: .inf\n",
        "gpus-nul": b'schema_version: 1\nexecutor: {gpus: "\\0"}\n',
        "oversized": b"schema_version: 1\n# " + b"x" * (2 << 20) + b"\n",
        "many-variants": ("schema_version: 1\naxes:\n  a: {" + ", ".join(
            f"v{i}: {{}}" for i in range(20_000)) + "}\n").encode(),
    }
    for label, data in texts.items():
        yield f"text:{label}", "recipe.yaml", data


def _file_names() -> Iterator[tuple[str, str, bytes]]:
    doc = copy.deepcopy(BASE)
    del doc["ticket"]
    for label, name in (("three-dots", "...yaml"), ("two-dots", "..yaml"),
                        ("long-stem", "s" * 240 + ".yaml"), ("newline-stem", "a\nb.yaml"),
                        ("dash-stem", "-x.yaml")):
        yield f"file:{label}", name, _dump(doc)
