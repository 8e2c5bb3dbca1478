"""LabelSession is made of parts with one job each (issues 27.3 and 40.1: objects composed in, no mixins): who owns
what, sizes, and no import cycle in the page's session."""
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


def test_the_session_is_made_of_its_parts_not_of_mixins():
    from playground.ui.session_types import SessionBase

    assert LabelSession.__mro__ == (LabelSession, SessionBase, object)
    assert {n for n, v in vars(SessionBase).items() if callable(v) and not n.startswith("__")} == set()  # no code


#: Methods the session hands on under a private name (the other parts, or tests, call them so).
PRIVATE = ("group_of_response", "view_ids", "pairs", "restat", "build_labelled", "reset_labels", "apply",
           "first_response")
COMPOSED = {
    "catalog_builder": ("session_catalog", "CatalogBuilder", (
        "build_catalog", "built_cases", "build_case", "build_cases", "build_all", "build_case_of", "first_response")),
    "labelling": ("session_labels", "Labelling", (
        "set_annotator", "dataset_changed", "check_dataset", "can_label", "known_annotators", "annotator_progress",
        "build_labelled", "reset_labels", "refresh", "refresh_case", "ties", "label", "answer", "answered", "comment",
        "set_comment", "stale_label", "set_label", "apply", "undo", "describe")),
    "navigation": ("session_navigation", "Navigation", (
        "view_ids", "pairs", "restat", "case_row", "case_types", "set_filter", "search", "cases", "visible_ids",
        "case", "response", "go_to", "select_response", "scenarios", "next_case", "prev_case", "use_queue",
        "queue_progress", "has_unlabelled", "next_unlabelled", "view_units", "view_progress", "lesson_cases",
        "lesson_responses")),
    "reveal": ("session_reveal", "Reveal", ("revealed", "response_revealed", "response_name", "evidence", "auto_label",
                                            "auto_detail", "decision", "group_of_response")),
    "rates": ("session_rates", "Rates", ("rates_current", "rates_response", "rates_pooled", "set_weights", "set_gate",
                                         "normalised_weights", "composite", "agreement", "progress", "scores",
                                         "url_params", "export_rows", "export_file", "export_text")),
    "verdicts": ("session_verdicts", "Verdicts", ("response_unit", "verdict", "set_verdict", "note", "set_note",
                                                  "tags", "taxonomy", "set_tags", "toggle_tag", "add_tag",
                                                  "failure_counts", "authored", "guidelines")),
}


def test_the_composed_parts_keep_their_old_names(tmp_path):
    """Issue 40.1: ``session.catalog_builder``, ``.labelling``, ``.navigation``, ``.reveal``, ``.rates`` and
    ``.verdicts`` are objects over the session's state; every method the page and the tests call on the session
    is the part's own bound method."""
    import importlib

    from playground.golden import load_dataset
    from playground.store import open_store

    with open_store(tmp_path / "l.db") as store:
        session = LabelSession(load_dataset(), store, annotator="ana")
        for attr, (module, cls_name, names) in COMPOSED.items():
            cls = getattr(importlib.import_module(f"playground.ui.{module}"), cls_name)
            assert {n for n in dir(cls) if not n.startswith("_")} == set(names), attr
            assert cls.__mro__ == (cls, object), attr
            part = getattr(session, attr)
            assert type(part) is cls and part.state is session, attr
            for name in names:
                if name == "build_catalog":  # the session's constructor calls it on the part, once
                    continue
                if isinstance(getattr(cls, name), property):  # the case and response on screen, the search
                    assert getattr(session, name) == getattr(part, name), name
                    continue
                old = f"_{name}" if name in PRIVATE else name
                method = getattr(session, old)
                assert method.__self__ is part and method.__func__ is getattr(cls, name), name
        # One state: what the session does, the parts see, and the other way round.
        rid = session.response_id
        nxt = session.next_case()  # the part moves the session's case on screen
        assert nxt == session.case_id == session.case_ids[1] and session.case is session.dataset.cases[nxt]
        session.go_to(session.case_ids[0], rid)
        assert (session.case_id, session.response_id, session.response.response_id) == (session.case_ids[0], rid, rid)
        assert session.decision(rid) is None and not session.response_revealed(rid)  # blind until answered
        assert session.set_verdict(0) and session.verdict() == 0 == session.verdicts.verdict()
        assert session.authored() == session.verdicts.authored() is not None  # judged: the key shows
        for unit_id, dim in session._pairs(session._view_ids(session.case_id, rid)):
            session.set_label(unit_id, dim, 1)
        assert session.response_revealed(rid) and session.decision(rid) == session.decisions[rid]
        session.set_weights({"faithfulness": 2})  # the part sets the session's state
        assert session.weights["faithfulness"] == 2.0
        assert session.url_params()["weights"] == "context_relevance:0.25,faithfulness:2,correctness:0.25,coverage:0.25"


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
