"""Issue 24.3 with 24.5/24.6: export ragas|deepeval then import restores verdicts, notes, tags, taxonomy, guidelines."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import store_fixtures as sf
from test_export_datasets import FIX, LOSSLESS, make_history

from playground.datasets import open_dataset
from playground.errors import DataError
from playground.importers.export import export_dataset
from playground.importers.load import import_dataset
from playground.store import open_store
from playground.verdicts import response_units

pg_server = sf.pg_server
store = sf.store
store_url = sf.store_url


def make_verdicts(store, opened) -> None:
    """Guidelines (2 versions), verdicts (pass, fail, unsure, a change), notes, tags (renamed, merged, undone)."""
    r = response_units(opened)
    store.set_guidelines(opened.name, "# Rules\n\nFail any invented number.\n", "owner")
    store.set_label("ana", r[0], "pass", 0)
    store.set_comment("ana", r[0], "invents a \"30 s\" timeout\nsecond line")
    store.set_tags("ana", r[0], ["halluc", "vague"])
    store.set_guidelines(opened.name, "# Rules v2\n\nUnsure is fine.\n", "owner")
    store.set_label("ben", r[0], "pass", 2)
    store.set_label("ben", r[1], "pass", 1)
    store.set_label("ben", r[1], "pass", 0)
    store.set_tags("ben", r[1], ["made-up"])
    store.set_tags("ben", r[1], ["made-up", "tone"])
    store.undo("ben")  # back to ["made-up"]
    store.rename_failure_mode(opened.name, "halluc", "hallucination", "owner")
    store.merge_failure_modes(opened.name, ["made-up"], "hallucination", "owner")
    store.add_failure_mode(opened.name, "off-topic", "owner", "answers another question")


def content(store, name: str = "demo") -> dict:
    """Everything a store says about the dataset's labels and error analysis."""
    return {"events": store.events(), "labels": store.labels(include_unsure=True), "comments": store.comments(),
            "consensus": store.consensus(), "annotators": store.annotators(), "tags": store.tags(),
            "taxonomy": store.taxonomy(name), "guidelines": store.guidelines_history(name)}


def _export(tmp_path: Path, tool: str, suffix: str) -> tuple[dict, Path]:
    fixture = "ragas_single.jsonl" if tool == "ragas" else "deepeval_goldens.json"
    with open_store(tmp_path / "a.db") as source:
        import_dataset(FIX / fixture, tool, "demo", source)
        opened = open_dataset("demo", source)
        make_history(source, opened.catalog())
        make_verdicts(source, opened)
        before = content(source)
        result = export_dataset(opened, source, tool, tmp_path / f"x{suffix}")
        assert result.events == len(before["events"]) == 15 + 9
    return before, tmp_path / f"x{suffix}"


@pytest.mark.parametrize(("tool", "suffix"), LOSSLESS)
def test_export_then_import_restores_verdicts_notes_tags_taxonomy_and_guidelines(tmp_path, tool, suffix):
    before, out = _export(tmp_path, tool, suffix)
    assert [(t.annotator, t.tags, t.raw_tags) for t in before["tags"]] == [
        ("ana", ("hallucination", "vague"), ("halluc", "vague")), ("ben", ("hallucination",), ("made-up",))]
    assert [e.guidelines_version for e in before["events"][15:]] == [1, 1, 1, 2, 2, 2, 2, 2, 2]
    with open_store(tmp_path / "b.db") as st:
        report = import_dataset(out, tool, "demo", st)
        assert report.history.restored == 24 and report.history.merged == 0
        assert content(st) == before and st.verify() == []
        dump = st.dump()
        import_dataset(out, tool, "demo", st)  # again: nothing changes
        assert st.dump() == dump


def test_the_whole_content_comes_back_on_either_backend(tmp_path, store):
    before, out = _export(tmp_path, "ragas", ".parquet")
    import_dataset(out, "ragas", "demo", store)
    assert content(store) == before and store.verify() == []


def test_the_exported_rows_carry_verdict_and_failure_modes(tmp_path):
    _before, out = _export(tmp_path, "ragas", ".jsonl")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    # consensus: response 1 has ana fail (ben unsure: no vote) -> 0; response 2 has ben fail -> 0
    got = sorted((r["human_pass"] is None, r["human_pass_n"], r["human_failure_modes"]) for r in rows)
    assert got == [(False, 1, ["hallucination"]), (False, 1, ["hallucination", "vague"]), (True, 0, [])]
    assert [r["human_pass_yes"] for r in rows] == [0, 0, 0] and {r["human_pass"] for r in rows} == {0, None}
    records = [e for e in rows[0]["human_labels"] if "record" in e]
    assert [(r["record"], r.get("name"), r.get("version")) for r in records] == [
        ("failure_mode", "halluc", None), ("failure_mode", "hallucination", None), ("failure_mode", "made-up", None),
        ("failure_mode", "off-topic", None), ("failure_mode", "tone", None), ("failure_mode", "vague", None),
        ("guidelines", None, 1), ("guidelines", None, 2)]


def test_a_bad_record_is_one_clear_problem_and_nothing_is_written(tmp_path):
    _before, out = _export(tmp_path, "ragas", ".jsonl")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    rows[0]["human_labels"][0]["name"] = "Not A Tag"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with open_store(tmp_path / "c.db") as st:
        with pytest.raises(DataError) as err:
            import_dataset(out, "ragas", "demo", st)
        assert st.datasets() == [] and st.events() == [] and st.taxonomy("demo") == []
    assert "bad tag name 'Not A Tag'" in str(err.value)


def test_import_with_guidelines_in_the_same_transaction(tmp_path):
    with open_store(tmp_path / "a.db") as st:
        report = import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", st, guidelines="# Ours\n",
                                guidelines_author="lea")
        assert report.guidelines_version == 1 and "guidelines: version 1" in report.summary()
        g = st.guidelines("demo")
        assert (g.version, g.markdown, g.author) == (1, "# Ours\n", "lea")
        assert import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", st,
                              guidelines="# Ours\n").guidelines_version == 1  # same text: no new version
