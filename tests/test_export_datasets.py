"""Export back: RAGAS / DeepEval rows with human results, side tables, and the round trip."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import store_fixtures as sf

from playground.datasets import open_dataset
from playground.errors import DataError
from playground.importers.export import export_dataset, side_path
from playground.importers.load import import_dataset
from playground.store import open_store

FIX = Path(__file__).resolve().parent / "fixtures"

# pytest fixtures, used by name as test arguments
pg_server = sf.pg_server
store = sf.store
store_url = sf.store_url


def cli(*argv) -> int:
    from playground.cli import main

    return main([str(a) for a in argv])


def label_everything(store, catalog, annotator: str) -> dict:
    """Label every unit: value 1 for the first dimension of even positions, else 0 (deterministic)."""
    expected = {}
    for i, unit in enumerate(sorted(catalog.values(), key=lambda u: u.unit_id)):
        for dim in unit.dimensions:
            value = 1 if i % 2 == 0 else 0
            store.set_label(annotator, unit, dim, value)
            expected[(annotator, unit.unit_id, dim)] = value
    return expected


@pytest.mark.parametrize(("tool", "fixture", "suffix"), [
    ("ragas", "ragas_single.jsonl", ".jsonl"), ("ragas", "ragas_single.jsonl", ".csv"),
    ("ragas", "ragas_single.jsonl", ".parquet"), ("ragas", "ragas_multi.jsonl", ".jsonl"),
    ("deepeval", "deepeval_goldens.json", ".json"), ("deepeval", "deepeval_goldens.json", ".parquet"),
])
def test_round_trip_gives_the_same_units_and_labels(tmp_path, tool, fixture, suffix):
    with open_store(tmp_path / "a.db") as store:
        import_dataset(FIX / fixture, tool, "demo", store)
        first = open_dataset("demo", store)
        expected = label_everything(store, first.catalog(), "ann")
        out = tmp_path / f"export{suffix}"
        result = export_dataset(first, store, tool, out, annotator="ann")
    # for a Parquet export the label side table is export.labels.parquet itself
    assert result.files == tuple(dict.fromkeys((out, side_path(out, "labels"), tmp_path / "export.units.parquet",
                                                tmp_path / "export.labels.parquet")))
    assert not list(tmp_path.glob(".*.tmp"))
    with open_store(tmp_path / "b.db") as store:
        import_dataset(out, tool, "demo", store, labels=side_path(out, "labels"))
        second = open_dataset("demo", store)
        got = {(lab.annotator, lab.unit_id, lab.dimension): lab.value for lab in store.labels()}
        assert not store.stale(second.catalog())
    assert second.units() == first.units()
    assert got == expected


def test_human_results_per_sample(tmp_path):
    with open_store(tmp_path / "a.db") as store:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store)
        opened = open_dataset("demo", store)
        catalog = opened.catalog()
        first_case = opened.payload["samples"][0]["case_id"]
        units = [u for u in opened.units() if u.case_id == first_case]
        passages = [u for u in units if u.unit_kind == "passage"]
        claims = [u for u in units if u.unit_kind == "claim"]
        # two annotators: consensus is their majority; a tie is left out
        store.set_label("a", passages[0], "relevant", 1)
        store.set_label("b", passages[0], "relevant", 1)
        store.set_label("a", passages[1], "relevant", 0)
        store.set_label("a", claims[0], "supported", 1)
        store.set_label("b", claims[0], "supported", 0)  # tie
        store.set_label("a", claims[1], "supported", 0)
        result = export_dataset(opened, store, "ragas", tmp_path / "out.jsonl")
        assert len(catalog) == 14
    assert (result.who, result.labels, result.ties) == ("consensus", 3, 1)
    assert "settle them with `playground calibrate adjudicate --dataset demo UNIT_ID DIMENSION" in result.summary()
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and rows[0]["user_input"] == "How many times are failed webhooks retried?"
    # relevant: 1 of 2 labelled passages; supported: 0 of 1 (the tie is out); nothing else labelled
    assert {k: v for k, v in rows[0].items() if k.startswith("human_") and k != "human_labels"} == {
        "human_context_relevance": 0.5, "human_context_relevance_yes": 1, "human_context_relevance_n": 2,
        "human_faithfulness": 0.0, "human_faithfulness_yes": 0, "human_faithfulness_n": 1,
        "human_correctness": None, "human_correctness_yes": 0, "human_correctness_n": 0,
        "human_coverage": None, "human_coverage_yes": 0, "human_coverage_n": 0,
        "human_pass": None, "human_pass_yes": 0, "human_pass_n": 0, "human_failure_modes": [],  # issue 24.6
    }
    assert rows[1]["human_context_relevance_n"] == 0
    side = [json.loads(line) for line in (tmp_path / "out.labels.jsonl").read_text().splitlines()]
    assert sorted((r["unit_id"], r["value"]) for r in side) == sorted(
        [(passages[0].unit_id, 1), (passages[1].unit_id, 0), (claims[1].unit_id, 0)])


def test_ragas_csv_lists_are_python_reprs_and_deepeval_csv_joins_with_a_pipe(tmp_path):
    with open_store(tmp_path / "a.db") as store:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store)
        opened = open_dataset("demo", store)
        export_dataset(opened, store, "ragas", tmp_path / "r.csv")
        export_dataset(opened, store, "deepeval", tmp_path / "d.csv")
    ragas_line = (tmp_path / "r.csv").read_text().splitlines()[1]
    assert ("\"['Failed webhook deliveries are retried 5 times with exponential backoff.', "
            "'Webhooks are signed with an HMAC-SHA256 header.']\"") in ragas_line
    deepeval_line = (tmp_path / "d.csv").read_text().splitlines()[1]
    assert ("Failed webhook deliveries are retried 5 times with exponential backoff.|"
            "Webhooks are signed with an HMAC-SHA256 header.") in deepeval_line


def test_cli_export_and_its_errors(tmp_path, capsys):
    db = tmp_path / "l.db"
    assert cli("import", "deepeval", FIX / "deepeval_goldens.json", "--dataset", "de", "--db", db) == 0
    assert cli("export", "deepeval", "--dataset", "de", "--out", tmp_path / "x.json", "--db", db) == 0
    assert "3 samples with 0 labels (consensus) and a label history of 0 events written to:" in capsys.readouterr().out
    rows = json.loads((tmp_path / "x.json").read_text())
    assert [r["additional_metadata"]["id"] for r in rows] == ["trace-1", "trace-2", "trace-3"]
    assert cli("export", "ragas", "--dataset", "de", "--out", tmp_path / "x.txt", "--db", db) == 1
    assert "a ragas export is .jsonl, .csv, .parquet" in capsys.readouterr().err
    assert cli("export", "ragas", "--dataset", "nope", "--out", tmp_path / "y.jsonl", "--db", db) == 1
    assert "no dataset named 'nope'" in capsys.readouterr().err
    assert cli("export", "ragas", "--dataset", "de", "--out", tmp_path / "y.jsonl", "--db", db,
               "--annotator", "zed") == 1
    assert "no annotator 'zed'" in capsys.readouterr().err
    assert not (tmp_path / "y.jsonl").exists()


# --------------------------------------------------------------------------- lossless: the whole label history


def make_history(store, catalog) -> None:
    """Every kind of event: yes, no, unsure, a change, a clear, an undo, comments (set, changed), an adjudication."""
    units = sorted(catalog.values(), key=lambda u: u.unit_id)
    passage = next(u for u in units if u.unit_kind == "passage")
    claim = next(u for u in units if u.unit_kind == "claim")
    fact = next(u for u in units if u.unit_kind == "fact")
    store.set_label("ana", passage, "relevant", 1)
    store.set_label("ben", passage, "relevant", 0)
    store.set_label("ana", claim, "supported", 2)  # unsure
    store.set_label("ben", claim, "supported", 2)
    store.set_label("ana", claim, "correct", 1)
    store.set_label("ana", claim, "correct", 0)  # a change
    store.set_label("ben", fact, "covered", 1)
    store.set_label("ben", fact, "covered", None)  # a clear
    store.set_label("ben", claim, "correct", 1)
    store.undo("ben")  # undoes ben's correct = 1
    store.set_comment("ana", claim, "the 5 is right, \"backoff\" is not in the passage\nsecond line")
    store.set_comment("ben", passage, "=HYPERLINK(\"http://x\")")
    store.set_comment("ben", passage, "-changed my mind\r")
    store.adjudicate(passage, "relevant", 1, "cy")
    store.set_label("ana", fact, "covered", 1)


def content(store) -> dict:
    """The whole label content of a store: every event (ids, batches, times, notes), label, comment, consensus."""
    return {"events": store.events(), "labels": store.labels(include_unsure=True), "comments": store.comments(),
            "consensus": store.consensus(), "annotators": store.annotators()}


LOSSLESS = [("ragas", ".jsonl"), ("ragas", ".csv"), ("ragas", ".parquet"),
            ("deepeval", ".json"), ("deepeval", ".jsonl"), ("deepeval", ".csv")]


@pytest.mark.parametrize(("tool", "suffix"), LOSSLESS)
def test_export_then_import_restores_the_whole_label_history(tmp_path, tool, suffix):
    fixture = "ragas_single.jsonl" if tool == "ragas" else "deepeval_goldens.json"
    with open_store(tmp_path / "a.db") as store:
        import_dataset(FIX / fixture, tool, "demo", store)
        first = open_dataset("demo", store)
        make_history(store, first.catalog())
        before = content(store)
        out = tmp_path / f"export{suffix}"
        result = export_dataset(first, store, tool, out)
    # 9 sets or clears, an undo, 3 comments, an adjudication, 1 set
    assert result.events == 15 and len(before["events"]) == 15
    assert [e.action for e in before["events"]].count("undo") == 1
    with open_store(tmp_path / "b.db") as store:
        report = import_dataset(out, tool, "demo", store)
        assert (report.history.restored, report.history.unchanged, report.history.merged) == (15, 0, 0)
        assert content(store) == before
        assert store.verify() == []
        assert open_dataset("demo", store).units() == first.units()
        # the same export again changes nothing
        import_dataset(out, tool, "demo", store)
        assert content(store) == before


def test_a_reimport_over_a_diverged_history_keeps_both(tmp_path):
    with open_store(tmp_path / "a.db") as store:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store)
        opened = open_dataset("demo", store)
        make_history(store, opened.catalog())
        export_dataset(opened, store, "ragas", tmp_path / "x.jsonl")
        passage = next(u for u in sorted(opened.units(), key=lambda u: u.unit_id) if u.unit_kind == "passage")
        store.set_label("ana", passage, "relevant", 0)  # ana changed her mind after the export
        n = len(store.events())
        report = import_dataset(tmp_path / "x.jsonl", "ragas", "demo", store, replace=True)
        # every chain of the file begins the store's: nothing to write (ana's later answer stands)
        # 8 labels, 2 comments, 1 adjudication
        assert (report.history.restored, report.history.unchanged, report.history.merged) == (0, 11, 0)
        assert len(store.events()) == n
    with open_store(tmp_path / "b.db") as store:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store)
        store.set_label("ana", passage, "relevant", 0)  # another store where ana answered otherwise
        report = import_dataset(tmp_path / "x.jsonl", "ragas", "demo", store, replace=True)
        # ana's relevant chain differs: her exported answer (1) comes in as one import event; the rest as it was
        assert (report.history.restored, report.history.unchanged, report.history.merged) == (14, 0, 1)
        mine = store.history(passage.unit_id, "relevant", "ana")
        assert [(e.action, e.old_value, e.new_value) for e in mine] == [("set", None, 0), ("import", 0, 1)]
        assert store.verify() == []


def exported(tmp_path, name: str) -> dict:
    """Export the RAGAS fixture with :func:`make_history`'s labels from a new SQLite store; its content before."""
    with open_store(tmp_path / "a.db") as source:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", source)
        make_history(source, open_dataset("demo", source).catalog())
        export_dataset(open_dataset("demo", source), source, "ragas", tmp_path / name)
        return content(source)


def test_history_from_another_dataset_name_is_refused(tmp_path):
    exported(tmp_path, "x.jsonl")
    with open_store(tmp_path / "b.db") as store:
        with pytest.raises(DataError) as err:
            import_dataset(tmp_path / "x.jsonl", "ragas", "other", store)
        assert store.datasets() == [] and store.events() == []
    lines = sorted(map(str, err.value.problems))
    assert len(lines) == 1  # one line per sample with events: all 15 are on the sample of line 2
    assert lines[0].startswith("x.jsonl:2 [human_labels]: label event 1 (and 14 more): unit 'demo:")
    assert lines[0].endswith("is not of this dataset (its ids start with 'other:': import under that name)")


def test_the_history_comes_back_exactly_on_either_backend(tmp_path, store):
    """Exported from SQLite, restored into SQLite or PostgreSQL: the same events, times to the microsecond."""
    before = exported(tmp_path, "x.parquet")
    import_dataset(tmp_path / "x.parquet", "ragas", "demo", store)
    assert content(store) == before and store.verify() == []


def test_cli_export_then_import_with_its_label_table_loses_nothing(tmp_path, capsys):
    """The reported loss: unsure answers and a comment dropped by export ragas -> import ragas --labels."""
    db, out = tmp_path / "a.db", tmp_path / "gold.csv"
    assert cli("import", "ragas", FIX / "ragas_single.jsonl", "--dataset", "demo", "--db", db) == 0
    with open_store(db) as st:
        make_history(st, open_dataset("demo", st).catalog())
        before = content(st)
    assert cli("export", "ragas", "--dataset", "demo", "--out", out, "--db", db) == 0
    capsys.readouterr()
    assert cli("import", "ragas", out, "--dataset", "demo", "--labels", tmp_path / "gold.labels.csv",
               "--db", tmp_path / "b.db") == 0
    assert "label history from the file: 15 event(s) restored as they were" in capsys.readouterr().out
    with open_store(tmp_path / "b.db") as st:
        assert content(st) == before
