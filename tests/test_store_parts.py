"""The label store is split into parts with one job each (issue 27.3): its order, its sizes, one home per method.

The limits this project adopted: no module over 600 lines, no class over 400, no function over 60.
"""
from __future__ import annotations

import ast
from pathlib import Path

from playground.store import LabelStore
from playground.store.handle import StoreHandle

STORE = Path(__file__).resolve().parent.parent / "playground" / "store"
#: The parts of LabelStore, in method-resolution order, then its base.
PARTS = ("label_writes", "label_reads", "tags", "guidelines", "assignments", "stored_datasets", "audit", "handle")
#: Where each public method of LabelStore lives (what other code calls; names and signatures are kept).
HOMES = {
    "handle": {"annotators", "backend", "close", "url"},
    "label_writes": {"adjudicate", "set_comment", "set_label", "undo", "write_rows"},
    "label_reads": {"comments", "consensus", "current_labels", "events", "history", "labels", "progress", "stale",
                    "unsure_counts"},
    "tags": {"add_failure_mode", "merge_failure_modes", "rename_failure_mode", "set_tags", "tags", "taxonomy"},
    "guidelines": {"guidelines", "guidelines_history", "guidelines_tx", "set_guidelines"},
    "assignments": {"assignment", "assignments", "delete_lesson", "lesson", "lessons", "save_assignment",
                    "save_lesson"},
    "stored_datasets": {"dataset", "dataset_names", "dataset_revision", "datasets", "put_dataset"},
    "audit": {"copy_from", "dump", "integrity_check", "verify"},
}


def test_the_store_is_made_of_its_parts_in_order():
    mro = [c.__module__.rsplit(".", 1)[1] for c in LabelStore.__mro__[1:-1]]
    assert mro == list(PARTS)
    assert LabelStore.__mro__[-2] is StoreHandle
    assert LabelStore.__dict__.keys() <= {"__module__", "__doc__", "__qualname__", "__firstlineno__",
                                          "__static_attributes__", "__annotations__"}  # it only composes


def test_each_public_method_has_one_home():
    public = {n for n in dir(LabelStore) if not n.startswith("_")}
    assert public == set().union(*HOMES.values())
    for home, names in HOMES.items():
        for name in names:
            owner = next(c for c in LabelStore.__mro__ if name in c.__dict__)
            assert owner.__module__ == f"playground.store.{home}", name


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
