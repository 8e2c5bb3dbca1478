"""Import circles among the modules of one folder, type-only imports included (issue 40.1).

``tests/test_layering.py`` checks the floors of the whole package and leaves ``if TYPE_CHECKING:`` imports out
(they never run); a reader still has to follow them, so the store's and the page's parts are held to this
stricter rule: no module of the folder reaches itself through the folder's own imports, at module level, in a
function or under ``TYPE_CHECKING`` alike.  A package's ``__init__`` is its face (it re-exports and imports its
modules lazily): it is not a node of the walk.
"""
from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["circle", "folder_imports"]


def folder_imports(folder: Path, package: str) -> dict[str, set[str]]:
    """``{module: modules of the same folder it imports}``; ``package`` is the folder's dotted name."""
    names = {p.stem for p in folder.glob("*.py")} - {"__init__"}
    graph: dict[str, set[str]] = {}
    for name in sorted(names):
        targets: set[str] = set()
        tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level == 1:
                module = node.module
            elif node.level == 0 and (node.module or "").startswith(package + "."):
                module = (node.module or "")[len(package) + 1:]
            else:
                continue
            if module:
                targets.add(module.split(".")[0])
            else:
                targets |= {a.name for a in node.names}
        graph[name] = (targets & names) - {name}
    return graph


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """The first circle found (``[a, b, ..., a]``), walking modules and their imports in sorted order; or None."""
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        if state.get(node) == 1:
            return [*path[path.index(node):], node]
        if state.get(node) == 2:
            return None
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt, [*path, node])
            if found:
                return found
        state[node] = 2
        return None

    for module in sorted(graph):
        found = visit(module, [])
        if found:
            return found
    return None
