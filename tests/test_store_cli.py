"""``playground labels import|export|stats|history|migrate``, run in-process through argparse."""
from __future__ import annotations

import argparse
import json

import pytest
import store_fixtures as sf
from store_fixtures import catalog_of, claim, drop_pg_schema, fact, new_pg_schema, passage, run_cli

from playground.cli import labels as cli
from playground.store import COLUMNS, EXPORT_COLUMNS, open_store

# pytest fixtures, used by name as test arguments (assigned, not imported, so a test argument is no redefinition)
pg_server = sf.pg_server

UNITS = [claim(i, case=i % 2) for i in range(4)] + [fact(1), passage(1, case=1)]
CATALOG = catalog_of(UNITS)
EVIL = "x'); DROP TABLE labels;--"


def run(argv, capsys):
    return run_cli(cli, argv, capsys)


@pytest.fixture(autouse=True)
def fake_catalog(monkeypatch):
    monkeypatch.setattr(cli, "_load_catalog", lambda args: CATALOG)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "labels.db"
    with open_store(path) as s:
        s.set_label("ann", UNITS[0], "supported", 1)
        s.set_label(EVIL, UNITS[0], "supported", 0)
        s.set_label("ann", UNITS[4], "covered", 1)
        s.set_label("bob", UNITS[0], "supported", 1)
    return path


def test_export_csv_to_stdout_and_jsonl_to_file(db, tmp_path, capsys):
    code, out, err = run(["labels", "export", "--db", str(db)], capsys)
    assert code == 0 and out.splitlines()[0] == ",".join(EXPORT_COLUMNS)
    assert len(out.splitlines()) == 5 and EVIL in out
    code, out, err = run(["labels", "export", "--db", str(db), "--minimal"], capsys)
    assert code == 0 and out.splitlines()[0] == ",".join(COLUMNS) and len(out.splitlines()) == 5
    target = tmp_path / "out.jsonl"
    code, out, err = run(["labels", "export", "--db", f"sqlite:///{db}", "--format", "jsonl", "--out", str(target),
                          "--annotator", "ann"], capsys)
    assert code == 0 and out == "" and "exported 2 row(s)" in err
    assert [json.loads(line)["annotator"] for line in target.read_text().splitlines()] == ["ann", "ann"]


def test_export_consensus_reports_ties_and_stale(db, capsys):
    with open_store(db) as s:
        s.set_label("ann", UNITS[1], "correct", 1)
        s.set_label("bob", UNITS[1], "correct", 0)                      # a tie
        s.set_label("ann", claim(50), "supported", 1)                   # orphaned
    code, out, err = run(["labels", "export", "--db", str(db), "--consensus", "--minimal"], capsys)
    assert code == 0
    rows = out.splitlines()[1:]
    assert rows == sorted(
        [f"consensus,claim,{UNITS[0].unit_id},supported,1", f"consensus,fact,{UNITS[4].unit_id},covered,1"],
        key=lambda r: r.split(",")[2],
    )
    assert "1 tie(s) left out" in err and UNITS[1].unit_id in err and "1 stale label(s) left out" in err
    code, out, err = run(["labels", "export", "--db", str(db), "--include-stale"], capsys)
    assert code == 0 and claim(50).unit_id in out
    with open_store(db) as s:
        s.adjudicate(UNITS[1], "correct", 0, "dana")                     # settles the tie
    code, out, err = run(["labels", "export", "--db", str(db), "--consensus"], capsys)
    assert code == 0 and "tie" not in err
    assert out.splitlines()[1:] == sorted([
        f"GC-0001,GC-0001-R1,claim,{UNITS[0].unit_id},Claim number 0.,supported,1,,consensus,",
        f"GC-0002,GC-0002-R1,claim,{UNITS[1].unit_id},Claim number 1.,correct,0,adjudicated by dana,consensus,"
        + s.labels(annotator="consensus")[0].updated_at,
        f"GC-0001,GC-0001-R1,fact,{UNITS[4].unit_id},A fact.,covered,1,,consensus,",
    ], key=lambda r: r.split(",")[3])


def test_import_good_file_and_bad_file(db, tmp_path, capsys):
    good = tmp_path / "good.csv"
    good.write_text(",".join(COLUMNS) + f"\ncarol,claim,{UNITS[1].unit_id},correct,1\n")
    code, out, err = run(["labels", "import", str(good), "--db", str(db)], capsys)
    assert code == 0 and "imported 1 row(s)" in out and "carol" in out
    with open_store(db) as s:
        before = s.dump()
    bad = tmp_path / "bad.csv"
    bad.write_text(",".join(COLUMNS) + f"\ncarol,claim,nope,correct,1\ncarol,claim,{UNITS[1].unit_id},correct,5\n")
    code, out, err = run(["labels", "import", str(bad), "--db", str(db)], capsys)
    assert code == 1
    assert "rejected, nothing was written: 2 problem(s)" in err and "row 1: unknown unit 'nope'" in err
    assert "row 2: value must be 1, 0 or unsure, got '5'" in err and "Traceback" not in err
    with open_store(db) as s:
        assert s.dump() == before
    code, out, err = run(["labels", "import", str(tmp_path / "missing.csv"), "--db", str(db)], capsys)
    assert code == 1 and err.startswith("error: no such file")


def test_import_with_annotator_override_jsonl(db, tmp_path, capsys):
    path = tmp_path / "mine.jsonl"
    path.write_text(
        json.dumps({"unit_kind": "passage", "unit_id": UNITS[5].unit_id, "dimension": "relevant", "value": 0}) + "\n"
    )
    code, _out, _err = run(["labels", "import", str(path), "--annotator", "dora", "--db", str(db)], capsys)
    assert code == 0
    with open_store(db) as s:
        assert s.labels(annotator="dora")[0].value == 0


def test_stats_and_history(db, capsys):
    code, out, _err = run(["labels", "stats", "--db", str(db)], capsys)
    assert code == 0
    assert "annotators: 3; current labels (1/0): 4; unsure answers: 0; comments: 0" in out
    assert "progress (any annotator): 1/6 units fully labelled" in out  # only the fact is complete
    assert "stale labels: 0" in out and "consensus ties: 0" in out and EVIL in out
    code, out, _err = run(["labels", "history", UNITS[0].unit_id, "--db", str(db)], capsys)
    assert code == 0 and len(out.splitlines()) == 3 and "- -> 1  set" in out
    code, out, _err = run(["labels", "history", UNITS[0].unit_id, "--db", str(db), "--format", "jsonl",
                          "--annotator", EVIL], capsys)
    assert json.loads(out)["annotator"] == EVIL
    code, out, _err = run(["labels", "history", "no-such-unit", "--db", str(db)], capsys)
    assert code == 0 and "no events" in out


def test_reading_commands_never_create_a_store(tmp_path, capsys):
    for argv in (["labels", "stats"], ["labels", "export"], ["labels", "history", "x"]):
        code, _out, err = run([*argv, "--db", str(tmp_path / "typo.db")], capsys)
        assert code == 1 and err.startswith("error: no label store at") and err[-1] == "\n" and err.count("\n") == 1
    assert not (tmp_path / "typo.db").exists()


def test_init_creates_then_is_idempotent(tmp_path, capsys):
    path = tmp_path / "new.db"
    code, out, _ = run(["labels", "init", "--db", str(path)], capsys)
    assert code == 0 and path.is_file() and "schema 5" in out and "0 annotator(s)" in out
    code, out, _ = run(["labels", "init", "--db", str(path)], capsys)
    assert code == 0 and "label store ready" in out
    code, _, err = run(["labels", "stats", "--db", str(path)], capsys)
    assert code == 0, err  # a reading command now finds the store


def test_errors_are_one_line(tmp_path, capsys):
    notdb = tmp_path / "notes.txt"
    notdb.write_text("hello " * 200)
    code, _out, err = run(["labels", "stats", "--db", str(notdb)], capsys)
    assert code == 1 and "not a label store" in err and "Traceback" not in err
    code, _out, err = run(["labels", "export", "--db", "mysql://x/y"], capsys)
    assert code == 1 and "unsupported label store URL" in err


def test_migrate_command(db, tmp_path, capsys, pg_server):
    schema, pg_url = new_pg_schema(pg_server)
    try:
        code, out, err = run(["labels", "migrate", "--from", f"sqlite:///{db}", "--to", pg_url], capsys)
        assert code == 0 and "verified identical" in out
        back = tmp_path / "back.db"
        code, out, err = run(["labels", "migrate", "--from", pg_url, "--to", str(back)], capsys)
        assert code == 0
        with open_store(db) as a, open_store(back) as b:
            assert a.dump() == b.dump()
        code, out, err = run(["labels", "migrate", "--from", str(db), "--to", pg_url], capsys)
        assert code == 1 and "not empty" in err
    finally:
        drop_pg_schema(pg_server, schema)


def test_golden_export_command(tmp_path, mini_root, capsys, monkeypatch):
    from playground.golden import load_dataset, response_units

    dataset = load_dataset(mini_root)
    units = [u for r in dataset.responses.values() for u in response_units(dataset.cases[r.case_id], r)]
    monkeypatch.setattr(cli, "_load_catalog", lambda args: catalog_of(units))
    db = tmp_path / "g.db"
    with open_store(db) as s:
        for u in units:
            if u.response_id.endswith("-R1"):
                for d in u.dimensions:
                    s.set_label("ann", u, d, 1)
    out_file = tmp_path / "golden.yaml"
    code, _out, err = run(["labels", "export", "--db", str(db), "--format", "golden", "--root", str(mini_root),
                          "--out", str(out_file)], capsys)
    assert code == 0 and "2 response(s) written, 1 skipped" in err and "skipped GC-0001-R2" in err
    assert "GC-0001-R1" in out_file.read_text()


def test_help_texts(capsys):
    parser = argparse.ArgumentParser(prog="playground")
    cli.register(parser.add_subparsers(dest="command"))
    for sub in ("import", "export", "stats", "history", "migrate"):
        with pytest.raises(SystemExit):
            parser.parse_args(["labels", sub, "--help"])
        text = capsys.readouterr().out
        assert "usage: playground labels " + sub in text
        if sub != "migrate":
            assert "--db" in text
