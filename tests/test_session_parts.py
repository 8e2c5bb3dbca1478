"""LabelSession is split into parts with one job each (issue 27.3): sizes, and no import cycle in the page's session."""
from __future__ import annotations

import ast
from pathlib import Path

from playground.ui.session import LabelSession

UI = Path(__file__).resolve().parent.parent / "playground" / "ui"
PARTS = ("session_catalog", "session_labels", "session_reveal", "session_navigation", "session_rates",
         "session_verdicts")


def imports_of(path: Path) -> set[str]:
    """The playground.ui modules ``path`` imports, at the top or inside a function (relative imports)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out.add(node.module.split(".")[0] if node.module else "__init__")  # "from . import x": the package
    return out


def test_the_session_is_made_of_its_parts_in_order():
    assert [c.__module__.rsplit(".", 1)[1] for c in LabelSession.__mro__[1:7]] == list(PARTS)
    assert LabelSession.__mro__[7].__name__ == "SessionBase"


def test_no_part_over_400_lines_and_no_function_over_60():
    for name in ("session", "session_types", *PARTS, "search", "harness_cache", "verdict_panel", "verdict_html",
                 "room_analysis", "formats"):
        text = (UI / f"{name}.py").read_text(encoding="utf-8")
        assert text.count("\n") <= 400, name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno - node.lineno + 1 <= 60, f"{name}.{node.name}"


def test_no_import_cycle_between_the_session_and_the_harness_cache():
    graph = {p.stem: imports_of(p) & {q.stem for q in UI.glob("*.py")} for p in UI.glob("*.py")}
    assert "session" not in graph["harness_cache"]
    # the parts see only the shared records, the search and the page's request (its role); never the session
    for part in PARTS:
        assert graph[part] <= {"session_types", "search", "harness_cache", "request"}, (part, graph[part])
    assert graph["session_types"] == set()

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph.get(start, ()))

    assert "__init__" not in graph["session"]  # the session opens a dataset itself, not through the package
    for name in ("session", "harness_cache", "search", "session_types", *PARTS):
        assert not reaches(name, name, set()), f"{name} imports itself through a cycle"
