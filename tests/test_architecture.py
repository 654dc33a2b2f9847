"""The shape of the code a newcomer relies on (docs/design.md): no module imports itself in a circle.

Imports inside functions count too: a function-level import that closes a cycle hides the cycle
from the reader (and from Python until that function runs), so it is reported like any other.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {
    "config": ROOT / "config",
    "projects": ROOT / "projects",
    "sessions_app": ROOT / "sessions_app",
    "frontend": ROOT / "frontend",
    "sessionledger": ROOT / "client" / "sessionledger",
}


def _modules() -> dict[str, Path]:
    found = {}
    for package, path in PACKAGES.items():
        for file in path.rglob("*.py"):
            if "migrations" in file.parts:
                continue
            parts = [package, *file.relative_to(path).with_suffix("").parts]
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = file
    return found


def _imported_names(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):  # every import, at module level or inside a function
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return names


def import_graph() -> dict[str, set[str]]:
    modules = _modules()

    def ours(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, file in modules.items():
        targets = {ours(name) for name in _imported_names(ast.parse(file.read_text()))}
        graph[module] = {t for t in targets if t and t != module and not module.startswith(f"{t}.")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = stack[stack.index(node) :]
                    del stack[stack.index(node) :]
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in stack:
                low[node] = min(low[node], index[child])
    return found


def test_the_checker_finds_a_cycle_hidden_in_a_function() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_in_a_circle() -> None:
    assert cycles(import_graph()) == []
