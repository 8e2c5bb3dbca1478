"""The import's bounded-memory path (playground.importers.stored): same stored bytes, units built only when labels
need them, the same summary and errors as the whole-payload path it replaced.

The SHA-256 values below were recorded from main at 9a7b6b7 (before this path), importing each fixture into a
new SQLite store as dataset ``demo`` (``store.dataset_revision``): the stored payload is byte-identical.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import store_fixtures as sf

import playground.importers.load as load
import playground.importers.stored as stored
from playground.golden import Dataset
from playground.importers.core import Sample
from playground.importers.load import import_dataset, payload_units, prepare, read_import
from playground.importers.stored import case_of, count_units, drain, stream_payload
from playground.store import StoreError, open_store
from playground.store.checks import canonical_json
from playground.store.dataset_text import dataset_head, put_dataset_text
from playground.verdicts import response_units

FIX = Path(__file__).parent / "fixtures"
pg_server = sf.pg_server
store_url = sf.store_url

#: file, kind, text kind -> sha256 of the stored payload, recorded from main before the change.
MAIN_SHA256 = {
    ("ragas_single.jsonl", "ragas", "qa"): "a5ec1b52ea6349675c8f7641aa5ea84c9e992605e9f927fd7e2ad6e959e78fb7",
    ("ragas_single.csv", "ragas", "qa"): "13545dc5caae28c96899c83d34e13f84e7fe381a7b529c83021f3418c0c0ce6f",
    ("ragas_single.parquet", "ragas", "qa"): "4aeedbe1c3c7b8d6be936417120619ef8cb991881cd6bfd01719b6c94b4d51be",
    ("ragas_multi.jsonl", "ragas", "qa"): "798d1c54a47b6d3af3bc394fdef10856cc0fe219e5eabcb7fa3c8b22e4c00fd4",
    ("ragas_multi.csv", "ragas", "qa"): "b53037b32acf23b805693d901e417d4c1048ccd90d8b752670dda6767e859a15",
    ("deepeval_goldens.json", "deepeval", "qa"): "f2957c35d0f10fce1c538d840a9871c7f14234f926a1e83ea80479cd7ee14f7f",
    ("deepeval_goldens.jsonl", "deepeval", "qa"): "93b094607a396f4fa79da3da6685fcebcd44fd5fdff3645ff0898e1593939732",
    ("deepeval_goldens.csv", "deepeval", "qa"): "7ddea63d6408fdd02f829974f95958c002054d35db2714e9e8f3c34eaccd253e",
    ("public_qa.jsonl", "ragas", "qa"): "a8e86071ca171dbc277b074f3f99f0f1f1b97c51e62c81780d4ed88d8b65b468",
    ("gate_qa.jsonl", "ragas", "qa"): "e84e71c49a89d46e467b8154a136657d01e1779ef862e1fb3caf2ba800fa43a2",
    ("ragas_single.jsonl", "ragas", "dialogue"): "3c978bc09a04dfc1b9b5d26a43a1e55b188020c75ee7eaf86df756d2c9c940de",
}
#: file -> (samples, units) printed by main's import summary.
MAIN_COUNTS = {"ragas_single.jsonl": (3, 14), "ragas_single.csv": (3, 14), "ragas_single.parquet": (3, 14),
               "ragas_multi.jsonl": (2, 5), "ragas_multi.csv": (2, 5), "deepeval_goldens.json": (3, 14),
               "deepeval_goldens.jsonl": (3, 15), "deepeval_goldens.csv": (3, 15), "public_qa.jsonl": (30, 93),
               "gate_qa.jsonl": (300, 1200)}


def write_rows(path: Path, n: int) -> Path:
    """``n`` RAGAS rows shaped like the scale bench's: 5 contexts, a 3-sentence response, a 2-sentence reference.

    Each sample has 5 passage units, 3 claims and 2 facts: 10 units.
    """
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({
                "user_input": f"How does the retry policy work for account {i}?",
                "retrieved_contexts": [f"The retry window applies to account {i + j}. See section {j}."
                                       for j in range(5)],
                "response": f"The retry policy applies to account {i}. It lasts {i % 9 + 1} days. Ask support.",
                "reference": f"The retry policy applies to account {i}. It lasts {i % 9 + 1} days.",
            }) + "\n")
    return path


@pytest.mark.parametrize(("file", "kind", "text_kind"), sorted(MAIN_SHA256))
def test_stored_payload_is_the_bytes_main_stored(tmp_path: Path, file: str, kind: str, text_kind: str) -> None:
    with open_store(tmp_path / "s.db") as store:
        result = import_dataset(FIX / file, kind, "demo", store, text_kind=text_kind)
        assert store.dataset_revision("demo") == MAIN_SHA256[(file, kind, text_kind)]
        assert dataset_head(store, "demo") == (kind, MAIN_SHA256[(file, kind, text_kind)])
        cases, units = MAIN_COUNTS[file]
        assert result.summary() == f"dataset 'demo' ({kind}) imported: {cases} samples, {units} units, in {store.url}"


@pytest.mark.parametrize("file", sorted(MAIN_COUNTS))
def test_streamed_text_is_the_canonical_json_of_the_whole_payload(file: str) -> None:
    kind = "deepeval" if file.startswith("deepeval") else "ragas"
    payload = prepare(FIX / file, kind, "demo")
    read = read_import(FIX / file, kind, "demo")
    assert read.units() == len(payload_units(payload)) == payload["summary"]["units"]
    streamed = stream_payload(read.head(), drain(read.samples))
    assert read.samples == []  # given up as written
    assert streamed.text == canonical_json(payload)
    assert streamed.summary == payload["summary"] == dict(zip(("cases", "units"), MAIN_COUNTS[file], strict=True))
    assert streamed.catalog == {}


@pytest.mark.parametrize("file", sorted(MAIN_COUNTS))
def test_catalog_of_wanted_ids_is_that_of_every_unit(file: str) -> None:
    kind = "deepeval" if file.startswith("deepeval") else "ragas"
    payload = prepare(FIX / file, kind, "demo")
    from playground.importers.core import build_dataset

    dataset, _ = build_dataset(payload, Path("."))
    every = {u.unit_id: u for u in [*payload_units(payload), *response_units(dataset)]}
    assert all(case_of(uid) == u.case_id for uid, u in every.items())
    wanted = [*sorted(every)[::2], "demo:nope::x", "other:thing/R", "junk"]
    read = read_import(FIX / file, kind, "demo")
    catalog = stream_payload(read.head(), drain(read.samples), wanted).catalog
    assert catalog == {uid: every[uid] for uid in sorted(every)[::2]}


def test_a_case_id_given_twice_counts_its_last_row_as_the_dataset_does() -> None:
    # "h…" ids are what a sample without an id gets; an explicit id can name the same case.
    def sample(n: int, sid: str | None, response: str) -> Sample:
        from playground.importers.rows import Place

        return Sample(Place("f.jsonl", "line", n), "Same question?", response, ("ctx one", "ctx two"),
                      sample_id=sid)

    first = sample(1, None, "One. Two.")
    payload_id = stream_payload({"name": "d", "kind": "ragas"}, [first]).text
    content_id = json.loads(payload_id)["samples"][0]["case_id"].split(":", 1)[1]
    samples = [first, sample(2, content_id, "Only one.")]
    from playground.importers.core import build_payload

    payload = build_payload("d", "ragas", samples, source="f", source_sha256="0", source_format="jsonl")
    assert len(payload_units(payload)) == 3  # the last row: 2 passages + 1 claim
    assert count_units("d", samples) == 3
    assert stream_payload({"name": "d", "kind": "ragas"}, samples).summary == {"cases": 2, "units": 3}


def test_an_import_without_labels_builds_no_unit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("a unit was built")

    monkeypatch.setattr(stored, "row_units", refuse)
    monkeypatch.setattr(load, "payload_units", refuse)
    monkeypatch.setattr(Dataset, "units", refuse)
    data = write_rows(tmp_path / "d.jsonl", 2000)
    with open_store(tmp_path / "s.db") as store:
        result = import_dataset(data, "ragas", "big", store)
        again = import_dataset(data, "ragas", "big", store)  # unchanged, no labels in the store: still none
        assert result.summary() == f"dataset 'big' (ragas) imported: 2000 samples, 20000 units, in {store.url}"
        assert again.summary() == (f"dataset 'big' (ragas) unchanged (same content): 2000 samples, 20000 units, "
                                   f"in {store.url}")


def test_labels_build_the_units_of_the_labelled_cases_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_rows(tmp_path / "d.jsonl", 50)
    read = read_import(data, "ragas", "big")
    every = stream_payload(read.head(), drain(read.samples), ["big:" + "x"]).summary
    assert every == {"cases": 50, "units": 500}
    payload = prepare(data, "ragas", "big")
    units = payload_units(payload)
    claims = [u for u in units if u.unit_kind == "claim"]
    table = tmp_path / "labels.csv"
    table.write_text("annotator,unit_id,dimension,value\n"
                     f"ann,{claims[0].unit_id},supported,1\nann,{claims[1].unit_id},supported,0\n"
                     f"ann,{claims[30].unit_id},correct,1\n", encoding="utf-8")
    built: list[str] = []
    real = stored.row_units

    def counting(name: str, row: dict[str, Any]) -> Any:
        built.append(row["case_id"])
        return real(name, row)

    monkeypatch.setattr(stored, "row_units", counting)
    with open_store(tmp_path / "s.db") as store:
        result = import_dataset(data, "ragas", "big", store, labels=table)
        assert result.labels == 3
        assert sorted(built) == sorted({claims[0].case_id, claims[30].case_id})
        built.clear()
        # a re-import with the store's labels on the dataset: their cases again, and no stale label
        assert import_dataset(data, "ragas", "big", store).stale == 0
        assert sorted(built) == sorted({claims[0].case_id, claims[30].case_id})


def test_changed_text_still_marks_earlier_labels_stale(tmp_path: Path) -> None:
    """Main reported 3 stale labels for this change of the first sample (recorded with main's code)."""
    lines = (FIX / "ragas_single.jsonl").read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    row["response"] += " Also it is blue."
    row["retrieved_contexts"] = [c + " x" for c in row.get("retrieved_contexts", [])]
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n", encoding="utf-8")
    with open_store(tmp_path / "s.db") as store:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store, labels=FIX / "ragas_single.labels.csv")
        result = import_dataset(changed, "ragas", "demo", store, replace=True)
        assert store.dataset_revision("demo") == "17694ca62075f3f0dda7f167128a1d8583cd902812f96cf4a944fab432c83f92"
        assert result.summary().splitlines() == [
            f"dataset 'demo' (ragas) replaced: 3 samples, 15 units, in {store.url}",
            "  3 earlier label(s) rest on text that changed: kept and marked stale "
            "(`playground labels stats --dataset demo` lists them)"]


def test_a_read_file_is_used_once(tmp_path: Path) -> None:
    read = read_import(FIX / "ragas_single.jsonl", "ragas", "demo")
    with open_store(tmp_path / "s.db") as store:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store, read=read)
        with pytest.raises(ValueError, match="used up"):
            import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store, read=read)
        with pytest.raises(ValueError, match="is not that of"):
            import_dataset(FIX / "ragas_single.jsonl", "ragas", "other", store,
                           read=read_import(FIX / "ragas_single.jsonl", "ragas", "demo"))


def test_the_text_path_stores_what_put_dataset_stores_on_both_backends(store_url: str, tmp_path: Path) -> None:
    """SQLite and PostgreSQL: the same row as ``put_dataset`` of the payload dict, the same conflicts."""
    payload = prepare(FIX / "ragas_single.jsonl", "ragas", "demo")
    sha = MAIN_SHA256[("ragas_single.jsonl", "ragas", "qa")]
    with open_store(store_url) as store:
        assert dataset_head(store, "demo") is None
        result = import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store,
                                labels=FIX / "ragas_single.labels.csv")
        assert (result.cases, result.units, result.labels) == (3, 14, 17)
        assert dataset_head(store, "demo") == ("ragas", sha)
        stored = store.dataset("demo")
        assert stored is not None and stored.payload == payload and stored.sha256 == sha
        info = store.put_dataset("copy", "ragas", payload)  # the dict path, for comparison
        assert info.sha256 == sha and (info.cases, info.units) == (3, 14)
        texts = store._b.read(lambda cur: cur.execute(
            "SELECT name, payload FROM datasets ORDER BY name").fetchall())
        assert [n for n, _ in texts] == ["copy", "demo"] and texts[0][1] == texts[1][1] == canonical_json(payload)
        again = import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store)
        assert again.unchanged and again.stale == 0
        with pytest.raises(StoreError, match=r"already in the label store .* with other content"):
            put_dataset_text(store, "demo", "ragas", '{"other":1}', "0" * 64, {"cases": 0, "units": 0})
        with pytest.raises(ValueError, match=r"already exists \(kind ragas\)"):
            import_dataset(FIX / "deepeval_goldens.json", "deepeval", "demo", store)
        assert dataset_head(store, "demo") == ("ragas", sha) and len(store.labels()) == 17


@pytest.mark.parametrize("text", ["", "\n", "a", "a\n", "a\nb", "a\n\n", "\n\nx\n", "a\r\nb\n\n\n", "é\u2028x\ny"])
def test_jsonl_lines_are_walked_as_split_lines_gives_them(text: str) -> None:
    from playground.importers.core import _lines
    from playground.jsonl import split_lines

    assert list(_lines(text)) == split_lines(text)
