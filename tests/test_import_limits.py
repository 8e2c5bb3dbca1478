"""Every bound of playground.importers.limits at every importer (issue 43, must-hold 1): one table.

Each row is (importer, format, bound, a builder of the hostile input, the exact error).  The import
runs through the CLI into a real SQLite store made beforehand; it must exit 1, print exactly the error
(the file, the place — line, item, row or trace and span — the field, and the limit), and leave the
store without a dataset.  The cell and depth bounds are the real ones (a cell of 1,000,001 characters,
33 levels); the row and size bounds are lowered (``limits.MAX_ROWS`` = 3, ``limits.MAX_FILE_BYTES``
just below the file or its text) so the table stays fast; tests/test_datasets_limits.py checks each
at its real edge for the core formats, and the last tests here refuse a 50,000,000-character document
in a trace and a file of 200,001 traces at the real limits.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from playground import limits
from playground.cli import main
from playground.store import open_store

LONG = 1_000_001  # one past MAX_CELL_CHARS
TRACE = "1" * 32


def bounds(rows: int = 200_000, mib: int = 256) -> str:
    """limits.describe() as it reads with the bounds lowered to ``rows`` rows and ``mib`` MiB."""
    return (f"at most {mib} MiB of text, {rows:,} rows, 1,000,000 characters per cell and 32 levels of nesting "
            "per file")


def nested(levels: int) -> list:
    """A list whose deepest container is ``levels`` deep counted from the row (the row is level 1)."""
    value: list = []
    for _ in range(levels - 2):
        value = [value]
    return value


# --- the hostile inputs, format by format --------------------------------------------------------


def rag_row(i: int, **extra: Any) -> dict:
    return {"user_input": f"Question {i}?", "response": "An answer.", "retrieved_contexts": ["A context."], **extra}


def deepeval_row(i: int, **extra: Any) -> dict:
    return {"input": f"Question {i}?", "actual_output": "An answer.", "retrieval_context": ["A context."], **extra}


def table_row(i: int, **extra: Any) -> dict:
    return {"question": f"Question {i}?", "answer": "An answer.", "contexts": ["A context."], **extra}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict]) -> Path:
    cols = list(rows[0])
    cell = lambda v: json.dumps(v) if isinstance(v, list) else str(v)  # noqa: E731  (a list as its literal)
    path.write_text(",".join(cols) + "\n" + "".join(",".join(cell(r[c]) for c in cols) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def write_parquet(path: Path, rows: list[dict]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def write_hf(path: Path, rows: list[dict]) -> Path:
    """A ``save_to_disk`` folder (state.json and one Arrow stream shard), as datasets writes it."""
    path.mkdir()
    table = pa.Table.from_pylist(rows)
    with pa.OSFile(str(path / "data-00000-of-00001.arrow"), "wb") as sink, \
            pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    (path / "state.json").write_text(json.dumps({"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}))
    return path


def ragtruth_row(i: int, claim: str = "The ferry runs daily.", **extra: Any) -> dict:
    return {"example_id": f"r{i}:0", "source_id": f"s{i}", "response_id": f"r{i}", "claim_index": 0,
            "claim_start": 0, "claim_end": len(claim), "claim": claim, "label": False,
            "evidence": ["The ferry runs every day.", "", "", ""], "evidence_mask": [True, False, False, False],
            "task_type": "QA", "source_name": "MARCO", "generator_model": "m", "temperature": 0.7,
            "granularity": "claim", "label_types": [], "implicit_true": False, "due_to_null": False, **extra}


def span(trace: str, span_id: str, parent: str | None, kind: str, attrs: dict) -> dict:
    """One span in Phoenix's span JSON (nested context and attributes)."""
    return {"name": kind.lower(), "context": {"trace_id": trace, "span_id": span_id}, "parent_id": parent,
            "span_kind": kind, "start_time": "2026-01-01T00:00:01+00:00", "end_time": "2026-01-01T00:00:02+00:00",
            "attributes": {"openinference": {"span": {"kind": kind}}, **attrs}}


def trace_spans(trace: str, doc: str = "Text one.", **extra: Any) -> list[dict]:
    """A root (question and answer) and a retriever span with one document; ``extra`` attributes on it.

    Span ids: the trace id's last 15 digits and ``a`` (the root) or ``b``.
    """
    root, retriever = trace[-15:] + "a", trace[-15:] + "b"
    return [span(trace, root, None, "CHAIN", {"input": {"value": "Q?"}, "output": {"value": "A."}}),
            span(trace, retriever, root, "RETRIEVER",
                 {"retrieval": {"documents": [{"document": {"id": "d1", "content": doc}}]}, **extra})]


def otlp(spans: list[dict]) -> dict:
    """Phoenix spans as one OTLP JSON request (attributes as key/value pairs, flat document keys)."""
    def attrs(s: dict) -> list[dict]:
        a = s["attributes"]
        out = [{"key": "openinference.span.kind", "value": {"stringValue": s["span_kind"]}}]
        for key in ("input", "output"):
            if key in a:
                out.append({"key": f"{key}.value", "value": {"stringValue": a[key]["value"]}})
        for n, d in enumerate(a.get("retrieval", {}).get("documents", [])):
            out.append({"key": f"retrieval.documents.{n}.document.content",
                        "value": {"stringValue": d["document"]["content"]}})
        return out

    return {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": s["context"]["trace_id"], "spanId": s["context"]["span_id"], "parentSpanId": s["parent_id"],
         "name": s["name"], "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": attrs(s)}
        for s in spans]}]}]}


def flat_span(s: dict) -> dict:
    """A Phoenix dataframe row: the flattened columns of :func:`span` (documents a list of structs)."""
    a = s["attributes"]
    return {"context.trace_id": s["context"]["trace_id"], "context.span_id": s["context"]["span_id"],
            "parent_id": s["parent_id"], "span_kind": s["span_kind"], "name": s["name"],
            "attributes.input.value": a.get("input", {}).get("value"),
            "attributes.output.value": a.get("output", {}).get("value"),
            "attributes.retrieval.documents": a.get("retrieval", {}).get("documents")}


WRITERS: dict[str, Callable[[Path, list[dict]], Path]] = {
    "jsonl": write_jsonl, "csv": write_csv, "parquet": write_parquet, "hf": write_hf,
    "json": lambda p, rows: (p.write_text(json.dumps(rows), encoding="utf-8"), p)[1],
    "otlp": lambda p, rows: (p.write_text(json.dumps(otlp(rows)), encoding="utf-8"), p)[1],
    "spans-parquet": lambda p, rows: write_parquet(p, [flat_span(s) for s in rows]),
}
FILE_NAMES = {"jsonl": "d.jsonl", "csv": "d.csv", "parquet": "d.parquet", "hf": "hf", "json": "d.json",
              "otlp": "spans.json", "spans-parquet": "spans.parquet"}


@dataclass(frozen=True)
class Case:
    importer: str  # the `playground import` subcommand
    fmt: str  # a key of WRITERS
    bound: str  # cell, depth, rows, size
    rows: Callable[[], list[dict]]  # the hostile input's records
    error: str  # stderr, with {path}, {size} and {size1} (the file's size and one less, with commas)

    @property
    def id(self) -> str:
        return f"{self.importer}-{self.fmt}-{self.bound}"


def many(row: Callable[..., dict], n: int = 4) -> Callable[[], list[dict]]:
    return lambda: [row(i) for i in range(n)]


def traces(n: int) -> list[dict]:
    return [s for i in range(n) for s in trace_spans(f"{i + 1:032x}")]


CELL = "a cell of 1,000,001 characters, longer than the limit of 1,000,000"
DEPTH = "nested deeper than the limit of 32 levels"
SIZE_CLI = "error: {path}: {size} bytes, larger than the limit of {size1} bytes (" + bounds(mib=0) + "): split it\n"
ROWS = "4 rows or more, more rows than the limit of 3 (" + bounds(rows=3) + "): split it"
TEXT = "more than 100 characters of text, larger than the limit (" + bounds(mib=0) + "): split it"
TRACES_BAD = "{path}: not a usable span file; nothing was imported: 1 problem(s)\n  "
SPAN_B = f"trace {TRACE} span {'1' * 15}b"


def core_cases(importer: str, row: Callable[..., dict], text_field: str, formats: tuple[str, ...]) -> list[Case]:
    head = "{path}: not a valid " + importer + " file; nothing was imported: 1 problem(s)\n  "
    out = []
    for fmt in formats:
        name = FILE_NAMES[fmt]
        cell_place = {"jsonl": f"{name}:1 [{text_field}]", "csv": f"{name}:2 [{text_field}]",
                      "json": f"{name} [item 1, {text_field}]"}.get(fmt, f"{name} [row 1, {text_field}]")
        out.append(Case(importer, fmt, "cell", lambda row=row, f=text_field: [row(0, **{f: "x" * LONG})],
                        head + f"{cell_place}: {CELL}\n"))
        if fmt != "csv":  # a CSV cell is text: a list literal in it is parsed with a depth of its own
            depth_place = {"jsonl": f"{name}:1 [extra]", "json": f"{name} [item 1, extra]"}.get(
                fmt, f"{name} [row 1, extra]")
            out.append(Case(importer, fmt, "depth", lambda row=row: [row(0, extra=nested(33))],
                            head + f"{depth_place}: {DEPTH}\n"))
        row_place = {"jsonl": f"{name}:4", "csv": f"{name}:5"}.get(fmt, name)
        out.append(Case(importer, fmt, "rows", many(row), head + f"{row_place}: {ROWS}\n"))
        if fmt in ("parquet", "hf"):  # the text as read (a Parquet file's bytes on disk are compressed)
            out.append(Case(importer, fmt, "size", many(row), head + f"{name}: {TEXT}\n"))
        else:
            out.append(Case(importer, fmt, "size", many(row), SIZE_CLI))
    return out


CASES = [
    *core_cases("ragas", rag_row, "response", ("jsonl", "csv", "parquet", "hf")),
    *core_cases("deepeval", deepeval_row, "actual_output", ("json",)),
    *core_cases("table", table_row, "answer", ("jsonl", "csv", "parquet")),
    Case("ragtruth", "jsonl", "cell", lambda: [ragtruth_row(0, claim="x" * LONG)],
         "{path}: 1 problem(s)\n  line 1: field 'claim': " + CELL + "\nnothing was imported\n"),
    Case("ragtruth", "jsonl", "depth", lambda: [ragtruth_row(0, extra=nested(33))],
         "{path}: 1 problem(s)\n  line 1: field 'extra': " + DEPTH + "\nnothing was imported\n"),
    Case("ragtruth", "jsonl", "rows", many(ragtruth_row),
         "{path}: 1 problem(s)\n  line 4: " + ROWS + "\nnothing was imported\n"),
    Case("ragtruth", "jsonl", "size", many(ragtruth_row), SIZE_CLI),
    Case("traces", "jsonl", "cell", lambda: trace_spans(TRACE, doc="x" * LONG),
         TRACES_BAD + f"d.jsonl:2 [{SPAN_B}, attributes.retrieval.documents[0].document.content]: {CELL}\n"),
    Case("traces", "jsonl", "depth", lambda: trace_spans(TRACE, extra=nested(33)),
         TRACES_BAD + f"d.jsonl:2 [{SPAN_B}, attributes]: {DEPTH}\n"),
    Case("traces", "jsonl", "rows", lambda: traces(4),
         TRACES_BAD + "d.jsonl:7: 4 traces or more, more samples than the limit of 3 (one a trace; "
         + bounds(rows=3) + "): split it\n"),
    Case("traces", "jsonl", "size", lambda: traces(4),
         TRACES_BAD + "d.jsonl: {size} bytes, larger than the limit of {size1} bytes (" + bounds(mib=0)
         + "): split it\n"),
    Case("traces", "otlp", "cell", lambda: trace_spans(TRACE, doc="x" * LONG),
         TRACES_BAD + f"spans.json [{SPAN_B}, attributes[1].value.stringValue]: {CELL}\n"),
    Case("traces", "otlp", "size", lambda: traces(4),
         TRACES_BAD + "spans.json: {size} bytes, larger than the limit of {size1} bytes (" + bounds(mib=0)
         + "): split it\n"),
    Case("traces", "spans-parquet", "cell", lambda: trace_spans(TRACE, doc="x" * LONG),
         TRACES_BAD + f"spans.parquet [{SPAN_B}, attributes.retrieval.documents[0].document.content]: {CELL}\n"),
    Case("traces", "spans-parquet", "rows", lambda: traces(4),
         TRACES_BAD + "spans.parquet [row 7]: 4 traces or more, more samples than the limit of 3 (one a trace; "
         + bounds(rows=3) + "): split it\n"),
    Case("traces", "spans-parquet", "size", lambda: traces(4), TRACES_BAD + f"spans.parquet: {TEXT}\n"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_importer_refuses_every_bound_and_stores_nothing(case: Case, tmp_path, monkeypatch, capsys):
    path = WRITERS[case.fmt](tmp_path / FILE_NAMES[case.fmt], case.rows())
    size = path.stat().st_size
    if case.bound == "rows":
        monkeypatch.setattr(limits, "MAX_ROWS", 3)
    elif case.bound == "size":
        monkeypatch.setattr(limits, "MAX_FILE_BYTES", 100 if case.fmt in ("parquet", "hf", "spans-parquet")
                            else size - 1)
    db = tmp_path / "labels.db"
    with open_store(db) as store:
        assert store.datasets() == []
    argv = ["import", case.importer, str(path), "--db", str(db)]
    argv += ["--dataset", "x"] if case.importer != "ragtruth" else []
    code = main(argv)
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err == case.error.format(path=path, size=f"{size:,}", size1=f"{size - 1:,}")
    with open_store(db) as store:
        assert store.datasets() == []


def test_the_table_covers_every_importer_and_bound():
    """Every importer with every bound that its format can hold (a CSV cell is flat: no depth)."""
    covered = {(c.importer, c.bound) for c in CASES}
    for importer in ("ragas", "deepeval", "table", "ragtruth", "traces"):
        assert {(importer, b) for b in ("cell", "depth", "rows", "size")} <= covered
    assert {c.fmt for c in CASES if c.importer == "ragas"} == {"jsonl", "csv", "parquet", "hf"}
    assert {c.fmt for c in CASES if c.importer == "traces"} == {"jsonl", "otlp", "spans-parquet"}


def walk_strings(value: Any) -> list[str]:
    """Every string in a JSON-able value (keys left out)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in walk_strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in walk_strings(v)]
    return []


EDGE = limits.MAX_CELL_CHARS
EDGE_INPUTS = {  # cells of exactly the limit, in every text a case shows: question, passage, response
    "ragas": ("d.jsonl", lambda: [rag_row(0, user_input="q" * EDGE, response="r" * EDGE,
                                          retrieved_contexts=["c" * EDGE, "A context."])]),
    "traces": ("d.jsonl", lambda: [
        span(TRACE, "1" * 15 + "a", None, "CHAIN", {"input": {"value": "q" * EDGE}, "output": {"value": "r" * EDGE}}),
        span(TRACE, "1" * 15 + "b", "1" * 15 + "a", "RETRIEVER",
             {"retrieval": {"documents": [{"document": {"id": "d1", "content": "c" * EDGE}}]}})]),
}


@pytest.mark.parametrize("importer", sorted(EDGE_INPUTS))
def test_no_text_that_reaches_the_page_is_longer_than_the_cell_limit(importer, tmp_path):
    """The page shows a case's question, passages, response, claims and facts, each as one widget's value:
    the import keeps each within MAX_CELL_CHARS (a cell one longer is refused: the table above), so no
    text the page sends is longer.  At the limit itself the import goes through."""
    from playground.datasets import open_dataset

    name, rows = EDGE_INPUTS[importer]
    path = write_jsonl(tmp_path / name, rows())
    db = tmp_path / "labels.db"
    assert main(["import", importer, str(path), "--dataset", "x", "--db", str(db)]) == 0
    with open_store(db) as store:
        stored = store.dataset("x")
        catalog = open_dataset("x", store).catalog()
    assert stored is not None
    texts = walk_strings(stored.payload["samples"])
    assert max(len(t) for t in texts) == EDGE  # the question, the passage and the response, each whole
    assert {u.unit_kind for u in catalog.values()} >= {"passage", "claim"}
    assert max(len(u.text) for u in catalog.values()) <= EDGE
    assert "c" * EDGE in {u.text for u in catalog.values() if u.unit_kind == "passage"}  # kept whole, not cut


CLAIM_FILE_CASES = {  # the older claim data set file (ragtruth.dataset.json, read by units.load_catalog)
    "cell": ({"units": [{"text": "x" * LONG}]}, "units[0].text: " + CELL),
    "depth": ({"units": [], "x": nested(33)}, "x: " + DEPTH),
    "rows": ({"units": [{"text": "t"}] * 4}, ROWS),
    "size": ({"units": [{"text": "t"}] * 4}, "{size} bytes, larger than the limit of {size1} bytes (" + bounds(mib=0)
             + "): split it"),
}


@pytest.mark.parametrize("bound", sorted(CLAIM_FILE_CASES))
def test_a_claim_data_set_file_holds_to_every_bound(bound, tmp_path, monkeypatch):
    from playground.importers.claim_dataset import FORMAT, load_imported

    data, error = CLAIM_FILE_CASES[bound]
    path = tmp_path / "ragtruth.dataset.json"
    path.write_text(json.dumps({"format": FORMAT, **data}), encoding="utf-8")
    size = path.stat().st_size
    if bound == "rows":
        monkeypatch.setattr(limits, "MAX_ROWS", 3)
    elif bound == "size":
        monkeypatch.setattr(limits, "MAX_FILE_BYTES", size - 1)
    with pytest.raises(ValueError) as err:
        load_imported(path)
    assert str(err.value) == f"{path}: " + error.format(size=f"{size:,}", size1=f"{size - 1:,}")


def begin_row(i: int, **extra: Any) -> dict:
    return {"example_id": f"b{i}", "source_id": f"s{i}", "corpus": "wow", "claim": "The ferry runs daily.",
            "evidence": ["The ferry runs every day.", "Does it run?"], "label": False,
            "label_raw": "Fully attributable", "model_name": "m", **extra}


BEGIN_CASES = {  # the BEGIN claim file (calibrate begin): one JSON object a line, as RAGTruth's
    "cell": (lambda: [begin_row(0, claim="x" * LONG)], "line 1: field 'claim': " + CELL),
    "depth": (lambda: [begin_row(0, extra=nested(33))], "line 1: field 'extra': " + DEPTH),
    "rows": (many(begin_row), "line 4: " + ROWS),
    "size": (many(begin_row), "line 0: {size} bytes, larger than the limit of {size1} bytes (" + bounds(mib=0)
             + "): split it"),
}


@pytest.mark.parametrize("bound", sorted(BEGIN_CASES))
def test_a_begin_claim_file_holds_to_every_bound(bound, tmp_path, monkeypatch):
    from playground.begin import BeginError, load_begin

    rows, error = BEGIN_CASES[bound]
    path = write_jsonl(tmp_path / "claims.jsonl", rows())
    size = path.stat().st_size
    if bound == "rows":
        monkeypatch.setattr(limits, "MAX_ROWS", 3)
    elif bound == "size":
        monkeypatch.setattr(limits, "MAX_FILE_BYTES", size - 1)
    with pytest.raises(BeginError) as err:
        load_begin(path)
    assert str(err.value) == f"{path}: 1 problem(s)\n  " + error.format(size=f"{size:,}", size1=f"{size - 1:,}")


def label_row(i: int, **extra: Any) -> dict:
    """A good label on a unit of the shipped set (its first passage unit), by annotator ``a<i>``."""
    from playground.units import load_catalog

    unit = min((u for u in load_catalog().values() if u.unit_kind == "passage"), key=lambda u: u.unit_id)
    return {"annotator": f"a{i}", "unit_kind": unit.unit_kind, "unit_id": unit.unit_id,
            "dimension": unit.dimensions[0], "value": 1, **extra}


LABEL_CASES = {  # `labels import` (a label table: a label a row, so its own row bound, MAX_LABEL_ROWS)
    "jsonl-cell": ("labels.jsonl", lambda: [label_row(0, comment="x" * LONG)], "row 1: field 'comment': " + CELL),
    "csv-cell": ("labels.csv", lambda: [label_row(0, comment="x" * LONG)], "row 1: field 'comment': " + CELL),
    "jsonl-depth": ("labels.jsonl", lambda: [label_row(0, extra=nested(33))], "row 1: field 'extra': " + DEPTH),
    "jsonl-rows": ("labels.jsonl", many(label_row), "row 4: 4 rows or more, more rows than the limit of 3: split it"),
    "csv-rows": ("labels.csv", many(label_row), "row 4: 4 rows or more, more rows than the limit of 3: split it"),
    "csv-size": ("labels.csv", many(label_row), "row 0: {size} bytes, larger than the limit of {size1} bytes ("
                 + bounds(mib=0) + "): split it"),
}


@pytest.mark.parametrize("case", sorted(LABEL_CASES))
def test_a_label_table_holds_to_every_bound(case, tmp_path, monkeypatch, capsys):
    name, rows, error = LABEL_CASES[case]
    path = (write_csv if name.endswith(".csv") else write_jsonl)(tmp_path / name, rows())
    size = path.stat().st_size
    if case.endswith("rows"):
        monkeypatch.setattr(limits, "MAX_LABEL_ROWS", 3)
    elif case.endswith("size"):
        monkeypatch.setattr(limits, "MAX_FILE_BYTES", size - 1)
    db = tmp_path / "labels.db"
    assert main(["labels", "import", str(path), "--db", str(db)]) == 1
    assert capsys.readouterr().err == (f"import {path} rejected, nothing was written: 1 problem(s)\n  "
                                       + error.format(size=f"{size:,}", size1=f"{size - 1:,}") + "\n")
    with open_store(db) as store:
        assert store.events() == []
