"""The page's error analysis, without a browser (issue 24.6): a response's verdict, note and tags in the store,
open coding with the tag rule, blind reveal of the shipped set's authored verdict, counts, guidelines."""
from __future__ import annotations

import pytest

from playground.golden import load_dataset
from playground.store import UNSURE, open_store
from playground.ui.harness_cache import cached_harness
from playground.ui.session import LabelSession, SessionError
from playground.ui.views import PlaygroundApp


@pytest.fixture(scope="module")
def golden():
    dataset = load_dataset()
    hits, results, _how = cached_harness(dataset)
    return dataset, hits, results


@pytest.fixture
def session(golden, tmp_path):
    dataset, hits, results = golden
    store = open_store(tmp_path / "labels.db")
    s = LabelSession(dataset, store, annotator="vera", harness_results=results, hits=hits)
    s.go_to("GC-0003", "GC-0003-R2")  # wrong_abstention: the key says fail, tag wrong-abstention
    yield s
    store.close()


def test_a_verdict_is_a_label_of_the_response_unit_with_history(session):
    assert session.verdict() is None
    assert session.set_verdict(0) is True and session.verdict() == 0
    assert session.set_verdict(0) is False  # nothing changed
    assert session.set_verdict(UNSURE) is True and session.verdict() == UNSURE
    [label] = session.store.labels(annotator="vera", include_unsure=True)
    assert (label.unit_kind, label.unit_id, label.dimension, label.value) == ("response", "GC-0003-R2", "pass", UNSURE)
    assert session.set_verdict(None) is True and session.verdict() is None
    with pytest.raises(SessionError, match="a verdict is 1"):
        session.set_verdict(5)
    # the four dimensions do not see it: progress and rates unchanged
    assert session.scores().progress.labelled_units == 0


def test_a_note_and_tags_with_open_coding(session):
    assert session.set_note("  abstains though passage 2 answers it ") is True
    assert session.note() == "abstains though passage 2 answers it"
    assert session.add_tag("wrong-abstention") == "wrong-abstention"
    assert session.add_tag("Missed-Passage".lower()) == "missed-passage"
    assert session.tags() == ("missed-passage", "wrong-abstention")
    assert session.taxonomy() == ["missed-passage", "wrong-abstention"]
    assert [(m.name, m.created_by) for m in session.store.taxonomy("golden")] == [
        ("missed-passage", "vera"), ("wrong-abstention", "vera")]
    assert session.toggle_tag("missed-passage", False) is True and session.tags() == ("wrong-abstention",)
    before = list(session.store.events(after=0))
    for bad in ("Bad Tag", "9lives", "x" * 41, ""):
        with pytest.raises(SessionError, match="lower-case letters"):
            session.add_tag(bad)
    assert list(session.store.events(after=0)) == before  # nothing written
    with pytest.raises(SessionError, match="not a failure mode of golden: nope"):
        session.set_tags(["nope"])
    # another response of the case has its own tags
    assert session.tags("GC-0003-R1") == ()


def test_the_authored_verdict_shows_once_judged(session):
    assert session.authored() is None  # blind
    session.set_verdict(1)
    assert session.authored() == (0, ("wrong-abstention",))
    session.reveal_all = True
    assert session.authored("GC-0003-R1") == (1, ())


def test_failure_counts_mine_and_pooled(session):
    session.set_verdict(0)
    session.add_tag("wrong-abstention")
    session.select_response("GC-0003-R1")
    session.set_verdict(1)
    rows, passed = session.failure_counts("vera")
    assert [(r.name, r.responses_tagged, r.responses_judged) for r in rows] == [("wrong-abstention", 1, 2)]
    assert (passed.passed, passed.judged) == (1, 2)
    other = LabelSession(session.dataset, session.store, annotator="olga", harness_results=session.results,
                         hits=session._hits)
    other.go_to("GC-0003", "GC-0003-R2")
    other.set_verdict(0)
    pooled, _ = session.failure_counts(None)
    assert [(r.name, r.responses_tagged, r.responses_judged) for r in pooled] == [("wrong-abstention", 1, 2)]


def test_the_page_draws_the_panel_and_the_guidelines(session):
    session.store.set_guidelines("golden", "Fail an answer that **misleads**.", "owner")
    app = PlaygroundApp(session, chart=False)
    # on the page from the start, right under the response (not only after a case change)
    column = app.body.children[1].children
    assert column.index(app.verdicts.box) == column.index(app.response_text) + 1
    app.go("GC-0003", "GC-0003-R2")
    panel = app.verdicts
    panel.verdict.value = "fail"
    assert session.verdict() == 0 and "Verdict on" in app.status.value
    assert "Authored verdict" in panel.authored.value and "= yours" in panel.authored.value
    panel.tag_new.value = "missed-passage"
    assert panel.tag_new.value == "" and session.tags() == ("missed-passage",)
    assert panel._chips["missed-passage"].value is True
    panel.tag_new.value = "Bad Tag"
    assert "lower-case letters" in app.status.value and session.tags() == ("missed-passage",)
    panel._chips["missed-passage"].value = False
    assert session.tags() == ()
    panel.note.value = "cites nothing"
    assert session.note() == "cites nothing"
    assert "pg-failure-modes" in panel.failures.value and "yours (vera)" in panel.failures.value
    assert "<strong>misleads</strong>" in panel.guidelines.value and "version 1 by owner" in panel.guidelines.value
    assert "p" in {k for k, _ in __import__("json").loads(app.bridge.keymap)}


def test_undo_reverts_a_verdict_and_tags_and_says_what(session):
    app = PlaygroundApp(session, chart=False)
    app.go("GC-0003", "GC-0003-R2")
    app.verdicts.verdict.value = "fail"
    app.verdicts.tag_new.value = "wrong-abstention"
    app.undo()
    assert "Undone: the failure-mode tags of GC-0003-R2." in app.status.value
    assert session.tags() == () and session.verdict() == 0
    assert app.verdicts._chips["wrong-abstention"].value is False
    app.undo()
    assert "the verdict on GC-0003-R2 · pass: fail → no verdict" in app.status.value
    assert session.verdict() is None and app.verdicts.verdict.value is None
