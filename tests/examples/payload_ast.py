"""Reading example payloads without running their imports: import order, exits, functions.

The payloads import torch and Triton at module level (Proton must be imported first, before the
script defines its kernels), so the CPU suite never imports them. It reads their syntax tree
instead, and runs only pieces that need nothing heavy: the main guard (with a stand-in `main`)
and self-contained helpers such as `parse_args` and `proton_settings`.

Import order, as `import_order_problem` judges it, looks only at what runs when the module is
imported: module-level statements, descending into `try` bodies and `finally` blocks, `with`
bodies and class bodies (they run unconditionally), and into `if`/`for`/`while`/`match` bodies
and `except`/`else` blocks (they may run). Function bodies run later, if ever, and are skipped.
`if TYPE_CHECKING:` bodies never run; their `else` always does. A Proton import counts as
evidence of a safe order only where it runs unconditionally; a torch import counts wherever it
may run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ImportEvent", "import_events", "import_order_problem", "exit_calls",
           "main_guard", "load_functions", "string_constants"]

PROTON_MODULES = ("triton.profiler", "triton._C.libproton")
#: Packages whose import loads torch (and so initialises its GPU runtime hooks).
TORCH_MODULES = ("torch", "torchvision", "torchaudio")
DYNAMIC_IMPORTERS = ("importlib.import_module", "import_module", "__import__")


@dataclass(frozen=True)
class ImportEvent:
    line: int
    family: str          # "proton" or "torch"
    module: str
    certain: bool        # runs whenever the module is imported


def _family(module: str) -> str | None:
    for family, roots in (("proton", PROTON_MODULES), ("torch", TORCH_MODULES)):
        if any(module == root or module.startswith(root + ".") for root in roots):
            return family
    return None


def _imported_modules(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level or not node.module:
            return []
        # `from triton import profiler` may import the submodule triton.profiler.
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return []


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _dynamic_imports(node: ast.AST) -> list[str]:
    """Modules named by `importlib.import_module("x")` / `__import__("x")` calls in `node`."""
    found = []
    for call in ast.walk(node):
        if (isinstance(call, ast.Call) and _dotted(call.func) in DYNAMIC_IMPORTERS
                and call.args and isinstance(call.args[0], ast.Constant)
                and isinstance(call.args[0].value, str)):
            found.append(call.args[0].value)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return _dotted(test).split(".")[-1] == "TYPE_CHECKING"


def import_events(tree: ast.Module) -> list[ImportEvent]:
    """Proton and torch imports that may run at import time, in source order."""
    events: list[ImportEvent] = []
    _visit(tree.body, True, events)
    return events


def _visit(body: list[ast.stmt], certain: bool, events: list[ImportEvent]) -> None:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(stmt, ast.If) and _is_type_checking(stmt.test):
            _visit(stmt.orelse, certain, events)
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            modules = _imported_modules(stmt)
        elif isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)):
            modules = _dynamic_imports(stmt)
        else:
            modules = []
        for module in modules:
            family = _family(module)
            if family:
                events.append(ImportEvent(stmt.lineno, family, module, certain))
        for block, runs_always in _blocks(stmt):
            _visit(block, certain and runs_always, events)


def _blocks(stmt: ast.stmt) -> list[tuple[list[ast.stmt], bool]]:
    """The statement lists nested in `stmt`, each with whether it runs whenever `stmt` does."""
    if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
        return ([(stmt.body, True)] + [(h.body, False) for h in stmt.handlers]
                + [(stmt.orelse, False), (stmt.finalbody, True)])
    if isinstance(stmt, (ast.With, ast.AsyncWith, ast.ClassDef)):
        return [(stmt.body, True)]
    if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        return [(stmt.body, False), (stmt.orelse, False)]
    if isinstance(stmt, ast.Match):
        return [(case.body, False) for case in stmt.cases]
    return []


def import_order_problem(source: str, require_proton: bool = True) -> str | None:
    """Why `source` may import torch before Proton, or None when the order is safe.

    With `require_proton`, a module that never imports Proton unconditionally at module level is
    a problem too (a Proton payload must load libproton itself, whoever runs it)."""
    events = import_events(ast.parse(source))
    proton = [e for e in events if e.family == "proton"]
    first_certain = next((e for e in proton if e.certain), None)
    first_torch = next((e for e in events if e.family == "torch"), None)
    # Events are in execution order, so positions (not line numbers) decide `import a, b`.
    if first_torch is not None and (first_certain is None
                                    or events.index(first_certain) > events.index(first_torch)):
        earlier = events[:events.index(first_torch)]
        hint = (f"; the Proton import at line {earlier[0].line} is conditional, so it is no "
                f"evidence" if earlier else "")
        return (f"line {first_torch.line} imports {first_torch.module} before any unconditional "
                f"import of triton.profiler{hint}")
    if require_proton and first_certain is None:
        hint = f" (only a conditional one at line {proton[0].line})" if proton else ""
        return f"no unconditional module-level import of triton.profiler{hint}"
    return None


def exit_calls(tree: ast.Module) -> list[tuple[int, str, ast.expr | None]]:
    """Every `SystemExit(...)`, `sys.exit(...)`, `exit(...)`, `quit(...)`, `os._exit(...)`
    call: (line, callee, its first argument or None)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = _dotted(node.func)
            if callee in ("SystemExit", "sys.exit", "exit", "quit", "os._exit"):
                found.append((node.lineno, callee, node.args[0] if node.args else None))
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Name) \
                and node.exc.id == "SystemExit":
            found.append((node.lineno, "SystemExit", None))
    return found


def main_guard(tree: ast.Module) -> ast.If | None:
    """The module's last statement when it is `if __name__ == "__main__":`, else None."""
    last = tree.body[-1] if tree.body else None
    if (isinstance(last, ast.If) and isinstance(last.test, ast.Compare)
            and _dotted(last.test.left) == "__name__"
            and isinstance(last.test.comparators[0], ast.Constant)
            and last.test.comparators[0].value == "__main__"):
        return last
    return None


def load_functions(path: Path, names: tuple[str, ...], namespace: dict[str, Any]) -> dict[str, Any]:
    """Define the module-level functions `names` of `path` (and its constant assignments) in
    `namespace`, without running the module's imports; return the namespace."""
    tree = ast.parse(path.read_text(), str(path))
    chosen: list[ast.stmt] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name in names:
            chosen.append(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and _is_constant(stmt.value):
            chosen.append(stmt)
    missing = set(names) - {s.name for s in chosen if isinstance(s, ast.FunctionDef)}
    if missing:
        raise AssertionError(f"{path}: no module-level function(s) {sorted(missing)}")
    exec(compile(ast.Module(body=chosen, type_ignores=[]), str(path), "exec"), namespace)
    return namespace


def _is_constant(node: ast.expr | None) -> bool:
    """Literal values and arithmetic on them (e.g. `1 << 20`, `(("a", "b"),)`)."""
    if node is None:
        return False
    allowed = (ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.BinOp, ast.UnaryOp,
               ast.operator, ast.unaryop, ast.expr_context)
    return all(isinstance(n, allowed) for n in ast.walk(node))


def string_constants(tree: ast.Module) -> set[str]:
    """Every string literal in the module, f-string pieces included."""
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)}
