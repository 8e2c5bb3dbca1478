"""The playground's session state (no widgets): labels, rates, blind mode, navigation, agreement, export."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from playground.golden import load_dataset
from playground.metrics import DIMENSION_ORDER
from playground.model import Unit
from playground.store import open_store
from playground.ui.session import (
    EXPORT_COLUMNS,
    LabelSession,
    SessionError,
    compute_harness,
    session_from_env,
    validate_annotator,
)
from playground.units import dataset_units

REPO = Path(__file__).resolve().parent.parent
MINI = REPO / "tests" / "data" / "mini"


@pytest.fixture(autouse=True)
def kept_harness_in_tmp(tmp_path, monkeypatch):
    """Kernels keep the harness's results on disk (playground.ui.harness_cache): never in the user's cache here."""
    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "harness-cache"))


@pytest.fixture(scope="module")
def mini():
    dataset = load_dataset(MINI)
    hits, results = compute_harness(dataset)
    return dataset, hits, results


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "labels.db"


def make(mini, db, annotator="alice", **kw) -> LabelSession:
    dataset, hits, results = mini
    store = open_store(db, read_only=kw.pop("read_only", False))
    return LabelSession(dataset, store, annotator=annotator, harness_results=results, hits=hits, **kw)


def uid(session, kind, i=0):
    return session.view_units(kind)[i].unit.unit_id


# --- construction --------------------------------------------------------------------------------


def test_catalog_is_every_unit_of_the_dataset(mini, db):
    s = make(mini, db)
    assert set(s.catalog) == {u.unit_id for u in dataset_units(mini[0])}
    # every unit and dimension has an automatic label from the harness
    assert all((u, d) in s.auto for u, unit in s.catalog.items() for d in unit.dimensions)


def test_computes_the_harness_itself_when_not_given(db):
    dataset = load_dataset(MINI)
    s = LabelSession(dataset, open_store(db), annotator="alice")
    assert s.case_id == "GC-0001" and s.response_id == "GC-0001-R1"
    assert s.results["GC-0001"]["responses"][0]["decision"]["verdict"] in ("ACCEPT", "REVIEW", "REJECT")


def test_first_case_and_its_first_response_are_on_screen(mini, db):
    s = make(mini, db)
    kinds = [v.kind for v in s.view_units()]
    assert kinds == ["passage", "claim", "fact"]
    assert s.scenarios() == [("GC-0001-R1", "grounded_correct"), ("GC-0001-R2", "confident_hallucination")]


@pytest.mark.parametrize("name, tidy", [("  alice  ", "alice"), ("Ann  Lee", "Ann Lee"), ("Zoë", "Zoë"),
                                        ("tab\there", "tab here")])
def test_annotator_names_are_tidied(name, tidy):
    assert validate_annotator(name) == tidy


@pytest.mark.parametrize("name, says", [("", "Type your name"), ("   ", "Type your name"), (None, "Type your name"),
                                        ("x" * 65, "65 characters long"), ("a\x00b", r"U\+0000"),
                                        ("bell\x07", r"U\+0007"), ("zero\u200bwidth", r"U\+200B"),
                                        ("consensus", "reserved"), ("harness", "reserved")])
def test_bad_annotator_names_are_refused_with_the_stores_reason(name, says):
    with pytest.raises(SessionError, match=says):
        validate_annotator(name)


def test_the_page_and_the_store_share_one_rule_for_names():
    """playground.store.check_annotator decides: 64 characters are allowed, the reserved names are the store's."""
    from playground.store import MAX_NAME_LENGTH, RESERVED_ANNOTATORS

    assert MAX_NAME_LENGTH == 64 and validate_annotator("x" * 64) == "x" * 64  # exactly at the limit
    assert {"consensus", "harness"} == RESERVED_ANNOTATORS
    assert validate_annotator("  consensus-team ") == "consensus-team"  # only the exact names are reserved


def test_without_a_name_nothing_can_be_labelled(mini, db):
    s = make(mini, db, annotator=None)
    assert not s.can_label
    with pytest.raises(SessionError, match="name"):
        s.set_label(uid(s, "claim"), "supported", 1)
    with pytest.raises(SessionError):
        s.undo()


# --- labels and rates ------------------------------------------------------------------------------


def test_a_label_is_saved_at_once_and_moves_the_rate(mini, db):
    s = make(mini, db)
    claim = uid(s, "claim")
    change = s.set_label(claim, "supported", 0)
    assert (change.old, change.new, change.action) == (None, 0, "set")
    # another connection (another kernel) sees it immediately
    with open_store(db) as other:
        seen = [(lb.unit_id, lb.dimension, lb.value) for lb in other.labels(annotator="alice")]
    assert seen == [(claim, "supported", 0)]
    r = s.rates_current()["faithfulness"]
    assert (r.successes, r.n, r.rate) == (0, 1, 0.0)
    assert r.low == 0.0 and math.isclose(r.high, 0.7934506856, rel_tol=1e-6)
    assert s.rates_pooled()["faithfulness"].n == 1
    assert not s.rates_current()["correctness"].has_data
    s.set_label(claim, "supported", 1)
    r = s.rates_current()["faithfulness"]
    assert (r.successes, r.n) == (1, 1) and math.isclose(r.low, 0.2065493143, rel_tol=1e-6) and r.high == 1.0


def test_the_same_value_again_changes_nothing_and_clear_removes(mini, db):
    s = make(mini, db)
    claim = uid(s, "claim")
    s.set_label(claim, "correct", 1)
    assert s.set_label(claim, "correct", 1) is None
    change = s.set_label(claim, "correct", None)
    assert (change.old, change.new, change.action) == (1, None, "clear")
    assert s.label(claim, "correct") is None
    assert not s.rates_pooled()["correctness"].has_data
    assert s.set_label(claim, "correct", None) is None


def test_invalid_labels_are_refused(mini, db):
    s = make(mini, db)
    with pytest.raises(SessionError):
        s.set_label("no-such-unit", "supported", 1)
    with pytest.raises(SessionError):
        s.set_label(uid(s, "passage"), "supported", 1)  # passages take "relevant" only
    for bad in (3, -1, "1"):  # 2 is UNSURE, an answer (test_unsure_through_the_store)
        with pytest.raises(SessionError, match="a label is 1"):
            s.set_label(uid(s, "claim"), "supported", bad)
    assert s.store.labels(include_unsure=True) == []


def test_undo_reverts_the_last_change(mini, db):
    s = make(mini, db)
    claim, passage = uid(s, "claim"), uid(s, "passage")
    s.set_label(claim, "supported", 1)
    s.set_label(claim, "supported", 0)
    s.set_label(passage, "relevant", 1)
    change = s.undo()
    assert (change.unit_id, change.old, change.new, change.action) == (passage, 1, None, "undo")
    assert s.label(passage, "relevant") is None
    change = s.undo()
    assert (change.unit_id, change.new) == (claim, 1)
    assert s.label(claim, "supported") == 1
    assert s.rates_pooled()["faithfulness"].rate == 1.0
    s.undo()
    assert s.undo() is None
    assert s.labels == {}


def test_current_rates_pool_the_case_passages_with_the_response_on_screen(mini, db):
    s = make(mini, db)
    s.set_label(uid(s, "passage"), "relevant", 1)
    s.set_label(uid(s, "claim"), "supported", 1)
    s.select_response("GC-0001-R2")
    assert s.rates_current()["context_relevance"].n == 1  # passages belong to the case
    assert not s.rates_current()["faithfulness"].has_data  # R1's claim is not on screen
    s.set_label(uid(s, "claim", 0), "supported", 0)
    s.set_label(uid(s, "claim", 1), "supported", 0)
    assert s.rates_current()["faithfulness"].n == 2
    pooled = s.rates_pooled()["faithfulness"]
    assert (pooled.successes, pooled.n) == (1, 3)
    assert s.rates_response("GC-0001-R1")["faithfulness"].rate == 1.0
    assert s.rates_response("GC-0001-R2")["faithfulness"].rate == 0.0


def test_composite_uses_normalised_weights_and_gates(mini, db):
    s = make(mini, db)
    s.set_label(uid(s, "passage"), "relevant", 1)
    s.set_label(uid(s, "claim"), "supported", 0)
    c = s.composite(s.rates_current())
    assert c.value == pytest.approx(0.5)
    assert c.weights_used == pytest.approx({"context_relevance": 0.5, "faithfulness": 0.5})
    s.set_weights({"faithfulness": 0.75})
    assert s.normalised_weights()["faithfulness"] == pytest.approx(0.5)  # 0.75 / (0.25 * 3 + 0.75)
    assert s.composite(s.rates_current()).value == pytest.approx(0.25)
    s.set_weights({"faithfulness": 0})
    assert s.composite(s.rates_current()).value == pytest.approx(1.0)
    s.set_gate("faithfulness", 0.7)
    c = s.composite(s.rates_current())
    assert c.gated and "faithfulness" in c.gate_failures[0]
    s.set_gate("faithfulness", None)
    assert not s.composite(s.rates_current()).gated
    s.set_weights(dict.fromkeys(DIMENSION_ORDER, 0))
    assert s.composite(s.rates_current()) is None
    assert "weight" in s.scores().composite_error
    with pytest.raises(SessionError):
        s.set_weights({"faithfulness": -1})
    with pytest.raises(SessionError):
        s.set_gate("faithfulness", 1.5)


def test_diagnosis_names_every_failing_dimension(mini, db):
    s = make(mini, db)
    s.set_label(uid(s, "passage"), "relevant", 0)
    s.set_label(uid(s, "claim"), "supported", 0)
    s.set_label(uid(s, "claim"), "correct", 0)
    s.set_label(uid(s, "fact"), "covered", 1)
    d = s.scores().diagnosis_current
    assert [f.dimension for f in d.failures] == ["context_relevance", "faithfulness", "correctness"]
    assert "poor evidence retrieval" in d.summary() and "unsupported generation" in d.summary()


# --- blind mode ----------------------------------------------------------------------------------------


def test_harness_labels_stay_hidden_until_the_unit_is_labelled(mini, db):
    s = make(mini, db)
    claim = uid(s, "claim")
    assert s.auto_label(claim, "supported") is None and s.auto_detail(claim, "supported") is None
    s.set_label(claim, "supported", 0)
    assert s.auto_label(claim, "supported") == s.auto[(claim, "supported")]
    assert s.auto_detail(claim, "supported")["key"] == 1  # the authored answer key
    assert s.auto_label(claim, "correct") is None  # per dimension: "correct" not labelled yet
    s.reveal_all = True
    assert s.auto_label(claim, "correct") is not None


def test_the_decision_shows_once_the_whole_response_is_labelled(mini, db):
    s = make(mini, db)
    assert s.decision() is None
    for v in s.view_units():
        for d in v.unit.dimensions:
            s.set_label(v.unit.unit_id, d, 1)
    assert s.decision()["verdict"] == s.decisions["GC-0001-R1"]["verdict"]


def test_a_read_only_session_reveals_everything_and_refuses_writes(mini, db):
    make(mini, db).set_label(uid(make(mini, db), "claim"), "supported", 1)
    s = make(mini, db, annotator=None, read_only=True)
    assert s.reveal_all and not s.can_label
    with pytest.raises(SessionError, match="read-only"):
        s.set_label(uid(s, "claim"), "supported", 0)


# --- agreement with the harness ----------------------------------------------------------------------


def test_agreement_per_dimension_on_the_units_this_annotator_labelled(mini, db):
    s = make(mini, db)
    claim, passage = uid(s, "claim"), uid(s, "passage")
    auto = s.auto[(claim, "supported")]
    s.set_label(claim, "supported", 1 - auto)  # disagree
    s.set_label(passage, "relevant", s.auto[(passage, "relevant")])  # agree
    a = s.agreement()
    assert a["faithfulness"].n_shared == 1 and a["faithfulness"].percent == 0.0
    expected = [[0, 0], [0, 0]]
    expected[1 - auto][auto] = 1  # rows: this annotator, columns: the harness
    assert a["faithfulness"].confusion == (tuple(expected[0]), tuple(expected[1]))
    assert a["context_relevance"].percent == 1.0
    assert a["correctness"].n_shared == 0 and a["correctness"].percent is None
    assert s.case_row("GC-0001").disagreements == 1


def test_copying_the_harness_agrees_fully(mini, db):
    s = make(mini, db, reveal_all=True)
    claims = [u for u in s.catalog.values() if u.unit_kind == "claim"]
    for u in claims:
        s.set_label(u.unit_id, "supported", s.auto[(u.unit_id, "supported")])
    a = s.agreement()["faithfulness"]
    assert a.n_shared == len(claims) and a.percent == 1.0 and a.disagreements == []
    mine = [s.auto[(u.unit_id, "supported")] for u in claims]
    assert a.kappa.base_rate == max(sum(mine), len(mine) - sum(mine)) / len(mine)


@pytest.mark.parametrize("table", [(0, 0, 0, 0), (20, 5, 10, 15), (3, 0, 0, 4), (5, 0, 0, 0), (0, 7, 0, 0),
                                   (1, 2, 3, 4), (400, 3, 2, 1)])
def test_agreement_from_the_table_equals_the_reference_on_the_labels(table):
    from playground.metrics import agreement
    from playground.ui.session import agreement_from_table

    human, harness, i = {}, {}, 0
    for cell, count in enumerate(table):
        for _ in range(count):
            human[i], harness[i] = cell // 2, cell % 2
            i += 1
    ref = agreement(human, harness)
    got = agreement_from_table(table)
    assert (got.n_shared, got.percent, got.confusion, got.kappa, got.pabak) == (
        ref.n_shared, ref.percent, ref.confusion, ref.kappa, ref.pabak)
    assert (got.mcc is None) == (ref.mcc is None)
    if ref.mcc is not None:
        assert got.mcc == pytest.approx(ref.mcc, abs=1e-12)


def test_agreement_follows_every_change_incrementally(mini, db):
    s = make(mini, db)
    claim = uid(s, "claim")
    auto = s.auto[(claim, "supported")]
    for value in (auto, 1 - auto, None, auto):
        s.set_label(claim, "supported", value)
    a = s.agreement()["faithfulness"]
    assert a.n_shared == 1 and a.percent == 1.0


# --- the case list --------------------------------------------------------------------------------------


def test_filters_by_type_status_verdict_and_disagreement(mini, db):
    s = make(mini, db)
    assert [r.case_id for r in s.cases()] == ["GC-0001", "GC-0002"]
    assert [r.case_id for r in s.set_filter(case_type="cross_tenant")] == ["GC-0002"]
    s.set_filter()
    claim = uid(s, "claim")
    s.set_label(claim, "supported", 1 - s.auto[(claim, "supported")])
    assert [r.case_id for r in s.set_filter(status="partial")] == ["GC-0001"]
    assert [r.case_id for r in s.set_filter(status="unlabelled")] == ["GC-0002"]
    assert [r.case_id for r in s.set_filter(disagreement=True)] == ["GC-0001"]
    verdicts = {cid: set(s.case_row(cid).verdicts) for cid in s.case_ids}
    with pytest.raises(SessionError, match="show harness labels"):  # blind: the harness's verdicts stay hidden
        s.set_filter(verdict="ACCEPT")
    s.reveal_all = True
    for v in ("ACCEPT", "REVIEW", "REJECT"):
        assert [r.case_id for r in s.set_filter(verdict=v)] == [c for c in s.case_ids if v in verdicts[c]]
    with pytest.raises(SessionError):
        s.set_filter(status="finished")


def test_status_done_when_every_unit_of_the_case_is_labelled(mini, db):
    s = make(mini, db)
    s.go_to("GC-0002")
    for v in s.view_units():
        for d in v.unit.dimensions:
            s.set_label(v.unit.unit_id, d, 1)
    row = s.case_row("GC-0002")
    assert row.status == "done" and row.labelled_units == row.total_units


def test_navigation_next_prev_and_next_unlabelled(mini, db):
    s = make(mini, db)
    assert s.prev_case() is None and s.case_id == "GC-0001"
    assert s.next_case() == "GC-0002" and s.response_id == "GC-0002-R1"
    assert s.next_case() is None
    assert s.prev_case() == "GC-0001"
    # next unlabelled: the view on screen first while it has something left (never skipped) ...
    assert s.next_unlabelled() == ("GC-0001", "GC-0001-R1")
    for v in s.view_units():
        for d in v.unit.dimensions:
            s.set_label(v.unit.unit_id, d, 1)
    # ... then the views after it (R2 shares R1's passages, answered above)
    assert s.next_unlabelled() == ("GC-0001", "GC-0001-R2")
    s.go_to("GC-0002")
    for v in s.view_units():
        for d in v.unit.dimensions:
            s.set_label(v.unit.unit_id, d, 0)
    assert s.next_unlabelled() == ("GC-0001", "GC-0001-R2")  # wrapped round; R1 is done
    for cid in s.case_ids:
        for rid, _ in [(r.response_id, 0) for r in s.responses[cid]]:
            s.go_to(cid, rid)
            for v in s.view_units():
                for d in v.unit.dimensions:
                    s.set_label(v.unit.unit_id, d, 1)
    where = (s.case_id, s.response_id)
    assert s.next_unlabelled() is None and (s.case_id, s.response_id) == where


def test_navigation_follows_the_filter(mini, db):
    s = make(mini, db)
    s.set_filter(case_type="cross_tenant")
    assert s.next_case() == "GC-0002"
    assert s.next_case() is None and s.prev_case() is None
    with pytest.raises(SessionError):
        s.go_to("GC-9999")
    with pytest.raises(SessionError):
        s.go_to("GC-0001", "GC-0002-R1")


def test_progress_counts_units_with_every_dimension_labelled(mini, db):
    s = make(mini, db)
    total = len(s.catalog)
    claim = uid(s, "claim")
    s.set_label(claim, "supported", 1)
    p = s.progress()
    assert (p.labelled_units, p.total_units, p.labelled_pairs) == (0, total, 1)
    s.set_label(claim, "correct", 1)
    assert s.progress().labelled_units == 1
    # the store's own progress over the same catalog agrees
    sp = s.store.progress(s.catalog, annotator="alice")
    assert (sp.labelled_units, sp.total_units, sp.labelled_pairs) == (1, total, 2)
    vp = s.view_progress()
    assert (vp.labelled_units, vp.total_units) == (1, 3)


# --- several tabs, stale labels, read-only dashboards ------------------------------------------------


def test_refresh_shows_what_another_tab_saved(mini, db):
    a = make(mini, db)
    b = make(mini, db)  # a second tab of the same person: another kernel, another connection
    b.set_label(uid(b, "passage"), "relevant", 1)
    assert a.label(uid(a, "passage"), "relevant") is None
    a.refresh()
    assert a.label(uid(a, "passage"), "relevant") == 1
    assert a.rates_pooled()["context_relevance"].n == 1


def test_a_case_coming_on_screen_reloads_its_labels(mini, db):
    a = make(mini, db)
    b = make(mini, db)
    claim, passage = uid(a, "claim"), uid(a, "passage")
    a.set_label(claim, "supported", 1)
    b.set_label(passage, "relevant", 0)
    b.set_label(claim, "supported", None)
    assert a.refresh_case("GC-0001") == 2
    assert a.label(passage, "relevant") == 0 and a.label(claim, "supported") is None
    assert a.rates_pooled()["context_relevance"].n == 1 and not a.rates_pooled()["faithfulness"].has_data
    assert a.case_row("GC-0001").labelled_pairs == 1
    assert a.refresh_case("GC-0001") == 0


def test_a_change_over_another_tabs_change_is_flagged(mini, db):
    a = make(mini, db)
    b = make(mini, db)
    claim = uid(a, "claim")
    b.set_label(claim, "supported", 0)
    change = a.set_label(claim, "supported", 1)
    assert change.conflict and change.old == 0


def test_two_annotators_do_not_see_each_others_labels(mini, db):
    a = make(mini, db, annotator="alice")
    b = make(mini, db, annotator="bob")
    a.set_label(uid(a, "claim"), "supported", 1)
    b.set_label(uid(b, "claim"), "supported", 0)
    a.refresh()
    b.refresh()
    assert a.rates_pooled()["faithfulness"].rate == 1.0
    assert b.rates_pooled()["faithfulness"].rate == 0.0
    assert sorted(a.known_annotators()) == ["alice", "bob"]


def test_consensus_in_a_read_only_dashboard(mini, db):
    for name, value in (("alice", 1), ("bob", 1), ("carol", 0)):
        s = make(mini, db, annotator=name)
        s.set_label(uid(s, "claim"), "supported", value)
        s.set_label(uid(s, "passage"), "relevant", value if name != "carol" else 1)
    make(mini, db, annotator="dave").set_label(uid(s, "fact"), "covered", 1)
    make(mini, db, annotator="erin").set_label(uid(s, "fact"), "covered", 0)
    dash = make(mini, db, annotator=None, read_only=True)
    assert dash.annotator is None
    assert dash.label(uid(dash, "claim"), "supported") == 1  # 2 of 3
    assert dash.ties == 1  # the fact: dave yes, erin no
    assert dash.rates_pooled()["coverage"].n == 0
    make(mini, db, annotator="fay").set_label(uid(s, "fact"), "covered", 1)
    dash.refresh_case("GC-0001")
    assert dash.ties == 0 and dash.label(uid(dash, "fact"), "covered") == 1
    roster = dict(dash.annotator_progress())
    assert sorted(roster) == ["alice", "bob", "carol", "dave", "erin", "fay"]
    assert (roster["alice"].labelled_units, roster["alice"].labelled_pairs) == (1, 2)
    dash.set_annotator("carol")
    assert dash.label(uid(dash, "claim"), "supported") == 0


def test_labels_on_changed_text_are_stale_not_counted(mini, db):
    s = make(mini, db)
    claim = s.catalog[uid(s, "claim")]
    old = Unit(claim.unit_kind, claim.unit_id, claim.case_id, claim.response_id, claim.dimensions, "older text",
               "0123456789ab")
    s.store.set_label("alice", old, "supported", 0)
    s.store.set_label("alice", Unit("claim", "GONE-R1:c0:deadbeef", "GC-0999", "GONE-R1", ("supported", "correct"),
                                    "gone", "ffffffffffff"), "supported", 1)
    s.refresh()
    assert s.label(claim.unit_id, "supported") is None
    assert s.stale_label(claim.unit_id, "supported") == 0
    assert not s.rates_pooled()["faithfulness"].has_data and s.progress().stale_pairs == 1
    s.set_label(claim.unit_id, "supported", 0)  # re-confirmed on the current text
    assert s.stale_label(claim.unit_id, "supported") is None and s.rates_pooled()["faithfulness"].n == 1


# --- export ----------------------------------------------------------------------------------------------


def test_export_my_labels_as_csv_and_jsonl(mini, db):
    s = make(mini, db)
    claim = uid(s, "claim")
    s.set_label(claim, "supported", 0)
    make(mini, db, annotator="bob").set_label(claim, "supported", 1)
    name, text, n = s.export_text("csv")
    assert name == "labels-alice.csv" and n == 1
    lines = text.splitlines()
    assert lines[0] == "case_id,response_id,unit_kind,unit_id,text,dimension,value,comment,annotator,time"
    text_of = s.catalog[claim].text
    assert lines[1].startswith(f"GC-0001,GC-0001-R1,claim,{claim},{text_of},supported,0,,alice,")
    assert len(lines) == 2
    name, text, n = s.export_text("jsonl", scope="all")
    assert name == "labels-all.jsonl" and n == 2
    assert [json.loads(line)["annotator"] for line in text.splitlines()] == ["alice", "bob"]
    _, text, n = s.export_text("csv", scope="consensus")
    assert n == 0  # a tie is left out
    with pytest.raises(SessionError):
        s.export_text("xlsx")


def test_the_download_is_the_stores_export_table(mini, db):
    """One implementation: the page's rows are playground.store.export_table's, with only this dataset's units."""
    from playground.store import export_table

    s = make(mini, db)
    claim = uid(s, "claim")
    s.set_label(claim, "supported", 1)
    s.set_comment(claim, "looks fine")
    elsewhere = Unit("claim", "GONE-R1:c0:deadbeef", "GC-0999", "GONE-R1", ("supported", "correct"), "gone",
                     "ffffffffffff")
    s.store.set_comment("alice", elsewhere, "a unit of another dataset")
    rows = s.export_rows("mine")
    assert rows == export_table(s.store, s.catalog, annotator="alice")
    assert [(r["unit_id"], r["dimension"], r["value"], r["comment"]) for r in rows] == [
        (claim, "supported", "1", "looks fine")]  # the other dataset's comment is not in this page's download
    _, content, n = s.export_file("parquet")
    import io

    import pandas as pd

    frame = pd.read_parquet(io.BytesIO(content))
    assert n == 1 and list(frame.columns) == list(EXPORT_COLUMNS) and frame["value"].tolist() == ["1"]


def test_an_adjudicated_item_is_in_the_consensus_download(mini, db):
    s = make(mini, db)
    claim = uid(s, "claim")
    s.set_label(claim, "supported", 0)
    make(mini, db, annotator="bob").set_label(claim, "supported", 1)
    assert s.export_text("csv", scope="consensus")[2] == 0  # a tie
    unit = s.catalog[claim]
    s.store.adjudicate(unit, "supported", 1, "carol")
    _, text, n = s.export_text("csv", scope="consensus")
    assert n == 1 and f",{claim},{unit.text},supported,1,adjudicated by carol,consensus," in text


def test_export_cells_never_run_as_spreadsheet_formulas(mini, db):
    s = make(mini, db, annotator="=HYPERLINK(1)")
    s.set_label(uid(s, "claim"), "supported", 1)
    _, text, _ = s.export_text("csv")
    assert ",'=HYPERLINK(1)," in text.splitlines()[1] and ",=HYPERLINK" not in text
    _, text, _ = s.export_text("jsonl")
    assert json.loads(text)["annotator"] == "=HYPERLINK(1)"  # JSON is data, not a spreadsheet


def test_weights_and_gates_in_the_url_round_trip_and_bad_ones_are_named():
    from playground.ui.session import format_weights, parse_weights

    w = {"faithfulness": 0.4, "correctness": 0.3, "context_relevance": 0.2, "coverage": 0.1}
    assert parse_weights(format_weights(w)) == w
    assert parse_weights("faithfulness:1") == {"faithfulness": 1.0}
    assert parse_weights("faithfulness:1", unit_interval=True) == {"faithfulness": 1.0}  # the boundary is allowed
    with pytest.raises(SessionError) as err:
        parse_weights("faithfulness:-1,bogus:2,coverage:x", "gates", unit_interval=True)
    msg = str(err.value)
    assert "gates" in msg and "faithfulness: -1" in msg and "'bogus:2'" in msg and "coverage: 'x'" in msg
    with pytest.raises(SessionError):
        parse_weights("coverage:1.01", unit_interval=True)


def test_export_file_names_are_safe(mini, db):
    s = make(mini, db, annotator="../../etc/pass wd")
    name, _, _ = s.export_text("csv")
    assert "/" not in name and name.endswith(".csv")


# --- environment and the shipped data ----------------------------------------------------------------


def test_session_from_env(monkeypatch, db):
    monkeypatch.setenv("PLAYGROUND_ROOT", str(MINI))
    monkeypatch.setenv("PLAYGROUND_DB", str(db))
    monkeypatch.setenv("PLAYGROUND_READ_ONLY", "0")
    s = session_from_env(annotator="alice")
    assert s.store.url.endswith("labels.db") and not s.read_only and len(s.case_ids) == 2
    monkeypatch.setenv("PLAYGROUND_READ_ONLY", "1")
    assert session_from_env().read_only


def test_shipped_data_loads_into_a_session(db):
    """The shipped set: every case listed, every (unit, dimension) has the harness's label (timed in bench_session)."""
    dataset = load_dataset(REPO)
    s = LabelSession(dataset, open_store(db), annotator="alice")
    assert s.case_ids == sorted(dataset.cases) and len(s.case_ids) == len(dataset.cases) > 0
    assert set(s.catalog) == {u.unit_id for u in dataset_units(dataset)}
    assert all((u, d) in s.auto for u, unit in s.catalog.items() for d in unit.dimensions)


def test_every_toggle_gives_the_new_figures_at_once(mini, db):
    """40 toggles through the store: after each, the pooled rate is that of the labels so far (timed in bench)."""
    s = make(mini, db)
    units = [(u, d) for u, unit in s.catalog.items() for d in unit.dimensions if d == "supported"]
    expected: dict[str, int] = {}
    for i in range(40):
        u, d = units[i % len(units)]
        s.set_label(u, d, i % 2)
        expected[u] = i % 2
        rate = s.scores().pooled["faithfulness"]
        assert (rate.successes, rate.n) == (sum(expected.values()), len(expected))


# --- unsure -------------------------------------------------------------------------------------------------


def test_an_unsure_answer_counts_as_answered_but_in_no_rate(mini, db):
    """The session's side of "unsure" (kept in memory as the store reports it; the store's side is tested there)."""
    from playground.ui.session import UNSURE

    s = make(mini, db)
    claim = uid(s, "claim")
    s._apply(claim, "supported", 1)
    assert s.rates_current()["faithfulness"].n == 1
    s._apply(claim, "supported", UNSURE)
    assert s.answer(claim, "supported") == UNSURE and s.label(claim, "supported") is None
    assert s.answered(claim, "supported") and s.revealed(claim, "supported")
    assert s.rates_current()["faithfulness"].n == 0 and s.rates_pooled()["faithfulness"].n == 0
    assert s.agreement()["faithfulness"].n_shared == 0
    assert s.view_progress().labelled_pairs == 1  # an answer: next unlabelled does not send you back to it
    s._apply(claim, "supported", 0)
    assert s.answer(claim, "supported") == 0 and claim not in {u for u, _ in s.unsure}
    assert s.rates_current()["faithfulness"].n == 1


def test_unsure_through_the_store(mini, db):
    from playground.store import UNSURE

    s = make(mini, db)
    claim = uid(s, "claim")
    change = s.set_label(claim, "supported", UNSURE)
    assert change is not None and change.new == UNSURE
    again = make(mini, db)
    assert again.answer(claim, "supported") == UNSURE and again.rates_pooled()["faithfulness"].n == 0
    _, text, n = again.export_text("csv")
    assert n == 1 and ",supported,unsure," in text


# --- the harness's results kept on disk ------------------------------------------------------------------------


def test_a_kept_harness_run_gives_the_same_session(tmp_path, monkeypatch, db):
    import shutil

    from playground.ui.harness_cache import cached_harness, fingerprint

    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "data"
    shutil.copytree(MINI, root)
    dataset = load_dataset(root)
    hits, results, how = cached_harness(dataset)
    assert how == "computed and kept"
    from playground.harness.config import load_config

    files = list((tmp_path / "cache").glob("*.json"))
    assert [f.name for f in files] == [f"{fingerprint(root, load_config())}.json"]
    hits2, results2, how2 = cached_harness(load_dataset(root))
    assert how2 == "read" and results2 == results
    assert {c: [(h.passage, h.score, h.rank) for h in hs] for c, hs in hits2.items()} == {
        c: [(h.passage, h.score, h.rank) for h in hs] for c, hs in hits.items()}
    fresh_hits, fresh_results = compute_harness(dataset)
    a = LabelSession(dataset, open_store(db), harness_results=fresh_results, hits=fresh_hits)
    b = LabelSession(dataset, open_store(db), harness_results=results2, hits=hits2)
    assert (a.auto, a.auto_score, a.key, a.decisions, a.catalog) == (b.auto, b.auto_score, b.key, b.decisions,
                                                                    b.catalog)
    # any change to the data gives another file; a damaged file is ignored, never trusted
    cases = root / "golden" / "cases" / "cases.yaml"
    cases.write_text(cases.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    assert fingerprint(root, load_config()) != files[0].stem
    files[0].write_text("{not json", encoding="utf-8")
    cases.write_text(cases.read_text(encoding="utf-8").replace("\n# a comment\n", ""), encoding="utf-8")
    assert cached_harness(load_dataset(root))[2] == "computed and kept"
    monkeypatch.setenv("PLAYGROUND_CACHE", "off")
    assert cached_harness(load_dataset(root))[2] == "computed"
