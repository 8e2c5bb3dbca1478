"""One-way floors: no core module imports the views, the command line or the server, and no import cycle.

Every ``import`` and ``from ... import`` statement in ``playground/`` is read with :mod:`ast` — at module
level and inside functions and methods alike, since a function-local import hides a cycle from Python but
not from a reader — and resolved to the module file it loads (``from . import x`` is the module ``x`` when
there is a file for it, else the package's ``__init__``).  Imports under ``if TYPE_CHECKING:`` count too: a
type is a dependency, and a circle of type-only imports is still a circle a reader must hold in mind.

Floors, lowest first: the **core** in the ten floors of :data:`CORE_FLOORS` (each top-level module or
package of ``playground`` on one of them; the package's own ``__init__`` is its face, on the lowest), then
``playground.ui``, then ``playground.serving``, then ``playground.cli`` (and ``__main__``).  A module may
import its own floor or lower ones; the arrows that run back up are the few of :data:`UPWARD`, each
explained in docs/development.md, at most :data:`MAX_UPWARD` import statements in all.  Every
function-local import is counted and must run down like any other (a function-local import hides an
upward dependency from Python, not from this test), and no private name (``_x``) is imported from another
package.  A cycle is a strongly connected set of modules in the import graph; each is reported with
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
DOCS = PACKAGE.parent / "docs" / "development.md"
#: The core's floors, lowest first, by a module's first name under ``playground`` ("" is the package's face).
CORE_FLOORS = (
    ("", "errors", "files", "installed", "jsonl", "limits", "model", "safeyaml", "sampling", "stats"),
    ("begin", "claims", "corpus", "metrics", "records", "sweep", "verdict_key"),
    ("golden",),
    ("harness", "key_diagnosis", "store"),
    ("assign", "datasets", "lessons"),
    ("verdicts",),
    ("importers",),
    ("units",),
    ("calibrate",),
    ("api", "grades"),
)
#: The floors above the core, by first name.
LAYERS = {"ui": len(CORE_FLOORS), "serving": len(CORE_FLOORS) + 1, "cli": len(CORE_FLOORS) + 2,
          "__main__": len(CORE_FLOORS) + 2}
FLOORS = {**{name: i for i, names in enumerate(CORE_FLOORS) for name in names}, **LAYERS}
FLOOR_NAMES = {0: "core", 1: "ui", 2: "serving", 3: "cli"}
#: The arrows allowed to run back up (source module, target's first name): why, in docs/development.md.
UPWARD = {
    ("playground.datasets", "importers"): "opening a stored dataset rebuilds it with the importer that made it",
}
#: At most this many import statements may run back up (issue 40.2).
MAX_UPWARD = 3


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


def first_name(name: str) -> str:
    """The module's first name under ``playground`` ("" for the package itself)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def floor(name: str) -> int:
    """The floor of a module (:data:`FLOORS`); a KeyError for a module placed on none."""
    return FLOORS[first_name(name)]


def layer(name: str) -> int:
    """0 for the core, 1 ui, 2 serving, 3 cli (:data:`FLOOR_NAMES`)."""
    return max(0, floor(name) - len(CORE_FLOORS) + 1)


def _imports(tree: ast.AST, function: str = "") -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with the function it is in, ``if TYPE_CHECKING:`` blocks included."""
    for node in ast.iter_child_nodes(tree):
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
    assert found == [("Import", 1, ""), ("ImportFrom", 2, ""), ("ImportFrom", 4, "f"), ("ImportFrom", 6, ""),
                     ("Import", 8, "")]
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
    assert [layer(m) for m in ("playground", "playground.api", "playground.harness.run", "playground.ui.views",
                                "playground.serving.app", "playground.cli.serve", "playground.__main__")] == [
        0, 0, 0, 1, 2, 3, 3]
    assert [floor(m) for m in ("playground", "playground.limits", "playground.golden", "playground.harness.run",
                                "playground.datasets", "playground.importers.core", "playground.calibrate.frozen",
                                "playground.api", "playground.ui.views")] == [0, 0, 2, 3, 4, 6, 8, 9, 10]


def test_every_module_stands_on_a_floor():
    names = sorted({first_name(module_name(p)) for p in PACKAGE.rglob("*.py")})
    unplaced = [n for n in names if n not in FLOORS]
    assert not unplaced, f"put these on a floor of CORE_FLOORS (and in docs/development.md): {unplaced}"


def upward(edges: list[Edge]) -> list[Edge]:
    return [e for e in edges if floor(e.target) > floor(e.source)]


def _where(e: Edge) -> str:
    local = " (function-local: hidden from Python, not from this test)" if e.function else ""
    return f"{e.where()} (floor {floor(e.source)} -> {floor(e.target)}){local}"


def test_upward_arrows_are_only_the_few_explained():
    found = upward(EDGES)
    unexplained = [_where(e) for e in found if (e.source, first_name(e.target)) not in UPWARD]
    assert not unexplained, "imports that run back up a floor:\n  " + "\n  ".join(unexplained)
    assert len(found) <= MAX_UPWARD, f"{len(found)} imports run back up, at most {MAX_UPWARD}:\n  " + "\n  ".join(
        _where(e) for e in found)
    used = {(e.source, first_name(e.target)) for e in found}
    assert set(UPWARD) == used, f"allowed but no longer used (remove from UPWARD): {set(UPWARD) - used}"
    text = DOCS.read_text(encoding="utf-8")
    undocumented = [k for k in UPWARD if f"`{module_path(k[0])}` → `{k[1]}/`" not in text]
    assert not undocumented, f"explain each arrow in {DOCS.name}: {undocumented}"


def test_function_local_imports_are_counted_and_run_down():
    local = [e for e in EDGES if e.function and first_name(e.source) != first_name(e.target)]
    assert len(local) > 100  # the command line and the views load the core lazily: counted, not forbidden
    hidden = [_where(e) for e in upward(local) if (e.source, first_name(e.target)) not in UPWARD]
    assert not hidden, f"of {len(local)} function-local imports across packages, these run up:\n  " + "\n  ".join(
        hidden)


def private_imports() -> list[str]:
    """``from X import _name`` where X is in another package than the importing module."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = module_name(path)
        own = source if path.name == "__init__.py" else source.rpartition(".")[0]
        for node, _fn in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            targets = _targets(source, path.name == "__init__.py", node) if isinstance(node, ast.ImportFrom) else []
            if private and targets:
                package = targets[0] if (PACKAGE.parent / Path(*targets[0].split("."))).is_dir() else (
                    targets[0].rpartition(".")[0])
                if package != own:
                    found.append(f"{module_path(source)}:{node.lineno} imports {', '.join(private)} from {targets[0]}")
    return found


def test_no_private_name_is_imported_from_another_package():
    found = private_imports()
    assert not found, "private names imported across packages:\n  " + "\n  ".join(found)


def test_the_layering_rules_catch_what_they_name():
    assert floor("playground.harness.score") < floor("playground.calibrate.score_gate")  # so it could move up
    assert upward([Edge("playground.harness.run", "playground.calibrate.frozen", 3, "f")]) != []
    assert upward([Edge("playground.calibrate.frozen", "playground.harness.run", 3, "f")]) == []
    with pytest.raises(KeyError):
        floor("playground.nowhere")


@pytest.mark.parametrize("floor_name", ["core", "ui", "serving", "cli"])
def test_no_import_cycle(floor_name):
    """One test per layer (by the layer of a cycle's lowest module), so each failure names its own cycles."""
    level = {v: k for k, v in FLOOR_NAMES.items()}[floor_name]
    found = [c for c in cycles(EDGES, PACKAGES) if min(layer(m) for m in c) == level]
    assert not found, "import cycles:\n  " + "\n  ".join(describe_cycle(c, EDGES) for c in found)
