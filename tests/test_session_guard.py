# ruff: noqa: F811  (pytest fixtures imported from other test modules are used as arguments)
"""The kernel checks every widget message against the page's mode (issues 24.1, 29.5).

The messages are handed to the kernel-side widgets exactly as the comm delivers them
(``Widget._handle_msg`` with an ``update`` or ``custom`` message), not through the page's buttons:
a browser can send any state for any widget, visible, hidden or disabled.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from playground.datasets import open_dataset
from playground.golden import load_dataset
from playground.importers.load import import_dataset
from playground.store import open_store
from playground.ui.panels import ALL
from playground.ui.session import DatasetChangedError, LabelSession, SessionError, session_for_dataset
from playground.ui.views import PlaygroundApp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_session_lazy import kept_in_tmp, write_samples  # noqa: F401  (kept_in_tmp: an autouse fixture)
from test_views import hostile  # noqa: F401  (a fixture used by name: the mini data with hostile text)


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "labels.db")
    yield s
    s.close()


def app_for(hostile, store, annotator: str | None = "alice") -> PlaygroundApp:
    _, dataset, hits, results = hostile
    session = LabelSession(dataset, store, harness_results=results, hits=hits)
    return PlaygroundApp(session, annotator=annotator, chart=False)


def update(widget, **state) -> None:
    """What the kernel does with a comm ``update`` message from the browser."""
    widget._handle_msg({"content": {"data": {"method": "update", "state": state, "buffer_paths": []}}, "buffers": []})


def choose(widget, value) -> None:
    """A selection widget's ``update`` message: the browser sends the option's index, not its value."""
    update(widget, index=list(widget._options_values).index(value))


def click(button) -> None:
    """What the kernel does with a button's ``click`` message from the browser (sent even when it is disabled)."""
    button._handle_msg({"content": {"data": {"method": "custom", "content": {"event": "click"}}}, "buffers": []})


# --- a name changes only by "Switch name" (issue 24.1) ---------------------------------------------------------
def test_a_name_in_use_is_locked_and_a_message_cannot_change_it(hostile, store):
    app = app_for(hostile, store, annotator=None)
    assert app.naming and not app.name.disabled
    update(app.name, value="lea")  # Enter in the name box: the name is used
    assert app.session.annotator == "lea" and app.name.disabled and not app.naming
    assert app.name_go.description == "Switch name"
    update(app.name, value="lea3y")  # the next key typed into the box (or any message): refused
    assert app.session.annotator == "lea" and app.name.value == "lea" and app.name.disabled
    assert "Switch name" in app.status.value and "pg-status-err" in app.status.value
    choose(app._rows["claim"][0].toggles["supported"], "yes")
    assert [(lab.annotator, lab.value) for lab in store.labels()] == [("lea", 1)]


def test_switch_name_opens_the_box_and_enter_uses_the_new_name(hostile, store):
    app = app_for(hostile, store, annotator="lea")
    click(app.name_go)  # "Switch name"
    assert app.naming and not app.name.disabled and app.name_go.description == "Use this name"
    assert app.session.annotator == "lea"  # still lea until the new name is given
    update(app.name, value="  Mo  ")
    assert app.session.annotator == "Mo" and app.name.disabled and app.name_go.description == "Switch name"
    choose(app._rows["passage"][0].toggles["relevant"], "no")
    assert [(lab.annotator, lab.value) for lab in store.labels()] == [("Mo", 0)]


# --- blind means blind (issue 29.5) ---------------------------------------------------------------------------
def test_the_hidden_verdict_filter_cannot_be_set_by_a_message_while_blind(hostile, store):
    app = app_for(hostile, store)
    everything = [cid for _, cid in app.case_list.options]
    assert app.f_verdict.layout.display == "none" and not app.session.reveal_all
    choose(app.f_verdict, "REJECT")
    assert app.f_verdict.value == ALL and app.session.filter.verdict is None
    assert [cid for _, cid in app.case_list.options] == everything
    assert "show harness labels" in app.status.value
    with pytest.raises(SessionError, match="show harness labels"):
        app.session.set_filter(verdict="REJECT")
    # with reveal on (the person's own, visible choice) the same message filters
    update(app.reveal, value=True)
    choose(app.f_verdict, "REJECT")
    rejected = [cid for _, cid in app.case_list.options]
    assert app.session.filter.verdict == "REJECT"
    assert rejected == [r.case_id for r in app.session.cases() if "REJECT" in r.verdicts]
    assert 0 < len(rejected) < len(everything)
    update(app.reveal, value=False)  # back to blind: the filter is dropped
    assert app.session.filter.verdict is None and [cid for _, cid in app.case_list.options] == everything


def test_a_locked_reveal_and_disabled_buttons_refuse_messages(hostile, store):
    app = app_for(hostile, store)
    app.reveal.disabled = True  # e.g. a lesson that keeps the class blind
    update(app.reveal, value=True)
    assert not app.session.reveal_all and app.reveal.value is False
    choose(app._rows["claim"][0].toggles["supported"], "yes")
    app.undo_b.disabled = True
    click(app.undo_b)
    assert [lab.value for lab in store.labels(annotator="alice")] == [1]  # the disabled Undo did nothing
    app.undo_b.disabled = False
    click(app.undo_b)
    assert store.labels(annotator="alice") == []


def test_labels_are_refused_without_a_name_whatever_the_message(hostile, store):
    app = app_for(hostile, store, annotator=None)
    choose(app._rows["claim"][0].toggles["supported"], "yes")
    update(app._rows["claim"][0].comment, value="sneaky")
    assert store.labels() == [] and store.comments() == []
    assert "Type your name first" in app.status.value


# --- a dataset re-imported under an open page (issue 29.5) ---------------------------------------------------
@pytest.fixture
def imported(tmp_path, store):
    import_dataset(write_samples(tmp_path / "s.jsonl", 4), "ragas", "mine", store)
    return tmp_path


def test_a_reimport_under_an_open_page_stops_it_saving_and_says_so(imported, store):
    session = session_for_dataset(open_dataset("mine", store), store)
    app = PlaygroundApp(session, annotator="ann", chart=False)
    row = app._rows["claim"][0]
    choose(row.toggles["supported"], "yes")
    assert "Saved" in app.status.value
    before = session.revision
    import_dataset(write_samples(imported / "s2.jsonl", 4, twist=" or so"), "ragas", "mine", store, replace=True)
    assert store.dataset_revision("mine") != before and session.dataset_changed()
    choose(row.toggles["correct"], "no")
    assert "re-imported" in app.status.value and "pg-stopped" in app.status.value and "Saved" not in app.status.value
    assert row.toggles["correct"].value is None and row.toggles["correct"].disabled  # shown unset, locked
    update(row.comment, value="late")
    assert row.comment.value == ""  # shown as stored: not saved
    assert [(lab.dimension, lab.value) for lab in store.labels(annotator="ann")] == [("supported", 1)]
    assert store.comments(annotator="ann") == []
    with pytest.raises(DatasetChangedError):
        session.set_label(row.unit_id, "correct", 0)


def test_the_heartbeat_tells_an_idle_page_of_a_reimport(imported, store):
    session = session_for_dataset(open_dataset("mine", store), store)
    app = PlaygroundApp(session, annotator="ann", chart=False)
    import_dataset(write_samples(imported / "s2.jsonl", 4, twist=" or so"), "ragas", "mine", store, replace=True)
    for _ in range(app.CHECK_EVERY - 1):
        app.bridge._on_msg(app.bridge, {"type": "ping", "n": 1}, [])
    assert not app.stopped  # checked every CHECK_EVERY th ping (10 s), not on each
    app.bridge._on_msg(app.bridge, {"type": "ping", "n": 2}, [])
    assert app.stopped and "re-imported" in app.status.value


def test_the_same_file_imported_again_changes_nothing_and_the_page_goes_on(imported, store):
    session = session_for_dataset(open_dataset("mine", store), store)
    import_dataset(imported / "s.jsonl", "ragas", "mine", store, replace=True)  # the same content: same revision
    assert not session.dataset_changed()
    session.set_annotator("ann")
    uid = session.view_units("claim")[0].unit.unit_id
    assert session.set_label(uid, "supported", 1) is not None


def test_an_imported_dataset_has_no_passage_key_and_the_shipped_set_has_one(imported, store):
    """An import has no expected sources: its passages have no answer key (None), not a key of "no" that would
    mark every "yes" as "≠ key" (found walking the traces journey); the shipped set keeps its authored key."""
    session = session_for_dataset(open_dataset("mine", store), store)
    session.go_to(session.case_id, None)
    keyed = [session.key[(u.unit_id, "relevant")] for u in session.catalog.values()
             if u.unit_kind == "passage" and (u.unit_id, "relevant") in session.key]
    assert keyed and set(keyed) == {None}
    shipped = LabelSession(load_dataset(), store)
    shipped.go_to("GC-0036", None)
    keys = [shipped.key[(u.unit_id, "relevant")] for u in shipped.catalog.values()
            if u.unit_kind == "passage" and (u.unit_id, "relevant") in shipped.key]
    assert keys and set(keys) <= {0, 1} and 1 in keys
