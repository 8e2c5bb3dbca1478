"""Hostile text through every dataset export and back: CR, LF, NUL, quotes, RTL marks, formula starts, pipes.

A dataset whose questions, answers, contexts and references hold any text is
exported as RAGAS (JSONL, CSV, Parquet) and DeepEval (JSON, JSONL, CSV), and
each file imported again gives exactly the same samples; CSV cells that a
spreadsheet would run come out neutralised (a leading ``'``).
"""
from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playground.datasets import open_dataset
from playground.importers.export import export_dataset
from playground.importers.load import import_dataset
from playground.store import open_store

FORMATS = [("ragas", ".jsonl"), ("ragas", ".csv"), ("ragas", ".parquet"),
           ("deepeval", ".json"), ("deepeval", ".jsonl"), ("deepeval", ".csv")]
#: Characters that broke or could break a file: line ends, NUL, quotes, separators, bidi marks, formula starts.
HOSTILE = "\r\n\x00\"',;|[]{}=+-@\t \u200f\u202e\u2028\ufeff\\#:/é漢"
hostile_text = st.text(alphabet=st.sampled_from(HOSTILE) | st.characters(exclude_categories=("Cs",)),
                       min_size=1, max_size=40)
# The importer refuses empty fields; RAGAS's own rule reads a user_input starting "[{" as a message list.
field = hostile_text.filter(lambda t: t.strip() and not t.lstrip().startswith("[{"))
sample = st.fixed_dictionaries({
    "user_input": field, "response": field, "reference": field,
    "retrieved_contexts": st.lists(field, min_size=1, max_size=3),
})


def samples_of(store) -> list[tuple]:
    """What an import keeps of each sample's text, in order."""
    return [(s["query"], s["response"], s["contexts"], s["reference"])
            for s in open_dataset("h", store).payload["samples"]]


def round_trip(rows: list[dict], tmp: Path) -> None:
    src = tmp / "src.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with open_store(tmp / "a.db") as store:
        import_dataset(src, "ragas", "h", store)
        expected = samples_of(store)
        for tool, suffix in FORMATS:
            export_dataset(open_dataset("h", store), store, tool, tmp / f"{tool}{suffix}")
    for tool, suffix in FORMATS:
        db = tmp / f"{tool}{suffix}.db"
        with open_store(db) as store:
            import_dataset(tmp / f"{tool}{suffix}", tool, "h", store)
            assert samples_of(store) == expected, f"{tool}{suffix}"
        db.unlink()


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(sample, min_size=1, max_size=3, unique_by=lambda r: r["user_input"]))
def test_any_text_reads_back_exactly_from_every_export(rows):
    with tempfile.TemporaryDirectory() as tmp:
        round_trip(rows, Path(tmp))


def test_the_reported_cases_read_back(tmp_path):
    """A lone CR inside a passage (was: "4 cells, the header has 17"), a formula, NUL, an RTL mark, a pipe."""
    round_trip([{"user_input": "=HYPERLINK(\"http://x\",\"y\")", "response": "-1 + 2\r",
                 "retrieved_contexts": ["line one\rline two", "a|b", "\u202eevil\x00", "'quoted"],
                 "reference": "@SUM(A1)"}], tmp_path)


def test_csv_cells_a_spreadsheet_would_run_are_neutralised(tmp_path):
    src = tmp_path / "src.jsonl"
    src.write_text(json.dumps({"user_input": "=1+1", "response": "+2", "retrieved_contexts": ["@x", "plain"],
                               "reference": "-3"}) + "\n", encoding="utf-8")
    with open_store(tmp_path / "a.db") as store:
        import_dataset(src, "ragas", "h", store)
        export_dataset(open_dataset("h", store), store, "ragas", tmp_path / "r.csv")
        export_dataset(open_dataset("h", store), store, "deepeval", tmp_path / "d.csv")
    ragas = next(csv.DictReader(io.StringIO((tmp_path / "r.csv").read_text(), newline="")))
    assert (ragas["user_input"], ragas["response"], ragas["reference"]) == ("'=1+1", "'+2", "'-3")
    assert ragas["retrieved_contexts"] == "['@x', 'plain']"  # starts with '[': a spreadsheet shows it as text
    deepeval = next(csv.DictReader(io.StringIO((tmp_path / "d.csv").read_text(), newline="")))
    assert (deepeval["input"], deepeval["actual_output"]) == ("'=1+1", "'+2")
    assert deepeval["retrieval_context"] == "'@x|plain"
