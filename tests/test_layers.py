"""The package's layers, read from its imports: each folder imports only the layers below it,
and no module imports itself back through others (a circle).

    plugin/    pytest's side
    snapshot/  what is recorded and how it is judged
    sources/   one package per harness (lighteval-style modules, lm-eval, Inspect)
    lint/      rules over any rendered task
    engine/    the task model and the pipeline, no harness
    errors, files: below all

Every import counts, a function's lazy one and a type checker's alike: a lazy import is still
a dependency of the module that makes it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_evaltasks"
LAYERS = ["engine", "lint", "sources", "snapshot", "plugin"]
SHARED = {"errors", "files"}


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (the package's own `__init__` aside: it
    hands the public names on)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts != ["pytest_evaltasks"]:
            found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that `path` imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def layer(name: str) -> int:
    """A module's layer: -1 for the shared modules below all."""
    part = name.split(".")[1]
    return -1 if part in SHARED else LAYERS.index(part)


GRAPH = {name: imports_of(name, path, set(modules())) for name, path in modules().items()}


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_a_module_imports_no_higher_layer(name: str) -> None:
    upward = sorted(
        target
        for target in GRAPH[name]
        if target != "pytest_evaltasks" and layer(target) > layer(name)
    )
    assert upward == [], f"{name} imports a higher layer: {upward}"


def test_no_module_imports_itself_back_through_others() -> None:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH.get(node, ()):
            if target not in GRAPH:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    assert circles == []


def test_no_engine_module_imports_a_harness() -> None:
    """lm-eval, Inspect and lighteval live in `sources/`: the engine knows no harness."""
    harnesses = {"lm_eval", "inspect_ai", "inspect_evals", "lighteval"}
    found = []
    for name, path in modules().items():
        if name.split(".")[1] != "engine":
            continue
        for node in ast.walk(ast.parse(path.read_bytes())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and not node.level
                    else []
                )
            )
            found += [f"{name}: {n}" for n in names if n.split(".")[0] in harnesses]
    assert found == []
