"""One-way floors: no core module imports the views, the command line or the server, and no import cycle.

Every ``import`` and ``from ... import`` statement in ``playground/`` is read with :mod:`ast` — at module
level and inside functions and methods alike, since a function-local import hides a cycle from Python but
not from a reader — and resolved to the module file it loads (``from . import x`` is the module ``x`` when
there is a file for it, else the package's ``__init__``).  Imports under ``if TYPE_CHECKING:`` are left out:
they never run.

Floors, lowest first: the **core** (model, metrics, stats, store, harness, calibrate, importers and every
top-level module such as ``api``, ``datasets``, ``units``), then ``playground.ui``, then
``playground.serving``, then ``playground.cli`` (and ``__main__``).  A module may import its own floor or
lower ones.  A cycle is a strongly connected set of modules in the import graph; each is reported with
the import lines that close it.  A package's ``__init__`` importing its own submodules is the package's
face (re-exports, lazy attributes) and is not an edge of the cycle check; a submodule importing its package
back, or two modules importing each other, is.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "playground"
#: The floor of a module by its first name under ``playground``; anything else is the core (floor 0).
FLOORS = {"ui": 1, "serving": 2, "cli": 3, "__main__": 3}
FLOOR_NAMES = {0: "core", 1: "ui", 2: "serving", 3: "cli"}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    function: str  # "" at module level

    def where(self) -> str:
        inside = f" in {self.function}()" if self.function else ""
        return f"{module_path(self.source)}:{self.line}{inside} imports {self.target}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_path(name: str) -> str:
    base = PACKAGE.parent / Path(*name.split("."))
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    return path.relative_to(PACKAGE.parent).as_posix()


def is_module(name: str) -> bool:
    base = PACKAGE.parent / Path(*name.split("."))
    return (base / "__init__.py").is_file() or base.with_suffix(".py").is_file()


def floor(name: str) -> int:
    parts = name.split(".")
    return FLOORS.get(parts[1], 0) if len(parts) > 1 else 0


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, function: str = "") -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with the function it is in, skipping ``if TYPE_CHECKING:`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from (item for child in node.orelse for item in _imports(ast.Module([child], []), function))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, function
        inner = node.name if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else function
        yield from _imports(node, inner)


def _targets(source: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "playground"]
    if node.level:
        base = source.split(".") if is_package else source.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        origin = ".".join([*base, *([node.module] if node.module else [])])
    else:
        origin = node.module or ""
    if origin.split(".")[0] != "playground":
        return []
    return [f"{origin}.{a.name}" if is_module(f"{origin}.{a.name}") else origin for a in node.names]


def import_graph() -> list[Edge]:
    edges = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, function in _imports(tree):
            for target in _targets(source, path.name == "__init__.py", node):
                while not is_module(target) and "." in target:  # `import playground.x.name` of a non-module
                    target = target.rpartition(".")[0]
                if target != source:
                    edges.append(Edge(source, target, node.lineno, function))
    return edges


def is_facade(edge: Edge, packages: set[str]) -> bool:
    """``edge`` is a package's ``__init__`` importing one of its own submodules."""
    return edge.source in packages and edge.target.startswith(edge.source + ".")


def cycles(edges: list[Edge], packages: frozenset[str] | set[str] = frozenset()) -> list[list[str]]:
    """The strongly connected sets of more than one module (Tarjan), each sorted, sorted by first name;
    the facade edges of ``packages`` (:func:`is_facade`) left out."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.target, set())
        graph.setdefault(e.source, set())
        if not is_facade(e, packages):
            graph[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def describe_cycle(component: list[str], edges: list[Edge]) -> str:
    inside = set(component)
    lines = [e.where() for e in edges if e.source in inside and e.target in inside and not is_facade(e, PACKAGES)]
    return " <-> ".join(component) + ":\n    " + "\n    ".join(sorted(set(lines)))


EDGES = sorted(set(import_graph()), key=lambda e: (e.source, e.line, e.target))
PACKAGES = {module_name(p) for p in PACKAGE.rglob("__init__.py")}


def test_the_walk_sees_function_local_and_relative_imports():
    tree = ast.parse("import os\nfrom . import x\ndef f():\n    from ..ui import views\n"
                     "if TYPE_CHECKING:\n    from playground.cli import main\nelse:\n    import playground.model\n")
    found = [(type(n).__name__, n.lineno, fn) for n, fn in _imports(tree)]
    assert found == [("Import", 1, ""), ("ImportFrom", 2, ""), ("ImportFrom", 4, "f"), ("Import", 8, "")]
    node = ast.parse("from ..ui import views").body[0]
    assert _targets("playground.harness.run", False, node) == ["playground.ui.views"]
    node = ast.parse("from . import REPO_ROOT").body[0]
    assert _targets("playground.datasets", False, node) == ["playground"]
    node = ast.parse("from .calibrate import compare").body[0]
    assert _targets("playground", True, node) == ["playground.calibrate"]
    assert len(EDGES) > 300 and any(e.function for e in EDGES)


def test_cycle_finder_on_a_small_graph():
    edges = [Edge("a", "b", 1, ""), Edge("b", "a", 2, "f"), Edge("b", "c", 3, ""), Edge("c", "d", 4, "")]
    assert cycles(edges) == [["a", "b"]]
    facade = [Edge("p", "p.x", 1, ""), Edge("p.x", "p", 2, "g")]
    assert cycles(facade) == [["p", "p.x"]] and cycles(facade, {"p"}) == []


def test_floors():
    assert [floor(m) for m in ("playground", "playground.api", "playground.harness.run", "playground.ui.views",
                                "playground.serving.app", "playground.cli.serve", "playground.__main__")] == [
        0, 0, 0, 1, 2, 3, 3]


def test_no_upward_import():
    upward = [f"{e.where()} ({FLOOR_NAMES[floor(e.source)]} -> {FLOOR_NAMES[floor(e.target)]})"
              for e in EDGES if floor(e.target) > floor(e.source)]
    assert not upward, "upward imports:\n  " + "\n  ".join(upward)


@pytest.mark.parametrize("floor_name", ["core", "ui", "serving", "cli"])
def test_no_import_cycle(floor_name):
    """One test per floor (by the floor of a cycle's lowest module), so each failure names its own cycles."""
    level = {v: k for k, v in FLOOR_NAMES.items()}[floor_name]
    found = [c for c in cycles(EDGES, PACKAGES) if min(floor(m) for m in c) == level]
    assert not found, "import cycles:\n  " + "\n  ".join(describe_cycle(c, EDGES) for c in found)
