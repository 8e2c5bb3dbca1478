"""The RAGTruth importer on the shared sample and on broken copies of it: all or nothing."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from playground.calibrate import default_ragtruth_path
from playground.importers import ragtruth as RT
from playground.importers.claim_dataset import load_imported
from playground.importers.ragtruth import RagTruthError, load_ragtruth
from playground.store import ReadOnlyStoreError, open_store

# RAGTRUTH_SAMPLE points at the shared sample from a worktree that has no ../shared beside it.
SAMPLE = Path(os.environ.get("RAGTRUTH_SAMPLE") or default_ragtruth_path())
pytestmark = pytest.mark.skipif(not SAMPLE.is_file(), reason="shared RAGTruth sample not present")
UNIT_ID = re.compile(r"^RT-\d+:c\d+:[0-9a-f]{8}$")


def lines() -> list[str]:
    if not SAMPLE.is_file():
        return [""] * 400  # collection only: every test is skipped
    return SAMPLE.read_text(encoding="utf-8").split("\n")[:-1]


def broken(tmp_path: Path, edits: dict[int, str], name: str = "broken.jsonl") -> Path:
    """A copy of the sample with 1-based line numbers replaced (None deletes the line)."""
    out = []
    for i, line in enumerate(lines(), start=1):
        if i in edits:
            if edits[i] is not None:
                out.append(edits[i])
        else:
            out.append(line)
    path = tmp_path / name
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def record(n: int) -> dict:
    return json.loads(lines()[n - 1] or '{"label": false, "claim_end": 0, "claim_index": 0}')


def cli(*argv) -> int:
    from playground.cli import main

    return main(list(argv))


# --------------------------------------------------------------------------- a good file


def test_import_the_shared_sample(tmp_path):
    from playground.datasets import open_dataset

    with open_store(tmp_path / "labels.db") as store:
        result = RT.import_ragtruth(SAMPLE, None, store)
        labels = store.labels(annotator=RT.HUMAN_ANNOTATOR)
        stored = store.dataset("ragtruth")
        opened = open_dataset("ragtruth", store)
        infos = store.datasets()
    ds = result.dataset
    assert ds.counts() == {"cases": 23, "responses": 58, "passages": ds.counts()["passages"], "claims": 334,
                           "labels": 334, "supported": 271, "hallucinated": 63}
    assert result.path is None and not list(tmp_path.glob("**/*.dataset.json"))
    assert [(i.name, i.kind, i.cases, i.units) for i in infos] == [("ragtruth", "ragtruth", 23, 334)]
    assert stored.payload["units"] == json.loads(ds.to_json())["units"]
    assert opened.catalog() == ds.catalog()
    assert len(labels) == 334 and {lab.dimension for lab in labels} == {"supported"}
    assert all(UNIT_ID.match(u.unit_id) for u in ds.units)
    assert {c["case_type"] for c in ds.cases.values()} == {"ragtruth_qa", "ragtruth_summary"}
    # the human label is "supported = not hallucinated", unit by unit
    sample = load_ragtruth(SAMPLE)
    by_id = {RT.claim_unit_id(r): r for r in sample.records}
    assert {lab.unit_id: lab.value for lab in labels} == {u: int(not r.label) for u, r in by_id.items()}
    first = sample.records[0]
    unit = ds.catalog()[RT.claim_unit_id(first)]
    assert unit.unit_id.startswith(f"RT-{first.response_id}:c{first.claim_index}:")
    assert unit.case_id == f"RT-S{first.source_id}" and unit.response_id == f"RT-{first.response_id}"
    assert unit.dimensions == ("supported",) and unit.text == first.claim
    assert ds.evidence(unit.unit_id) == list(first.context)
    # every case lists its responses, every response its claims in claim_index order
    for rid, resp in ds.responses.items():
        assert rid in ds.cases[resp["case_id"]]["responses"]
        idx = [ds.claims[u]["claim_index"] for u in resp["claims"]]
        assert idx == sorted(idx)
    # the same file again: the same dataset, no new event
    with open_store(tmp_path / "labels.db") as store:
        events = len(store.events())
        RT.import_ragtruth(SAMPLE, None, store)
        assert len(store.events()) == events and store.dataset("ragtruth").sha256 == stored.sha256


def test_the_older_data_set_file_still_writes_and_reads(tmp_path):
    first = RT.import_ragtruth(SAMPLE, tmp_path / "out", None)
    again = RT.import_ragtruth(SAMPLE, tmp_path / "out2", None)
    assert first.path == tmp_path / "out" / RT.DATASET_FILE
    assert first.path.read_bytes() == again.path.read_bytes()
    loaded = load_imported(first.path)
    assert loaded.to_json() == first.dataset.to_json() and loaded.catalog() == first.dataset.catalog()
    assert not list((tmp_path / "out").glob(".*.tmp"))
    with pytest.raises(ValueError, match="exactly one"):
        RT.import_ragtruth(SAMPLE, tmp_path / "out", object())


def test_a_failing_label_write_leaves_no_dataset(tmp_path, monkeypatch):
    """Issue 17.5: the dataset and its labels are one transaction, whichever statement fails."""
    from playground.store import label_writes

    with open_store(tmp_path / "labels.db") as store:
        before = store.dump()
        monkeypatch.setattr(label_writes, "UPSERT_LABEL",
                            "INSERT INTO no_such_table VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        with pytest.raises(Exception, match="no_such_table"):
            RT.import_ragtruth(SAMPLE, None, store)
        assert store.dump() == before and store.datasets() == []


def test_a_failing_rename_leaves_no_file(tmp_path, monkeypatch):
    import os

    def refuse(src, dst):
        raise OSError("rename refused")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="rename refused"):
        RT.import_ragtruth(SAMPLE, tmp_path / "out", None)
    assert list((tmp_path / "out").iterdir()) == []


def test_unit_ids_match_the_calibration():
    from playground.calibrate import ragtruth_human

    ds = RT.build_dataset(load_ragtruth(SAMPLE))
    h = ragtruth_human(SAMPLE)
    assert set(h.frame["unit_id"]) == set(ds.catalog())
    assert dict(zip(h.frame["unit_id"], h.frame["value"], strict=True)) == {lab.unit_id: lab.value for lab in ds.labels}


def test_a_read_only_store_refuses_and_keeps_nothing(tmp_path):
    with open_store(tmp_path / "labels.db"):
        pass
    with open_store(tmp_path / "labels.db", read_only=True) as store, pytest.raises(ReadOnlyStoreError):
        RT.import_ragtruth(SAMPLE, None, store)
    with open_store(tmp_path / "labels.db") as store:
        assert store.labels() == []


# --------------------------------------------------------------------------- broken copies


BREAKS = {
    "invalid JSON": ({5: '{"example_id": "2:4", '}, [(5, "invalid JSON")]),
    "missing field": ({10: json.dumps({k: v for k, v in record(10).items() if k != "label"})},
                      [(10, "missing field 'label'")]),
    "label disagrees with types": ({12: json.dumps({**record(12), "label": not record(12)["label"]})},
                                   [(12, "label is")]),
    "span length": ({3: json.dumps({**record(3), "claim_end": record(3)["claim_end"] + 1})},
                    [(3, "claim_end - claim_start")]),
    "duplicate example id": ({8: lines()[6]}, [(8, "duplicate example_id")]),
    "empty line": ({20: ""}, [(20, "empty line")]),
    "two bad lines": ({3: "not json", 300: json.dumps({**record(300), "evidence": ["a"]})},
                      [(3, "invalid JSON"), (300, "evidence must be a list of 4 strings")]),
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_a_broken_file_imports_nothing(tmp_path, name):
    edits, expected = BREAKS[name]
    path = broken(tmp_path, edits)
    db = tmp_path / "labels.db"
    with open_store(db) as store:
        before = store.dump()
        with pytest.raises(RagTruthError) as err:
            RT.import_ragtruth(path, None, store)
        assert store.dump() == before
    with pytest.raises(RagTruthError):
        RT.import_ragtruth(path, tmp_path / "out", None)
    assert not (tmp_path / "out").exists()
    problems = err.value.problems
    for line, text in expected:
        assert any(ln == line and text in msg for ln, msg in problems), (line, text, problems)
    assert f"line {expected[0][0]}:" in str(err.value)


def test_cli_import(tmp_path, capsys):
    db, out = tmp_path / "labels.db", tmp_path / "out"
    assert cli("import", "ragtruth", str(SAMPLE), "--db", str(db)) == 0
    text = capsys.readouterr().out
    assert "334 claims (63 hallucinated)" in text and "dataset and 334 human labels" in text
    assert not out.exists()
    assert cli("import", "ragtruth", str(SAMPLE), "--out", str(out)) == 0
    assert (out / RT.DATASET_FILE).is_file()
    assert cli("import", "ragtruth", str(SAMPLE), "--dry-run", "--out", str(tmp_path / "dry")) == 0
    assert not (tmp_path / "dry").exists()
    bad = broken(tmp_path, {4: "{", 9: json.dumps({**record(9), "claim_index": -1})})
    assert cli("import", "ragtruth", str(bad), "--out", str(tmp_path / "bad-out"), "--db", str(tmp_path / "b.db")) == 1
    err = capsys.readouterr().err
    assert "line 4: invalid JSON" in err and "line 9:" in err and "nothing was imported" in err
    assert not (tmp_path / "bad-out").exists() and not (tmp_path / "b.db").exists()
    assert cli("import", "ragtruth", str(tmp_path / "absent.jsonl")) == 1


def test_cli_import_parses_the_file_once(tmp_path, monkeypatch):
    import playground.importers.ragtruth as importer

    calls: list[Path] = []
    real = importer.load_ragtruth

    def counting(path, *args, **kwargs):
        calls.append(Path(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(importer, "load_ragtruth", counting)
    assert cli("import", "ragtruth", str(SAMPLE), "--db", str(tmp_path / "labels.db")) == 0
    assert calls == [SAMPLE]


def test_imported_units_join_the_catalog(tmp_path, mini_root):
    """Labels of an imported data set are known units in `labels stats`, not orphans."""
    from playground.importers.ragtruth import import_ragtruth
    from playground.units import load_catalog

    sample = SAMPLE
    before = load_catalog(mini_root)
    import_ragtruth(sample, mini_root / "imported", None)
    after = load_catalog(mini_root)
    added = set(after) - set(before)
    assert len(added) == 334 and all(u.startswith("RT-") for u in added)
