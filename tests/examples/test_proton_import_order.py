"""Proton before torch: every Proton payload loads `triton.profiler` before anything loads torch.

On Triton 3.8.0 the reverse order hangs the process at exit after the capture is written
(triton-lang/triton#11549); `rocprofiler` also needs libproton loaded before HSA comes up. The
checker (`payload_ast.import_order_problem`) reads the syntax tree, so no payload is imported;
the meta-tests below hold the checker itself to every import spelling it must see through.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from examples_catalog import PROTON_EXAMPLES, PYTHON_EXAMPLES, Example
from payload_ast import import_events, import_order_problem

MARK = "# isort: skip  # noqa: I001"


def proton_payloads() -> tuple[Example, ...]:
    """The proton category's payloads, and any other payload that imports triton.profiler."""
    others = tuple(e for e in PYTHON_EXAMPLES if e not in PROTON_EXAMPLES and any(
        ev.family == "proton" for ev in import_events(ast.parse(e.payload.read_text()))))
    return PROTON_EXAMPLES + others


@pytest.mark.parametrize("example", proton_payloads(), ids=lambda e: e.key)
def test_proton_payloads_import_proton_before_torch(example: Example):
    problem = import_order_problem(example.payload.read_text())
    assert problem is None, f"{example.payload}: {problem}"


@pytest.mark.parametrize("example", PROTON_EXAMPLES, ids=lambda e: e.key)
def test_proton_import_is_marked_against_sorters(example: Example):
    """The first Proton import carries the marker, so isort and ruff leave it where it is."""
    source = example.payload.read_text()
    first = next(e for e in import_events(ast.parse(source)) if e.family == "proton")
    assert source.splitlines()[first.line - 1].rstrip().endswith(MARK) or \
        MARK + "," in source.splitlines()[first.line - 1], f"line {first.line} lacks {MARK!r}"


def test_non_proton_payloads_leave_torch_out_of_module_level():
    """The other Python payloads import torch inside main(), so that a missing torch is a
    one-line exit 2 and Proton's CLI (via --collect proton) always loads first."""
    for example in PYTHON_EXAMPLES:
        if example in proton_payloads():
            continue
        events = import_events(ast.parse(example.payload.read_text()))
        assert not [e for e in events if e.family == "torch"], example.key


# --- the checker on snippets -------------------------------------------------------------------

SAFE = {
    "plain": "import triton.profiler as proton\nimport torch\n",
    "from_import": "from triton import profiler\nimport torch\n",
    "from_submodule": "from triton.profiler import scope\nimport torch\n",
    "language_submodule": "import triton.profiler.language as pl\nimport torch\n",
    "libproton": "from triton._C.libproton import proton as lp\nimport torch\n",
    "libproton_dotted": "import triton._C.libproton\nimport torch\n",
    "one_statement": "import triton.profiler, torch\n",
    "try_body": "try:\n    import triton.profiler as p\n    import torch\nexcept ImportError:\n"
                "    raise SystemExit(2)\n",
    "with_body": "with ctx():\n    import triton.profiler\nimport torch\n",
    "class_body": "class Loader:\n    import triton.profiler\nimport torch\n",
    "finally_block": "try:\n    pass\nfinally:\n    import triton.profiler\nimport torch\n",
    "torch_in_function": "import triton.profiler\ndef main():\n    import torch\n",
    "type_checking_torch": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                           "    import torch\nimport triton.profiler\n",
    "type_checking_else": "import typing\nif typing.TYPE_CHECKING:\n    pass\nelse:\n"
                          "    import triton.profiler\nimport torch\n",
    "dynamic_after": "import triton.profiler\nimportlib.import_module('torch')\n",
}

UNSAFE = {
    "reversed": "import torch\nimport triton.profiler\n",
    "aliased_torch": "import torch as th\nimport triton.profiler as proton\n",
    "from_torch": "from torch import nn\nimport triton.profiler\n",
    "torch_submodule": "import torch.nn.functional as F\nimport triton.profiler\n",
    "torchvision": "import torchvision\nimport triton.profiler\n",
    "one_statement_reversed": "import torch, triton.profiler\n",
    "plain_triton_is_not_proton": "import triton\nimport torch\nimport triton.profiler\n",
    "conditional_proton": "import os\nif os.environ.get('P'):\n    import triton.profiler\n"
                          "import torch\n",
    "proton_in_except": "try:\n    import foo\nexcept ImportError:\n    import triton.profiler\n"
                        "import torch\n",
    "proton_in_try_else": "try:\n    import foo\nexcept ImportError:\n    pass\nelse:\n"
                          "    import triton.profiler\nimport torch\n",
    "proton_in_loop": "for _ in range(1):\n    import triton.profiler\nimport torch\n",
    "proton_in_function": "def load():\n    import triton.profiler\nimport torch\n",
    "type_checking_trap": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                          "    import triton.profiler\nimport torch\n",
    "conditional_torch_first": "import sys\nif sys.argv:\n    import torch\n"
                               "import triton.profiler\n",
    "torch_in_with": "with ctx():\n    import torch\nimport triton.profiler\n",
    "dynamic_torch": "torch = __import__('torch')\nimport triton.profiler\n",
    "importlib_torch": "import importlib\nt = importlib.import_module('torch')\n"
                       "import triton.profiler\n",
    "no_proton_at_all": "import torch\n",
}


@pytest.mark.parametrize("name", sorted(SAFE))
def test_checker_accepts_a_safe_order(name: str):
    assert import_order_problem(SAFE[name]) is None


@pytest.mark.parametrize("name", sorted(UNSAFE))
def test_checker_rejects_an_unsafe_order(name: str):
    assert import_order_problem(UNSAFE[name]) is not None


def test_checker_says_why_a_conditional_import_does_not_count():
    problem = import_order_problem(UNSAFE["conditional_proton"])
    assert problem == ("line 4 imports torch before any unconditional import of triton.profiler; "
                       "the Proton import at line 3 is conditional, so it is no evidence")


def test_checker_requires_a_proton_import_in_a_proton_payload():
    assert import_order_problem("import os\n") == \
        "no unconditional module-level import of triton.profiler"
    assert import_order_problem("import os\n", require_proton=False) is None
    assert "conditional one at line 3" in import_order_problem(
        "import os\nif os.environ:\n    import triton.profiler\n")


def test_checker_ignores_relative_and_lookalike_modules():
    source = textwrap.dedent("""\
        from . import torch
        import torchmetrics_fake_name as tm
        import triton.profiler
    """)
    # `torchmetrics_fake_name` is not the torch package; a relative `torch` is the payload's own.
    assert [e.module for e in import_events(ast.parse(source))] == ["triton.profiler"]


def test_checker_flags_a_real_payload_with_its_imports_swapped():
    source = (PROTON_EXAMPLES[0].payload).read_text()
    proton_line = next(line for line in source.splitlines() if MARK in line)
    torch_line = next(line for line in source.splitlines() if line.strip() == "import torch")
    swapped = source.replace(proton_line, "\0").replace(torch_line, proton_line).replace(
        "\0", torch_line)
    assert import_order_problem(source) is None
    assert import_order_problem(swapped) is not None
