"""The label store's behaviour, on SQLite and PostgreSQL alike (``store_url`` is parametrised)."""
from __future__ import annotations

import sqlite3
import time
from dataclasses import replace

import pytest
import store_fixtures as sf
from store_fixtures import catalog_of, claim, fact, passage

from playground.model import short_hash
from playground.store import (
    CURRENT_VERSION,
    InvalidLabelError,
    ReadOnlyStoreError,
    SchemaVersionError,
    StoreBusyError,
    StoreError,
    open_store,
    parse_url,
)
from playground.store.schema import V1_DDL, canonical_timestamp

# pytest fixtures, used by name as test arguments (assigned, not imported, so a test argument is no redefinition)
pg_server = sf.pg_server
store = sf.store
store_url = sf.store_url


def changed(unit, text):
    """The same unit id with new text behind it (what re-ingestion can do to a fact or passage)."""
    return replace(unit, text=text, text_hash=short_hash(text, 12))


# --- labels and events -------------------------------------------------------------------------


def test_set_change_clear_and_no_ops(store):
    u = claim(1)
    e1 = store.set_label("ann", u, "supported", 1)
    assert (e1.old_value, e1.new_value, e1.action, e1.text_hash) == (None, 1, "set", u.text_hash)
    assert e1.case_id == u.case_id and e1.created_at.endswith("+00:00")
    assert store.set_label("ann", u, "supported", 1) is None          # same value again: no event
    e2 = store.set_label("ann", u, "supported", 0)
    assert (e2.old_value, e2.new_value) == (1, 0) and e2.event_id > e1.event_id
    assert e2.created_at >= e1.created_at
    assert store.set_label("ann", u, "supported", True).new_value == 1  # bools are 1/0
    e4 = store.set_label("ann", u, "supported", None)
    assert (e4.old_value, e4.new_value, e4.action) == (1, None, "clear")
    assert store.set_label("ann", u, "supported", None) is None        # clearing nothing: no event
    assert store.set_label("nobody", u, "supported", None) is None
    assert store.annotators() == ["ann"]                                # clearing never creates annotators
    assert store.labels() == []
    assert [e.action for e in store.history(u.unit_id)] == ["set", "set", "set", "clear"]
    assert store.verify() == []


def test_labels_queries_sorted_and_filtered(store):
    a, b, f = claim(1, case=0), claim(2, case=1), fact(1, case=0)
    store.set_label("zoe", a, "correct", 1)
    store.set_label("amy", a, "correct", 0)
    store.set_label("amy", a, "supported", 1)
    store.set_label("amy", b, "supported", 1)
    store.set_label("zoe", f, "covered", 0)
    got = store.labels()
    assert [(label.unit_id, label.dimension, label.annotator) for label in got] == sorted(
        (label.unit_id, label.dimension, label.annotator) for label in got
    )
    assert {label.annotator for label in store.labels(annotator="amy")} == {"amy"}
    assert {label.unit_id for label in store.labels(case_id="GC-0001")} == {a.unit_id, f.unit_id}
    assert {label.unit_id for label in store.labels(unit_ids=[b.unit_id, "nope"])} == {b.unit_id}
    assert store.labels(unit_ids=[]) == []
    assert len(store.labels(annotator="amy", case_id="GC-0002")) == 1
    first = store.labels(annotator="zoe", unit_ids=[f.unit_id])[0]
    assert (first.value, first.text_hash, first.unit_kind, first.case_id) == (0, f.text_hash, "fact", "GC-0001")
    assert store.history(a.unit_id, "correct", annotator="amy")[0].new_value == 0
    assert len(store.history(a.unit_id)) == 3
    assert [e.event_id for e in store.events(annotator="zoe")] == [1, 5]
    assert store.annotators() == ["amy", "zoe"]


@pytest.mark.parametrize("args, message", [
    (("ann", claim(1), "covered", 1), "dimension 'covered'"),
    (("ann", claim(1), "relevant", 1), "dimension 'relevant'"),
    (("ann", claim(1), "supported", 3), r"must be 1, 0, UNSURE \(2\) or None"),
    (("ann", claim(1), "supported", "1"), r"must be 1, 0, UNSURE \(2\) or None"),
    (("ann", claim(1), "supported", 1.0), r"must be 1, 0, UNSURE \(2\) or None"),
    (("ann", claim(1), "supported", -1), r"must be 1, 0, UNSURE \(2\) or None"),
    (("   ", claim(1), "supported", 1), "non-empty"),
    (("", claim(1), "supported", 1), "non-empty"),
    ((None, claim(1), "supported", 1), "non-empty"),
    (("a\x00b", claim(1), "supported", 1), r"control or format characters \(U\+0000\)"),
    (("tab\there", claim(1), "supported", 1), r"\(U\+0009\)"),
    (("new\nline", claim(1), "supported", 1), r"\(U\+000A\)"),
    (("bidi\u202eevil", claim(1), "supported", 1), r"\(U\+202E\)"),
    (("line\u2028sep", claim(1), "supported", 1), r"\(U\+2028\)"),
    (("a" * 65, claim(1), "supported", 1), "65 characters long, more than 64"),
    (("consensus", claim(1), "supported", 1), "reserved name"),
    ((" harness ", claim(1), "supported", 1), "reserved name"),
    (("ann", "not a unit", "supported", 1), "Unit"),
    (("ann", replace(claim(1), unit_kind="sentence"), "supported", 1), "unknown unit kind"),
])
def test_bad_arguments_are_refused_before_writing(store, args, message):
    before = store.dump()
    with pytest.raises(InvalidLabelError, match=message):
        store.set_label(*args)
    assert isinstance(InvalidLabelError("x"), ValueError)
    assert store.dump() == before


@pytest.mark.parametrize("name", [
    "x'); DROP TABLE labels;--", "Robert\"); DELETE FROM events; --", "?", "%s", "%(name)s", "' OR 1=1 --",
    "Zoë 山田", "a" * 64, "NULL", "None", "0", "Consensus", "harness2", "=cmd|'/C calc'!A0",
])
def test_names_are_stored_verbatim(store, name):
    u = claim(3)
    store.set_label(name, u, "supported", 1)
    store.set_label("other", u, "supported", 0)
    assert store.labels(annotator=name)[0].annotator == name
    assert name in store.annotators() and "other" in store.annotators()
    assert store.history(u.unit_id, annotator=name)[0].annotator == name
    assert store.undo(name).annotator == name
    assert store.labels(annotator=name) == [] and len(store.labels()) == 1
    assert set(store.dump()) == {"meta", "annotators", "events", "labels", "comments", "assignments",
                                 "datasets", "lessons", "tags", "failure_modes", "guidelines"}  # every table


def test_notes_are_free_text_kept_verbatim_with_the_event(store):
    note = "adjudicated by x'); DROP TABLE events;-- ?%s\nsecond line ✓"
    ev = store.set_label("ann", claim(1), "supported", 1, note=note)
    assert ev.note == note and store.history(claim(1).unit_id)[0].note == note
    assert store.set_label("ann", claim(1), "supported", 1, note="again") is None  # a note alone changes nothing
    assert store.undo("ann").note is None
    with pytest.raises(InvalidLabelError, match="note"):
        store.set_label("ann", claim(1), "supported", 1, note="a\x00b")
    with pytest.raises(InvalidLabelError, match="note"):
        store.set_label("ann", claim(1), "supported", 1, note=42)


def test_padded_names_are_the_same_annotator_stripped(store):
    store.set_label("bob", claim(1), "supported", 1)
    store.set_label(" bob\u00a0", claim(1), "supported", 0)   # U+00A0 is white space: stripped too
    assert store.annotators() == ["bob"]
    assert {label.annotator: label.value for label in store.labels()} == {"bob": 0}


# --- undo ---------------------------------------------------------------------------------------


def test_undo_walks_back_through_own_history(store):
    a, b = claim(1), claim(2)
    store.set_label("ann", a, "supported", 1)       # e1
    store.set_label("ann", a, "supported", 0)       # e2
    store.set_label("bob", a, "supported", 1)       # bob's, never touched by ann's undo
    store.set_label("ann", b, "correct", 1)         # e4
    u1 = store.undo("ann")
    assert (u1.action, u1.unit_id, u1.old_value, u1.new_value, u1.undoes) == ("undo", b.unit_id, 1, None, 4)
    u2 = store.undo("ann")
    assert (u2.unit_id, u2.old_value, u2.new_value, u2.undoes) == (a.unit_id, 0, 1, 2)
    assert store.labels(annotator="ann")[0].value == 1
    store.set_label("ann", b, "supported", 0)       # a new change goes on top of the stack
    assert store.undo("ann").unit_id == b.unit_id
    assert store.labels(annotator="ann", unit_ids=[b.unit_id]) == []
    u4 = store.undo("ann")                           # then further back, not a redo
    assert (u4.unit_id, u4.old_value, u4.new_value, u4.undoes) == (a.unit_id, 1, None, 1)
    assert store.undo("ann") is None                 # nothing left
    assert store.undo("nobody") is None
    assert store.labels(annotator="ann") == []
    assert [(label.annotator, label.value) for label in store.labels()] == [("bob", 1)]
    assert store.verify() == []


def test_undo_restores_the_text_hash_and_a_clear(store):
    u = fact(1)
    new = changed(u, "The fact, reworded.")
    store.set_label("ann", u, "covered", 1)
    store.set_label("ann", new, "covered", 1)       # same value on new text: a change (re-confirmation)
    assert store.labels()[0].text_hash == new.text_hash
    store.undo("ann")
    assert store.labels()[0].text_hash == u.text_hash  # back to the label on the old text
    store.set_label("ann", u, "covered", None)
    assert store.labels() == []
    ev = store.undo("ann")                             # undoing a clear brings the label back
    assert (ev.old_value, ev.new_value) == (None, 1) and store.labels()[0].value == 1
    assert store.verify() == []


# --- stale and orphaned labels, progress, consensus ------------------------------------------------


def test_stale_and_orphaned_labels_are_kept_and_reported(store):
    a, b, gone = fact(1), claim(2), passage(3)
    store.set_label("ann", a, "covered", 1)
    store.set_label("ann", b, "supported", 0)
    store.set_label("bob", gone, "relevant", 1)
    a2 = changed(a, "New wording of the fact.")
    catalog = catalog_of([a2, b])
    stale = {(s.unit_id, s.annotator): s for s in store.stale(catalog)}
    assert set(stale) == {(a.unit_id, "ann"), (gone.unit_id, "bob")}
    assert (stale[(a.unit_id, "ann")].reason, stale[(a.unit_id, "ann")].stored_hash,
            stale[(a.unit_id, "ann")].current_hash) == ("changed", a.text_hash, a2.text_hash)
    assert (stale[(gone.unit_id, "bob")].reason, stale[(gone.unit_id, "bob")].current_hash) == ("orphaned", None)
    assert len(store.labels()) == 3                              # nothing deleted
    assert [label.unit_id for label in store.current_labels(catalog)] == [b.unit_id]
    assert store.stale(catalog, annotator="bob")[0].unit_id == gone.unit_id
    # Setting the label again on the new text makes it current.
    assert store.set_label("ann", a2, "covered", 1) is not None
    assert [s.unit_id for s in store.stale(catalog)] == [gone.unit_id]


def test_progress_per_case_and_overall(store):
    c1, c2, f1, p1 = claim(1, case=0), claim(2, case=1), fact(1, case=0), passage(1, case=1)
    catalog = catalog_of([c1, c2, f1, p1])
    store.set_label("ann", c1, "supported", 1)
    store.set_label("ann", c1, "correct", 0)    # c1 fully labelled
    store.set_label("bob", c2, "supported", 1)  # c2 half
    store.set_label("ann", f1, "covered", 1)
    store.set_label("bob", p1, "relevant", 1)
    catalog[p1.unit_id] = changed(p1, "Passage text changed.")  # bob's relevance label is now stale
    p = store.progress(catalog)
    assert (p.labelled_units, p.total_units, p.labelled_pairs, p.total_pairs, p.stale_pairs) == (2, 4, 4, 6, 1)
    assert (p.cases["GC-0001"].labelled_units, p.cases["GC-0001"].total_units) == (2, 2)
    assert (p.cases["GC-0002"].labelled_pairs, p.cases["GC-0002"].total_pairs, p.cases["GC-0002"].stale_pairs) == (
        1,
        3,
        1,
    )
    pa = store.progress(catalog, annotator="ann")
    assert (pa.labelled_units, pa.labelled_pairs, pa.annotator) == (2, 3, "ann")
    assert store.progress(catalog, annotator="nobody").labelled_pairs == 0
    assert store.progress({}).total_units == 0 and store.progress({}).overall.unit_fraction == 0.0


def test_consensus_majority_ties_and_unsure(store):
    u1, u2, u3 = claim(1), claim(2), claim(3)
    for name, v in [("a", 1), ("b", 1), ("c", 0)]:
        store.set_label(name, u1, "supported", v)      # 2:1 majority
    store.set_label("a", u2, "supported", 1)
    store.set_label("b", u2, "supported", 0)            # 1:1 tie
    store.set_label("a", u3, "correct", 0)              # single
    store.set_label("a", u2, "correct", 1)
    store.set_label("b", u2, "correct", 1)              # unanimous
    store.set_label("c", u2, "supported", 2)            # unsure never votes
    rows = {(r.unit_id, r.dimension): r for r in store.consensus()}
    assert (rows[(u1.unit_id, "supported")].value, rows[(u1.unit_id, "supported")].status) == (1, "majority")
    tie = rows[(u2.unit_id, "supported")]
    assert (tie.value, tie.status, tie.yes, tie.no, tie.annotators) == (None, "tie", 1, 1, 2)
    assert (rows[(u3.unit_id, "correct")].status, rows[(u3.unit_id, "correct")].value) == ("single", 0)
    assert rows[(u2.unit_id, "correct")].status == "unanimous"
    assert {r.dimension for r in store.consensus(dimension="correct")} == {"correct"}
    # With a catalog, stale labels do not vote: c's label on a changed text drops out.
    catalog = catalog_of([u1, u2, u3])
    store.set_label("c", changed(u1, "changed text"), "supported", 0)
    store.set_label("b", changed(u1, "changed text"), "supported", 0)
    assert {r.unit_id: r.status for r in store.consensus(dimension="supported", catalog=catalog)}[
        u1.unit_id
    ] == "single"


# --- read-only, versions, errors -----------------------------------------------------------------------


def test_read_only_refuses_every_write(store_url):
    with open_store(store_url) as rw:
        rw.set_label("ann", claim(1), "supported", 1)
        before = rw.dump()
    with open_store(store_url, read_only=True) as ro:
        assert ro.read_only and ro.labels()[0].value == 1 and ro.annotators() == ["ann"]
        with pytest.raises(ReadOnlyStoreError):
            ro.set_label("ann", claim(1), "supported", 0)
        with pytest.raises(ReadOnlyStoreError):
            ro.set_label("new", claim(2), "supported", 0)
        with pytest.raises(ReadOnlyStoreError):
            ro.undo("ann")
        with pytest.raises(ReadOnlyStoreError):
            ro.write_rows([("ann", claim(5), "supported", 1)])
        assert ro.dump() == before
        assert "read_only=True" in repr(ro)


def test_read_only_on_a_missing_or_empty_store_is_an_error(tmp_path, store_url):
    with pytest.raises(StoreError, match="no label store"):
        open_store(tmp_path / "missing.db", read_only=True)
    with pytest.raises(StoreError, match="no label store"):
        open_store(tmp_path / "missing.db", create=False)
    assert not (tmp_path / "missing.db").exists()
    if store_url.startswith("postgresql"):
        with pytest.raises(StoreError, match="empty"):
            open_store(store_url, read_only=True)
        with pytest.raises(StoreError, match="no label store"):
            open_store(store_url, create=False)


def _raw(store_url):
    """A raw DB-API connection to the store's database/schema, and its placeholder."""
    if store_url.startswith("postgresql"):
        import psycopg

        return psycopg.connect(store_url, autocommit=True), "%s"
    return sqlite3.connect(store_url, isolation_level=None), "?"


def test_newer_schema_is_a_clear_error_not_corruption(store_url):
    with open_store(store_url) as s:
        s.set_label("ann", claim(1), "supported", 1)
        before = s.dump()
    conn, ph = _raw(store_url)
    conn.execute(f"UPDATE meta SET value = {ph} WHERE key = 'schema_version'", (str(CURRENT_VERSION + 1),))
    conn.close()
    for ro in (False, True):
        with pytest.raises(SchemaVersionError) as info:
            open_store(store_url, read_only=ro)
        assert str(info.value) == (
            f"this label store was written by a newer version (schema {CURRENT_VERSION + 1}); "
            f"this code reads up to {CURRENT_VERSION} — upgrade the playground"
        )
    conn, ph = _raw(store_url)
    conn.execute(f"UPDATE meta SET value = {ph} WHERE key = 'schema_version'", (str(CURRENT_VERSION),))
    conn.close()
    with open_store(store_url) as s:
        assert s.dump() == before


def _write_v1_store(store_url):
    """A store as version-1 code left it: its DDL, and rows written the way that code wrote them."""
    conn, ph = _raw(store_url)
    dialect = "postgresql" if store_url.startswith("postgresql") else "sqlite"
    for stmt in V1_DDL[dialect]:
        conn.execute(stmt)
    p = ", ".join([ph] * 8)
    conn.execute("INSERT INTO annotators (name) VALUES ('ann')")
    conn.execute(f"INSERT INTO annotators (name) VALUES ({ph})", ("x'); DROP TABLE labels;--",))
    a, c, f = claim(1), claim(2, case=1), fact(1)
    evil = "x'); DROP TABLE labels;--"
    history = [  # (annotator_id, unit, dimension, old, new)
        (1, a, "supported", None, 1), (1, a, "supported", 1, 0), (1, c, "correct", None, 1),
        (1, c, "correct", 1, None), (2, f, "covered", None, 1), (2, a, "supported", None, 1),
    ]
    for aid, unit, dim, old, new in history:
        conn.execute(
            "INSERT INTO events (annotator_id, unit_kind, unit_id, dimension, old_value, new_value, text_hash,"
            f" created_at) VALUES ({p})",
            (aid, unit.unit_kind, unit.unit_id, dim, old, new, unit.text_hash, "2024-05-01 12:00:00"),
        )
    for aid, unit, dim, value in [(1, a, "supported", 0), (2, f, "covered", 1), (2, a, "supported", 1)]:
        conn.execute(
            "INSERT INTO labels (annotator_id, unit_kind, unit_id, dimension, value, text_hash, updated_at)"
            f" VALUES ({', '.join([ph] * 7)})",
            (aid, unit.unit_kind, unit.unit_id, dim, value, unit.text_hash, "2024-05-01 12:00:00"),
        )
    conn.close()
    return a, c, f, evil


def test_migration_from_v1_keeps_every_label_and_event(store_url, tmp_path):
    a, c, f, evil = _write_v1_store(store_url)
    with open_store(store_url) as s:
        assert s.schema_version == CURRENT_VERSION
        got = {
            (label.annotator, label.unit_id, label.dimension): (
                label.value,
                label.text_hash,
                label.case_id,
                label.updated_at,
            )
            for label in s.labels()
        }
        ts = canonical_timestamp("2024-05-01 12:00:00")
        assert ts == "2024-05-01T12:00:00.000000+00:00"
        assert got == {
            ("ann", a.unit_id, "supported"): (0, a.text_hash, "GC-0001", ts),
            (evil, f.unit_id, "covered"): (1, f.text_hash, "GC-0001", ts),
            (evil, a.unit_id, "supported"): (1, a.text_hash, "GC-0001", ts),
        }
        events = s.events()
        assert [(e.action, e.old_value, e.new_value) for e in events] == [
            ("set", None, 1), ("set", 1, 0), ("set", None, 1), ("clear", 1, None), ("set", None, 1), ("set", None, 1)]
        assert events[2].case_id == "GC-0002" and events[1].old_text_hash == a.text_hash
        assert s.verify() == []
        # Migrated history is fully usable: undo walks back through the v1 events.
        assert s.undo("ann").unit_id == c.unit_id
        assert s.labels(annotator="ann", unit_ids=[c.unit_id])[0].value == 1
        assert s.set_label("ann", c, "supported", 1).event_id == 8  # ids continue after the migrated ones
        assert s.verify() == []
    if not store_url.startswith("postgresql"):
        backup = tmp_path / "labels.db.schema1.bak"
        assert backup.exists()
        conn = sqlite3.connect(backup)
        assert conn.execute("SELECT value FROM meta").fetchone() == ("1",)
        assert conn.execute("SELECT COUNT(*) FROM events").fetchone() == (6,)
        conn.close()
    with open_store(store_url) as again:  # reopening does not migrate twice
        assert len(again.events()) == 8


def test_append_only_events_are_enforced_by_the_database(store_url):
    with open_store(store_url) as s:
        s.set_label("ann", claim(1), "supported", 1)
    conn, _ = _raw(store_url)
    for stmt in ("UPDATE events SET new_value = 0", "DELETE FROM events"):
        with pytest.raises(Exception, match="append-only"):
            conn.execute(stmt)
    conn.close()


def test_not_a_label_store(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("this is not a database, it is a long enough text file " * 20)
    with pytest.raises(StoreError, match="not a label store"):
        open_store(text)
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE something (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not a label store"):
        open_store(other)
    with pytest.raises(StoreError, match="directory"):
        open_store(tmp_path / "no" / "such" / "dir.db")
    with pytest.raises(StoreError, match="is a directory"):
        open_store(tmp_path)


def test_busy_store_raises_a_clear_error_and_writes_nothing(store_url):
    with open_store(store_url) as s:
        s.set_label("ann", claim(1), "supported", 1)
        before = s.dump()
    conn, _ = _raw(store_url)
    if store_url.startswith("postgresql"):
        conn.execute("SELECT pg_advisory_lock(%s::integer, 1)", (0x504C + 1,))  # what a writer of 'ann' holds
    else:
        conn.execute("BEGIN IMMEDIATE")
    try:
        with (
            open_store(store_url, busy_timeout=0.1, retries=2) as s,
            pytest.raises(StoreBusyError, match=r"busy.*3 attempts.*nothing was saved"),
        ):
            s.set_label("ann", claim(2), "supported", 1)
    finally:
        conn.close()
    with open_store(store_url) as s:
        assert s.dump() == before
        assert s.set_label("ann", claim(2), "supported", 1) is not None  # free again


# --- locations ---------------------------------------------------------------------------------------------


def test_parse_url_and_defaults(tmp_path, monkeypatch):
    from pathlib import Path

    assert parse_url("sqlite:///abs/path.db") == ("sqlite", Path("/abs/path.db"))
    assert parse_url("sqlite:////abs/path.db") == ("sqlite", Path("/abs/path.db"))
    assert parse_url("rel/labels.db") == ("sqlite", Path("rel/labels.db"))
    assert parse_url(tmp_path / "x.db") == ("sqlite", tmp_path / "x.db")
    assert parse_url("postgresql://u@h/db") == ("postgresql", "postgresql://u@h/db")
    assert parse_url("postgres://u@h/db")[0] == "postgresql"
    with pytest.raises(StoreError, match="unsupported"):
        parse_url("mysql://u@h/db")
    monkeypatch.setenv("PLAYGROUND_DB", str(tmp_path / "env.db"))
    assert parse_url(None) == ("sqlite", tmp_path / "env.db")
    with open_store() as s:
        s.set_label("ann", claim(1), "supported", 1)
    assert (tmp_path / "env.db").exists()
    monkeypatch.delenv("PLAYGROUND_DB")
    monkeypatch.setattr("platformdirs.user_data_dir", lambda *a, **k: str(tmp_path / "data" / "rag-label-playground"))
    _kind, path = parse_url(None)
    assert path == tmp_path / "data" / "rag-label-playground" / "labels.db"
    with open_store() as s:  # the default location's folder is created
        assert s.labels() == []
    assert path.exists()


def test_store_survives_fork_by_reconnecting(tmp_path):
    import os

    with open_store(tmp_path / "f.db") as s:
        s.set_label("ann", claim(1), "supported", 1)
        pid = os.fork()
        if pid == 0:  # child: must not reuse the parent's connection
            try:
                s.set_label("child", claim(2), "supported", 1)
                os._exit(0)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        s.set_label("ann", claim(3), "supported", 0)
        assert {label.annotator for label in s.labels()} == {"ann", "child"}
        assert s.integrity_check() == []


@pytest.mark.postgres
def test_postgres_reconnects_after_the_server_dropped_an_idle_connection(tmp_path, pg_server):
    import psycopg
    from store_fixtures import drop_pg_schema, new_pg_schema

    schema, url = new_pg_schema(pg_server)
    try:
        with open_store(url) as s:
            s.set_label("ann", claim(1), "supported", 1)
            pid = s._b.connection().info.backend_pid
            with psycopg.connect(pg_server, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            time.sleep(0.1)
            assert s.set_label("ann", claim(2), "supported", 1) is not None  # died idle: reconnect, retry once
            pid = s._b.connection().info.backend_pid
            with psycopg.connect(pg_server, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            time.sleep(0.1)
            assert len(s.labels()) == 2                                        # reads too
            assert s.verify() == []
    finally:
        drop_pg_schema(pg_server, schema)
