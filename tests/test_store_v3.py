"""Schema 3: unsure answers, comments, adjudication, reserved names, datasets, the 2 -> 3 migration, exports."""
from __future__ import annotations

import hashlib
import json

import pytest
from store_fixtures import catalog_of, claim, fact, passage, pg_server, raw_backend, run_cli, store, store_url

from playground.cli import labels as cli
from playground.model import short_hash
from playground.store import (
    EXPORT_COLUMNS,
    UNSURE,
    Comment,
    InvalidLabelError,
    StoreError,
    check_annotator,
    export_table,
    format_rows,
    import_file,
    open_store,
    validate_file,
    write_export,
)
from playground.store.io import neutralise_cell
from playground.store.schema import CURRENT_VERSION, v2_ddl

FIXTURES = (pg_server, store, store_url)  # pytest finds them here; this also marks the imports used


def changed(unit, text):
    return type(unit)(unit.unit_kind, unit.unit_id, unit.case_id, unit.response_id, unit.dimensions, text,
                      short_hash(text, 12))


# --- unsure ------------------------------------------------------------------------------------------------


def test_unsure_is_stored_counted_and_never_in_a_rate_or_vote(store):
    u, v = claim(1), claim(2)
    ev = store.set_label("ann", u, "supported", UNSURE)
    assert (ev.old_value, ev.new_value, ev.action) == (None, 2, "set") and UNSURE == 2
    store.set_label("bob", u, "supported", 1)
    store.set_label("cy", u, "supported", 0)           # 1 yes, 1 no, 1 unsure: a tie, unsure does not vote
    store.set_label("ann", v, "correct", UNSURE)
    assert [(lb.annotator, lb.value) for lb in store.labels(unit_ids=[u.unit_id])] == [("bob", 1), ("cy", 0)]
    assert [(lb.annotator, lb.value) for lb in store.labels(unit_ids=[u.unit_id], include_unsure=True)] == [
        ("ann", 2), ("bob", 1), ("cy", 0)]
    catalog = catalog_of([u, v])
    assert [lb.annotator for lb in store.current_labels(catalog)] == ["bob", "cy"]
    assert len(store.current_labels(catalog, include_unsure=True)) == 4
    row = next(r for r in store.consensus() if r.unit_id == u.unit_id)
    assert (row.status, row.value, row.yes, row.no) == ("tie", None, 1, 1)
    assert [r.unit_id for r in store.consensus()] == [u.unit_id]  # v has only an unsure answer: no item
    assert store.unsure_counts() == {("ann", "correct"): 1, ("ann", "supported"): 1}
    assert store.unsure_counts(catalog_of([u])) == {("ann", "supported"): 1}  # v is not in that catalog
    # progress: an unsure answer is an answer (ann has answered 1 of the 4 pairs of u and v... plus v correct)
    assert store.progress(catalog, annotator="ann").labelled_pairs == 2
    undo = store.undo("ann")
    assert (undo.old_value, undo.new_value) == (2, None)
    assert store.unsure_counts() == {("ann", "supported"): 1}
    assert store.set_label("ann", u, "supported", None).old_value == 2
    assert store.unsure_counts() == {} and store.verify() == []


# --- comments ------------------------------------------------------------------------------------------------


def test_comments_are_events_one_per_annotator_and_unit(store):
    u = claim(1)
    store.set_label("ann", u, "supported", 1)
    ev = store.set_comment("ann", u, "  the passage says 2019, not 2018  ")
    assert (ev.action, ev.dimension, ev.old_value, ev.new_value, ev.note) == (
        "comment", "", None, None, "the passage says 2019, not 2018")
    assert store.set_comment("ann", u, "the passage says 2019, not 2018") is None  # no change
    store.set_comment("bob", u, "=HYPERLINK(\"x\")")
    c = store.comments()
    assert [(x.annotator, x.text) for x in c] == [("ann", "the passage says 2019, not 2018"),
                                                  ("bob", '=HYPERLINK("x")')]
    assert isinstance(c[0], Comment) and (c[0].unit_kind, c[0].unit_id, c[0].case_id) == ("claim", u.unit_id, "GC-0001")
    assert store.comments(annotator="bob")[0].annotator == "bob" and store.comments(unit_ids=["other"]) == []
    assert [e.action for e in store.history(u.unit_id)] == ["set", "comment", "comment"]
    assert [e.action for e in store.history(u.unit_id, dimension="supported")] == ["set"]
    # undo walks label changes only: ann's undo reverts the label, not the comment
    assert store.undo("ann").dimension == "supported" and len(store.comments(annotator="ann")) == 1
    cleared = store.set_comment("ann", u, "")
    assert cleared.note == "" and [x.annotator for x in store.comments()] == ["bob"]
    assert store.set_comment("ann", u, "") is None and store.set_comment("nobody", u, "") is None
    assert "nobody" not in store.annotators()
    assert store.set_comment("ann", u, "x" * 10_000) is not None  # the boundary is allowed
    with pytest.raises(InvalidLabelError, match="at most 10000 characters, got 10001"):
        store.set_comment("ann", u, "x" * 10_001)
    with pytest.raises(InvalidLabelError, match="reserved name"):
        store.set_comment("consensus", u, "hi")
    assert store.verify() == []


# --- adjudication and reserved names -------------------------------------------------------------------------


def test_adjudication_settles_ties_and_majorities_and_can_be_withdrawn(store):
    u, v = claim(1), claim(2)
    store.set_label("ann", u, "supported", 1)
    store.set_label("bob", u, "supported", 0)           # tie
    for name, value in (("ann", 1), ("bob", 1), ("cy", 0)):
        store.set_label(name, v, "supported", value)     # majority 1
    ev = store.adjudicate(u, "supported", 0, "  dana ")
    assert (ev.annotator, ev.action, ev.note, ev.new_value) == ("consensus", "adjudicate", "adjudicated by dana", 0)
    assert store.adjudicate(u, "supported", 0, "eve") is None   # already so
    store.adjudicate(v, "supported", 0, "eve")
    rows = {r.unit_id: r for r in store.consensus()}
    assert (rows[u.unit_id].status, rows[u.unit_id].value, rows[u.unit_id].adjudicator,
            rows[u.unit_id].yes, rows[u.unit_id].no) == ("adjudicated", 0, "dana", 1, 1)
    assert (rows[v.unit_id].status, rows[v.unit_id].value, rows[v.unit_id].adjudicator) == ("adjudicated", 0, "eve")
    assert store.annotators() == ["ann", "bob", "cy"]   # never 'consensus'
    # a stale adjudication does not count against a catalog with the new text
    catalog = catalog_of([changed(u, "new text"), v])
    assert {r.unit_id: r.status for r in store.consensus(catalog=catalog)} == {v.unit_id: "adjudicated"}
    withdrawn = store.adjudicate(u, "supported", None, "dana")
    assert (withdrawn.old_value, withdrawn.new_value) == (0, None)
    assert {r.unit_id: r.status for r in store.consensus()}[u.unit_id] == "tie"
    with pytest.raises(InvalidLabelError, match="must be 1, 0 or None"):
        store.adjudicate(u, "supported", UNSURE, "dana")
    with pytest.raises(InvalidLabelError, match="reserved name"):
        store.adjudicate(u, "supported", 1, "consensus")
    assert store.verify() == []


@pytest.mark.parametrize("name, ok", [
    ("a" * 64, True), ("a" * 65, False), ("  zoë  ", True), ("\t", False), ("harness", False),
    ("consensus", False), ("Harness", True), ("a\u200bb", False), ("a\x7fb", False), ("a b", True),
])
def test_check_annotator_is_one_rule(name, ok):
    if ok:
        assert check_annotator(name) == name.strip()
    else:
        with pytest.raises(InvalidLabelError):
            check_annotator(name)


# --- datasets ------------------------------------------------------------------------------------------------


def test_datasets_are_stored_with_their_labels_in_one_transaction(store):
    u = claim(1)
    payload = {"summary": {"cases": 2, "units": 7}, "cases": [{"id": "c1", "query": "Wer? ✓"}], "n": 1.5}
    info = store.put_dataset("mine", "ragas", payload, label_rows=[("ann", u, "supported", 1),
                                                                   ("ann", u, "correct", UNSURE)])
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert info.sha256 == hashlib.sha256(canonical.encode()).hexdigest()
    assert (info.name, info.kind, info.cases, info.units) == ("mine", "ragas", 2, 7)
    got = store.dataset("mine")
    assert (got.payload, got.sha256, got.created_at) == (payload, info.sha256, info.created_at)
    assert [(e.action, e.new_value) for e in store.events()] == [("import", 1), ("import", 2)]
    assert store.datasets() == [info] and store.dataset("other") is None
    before = store.dump()
    with pytest.raises(StoreError, match="a dataset named 'mine' is already in the label store"):
        store.put_dataset("mine", "ragas", {"x": 1}, label_rows=[("bob", u, "supported", 0)])
    assert store.dump() == before  # neither the dataset nor its labels
    assert store.put_dataset("mine", "ragas", payload) == info  # identical content again: no change, no error
    assert store.dump() == before
    with pytest.raises(InvalidLabelError, match="dimension 'covered'"):
        store.put_dataset("two", "table", {}, label_rows=[("bob", u, "covered", 0)])
    assert store.dump() == before
    again = store.put_dataset("mine", "table", {"summary": {"cases": True}}, replace=True)
    assert (again.kind, again.cases, again.units) == ("table", None, None)  # a bool is not a count
    assert len(store.labels(include_unsure=True)) == 2  # a replace never removes labels
    with pytest.raises(InvalidLabelError, match="JSON-able"):
        store.put_dataset("nan", "table", {"x": float("nan")})


# --- migration from a version-2 store -------------------------------------------------------------------------


def _v2_store(url):
    """A version-2 store written with the shipped v2 DDL and rows as version 2 wrote them."""
    b = raw_backend(url)
    u = claim(1)
    ts = [b.ts_in(f"2024-05-01T12:00:0{i}.000000+00:00") for i in range(4)]

    def tx(cur):
        for stmt in v2_ddl(b.dialect):
            cur.execute(stmt)
        cur.execute("INSERT INTO annotators (annotator_id, name, created_at) VALUES (1, 'ann', ?), (2, 'bob', ?)",
                    (ts[0], ts[0]))
        cur.executemany(
            "INSERT INTO events (event_id, batch_id, annotator_id, unit_kind, unit_id, case_id, dimension, old_value,"
            " new_value, old_text_hash, text_hash, action, undoes, created_at, note) VALUES"
            " (?, ?, ?, 'claim', ?, 'GC-0001', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(1, 1, 1, u.unit_id, "supported", None, 1, None, u.text_hash, "set", None, ts[1], None),
             (2, 2, 2, u.unit_id, "supported", None, 0, None, u.text_hash, "set", None, ts[2], "why"),
             (3, 3, 1, u.unit_id, "supported", 1, None, u.text_hash, u.text_hash, "undo", 1, ts[3], None)])
        cur.execute("INSERT INTO labels (annotator_id, unit_id, dimension, unit_kind, case_id, value, text_hash,"
                    " updated_at, event_id) VALUES (2, ?, 'supported', 'claim', 'GC-0001', 0, ?, ?, 2)",
                    (u.unit_id, u.text_hash, ts[2]))
        b.reset_sequences(cur)

    b.write(tx)
    b.close()
    return u


def test_a_version_2_store_migrates_to_3_keeping_every_row(store_url):
    u = _v2_store(store_url)
    with open_store(store_url) as s:
        assert s.schema_version == CURRENT_VERSION and s.verify() == []  # 2 -> 3 -> 4 -> 5
        assert [(e.event_id, e.annotator, e.action, e.new_value, e.note, e.created_at) for e in s.events()] == [
            (1, "ann", "set", 1, None, "2024-05-01T12:00:01.000000+00:00"),
            (2, "bob", "set", 0, "why", "2024-05-01T12:00:02.000000+00:00"),
            (3, "ann", "undo", None, None, "2024-05-01T12:00:03.000000+00:00")]
        assert [(lb.annotator, lb.value) for lb in s.labels()] == [("bob", 0)]
        assert s.set_label("ann", u, "supported", UNSURE).event_id == 4   # ids continue after the copied rows
        assert s.set_comment("bob", u, "new in 3") is not None and s.verify() == []
    if not store_url.startswith("postgresql"):
        from pathlib import Path

        assert Path(store_url + ".schema2.bak").is_file()
    with open_store(store_url) as s:  # reopening does not migrate again
        assert s.schema_version == CURRENT_VERSION and len(s.events()) == 5


# --- exports people can use alone ----------------------------------------------------------------------------


def test_export_table_has_every_column_exactly(store):
    u, f, p = claim(1, text="-1 is less than zero."), fact(2), passage(3)
    catalog = catalog_of([u, f, p])
    store.set_label("ann", u, "supported", 1)
    store.set_label("ann", u, "correct", UNSURE)
    store.set_comment("ann", u, "check the year")
    store.set_comment("ann", p, "off topic?")            # a comment without labels
    store.set_label("bob", f, "covered", 0)
    store.adjudicate(f, "covered", 1, "dana")            # never a row of 'consensus' among annotators
    rows = export_table(store, catalog)
    t = {(r["annotator"], r["unit_id"], r["dimension"]): r["time"] for r in rows}
    assert rows == [
        {"case_id": "GC-0001", "response_id": "GC-0001-R1", "unit_kind": "claim", "unit_id": u.unit_id,
         "text": "-1 is less than zero.", "dimension": "correct", "value": "unsure", "comment": "check the year",
         "annotator": "ann", "time": t[("ann", u.unit_id, "correct")]},
        {"case_id": "GC-0001", "response_id": "GC-0001-R1", "unit_kind": "claim", "unit_id": u.unit_id,
         "text": "-1 is less than zero.", "dimension": "supported", "value": "1", "comment": "check the year",
         "annotator": "ann", "time": t[("ann", u.unit_id, "supported")]},
        {"case_id": "GC-0001", "response_id": "", "unit_kind": "passage", "unit_id": p.unit_id,
         "text": "A passage.", "dimension": "", "value": "", "comment": "off topic?", "annotator": "ann",
         "time": store.comments(unit_ids=[p.unit_id])[0].updated_at},
        {"case_id": "GC-0001", "response_id": "GC-0001-R1", "unit_kind": "fact", "unit_id": f.unit_id,
         "text": "A fact.", "dimension": "covered", "value": "0", "comment": "", "annotator": "bob",
         "time": t[("bob", f.unit_id, "covered")]},
    ]
    assert [r["annotator"] for r in export_table(store, catalog, annotator="bob")] == ["bob"]
    cons = export_table(store, catalog, consensus=True)
    assert [(r["unit_id"], r["dimension"], r["value"], r["comment"]) for r in cons] == [
        (f.unit_id, "covered", "1", "adjudicated by dana"), (u.unit_id, "supported", "1", "")]  # by unit id
    assert [r["text"] for r in export_table(store)] == ["", "", "", ""]  # no catalog: no text
    text = format_rows(rows, "csv")
    assert text.splitlines()[0] == ",".join(EXPORT_COLUMNS)
    assert "'-1 is less than zero." in text  # a formula-leading cell is neutralised


@pytest.mark.parametrize("cell, written", [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("'x", "''x"), ("x=1", "x=1"), ("", ""), ("1", "1"), (" =x", " =x"),
])
def test_csv_cells_are_neutralised_and_read_back(cell, written):
    assert neutralise_cell(cell) == written


def test_csv_injection_round_trip_and_bad_names_listed(store, tmp_path):
    units = [claim(i, text=t) for i, t in enumerate(["=2+2 is four.", "@here", "'quoted'", "plain"])]
    catalog = catalog_of(units)
    for u in units:
        store.set_label("=ann", u, "supported", 1)
        store.set_comment("=ann", u, "+" + u.text)
    path = tmp_path / "x.csv"
    write_export(export_table(store, catalog), path, "csv")
    raw = path.read_text()
    assert "\n'=ann" not in raw and ",'=ann," in raw and ",'=2+2 is four.," in raw and ",'@here," in raw
    assert ",''quoted'," in raw and ",'+plain," in raw
    with open_store(tmp_path / "b.db") as b:
        import_file(b, path, catalog)
        strip = lambda rows: [{k: v for k, v in r.items() if k != "time"} for r in rows]  # noqa: E731
        assert strip(export_table(b, catalog)) == strip(export_table(store, catalog))
    bad = tmp_path / "bad.csv"
    bad.write_text("annotator,unit_kind,unit_id,dimension,value\n"
                   f"ok,claim,{units[0].unit_id},supported,1\n"
                   f"consensus,claim,{units[1].unit_id},supported,1\n"
                   f"{'x' * 65},claim,{units[2].unit_id},supported,1\n"
                   f"\"a\x1bb\",claim,{units[3].unit_id},supported,1\n")
    with pytest.raises(Exception) as info:
        validate_file(bad, catalog)
    assert [n for n, _ in info.value.problems] == [2, 3, 4]
    reasons = [r for _, r in info.value.problems]
    assert "reserved name" in reasons[0] and "65 characters long" in reasons[1] and "U+001B" in reasons[2]


def test_import_refuses_text_that_changed_since_the_export(store, tmp_path):
    u = claim(1)
    store.set_label("ann", u, "supported", 1)
    path = tmp_path / "x.jsonl"
    write_export(export_table(store, catalog_of([u])), path, "jsonl")
    with pytest.raises(Exception, match=r"row 1: text 'Claim number 1\.' does not match"):
        validate_file(path, catalog_of([changed(u, "Another text.")]))


# --- terminal output --------------------------------------------------------------------------------------------


def run(argv, capsys):
    return run_cli(cli, argv, capsys)


def test_stats_and_history_escape_control_characters_and_show_new_things(tmp_path, capsys, monkeypatch):
    u, v = claim(1), claim(2)
    monkeypatch.setattr(cli, "_load_catalog", lambda args: catalog_of([u, v]))
    db = tmp_path / "labels.db"
    with open_store(db) as s:
        s.set_label("ann", u, "supported", UNSURE)
        s.set_label("ann", v, "supported", 1)
        s.set_label("bob", v, "supported", 0)
        s.set_comment("ann", u, "\x1b[31mred\x1b[0m \u202eevil")
        s.adjudicate(v, "supported", 1, "dana")
    code, out, _err = run(["labels", "history", u.unit_id, "--db", str(db)], capsys)
    assert code == 0 and "\x1b" not in out and "\u202e" not in out
    assert "comment: '\\x1b[31mred\\x1b[0m \\u202eevil'" in out and "supported  - -> ?  set" in out
    code, out, _err = run(["labels", "stats", "--db", str(db)], capsys)
    assert code == 0
    assert "annotators: 2; current labels (1/0): 2; unsure answers: 1; comments: 1" in out
    assert out.splitlines()[3].split() == ["ann", "1", "1", "1", "1"]  # supported, total, unsure, comments
    assert "consensus: 1 item(s) — unanimous 0, majority 0, single 0, adjudicated 1, tie 0" in out
    assert "consensus" not in out.splitlines()[3] and "dana" not in out
