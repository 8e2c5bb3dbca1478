"""playground.datasets: the shipped set and imported ones behind one API."""
from __future__ import annotations

from pathlib import Path

import pytest

from playground.datasets import SHIPPED, DatasetNotFound, dataset_names, open_dataset
from playground.importers.load import import_dataset
from playground.store import open_store
from playground.units import dataset_units, retrieved_passages

FIX = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def kept_in_tmp(tmp_path, monkeypatch):
    """A dataset's harness run keeps the page's per-case results: never in the user's cache here."""
    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "cache"))


def test_golden_is_the_default_and_uses_retrieval(mini_root):
    opened = open_dataset(None, root=mini_root)
    assert (opened.name, opened.kind, SHIPPED) == ("golden", "golden", "golden")
    assert opened.passages == retrieved_passages(opened.dataset)
    assert opened.units() == dataset_units(opened.dataset)
    assert open_dataset("golden", root=mini_root).catalog() == opened.catalog()


def test_names_and_not_found(tmp_path):
    assert dataset_names() == ["golden"]
    with open_store(tmp_path / "l.db") as store:
        assert dataset_names(store) == ["golden"]
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "zeta", store)
        import_dataset(FIX / "deepeval_goldens.json", "deepeval", "alpha", store)
        assert dataset_names(store) == ["golden", "alpha", "zeta"]
        with pytest.raises(DatasetNotFound, match=r"no dataset named 'nope' in sqlite:.*; known: golden, alpha, zeta"):
            open_dataset("nope", store)
        opened = open_dataset("alpha", store)
    assert opened.kind == "deepeval" and sorted(opened.passages) == ["alpha:trace-1", "alpha:trace-2", "alpha:trace-3"]
    # an import's passages are its contexts as given, in order
    assert [p.text for p in opened.passages["alpha:trace-3"]] == ["Every plan starts with a 14-day free trial."]
    with pytest.raises(DatasetNotFound, match="no label store given"):
        open_dataset("alpha")
    assert issubclass(DatasetNotFound, ValueError)


@pytest.mark.slow
def test_harness_run_on_an_imported_dataset(tmp_path, capsys):
    from playground.cli import main

    db = tmp_path / "l.db"
    assert main(["import", "ragas", str(FIX / "ragas_single.jsonl"), "--dataset", "demo", "--db", str(db)]) == 0
    for out in ("run1", "run2"):
        argv = ["harness", "run", "--dataset", "demo", "--db", str(db), "--out", str(tmp_path / out), "--quiet"]
        assert main(argv) == 0
    files = sorted(p.name for p in (tmp_path / "run1").iterdir())
    assert files == ["cases.csv", "cases.jsonl", "config.yaml", "report.json", "run.json", "units.csv"]
    for name in files:
        assert (tmp_path / "run1" / name).read_bytes() == (tmp_path / "run2" / name).read_bytes()
    import csv
    import json

    rows = list(csv.DictReader((tmp_path / "run1" / "units.csv").open(encoding="utf-8")))
    with open_store(db) as store:
        catalog = open_dataset("demo", store).catalog()
    # 6 passages + 5 claims x (supported, correct) + 3 facts, on exactly the dataset's units
    assert len(rows) == 19 and {r["unit_id"] for r in rows} == set(catalog)
    by = {(r["unit_id"], r["dimension"]): r for r in rows}
    claim = next(u for u in catalog.values() if u.text == "The Pro plan costs $59 per month.")
    # $59 is in no context (they say $49): unsupported at any floor; not in the reference: incorrect
    assert by[(claim.unit_id, "supported")]["value"] == "0" and by[(claim.unit_id, "supported")]["score"] == "0.0"
    assert by[(claim.unit_id, "correct")]["value"] == "0"
    fact = next(u for u in catalog.values() if u.text == "The Pro plan costs $49 per month.")
    assert by[(fact.unit_id, "covered")]["value"] == "0"
    report = json.loads((tmp_path / "run1" / "report.json").read_text())
    assert report["metrics"]["overall"]["recall_at_k"] is None and report["dataset"]["name"] == "demo"
    # no case names a relevant source: all three are left out of the rank-metric means (trec_eval)
    assert report["counts"] == {"cases": 3, "responses": 3, "passages": 6, "claims": 5, "facts": 3,
                                "cases_without_relevant_source": 3}
    # human against harness on the user's own data
    with open_store(db) as store:
        for unit in catalog.values():
            if unit.unit_kind == "passage":
                store.set_label("ann", unit, "relevant", 1)
    capsys.readouterr()
    assert main(["calibrate", "store", "--dataset", "demo", "--db", str(db), "--run", str(tmp_path / "run1")]) == 0
    assert "relevant (n=6" in capsys.readouterr().out
    assert main(["harness", "run", "--dataset", "nope", "--db", str(db), "--out", str(tmp_path / "x")]) == 1
    assert "no dataset named 'nope'" in capsys.readouterr().err


def test_the_catalog_knows_the_imported_datasets(tmp_path, mini_root):
    from playground.units import load_catalog

    with open_store(tmp_path / "l.db") as store:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store, labels=FIX / "ragas_single.labels.csv")
        plain = load_catalog(mini_root)
        full = load_catalog(mini_root, store=store)
        assert set(full) - set(plain) == set(open_dataset("demo", store).catalog())
        assert len(store.stale(plain)) == 17 and store.stale(full) == []
