"""The label store is composed of parts with one job each (issues 27.3 and 40.1): who owns what, sizes, no circle.

The limits this project adopted: no module over 600 lines, no class over 400, no function over 60.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from import_circles import circle, folder_imports

from playground.store import LabelStore, open_store
from playground.store.assignments import Plans
from playground.store.audit import Audit
from playground.store.core import PARTS
from playground.store.guidelines import GuidelineVersions
from playground.store.handle import StoreHandle
from playground.store.label_reads import LabelReads
from playground.store.label_writes import LabelWrites
from playground.store.stored_datasets import StoredDatasets
from playground.store.tags import TagSets

STORE = Path(__file__).resolve().parent.parent / "playground" / "store"
#: Each part's class, and its whole public surface: what the store hands on (PARTS), and what the store's
#: own modules use beyond that (imports, the dataset streaming of importers, restored histories).
SURFACES = {
    "handle": (StoreHandle, {"annotators", "close", "backend", "url", "db", "read_only", "schema_version", "write",
                             "annotator_id", "remember", "ids_creating", "event", "chunked"}),
    "writes": (LabelWrites, {"adjudicate", "set_comment", "set_label", "undo", "write_rows", "rows_tx"}),
    "reads": (LabelReads, {"comments", "consensus", "current_labels", "events", "history", "labels", "progress",
                           "stale", "unsure_counts"}),
    "tagging": (TagSets, {"add_failure_mode", "merge_failure_modes", "rename_failure_mode", "set_tags", "tags",
                          "taxonomy", "tags_tx", "add_missing", "tag_event", "undo_tags"}),
    "guideline_versions": (GuidelineVersions, {"guidelines", "guidelines_history", "guidelines_tx",
                                               "set_guidelines"}),
    "plans": (Plans, {"assignment", "assignments", "delete_lesson", "lesson", "lessons", "save_assignment",
                      "save_lesson"}),
    "stored_datasets": (StoredDatasets, {"dataset", "dataset_names", "dataset_revision", "datasets", "put_dataset",
                                         "put_text", "head"}),
    "audit": (Audit, {"copy_from", "dump", "integrity_check", "verify"}),
}
#: Every public name of an open store other than its parts: the methods callers have always used, and these.
OWN = {"backend", "url", "read_only", "schema_version"}


def public(obj: object) -> set[str]:
    return {n for n in dir(obj) if not n.startswith("_")}


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "labels.db") as s:
        yield s


def test_the_store_is_a_facade_over_parts_sharing_one_handle(store):
    assert LabelStore.__mro__ == (LabelStore, object)  # no mixins: it composes
    assert set(SURFACES) == set(PARTS)
    for name, (cls, _surface) in SURFACES.items():
        part = getattr(store, name)
        assert type(part) is cls, name
        assert part is store.handle or part._h is store.handle, name  # one handle, one connection
    assert store.handle.db is store._b
    assert store.stored_datasets._writes is store.writes and store.writes._tags is store.tagging


def test_each_method_callers_use_is_its_parts_own_bound_method(store):
    for part, names in PARTS.items():
        for name in names:
            method, owner = getattr(store, name), getattr(store, part)
            assert method.__self__ is owner and method.__func__ is getattr(type(owner), name), (part, name)
    handed_on = set().union(*PARTS.values())
    assert public(store) == handed_on | OWN | set(SURFACES)
    assert len(handed_on) == sum(len(v) for v in PARTS.values())  # one home per method


def test_each_part_has_its_own_small_public_surface(store):
    for name, (cls, surface) in SURFACES.items():
        assert public(getattr(store, name)) == surface, name
        assert set(PARTS.get(name, ())) <= surface, name
        assert cls.__mro__ == (cls, object), name  # a part is no mixin of another


def test_the_store_reads_and_writes_through_its_parts(store):
    """One label through the facade and through the parts is the same label (one connection, one state)."""
    from store_fixtures import claim

    unit = claim(1)
    event = store.writes.set_label("ana", unit, "supported", 1)
    assert event is not None and store.labels() == store.reads.labels()
    assert [lb.value for lb in store.labels()] == [1] and store.events() == [event]
    assert store.undo("ana").undoes == event.event_id and store.reads.labels() == []
    assert store.audit.verify() == [] and store.annotators() == ["ana"]


def test_no_import_circle_inside_the_store_type_only_imports_included():
    graph = folder_imports(STORE, "playground.store")
    assert circle(graph) is None, "import circle: " + " -> ".join(circle(graph) or [])
    parts = ("handle", "label_writes", "label_reads", "tags", "guidelines", "assignments", "stored_datasets", "audit")
    assert not any("core" in graph[p] for p in parts)  # a part never needs the facade, not even for a type


def test_the_circle_finder_sees_a_type_only_circle(tmp_path):
    """Two modules that import each other, one of them only for types: a circle, named in order."""
    (tmp_path / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    (tmp_path / "b.py").write_text("from .a import A\n")
    (tmp_path / "c.py").write_text("from . import a\nfrom playground.x.b import B\n")
    graph = folder_imports(tmp_path, "playground.x")
    assert graph == {"a": {"b"}, "b": {"a"}, "c": {"a", "b"}}
    assert circle(graph) == ["a", "b", "a"]
    assert circle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_module_over_600_lines_no_class_over_400_no_function_over_60():
    for path in sorted(STORE.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert text.count("\n") <= 600, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                limit = 400 if isinstance(node, ast.ClassDef) else 60
                assert size <= limit, f"{path.name}: {node.name} has {size} lines"


def test_the_io_face_and_core_keep_every_name_callers_import():
    from playground.store import core, io

    assert set(io.__all__) == {
        "COLUMNS", "EXPORT_COLUMNS", "FORMATS", "ConsensusExport", "GoldenExport", "ParsedFile", "consensus_export",
        "detect_format", "export_golden", "export_rows", "export_table", "format_bytes", "format_rows", "import_file",
        "migrate_store", "neutralise_cell", "restore_cell", "validate_file", "write_export"}
    assert {"LabelStore", "RESERVED_ANNOTATORS", "check_annotator", "majority", "open_store", "parse_url",
            "default_db_path", "CONSENSUS_ANNOTATOR", "annotator_problem"} <= set(core.__all__)
    for module in (core, io):
        for name in module.__all__:
            assert getattr(module, name) is not None, (module.__name__, name)
