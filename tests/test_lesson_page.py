"""A lesson page is about the lesson (issue 42.5): a page opened with ``?lesson=NAME`` reads its progress
against the lesson's units, lists only the lesson's cases and responses, and opens on the lesson's first view;
a refused name leaves the name box; a passage given with an imported sample shows no retrieval score.

The lesson is the shipped one of docs/lesson-plan.md: GC-0036 (5 passages, response R1: 2 claims, 2 facts =
9 units) and GC-0034 (5 passages, responses R1, R5, R4, R3: 31 - 9 - 5 = 17 units), 31 units in all."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from playground.datasets import open_dataset
from playground.lessons import make_lesson
from playground.store import open_store
from playground.ui import launch

CASES = ["GC-0036", "GC-0034"]
RESPONSES = ["GC-0036-R1", "GC-0034-R1", "GC-0034-R5", "GC-0034-R4", "GC-0034-R3"]


@pytest.fixture
def lesson_db(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "harness-cache"))
    monkeypatch.delenv("PLAYGROUND_ROOT", raising=False)
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    db = tmp_path / "labels.db"
    with open_store(db) as s:
        s.save_lesson(make_lesson("week-1", open_dataset(None), CASES, RESPONSES))
    monkeypatch.setenv("PLAYGROUND_DB", str(db))
    return db


def page(monkeypatch, query: str):
    monkeypatch.setenv("QUERY_STRING", query)
    app = launch(display=False)
    assert app is not None
    return app


def progress_text(app) -> str:
    return re.sub(r"<[^>]+>", "", app.progress.value)


def test_a_lesson_page_opens_on_the_lesson_before_a_name_is_typed(lesson_db, monkeypatch):
    app = page(monkeypatch, "lesson=week-1")
    s = app.session
    assert s.annotator is None and s.queue_lesson and s.queue_name == "week-1"
    assert len(s.queue_units) == 31
    assert progress_text(app).startswith("0 / 31 units labelled in lesson week-1 (0.0%)")
    assert "1036" not in app.progress.value
    # only the lesson's two cases, in case id order; the note counts the lesson's cases, not the dataset's 66
    assert [cid for _, cid in app.case_list.options] == ["GC-0034", "GC-0036"]
    assert app.list_note.value.startswith("2 of 2 cases of the lesson shown")
    # each case counts the lesson's units of it: GC-0034 5 passages + 17 of R1, R5, R4, R3; GC-0036 5 + 4 of R1
    labels = [label for label, _ in app.case_list.options]
    assert labels[0].startswith("○ GC-0034 0/22 · ") and labels[1].startswith("○ GC-0036 0/9 · ")
    assert "0/9 units labelled (unlabelled)" in app.case_head.value
    # the lesson's first view, and only the response the lesson picked of GC-0036
    assert (s.case_id, s.response_id) == ("GC-0036", "GC-0036-R1")
    assert s.scenarios() == [("GC-0036-R1", "grounded_correct")]
    assert "— 1 response of this case" in app.response_head.value
    assert [v.unit.unit_id for v in s.view_units()] == list(s.queue_units[:9])
    s.go_to("GC-0034")
    assert [rid for rid, _ in s.scenarios()] == ["GC-0034-R1", "GC-0034-R3", "GC-0034-R4", "GC-0034-R5"]


def test_progress_counts_the_lessons_units_as_they_are_labelled(lesson_db, monkeypatch):
    app = page(monkeypatch, "lesson=week-1&annotator=ana")
    s = app.session
    assert s.annotator == "ana" and (s.case_id, s.response_id) == ("GC-0036", "GC-0036-R1")
    assert progress_text(app).startswith("0 / 31 units labelled in lesson week-1")
    passages = app._rows["passage"]
    assert len(passages) == 5
    for row in passages[:4]:
        row.toggles["relevant"].value = "yes"
    assert progress_text(app).startswith("4 / 31 units labelled in lesson week-1 (12.9%) · this view 4/9")
    assert "units labelled (12.9%)" not in progress_text(app)  # 4/31 = 12.90%; "in lesson" always said
    assert app.progress_bar.value == pytest.approx(4 / 31)
    passages[4].toggles["relevant"].value = "no"
    assert progress_text(app).startswith("5 / 31 units labelled in lesson week-1 (16.1%)")  # 5/31 = 16.13%
    # a claim answered on one of its two dimensions is not a labelled unit yet
    app._rows["claim"][0].toggles["supported"].value = "yes"
    assert progress_text(app).startswith("5 / 31 ")
    app._rows["claim"][0].toggles["correct"].value = "unsure"
    assert progress_text(app).startswith("6 / 31 units labelled in lesson week-1 (19.4%) · this view 6/9")
    assert "lesson</b> week-1: <span class='pg-num pg-lesson-progress'>6 / 31</span>" in app.queue_note.value


def test_a_unit_outside_the_lesson_does_not_count(lesson_db, monkeypatch):
    with open_store(lesson_db) as st:
        outside = next(u for u in open_dataset(None).catalog().values() if u.case_id == "GC-0001")
        st.set_label("ana", outside, outside.dimensions[0], 1)
    app = page(monkeypatch, "lesson=week-1&annotator=ana")
    assert progress_text(app).startswith("0 / 31 units labelled in lesson week-1")


def test_a_page_without_a_lesson_in_its_link_or_store_is_the_whole_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "harness-cache"))
    monkeypatch.delenv("PLAYGROUND_ROOT", raising=False)
    db = tmp_path / "labels.db"
    open_store(db).close()
    monkeypatch.setenv("PLAYGROUND_DB", str(db))
    app = page(monkeypatch, "annotator=ana")
    s = app.session
    assert not s.queue_lesson and s.lesson_cases() is None
    total = len(s.catalog)
    assert progress_text(app).startswith(f"0 / {total} units labelled (0.0%)") and "lesson" not in progress_text(app)
    assert app.list_note.value.startswith(f"{len(s.case_ids)} of {len(s.case_ids)} cases shown")
    assert len(s.scenarios()) == len(s.responses[s.case_id])


def test_an_unknown_lesson_in_the_link_is_named_and_the_page_stays_whole(lesson_db, monkeypatch):
    app = page(monkeypatch, "lesson=nope")
    assert "no lesson named &#x27;nope&#x27; for the dataset golden (known: week-1)" in app.status.value
    assert not app.session.queue_lesson and len(app.case_list.options) > 2


def test_a_lesson_of_one_case_with_every_response_lists_them_all(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "harness-cache"))
    monkeypatch.delenv("PLAYGROUND_ROOT", raising=False)
    db = tmp_path / "labels.db"
    with open_store(db) as s:
        s.save_lesson(make_lesson("one", open_dataset(None), ["GC-0036"]))
    monkeypatch.setenv("PLAYGROUND_DB", str(db))
    app = page(monkeypatch, "lesson=one")
    assert [cid for _, cid in app.case_list.options] == ["GC-0036"]
    assert app.list_note.value.startswith("1 of 1 case of the lesson shown")
    assert [rid for rid, _ in app.session.scenarios()] == ["GC-0036-R1", "GC-0036-R2", "GC-0036-R3"]
    assert progress_text(app).startswith("0 / 17 units labelled in lesson one")


def test_a_refused_name_is_cleared_from_the_name_box(lesson_db, monkeypatch):
    app = page(monkeypatch, "lesson=week-1")
    app.name.value = "consensus"
    assert "reserved" in app.status.value and "pg-status-err" in app.status.value
    assert app.name.value == "" and app.session.annotator is None and not app.name.disabled
    app.name.value = "Ada"
    assert app.session.annotator == "Ada" and app.name.value == "Ada" and app.name.disabled
    app.on_name_button()  # "Switch name": the box opens for another name
    app.name.value = "consensus"
    assert "reserved" in app.status.value and app.name.value == "" and app.session.annotator == "Ada"
    app.name.value = "Bea"
    assert app.session.annotator == "Bea" and app.name.value == "Bea"


def test_imported_passages_show_no_retrieval_score(tmp_path):
    from playground.importers.load import import_dataset
    from playground.ui.session import open_session_dataset

    fixtures = Path(__file__).resolve().parent / "fixtures"
    with open_store(tmp_path / "labels.db") as st:
        import_dataset(fixtures / "deepeval_goldens.json", "deepeval", "alpha", st)
        s = open_session_dataset("alpha", st)
        s.go_to(s.case_ids[0])
        passages = s.view_units("passage")
        assert passages
        assert [p.detail for p in passages] == [f"rank {i}" for i in range(1, len(passages) + 1)]


def test_shipped_passages_keep_their_bm25_score(lesson_db, monkeypatch):
    app = page(monkeypatch, "lesson=week-1")
    details = [v.detail for v in app.session.view_units("passage")]
    assert len(details) == 5 and all(re.fullmatch(r"rank [1-5], BM25 \d+\.\d\d(, updated .*)?", d) for d in details)


def test_leaving_a_lesson_counts_each_case_whole_again(lesson_db, monkeypatch):
    app = page(monkeypatch, "lesson=week-1")
    s = app.session
    assert s.case_row("GC-0036").total_units == 9 and s.case_row("GC-0034").total_units == 22
    with open_store(lesson_db) as st:
        assert st.delete_lesson("week-1")
    s.lesson_name = None
    assert s.use_queue() is None and not s.queue_lesson
    # GC-0036: 5 passages + 3 responses x (2 claims + 2 facts) = 17
    assert s.case_row("GC-0036").total_units == 17 and len(s.cases()) == len(s.case_ids) == 66
    assert [rid for rid, _ in s.scenarios()] == ["GC-0036-R1", "GC-0036-R2", "GC-0036-R3"]
