"""The layers of docs/architecture.md: every import under src/aorta (at the top of a module,
inside a function or for type checking alike) goes down a layer or stays in its own, and no
import circle exists, not even through a lazy import."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: Lowest first. A module may import from its own layer (without a circle) or any below it.
LAYERS = [
    ("aorta.base", "aorta.launchers", "aorta.rendering", "aorta.stats"),
    ("aorta.recipe", "aorta.host"),
    ("aorta.parsers",),
    ("aorta.store",),
    ("aorta.collectors",),
    ("aorta.run",),
    ("aorta.report", "aorta.comparison", "aorta.history"),
    ("aorta.api",),
    ("aorta.cli", "aorta.__main__", "aorta"),
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in (SRC / "aorta").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def _layer(module: str) -> int:
    best, rank = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank >= 0, f"{module} is in no layer"
    return rank


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_every_import_goes_down_or_stays_in_its_layer() -> None:
    upward = sorted(f"{source} -> {target}" for source, targets in _graph().items()
                    for target in targets if _layer(target) > _layer(source))
    assert upward == []


def test_no_import_circle() -> None:
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(node: str) -> None:      # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert circles == []
