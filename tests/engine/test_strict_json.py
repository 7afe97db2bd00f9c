"""`aorta.strict_json` is `json` without its import cost: the same documents, the same errors
word for word, the same bytes out. Checked against json itself on hazards and on many random
documents and texts (fixed seeds)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import pytest

from aorta.strict_json import dumps_indented, loads


def _strict(name: str) -> Any:
    raise ValueError(f"{name} is not strict JSON")


def _json_outcome(text: str) -> tuple[str, Any]:
    try:
        return "ok", json.loads(text, parse_constant=_strict)
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def _our_outcome(text: str) -> tuple[str, Any]:
    try:
        return "ok", loads(text, parse_constant=_strict)
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


HAZARDS = [
    "", " ", "{}", " {} ", "\n[1, 2]\r\n\t", "{} {}", "{}x", "[1,]", "{'a': 1}", '{"a": NaN}',
    "Infinity", "-Infinity", "[1e400]", "1e-400", "123456789012345678901234567890", "-0",
    "0.5", "01", '"\\ud800"', '"\\u00e9\\n"', '"\x01"', '"tab\there"', "\ufeff{}", "nul",
    "[" * 100_000 + "]" * 100_000, '{"a": {"b": [true, false, null]}}', '{"a": 1, "a": 2}',
    "\u00a0{}", "{}\u00a0", "[1] \x0c", "\x0c[1]", '"unterminated', "[1, 2", "truefalse",
]


@pytest.mark.parametrize("text", HAZARDS, ids=range(len(HAZARDS)))
def test_loads_is_json_loads_on_hazards(text: str) -> None:
    assert _our_outcome(text) == _json_outcome(text)


def _random_text(rnd: random.Random) -> str:
    pieces = ['{', '}', '[', ']', ',', ':', '"a"', '"\\u00e9"', '1', '-2.5e3', 'true', 'null',
              ' ', '\n', 'NaN', '"x', '\\', '0', '.', 'e', '\ufeff', '\t']
    return "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))


def test_loads_is_json_loads_on_random_texts() -> None:
    rnd = random.Random("strict-json-texts")
    for _ in range(20_000):
        text = _random_text(rnd)
        assert _our_outcome(text) == _json_outcome(text), repr(text)


def _random_doc(rnd: random.Random, depth: int = 0) -> Any:
    kind = rnd.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rnd.choice(["", "plain", "é ü", "\x00\x1f\"\\/", "\ud800", "日本", "\U0001f600"])
    if kind == 1:
        return rnd.choice([0, -1, 7, 2**70, -(2**64), 0.0, -0.0, 0.1, 1e300, -2.5e-308, 5e-324,
                           float("nan"), float("inf"), float("-inf"), 123456789.125])
    if kind == 2:
        return rnd.choice([True, False])
    if kind == 3:
        return None
    if kind == 4:
        return rnd.choice([[], {}])
    if kind in (5, 6):
        return {rnd.choice(["a", "b", "é", "", "\n"]) + str(i): _random_doc(rnd, depth + 1)
                for i in range(rnd.randint(1, 4))}
    return [_random_doc(rnd, depth + 1) for _ in range(rnd.randint(1, 4))]


def test_dumps_indented_is_json_dumps_and_loads_reads_it_back() -> None:
    rnd = random.Random("strict-json-docs")
    for _ in range(5_000):
        doc = _random_doc(rnd)
        text = dumps_indented(doc)
        assert text == json.dumps(doc, indent=2)
        assert _our_outcome(text) == _json_outcome(text) or "NaN" in text or "Infinity" in text


def _nested(depth: int) -> Any:
    doc: Any = 1
    for _ in range(depth):
        doc = [doc]
    return {"deep": doc}


class _Int(int):
    def __repr__(self) -> str:
        return "not json"


class _Float(float):
    def __repr__(self) -> str:
        return "not json"


@pytest.mark.parametrize("doc", [
    (1, 2), {1: "int key"}, {None: 1}, [_Int(3)], {"f": _Float(0.5)},
    _nested(80),
], ids=["tuple", "int-key", "none-key", "int-subclass", "float-subclass", "deep"])
def test_other_values_are_written_by_json_itself(doc: Any) -> None:
    assert dumps_indented(doc) == json.dumps(doc, indent=2)


def test_a_circular_document_fails_as_json_says() -> None:
    doc: list[Any] = []
    doc.append(doc)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps_indented(doc)


@pytest.mark.parametrize("text", ['{"a": 1', '{"a": NaN}', "[1] x", "\ufeff{}", "", "[" * 10**5])
def test_errors_are_jsons_in_a_process_that_never_imported_json(text: str) -> None:
    # The C scanner raises json.decoder's error class, which before Python 3.12 it only finds
    # where json.decoder is already loaded: test in a fresh interpreter, as `sweep status` runs.
    code = ("import sys\nfrom aorta.strict_json import loads\n"
            "def strict(name):\n    raise ValueError(name + ' is not strict JSON')\n"
            "try:\n    print('ok', repr(loads(sys.stdin.read(), parse_constant=strict)))\n"
            "except (ValueError, RecursionError) as exc:\n"
            "    print(type(exc).__name__, exc)\n")
    done = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True,
                          text=True, encoding="utf-8", timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    kind, value = _json_outcome(text)
    assert done.stdout.strip() == (f"ok {value!r}" if kind == "ok" else f"{kind} {value}")


def test_reading_a_record_does_not_import_json() -> None:
    # Measured against a bare start: a site's .pth hooks may load re or enum at every start.
    watched = "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules))"
    code = ("import sys; from aorta.strict_json import loads, dumps_indented; "
            "loads('{\"a\": [1, 2.5, null]}', parse_constant=float); dumps_indented({'a': [1]}); "
            + watched)
    done, bare = (subprocess.run([sys.executable, "-c", c], capture_output=True, text=True,
                                 check=True, timeout=60) for c in (code, "import sys; " + watched))
    assert done.stdout == bare.stdout
