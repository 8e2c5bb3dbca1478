"""The house rules on size (issue 27.3): no module over 600 lines, no class over 400, no function over 60.

Every ``.py`` file under ``playground/`` is read with :mod:`ast`.  A module's length is its number of lines;
a class's or a function's is ``end_lineno - lineno + 1`` of its node (from the ``class``/``def`` line to its
last line, decorators not counted).  Functions include methods and nested functions; each is named by its
qualified name (``Class.method``, ``outer.inner``).  An offender is reported as ``file:line`` with its kind,
name and length.  argparse registration is no data table: it counts like any other function.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "playground"
REPO = PACKAGE.parent

MAX_MODULE = 600
MAX_CLASS = 400
MAX_FUNCTION = 60



@dataclass(frozen=True)
class Offender:
    path: str
    line: int
    kind: str  # "module", "class" or "function"
    name: str  # "" for a module
    length: int
    limit: int

    @property
    def key(self) -> str:
        return f"{self.path}:{self.name}" if self.name else self.path

    def __str__(self) -> str:
        what = f"{self.kind} {self.name}" if self.name else self.kind
        return f"{self.path}:{self.line}: {what} is {self.length} lines (limit {self.limit})"


def offenders(source: str, path: str) -> list[Offender]:
    """Every module, class and function of ``source`` over its limit, in line order."""
    found = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE:
        found.append(Offender(path, 1, "module", "", lines, MAX_MODULE))

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                kind, limit = ("class", MAX_CLASS) if isinstance(child, ast.ClassDef) else ("function", MAX_FUNCTION)
                if length > limit:
                    found.append(Offender(path, child.lineno, kind, name, length, limit))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source, filename=path), "")
    return sorted(found, key=lambda o: o.line)


@cache
def house_offenders() -> tuple[Offender, ...]:
    """Every offender under ``playground/`` (read once per session)."""
    found = []
    for file in sorted(PACKAGE.rglob("*.py")):
        found += offenders(file.read_text(encoding="utf-8"), file.relative_to(REPO).as_posix())
    return tuple(found)


def test_no_module_class_or_function_over_its_limit():
    bad = list(house_offenders())
    assert not bad, "over the house limits (issue 27.3):\n" + "\n".join(map(str, bad))


def _function(name: str, body_lines: int, indent: str = "") -> str:
    """A function of exactly ``body_lines + 1`` lines (its ``def`` line and ``body_lines`` statements)."""
    return f"{indent}def {name}():\n" + "".join(f"{indent}    x{i} = {i}\n" for i in range(body_lines))


@pytest.mark.parametrize(("body", "flagged"), [(59, False), (60, True)])
def test_a_function_of_60_lines_passes_and_61_fails(body, flagged):
    source = "import os\n\n\n@decorator\n" + _function("f", body)
    found = offenders(source, "m.py")
    assert [(o.kind, o.name, o.line, o.length) for o in found] == ([("function", "f", 5, 61)] if flagged else [])
    if flagged:
        assert str(found[0]) == "m.py:5: function f is 61 lines (limit 60)"


def test_methods_and_nested_functions_are_named_by_their_qualified_name():
    source = "class C:\n" + _function("m", 60, "    ") + _function("outer", 1) + _function("inner", 60, "    ")
    found = offenders(source, "m.py")
    # outer: its def line, one statement and the 61 lines of inner
    assert [(o.name, o.line, o.length) for o in found] == [("C.m", 2, 61), ("outer", 63, 63), ("outer.inner", 65, 61)]
    assert found[2].key == "m.py:outer.inner"


@pytest.mark.parametrize(("statements", "flagged"), [(399, False), (400, True)])
def test_a_class_of_400_lines_passes_and_401_fails(statements, flagged):
    source = "class C:\n" + "".join(f"    x{i} = {i}\n" for i in range(statements))
    assert [(o.kind, o.name, o.length) for o in offenders(source, "m.py")] == (
        [("class", "C", 401)] if flagged else [])


@pytest.mark.parametrize(("lines", "flagged"), [(600, False), (601, True)])
def test_a_module_of_600_lines_passes_and_601_fails(lines, flagged):
    source = "".join(f"x{i} = {i}\n" for i in range(lines))
    found = offenders(source, "pkg/m.py")
    assert [(o.kind, o.key, o.line, o.length) for o in found] == ([("module", "pkg/m.py", 1, 601)] if flagged else [])
