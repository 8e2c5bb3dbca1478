"""Import, export, golden-set export and store-to-store copies, on both backends."""
from __future__ import annotations

import io
import json

import pytest
import store_fixtures as sf
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import catalog_of, claim, drop_pg_schema, fact, new_pg_schema, passage

from playground.store import (
    COLUMNS,
    UNSURE,
    LabelImportError,
    ReadOnlyStoreError,
    StoreError,
    annotator_problem,
    consensus_export,
    export_golden,
    export_rows,
    export_table,
    format_rows,
    import_file,
    migrate_store,
    open_store,
    write_export,
)

# pytest fixtures, used by name as test arguments (assigned, not imported, so a test argument is no redefinition)
pg_server = sf.pg_server
store = sf.store
store_url = sf.store_url

UNITS = (
    [claim(i, case=i % 3) for i in range(6)] + [fact(i, case=i % 2) for i in range(3)] + [passage(i) for i in range(3)]
)
CATALOG = catalog_of(UNITS)
EVIL = "x'); DROP TABLE labels;--"
NAMES = ["ann", EVIL, 'quote "q", comma', "Zoë", "NA", "007", "=cmd()", "+plus", "-minus", "@at", "'quoted"]


def fill(store):
    """Labels of several annotators (names chosen to break naive CSV/SQL handling)."""
    for k, name in enumerate(NAMES):
        for j, unit in enumerate(UNITS):
            if (j + k) % 3 == 0:
                continue
            for dim in unit.dimensions:
                store.set_label(name, unit, dim, (j * 7 + k + len(dim)) % 2)
    store.set_label("ann", UNITS[0], "supported", None)  # a clear in the history


def label_state(store):
    return sorted(
        (label.annotator, label.unit_kind, label.unit_id, label.case_id, label.dimension, label.value, label.text_hash)
        for label in store.labels()
    )


# --- round trip ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_import_round_trip_is_exact(store, store_url, tmp_path, fmt):
    fill(store)
    rows = export_rows(store)
    assert rows and all(list(r) == list(COLUMNS) for r in rows)
    assert rows == sorted(rows, key=lambda r: (r["annotator"], r["unit_id"], r["dimension"]))
    assert {r["value"] for r in rows} == {0, 1}
    path = tmp_path / f"labels.{fmt}"
    write_export(rows, path, fmt)
    target_url = str(tmp_path / "copy.db") if not store_url.startswith("postgresql") else store_url + "x"
    if store_url.startswith("postgresql"):
        server = store_url.split("?")[0]
        schema, target_url = new_pg_schema(server)
    try:
        with open_store(target_url) as target:
            report = import_file(target, path, CATALOG)
            assert (report.rows, report.changed, report.unchanged, report.fmt) == (len(rows), len(rows), 0, fmt)
            assert set(report.annotators) == set(report.new_annotators) == {r["annotator"] for r in rows}
            assert export_rows(target) == rows
            assert label_state(target) == label_state(store)
            assert {e.action for e in target.events()} == {"import"}
            assert len({e.batch_id for e in target.events()}) == 1
            assert target.verify() == []
            # The same file again changes nothing and adds no events.
            n_events = len(target.events())
            again = import_file(target, path, CATALOG)
            assert (again.changed, again.unchanged, again.new_annotators) == (0, len(rows), ())
            assert len(target.events()) == n_events
            # Per-annotator export round-trips too, and undo walks back an imported row at a time.
            assert export_rows(target, annotator=EVIL) == [r for r in rows if r["annotator"] == EVIL]
            last = target.events(annotator="ann")[-1]
            assert target.undo("ann").undoes == last.event_id
    finally:
        if store_url.startswith("postgresql"):
            drop_pg_schema(server, schema)


def test_csv_and_jsonl_text_and_streams(store):
    store.set_label(EVIL, UNITS[0], "supported", 1)
    rows = export_rows(store)
    csv_text = format_rows(rows, "csv")
    assert csv_text.splitlines()[0] == ",".join(COLUMNS)
    assert json.loads(format_rows(rows, "jsonl").splitlines()[0]) == rows[0]
    buf = io.StringIO()
    write_export(rows, buf, "jsonl")
    assert buf.getvalue() == format_rows(rows, "jsonl")
    with pytest.raises(ValueError, match="unknown format"):
        format_rows(rows, "xml")


def test_import_merges_and_overrides_annotator(store, tmp_path):
    store.set_label("ann", UNITS[0], "supported", 1)
    path = tmp_path / "mine.csv"
    path.write_text("unit_kind,unit_id,dimension,value\n"
                    f"claim,{UNITS[0].unit_id},supported,1\n"
                    f"claim,{UNITS[0].unit_id},correct,0\n")
    report = import_file(store, path, CATALOG, annotator_override="ann")
    assert (report.changed, report.unchanged, report.new_annotators) == (1, 1, ())
    assert [(label.dimension, label.value) for label in store.labels(annotator="ann")] == [
        ("correct", 0),
        ("supported", 1),
    ]
    header_only = tmp_path / "empty.csv"
    header_only.write_text(",".join(COLUMNS) + "\n")
    assert import_file(store, header_only, CATALOG).rows == 0


def test_import_makes_stale_labels_current_again(store, tmp_path):
    u = UNITS[6]  # a fact
    old = u.__class__(**{**u.__dict__, "text_hash": "oldhash"})
    store.set_label("ann", old, "covered", 1)
    assert store.stale(CATALOG)[0].reason == "changed"
    path = tmp_path / "r.jsonl"
    path.write_text(
        json.dumps({"annotator": "ann", "unit_kind": "fact", "unit_id": u.unit_id, "dimension": "covered", "value": 1})
        + "\n"
    )
    assert import_file(store, path, CATALOG).changed == 1   # same value, new text: a real change
    assert store.stale(CATALOG) == []


# --- every bad import leaves the store unchanged ------------------------------------------------------

C0, F0, P0 = UNITS[0].unit_id, UNITS[6].unit_id, UNITS[9].unit_id
HEAD = ",".join(COLUMNS) + "\n"
GOOD = f"ann,claim,{C0},supported,1\n"


def jl(**row):
    base = {"annotator": "ann", "unit_kind": "claim", "unit_id": C0, "dimension": "supported", "value": 1}
    base.update(row)
    return json.dumps({k: v for k, v in base.items() if v is not ...})


BAD_FILES = {
    "missing column": ("csv", "annotator,unit_kind,unit_id,value\nann,claim,X,1\n", [0]),
    "extra column": ("csv", HEAD.strip() + ",note\n" + GOOD.strip() + ",hi\n", [0]),
    "unknown unit": ("csv", HEAD + GOOD + "ann,claim,GC-9999-R1:c0:deadbeef,supported,1\n", [2]),
    "unit id with spaces": ("csv", HEAD + f"ann,claim, {C0},supported,1\n", [1]),
    "wrong unit kind": ("csv", HEAD + f"ann,fact,{C0},supported,1\n" + f"bob,claim,{C0},supported,1\n", [1]),
    "bad unit kind": ("csv", HEAD + "ann,sentence,zzz,supported,1\n", [1]),
    "dimension not for unit": ("csv", HEAD + GOOD + f"ann,fact,{F0},supported,1\n", [2]),
    "unknown dimension": ("csv", HEAD + f"ann,passage,{P0},useful,1\n", [1]),
    "value 2": ("csv", HEAD + f"ann,claim,{C0},supported,2\n", [1]),
    "value yes": ("csv", HEAD + f"ann,claim,{C0},supported,yes\n", [1]),
    "value empty": ("csv", HEAD + f"ann,claim,{C0},supported,\n", [1]),
    "value 1.0": ("csv", HEAD + f"ann,claim,{C0},supported,1.0\n", [1]),
    "empty annotator": ("csv", HEAD + GOOD + f"   ,claim,{C0},correct,1\n", [2]),
    "duplicate": ("csv", HEAD + GOOD + f"bob,claim,{C0},supported,0\n" + f"ann,claim,{C0},supported,0\n", [3]),
    "many bad rows": (
        "csv",
        HEAD + GOOD + "ann,claim,nope,supported,1\n" + GOOD + f"ann,claim,{C0},correct,7\n",
        [2, 3, 4],
    ),
    "empty file": ("csv", "", [0]),
    "malformed csv": ("csv", HEAD + 'ann,"claim,unterminated\n', [0]),
    "jsonl bad json": ("jsonl", jl() + "\n{not json\n", [2]),
    "jsonl not object": ("jsonl", "\n" + jl() + "\n[1, 2]\n", [3]),
    "jsonl missing key": ("jsonl", jl(dimension=...) + "\n", [1]),
    "jsonl extra key": ("jsonl", jl(note="x") + "\n", [1]),
    "jsonl value true": ("jsonl", jl(value=True) + "\n", [1]),
    "jsonl value null": ("jsonl", jl(value=None) + "\n", [1]),
    "jsonl annotator number": ("jsonl", jl(annotator=7) + "\n", [1]),
    "jsonl duplicate": ("jsonl", jl() + "\n" + jl(value=0) + "\n", [2]),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_import_rejects_everything_and_changes_nothing(store, tmp_path, case):
    fmt, text, bad_rows = BAD_FILES[case]
    fill(store)
    before = store.dump()
    path = tmp_path / f"bad.{fmt}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LabelImportError) as info:
        import_file(store, path, CATALOG)
    err = info.value
    assert isinstance(err, ValueError)
    assert sorted({n for n, _ in err.problems}) == bad_rows, err.report()
    assert "nothing was written" in str(err)
    assert store.dump() == before


def test_bad_import_not_utf8_or_missing(store, tmp_path):
    fill(store)
    before = store.dump()
    path = tmp_path / "latin1.csv"
    path.write_bytes((HEAD + "Zoë,claim,x,supported,1\n").encode("latin-1"))
    with pytest.raises(LabelImportError, match="not UTF-8"):
        import_file(store, path, CATALOG)
    with pytest.raises(LabelImportError, match="cannot read"):
        import_file(store, tmp_path / "missing.csv", CATALOG)
    assert store.dump() == before


def test_problem_reasons_are_specific(store, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(HEAD + f"ann,fact,{C0},covered,2\n")
    with pytest.raises(LabelImportError) as info:
        import_file(store, path, CATALOG)
    (row, reason), = info.value.problems
    assert row == 1
    assert "unit_kind 'fact' does not match" in reason and "value must be 1, 0 or unsure, got '2'" in reason
    assert "dimension 'covered' is not labelled on a claim" in reason


def test_import_into_read_only_store_is_refused(store_url, tmp_path):
    with open_store(store_url) as s:
        s.set_label("ann", UNITS[0], "supported", 1)
    path = tmp_path / "ok.csv"
    path.write_text(HEAD + GOOD)
    with open_store(store_url, read_only=True) as ro, pytest.raises(ReadOnlyStoreError):
        import_file(ro, path, CATALOG)


# --- consensus export ---------------------------------------------------------------------------------


def test_consensus_export_reports_ties_and_round_trips(store, tmp_path):
    u, v = UNITS[0], UNITS[1]
    store.set_label("a", u, "supported", 1)
    store.set_label("b", u, "supported", 1)
    store.set_label("c", u, "supported", 0)
    store.set_label("a", v, "correct", 1)
    store.set_label("b", v, "correct", 0)
    result = consensus_export(store)
    assert result.rows == [{"annotator": "consensus", "unit_kind": "claim", "unit_id": u.unit_id,
                            "dimension": "supported", "value": 1}]
    assert [(t.unit_id, t.dimension, t.status) for t in result.ties] == [(v.unit_id, "correct", "tie")]
    assert export_rows(store, consensus=True) == result.rows
    path = tmp_path / "consensus.jsonl"
    write_export(result.rows, path, "jsonl")
    before = store.dump()
    with pytest.raises(LabelImportError, match="row 1: 'consensus' is a reserved name"):
        import_file(store, path, CATALOG)                  # derived rows are not a person's labels
    assert store.dump() == before
    store.adjudicate(v, "correct", 0, "dana")              # settles the tie
    settled = consensus_export(store)
    assert settled.ties == [] and [r["value"] for r in settled.rows] == [1, 0]


def test_export_with_catalog_leaves_stale_labels_out(store):
    store.set_label("ann", UNITS[0], "supported", 1)
    store.set_label("ann", UNITS[0].__class__(**{**UNITS[0].__dict__, "text_hash": "old"}), "correct", 1)
    store.set_label("ann", claim(99), "supported", 1)      # not in the catalog: orphaned
    assert len(export_rows(store)) == 3
    assert [r["dimension"] for r in export_rows(store, catalog=CATALOG)] == ["supported"]


# --- golden-set export ---------------------------------------------------------------------------------


def test_export_golden_writes_the_golden_format(store, mini_root, tmp_path):
    from playground.golden import load_dataset, response_units

    dataset = load_dataset(mini_root)
    keys = {}
    for rid, response in dataset.responses.items():
        units = response_units(dataset.cases[response.case_id], response)
        claims = [u for u in units if u.unit_kind == "claim"]
        facts = [u for u in units if u.unit_kind == "fact"]
        keys[rid] = (response, claims, facts)
    # Label every response fully with its answer key, by two annotators; leave one response incomplete,
    # make one a tie under consensus.
    full, partial, tie = sorted(dataset.responses)[:3]
    for rid in (full, tie):
        response, claims, facts = keys[rid]
        for u, k in zip(claims, response.key_claims, strict=True):
            for name in ("ann", "bob"):
                store.set_label(name, u, "supported", int(k.supported))
                store.set_label(name, u, "correct", int(k.correct))
        for u, (_fid, covered) in zip(facts, response.key_facts, strict=True):
            for name in ("ann", "bob"):
                store.set_label(name, u, "covered", int(covered))
    response, claims, facts = keys[tie]
    store.set_label("bob", claims[0], "supported", 1 - int(response.key_claims[0].supported))
    store.set_label("ann", keys[partial][1][0], "supported", 1)

    out = tmp_path / "golden.yaml"
    result = export_golden(store, dataset, out)                  # consensus
    assert result.written == (full,)
    skipped = dict(result.skipped)
    assert "tie on" in skipped[tie] and "unlabelled" in skipped[partial]
    data = yaml.safe_load(out.read_text())
    entry = data["responses"][0]
    assert list(entry) == ["response_id", "case_id", "variant", "claims", "facts", "notes"]
    response = dataset.responses[full]
    assert entry["claims"] == [
        {"text": k.text, "supported": k.supported, "correct": k.correct} for k in response.key_claims
    ]
    assert entry["facts"] == dict(response.key_facts)
    # The file is a valid golden response file: the loader accepts it and reads the same key back.
    (mini_root / "golden" / "responses" / "responses.yaml").write_text(out.read_text())
    reloaded = load_dataset(mini_root)
    assert set(reloaded.responses) == {full}
    assert reloaded.responses[full].key_claims == response.key_claims
    # One annotator: both labelled responses are complete for 'ann'.
    result_ann = export_golden(store, dataset, io.StringIO(), annotator="ann")
    assert set(result_ann.written) == {full, tie}
    # Adjudicating the tie (against both annotators' key value, to see whose value is used) settles it.
    response, claims, facts = keys[tie]
    flipped = 1 - int(response.key_claims[0].supported)
    store.adjudicate(claims[0], "supported", flipped, "dana")
    store.set_label("cy", claims[0], "supported", UNSURE)     # unsure never counts
    settled = io.StringIO()
    assert set(export_golden(store, dataset, settled).written) == {full, tie}
    entry = next(
        e for e in yaml.safe_load(settled.getvalue().split("\n", 1)[1])["responses"] if e["response_id"] == tie
    )
    assert entry["claims"][0]["supported"] is bool(flipped)


def test_export_golden_skips_stale_units(store, mini_root):
    from playground.golden import load_dataset, response_units

    dataset = load_dataset(mini_root)
    rid = sorted(dataset.responses)[0]
    response = dataset.responses[rid]
    units = response_units(dataset.cases[response.case_id], response)
    for u in units:
        for d in u.dimensions:
            unit = u if u.unit_kind == "claim" else u.__class__(**{**u.__dict__, "text_hash": "old"})
            store.set_label("ann", unit, d, 1)
    result = export_golden(store, dataset, io.StringIO(), annotator="ann")
    assert rid not in result.written and "stale" in dict(result.skipped)[rid]


# --- store to store ---------------------------------------------------------------------------------------


def test_migrate_sqlite_to_postgres_and_back_exactly(tmp_path, pg_server):
    src = tmp_path / "a.db"
    with open_store(src) as s:
        fill(s)
        s.undo("ann")
        s.set_label("ann", UNITS[6], "covered", 1, note="checked twice; ' -- ✓")
        original = s.dump()
    schema, pg_url = new_pg_schema(pg_server)
    try:
        counts = migrate_store(f"sqlite:///{src}", pg_url)
        assert counts["events"] == len(original["events"]) and counts["labels"] == len(original["labels"])
        with open_store(pg_url) as pg:
            assert pg.dump() == original
            assert pg.verify() == []
            # ids continue after the copied ones on the server too
            ev = pg.set_label("new", UNITS[0], "correct", 1)
            assert ev.event_id == len(original["events"]) + 1
            expected = pg.dump()
        back = tmp_path / "b.db"
        migrate_store(pg_url, f"sqlite:///{back}")
        with open_store(back) as b:
            assert b.dump() == expected
        with pytest.raises(StoreError, match="not empty"):
            migrate_store(f"sqlite:///{src}", pg_url)
    finally:
        drop_pg_schema(pg_server, schema)


def test_migrate_refuses_missing_source_and_non_empty_target(tmp_path):
    with pytest.raises(StoreError, match="no label store"):
        migrate_store(tmp_path / "missing.db", tmp_path / "t.db")
    with open_store(tmp_path / "s.db") as s:
        s.set_label("ann", UNITS[0], "supported", 1)
    with open_store(tmp_path / "t.db") as t:
        t.set_label("bob", UNITS[0], "supported", 1)
    with pytest.raises(StoreError, match="not empty"):
        migrate_store(tmp_path / "s.db", tmp_path / "t.db")
    assert migrate_store(tmp_path / "s.db", tmp_path / "u.db")["labels"] == 1


# --- property: any names and labels round-trip -------------------------------------------------------------

# Drawn from the characters a name may hold (annotator_problem refuses Cc, Cf, Zl, Zp, Cs), so that the filter
# drops only the rare blank or reserved name: filtering most draws away failed Hypothesis' health check at random.
names = st.text(st.characters(blacklist_categories=("Cc", "Cf", "Zl", "Zp", "Cs")), min_size=1,
                max_size=12).filter(lambda s: annotator_problem(s) is None)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(labels=st.lists(st.tuples(names, st.sampled_from(range(len(UNITS))), st.integers(0, 2), names), max_size=15),
       fmt=st.sampled_from(["csv", "jsonl", "parquet"]))
@pytest.mark.slow
def test_round_trip_property(tmp_path_factory, labels, fmt):
    d = tmp_path_factory.mktemp("prop")
    with open_store(d / "a.db") as a, open_store(d / "b.db") as b, open_store(d / "c.db") as c:
        for name, j, value, comment in labels:
            unit = UNITS[j]
            a.set_label(name, unit, unit.dimensions[0], value)
            a.set_comment(name, unit, comment)
        rows = export_rows(a)                      # the five older columns: 1/0 labels only
        write_export(rows, d / f"x.{fmt}", fmt)
        import_file(b, d / f"x.{fmt}", CATALOG)
        assert export_rows(b) == rows
        assert label_state(b) == label_state(a)
        table = export_table(a, CATALOG)           # the full table: unsure answers and comments too
        write_export(table, d / f"t.{fmt}", fmt)
        import_file(c, d / f"t.{fmt}", CATALOG)
        strip_time = lambda rows: [{k: v for k, v in r.items() if k != "time"} for r in rows]  # noqa: E731
        assert strip_time(export_table(c, CATALOG)) == strip_time(table)
        assert [(x.annotator, x.unit_id, x.text) for x in c.comments()] == [
            (x.annotator, x.unit_id, x.text) for x in a.comments()]
