"""Export a labelled dataset back in RAGAS or DeepEval form, with the human results per sample.

``export_dataset(opened, store, tool, out, annotator=None)`` writes, for
``out = DIR/NAME.EXT`` (``.jsonl``, ``.csv``, ``.parquet``; DeepEval also
``.json``):

* ``NAME.EXT`` — one row per sample in the tool's own fields (RAGAS:
  ``user_input``, ``retrieved_contexts``, ``retrieved_context_ids``,
  ``response``, ``reference``, ``reference_contexts`` and the RAGAS fields
  kept at import; multi-turn samples as their message list; DeepEval:
  ``input``, ``actual_output``, ``expected_output``, ``retrieval_context``,
  ``context``, ``additional_metadata``), plus the human results: for each of
  ``context_relevance``, ``faithfulness``, ``correctness``, ``coverage`` the
  rate (``yes / labelled``, empty when nothing is labelled) and its two
  counts, and the response's verdict (``pass``: 1, 0 or empty; ``pass_yes``,
  ``pass_n``) and its failure modes (``failure_modes``: the resolved tags of
  the verdict's judges, sorted).  RAGAS rows carry them as columns ``human_<rate>``,
  ``human_<rate>_yes``, ``human_<rate>_n``; DeepEval rows inside
  ``additional_metadata.human`` (so ``EvaluationDataset`` still loads the
  file).  Each row also carries the whole label history of its units —
  every annotator's answers (yes, no, unsure), comments, adjudications, with
  who and when (:func:`playground.store.replay.event_dict`) — as RAGAS column
  ``human_labels`` or DeepEval ``additional_metadata.human.labels`` (JSON text
  in CSV and Parquet), so ``playground import`` of the file alone restores
  the store's labels exactly (:mod:`playground.store.replay`) — response
  verdicts, notes and tag events (the tags as typed) included.  The first
  row's history also carries the dataset's failure-mode taxonomy and every
  guidelines version as records (:mod:`playground.store.records`).  The sample's own id goes out as ``id`` (RAGAS) or
  ``additional_metadata.id`` (DeepEval), so a re-import gives the same ids;
  list cells in CSV are written as the tools write them (Python list reprs
  for RAGAS, ``|``-joined for DeepEval), every cell quoted when any text holds a
  carriage return, and a cell a spreadsheet would run (``=``, ``+``, ``-``,
  ``@``, tab, CR, ``'`` first) written with a leading ``'`` that the import
  removes (:func:`playground.store.io.neutralise_cell`);
* ``NAME.labels.EXT`` — the per-unit labels (``annotator, unit_kind,
  unit_id, case_id, sample_id, dimension, value, text``), which
  ``playground import … --labels`` reads back;
* ``NAME.units.parquet`` and ``NAME.labels.parquet`` — every unit and every
  exported label as Parquet.

Labels are one annotator's current labels (``annotator``) or the consensus
(majority of annotators, adjudicated labels first where the store has them;
ties are left out and counted).  Stale labels are never exported.  Every
file is written to a temporary name and renamed, all files only after all
were written.
"""
from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import write_all_atomic
from ..metrics import rates_from_labels
from ..model import DIMENSION_NAMES, Label, Unit
from ..store.io import neutralise_cell
from ..store.records import records_of
from ..store.replay import history_of
from ..verdicts import VERDICT_DIMENSION, failure_mode_table, pass_rate, response_units
from .ragas import HISTORY_FIELD

__all__ = ["RATES", "TOOLS", "ExportResult", "export_dataset", "label_rows", "side_path"]

TOOLS = ("ragas", "deepeval")
RATES = tuple(DIMENSION_NAMES.values())
_SUFFIXES = {"ragas": (".jsonl", ".csv", ".parquet"), "deepeval": (".json", ".jsonl", ".csv", ".parquet")}
LABEL_COLUMNS = ("annotator", "unit_kind", "unit_id", "case_id", "sample_id", "dimension", "value", "text")
UNIT_COLUMNS = ("unit_kind", "unit_id", "case_id", "response_id", "sample_id", "dimensions", "text", "text_hash")


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_dataset` wrote."""

    files: tuple[Path, ...]
    samples: int
    labels: int
    who: str
    ties: int = 0
    events: int = 0
    dataset: str = ""

    def summary(self) -> str:
        text = (f"{self.samples} samples with {self.labels} labels ({self.who}) and a label history of "
                f"{self.events} events written to:\n")
        text += "\n".join(f"  {p}" for p in self.files)
        if self.ties:
            text += (f"\n  {self.ties} consensus tie(s) left out (settle them with `playground calibrate adjudicate "
                     f"--dataset {self.dataset} UNIT_ID DIMENSION 1|0 --adjudicator NAME`)")
        return text


def side_path(out: Path, part: str, suffix: str | None = None) -> Path:
    """``DIR/NAME.<part><suffix>`` beside ``out = DIR/NAME.EXT`` (suffix defaults to ``.EXT``)."""
    return out.with_name(f"{out.stem}.{part}{suffix or out.suffix}")


def label_rows(store: Any, catalog: dict[str, Unit], annotator: str | None) -> tuple[list[Label], str, int]:
    """``(labels, who, ties)``: ``annotator``'s current labels, or the consensus (ties left out)."""
    if annotator is not None:
        mine = [Label(annotator, s.unit_kind, s.unit_id, s.dimension, s.value)
                for s in store.current_labels(catalog, annotator=annotator) if s.value in (0, 1)]
        return mine, annotator, 0
    rows = store.consensus(catalog=catalog, unit_ids=catalog)
    labels = [Label("consensus", r.unit_kind, r.unit_id, r.dimension, r.value) for r in rows if r.value is not None]
    return labels, "consensus", sum(1 for r in rows if r.value is None)


def _human(labels: Sequence[Label], verdict: dict[str, Any]) -> dict[str, Any]:
    rates = rates_from_labels([lab for lab in labels if lab.dimension != VERDICT_DIMENSION])
    out: dict[str, Any] = {}
    for name in RATES:
        r = rates[name]
        out[name] = None if r.rate is None else round(r.rate, 6)
        out[f"{name}_yes"] = r.successes
        out[f"{name}_n"] = r.n
    return {**out, **verdict}


def _verdict(store: Any, unit: Unit | None, annotator: str | None) -> dict[str, Any]:
    """``pass`` (1, 0 or None), ``pass_yes``, ``pass_n`` and ``failure_modes`` of one response."""
    if unit is None:
        return {"pass": None, "pass_yes": 0, "pass_n": 0, "failure_modes": []}
    passed, judged, _low, _high = pass_rate(store, [unit], annotator)
    modes = [r.name for r in failure_mode_table(store, [unit], annotator) if r.responses_tagged]
    return {"pass": passed if judged else None, "pass_yes": passed, "pass_n": judged, "failure_modes": sorted(modes)}


def _ragas_row(sample: dict[str, Any], human: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    extra = sample["extra"]
    row: dict[str, Any] = {}
    if sample["sample_id"] is not None:
        row["id"] = sample["sample_id"]
    if "messages" in extra:
        row["user_input"] = extra["messages"]
        if sample["reference"]:
            row["reference"] = sample["reference"]
    else:
        row["user_input"] = sample["query"]
        row["retrieved_contexts"] = sample["contexts"]
        if sample["context_ids"]:
            row["retrieved_context_ids"] = sample["context_ids"]
        row["response"] = sample["response"]
        if sample["reference"]:
            row["reference"] = sample["reference"]
        if sample["reference_contexts"]:
            row["reference_contexts"] = sample["reference_contexts"]
    row.update({k: v for k, v in extra.items() if k != "messages"})
    row.update({f"human_{k}": v for k, v in human.items()})
    row[HISTORY_FIELD] = events
    return row


def _deepeval_row(sample: dict[str, Any], human: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    extra = sample["extra"]
    meta = dict(extra.get("additional_metadata") or {})
    if sample["sample_id"] is not None:
        meta["id"] = sample["sample_id"]
    meta["human"] = {**human, "labels": events}
    row = {"input": sample["query"], "actual_output": sample["response"],
           "expected_output": sample["reference"] or None, "retrieval_context": sample["contexts"] or None,
           "context": sample["reference_contexts"] or None, "additional_metadata": meta}
    row.update({k: extra[k] for k in ("name", "comments", "source_file") if k in extra})
    return row


def _deepeval_list(items: list[Any]) -> str:
    """A list cell as DeepEval writes it (``|``-joined), or as a JSON list when that would not read back.

    ``|``-joining loses an item that holds ``|`` (or is empty), and a joined text starting with
    ``[`` reads as a list literal; those lists go out as JSON, which the import reads exactly.
    """
    texts = [str(v) for v in items]
    joined = "|".join(texts)
    if any("|" in t or not t for t in texts) or joined.lstrip().startswith("["):
        return json.dumps(texts, ensure_ascii=False)
    return joined


def _csv_text(rows: list[dict[str, Any]], tool: str, columns: Sequence[str] = ()) -> str:
    columns = list(columns)
    for r in rows:
        columns += [k for k in r if k not in columns]

    def cell(key: str, value: Any) -> Any:
        if value is None:
            return ""
        if isinstance(value, list) and key != HISTORY_FIELD:
            return neutralise_cell(_deepeval_list(value) if tool == "deepeval" else repr(value))
        if isinstance(value, dict | list):
            return json.dumps(value, ensure_ascii=False, sort_keys=True)
        return neutralise_cell(value)

    table = [{k: cell(k, r.get(k)) for k in columns} for r in rows]
    # Minimal quoting with "\n" line ends leaves a lone "\r" unquoted, which splits the row on reading:
    # such a file quotes every cell.
    carriage = any(isinstance(v, str) and "\r" in v for r in table for v in r.values())
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n",
                            quoting=csv.QUOTE_ALL if carriage else csv.QUOTE_MINIMAL)
    writer.writeheader()
    writer.writerows(table)
    return buf.getvalue()


def _encode(rows: list[dict[str, Any]], path: Path, tool: str, columns: Sequence[str] = ()) -> bytes:
    """The bytes of ``rows`` in the format of ``path``'s suffix (``columns`` give an empty table its header)."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    if suffix == ".json":
        return (json.dumps(rows, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    if suffix == ".csv":
        return _csv_text(rows, tool, columns).encode("utf-8")
    import pyarrow as pa
    import pyarrow.parquet as pq

    flat = [{k: (json.dumps(v, ensure_ascii=False, sort_keys=True) if isinstance(v, dict) or k == HISTORY_FIELD else v)
             for k, v in r.items()} for r in rows]
    table = pa.Table.from_pylist(flat) if flat else pa.table({c: pa.array([], pa.string()) for c in columns})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def _write_all(files: dict[Path, bytes]) -> None:
    """Write every file under a temporary name, then rename them all (none is renamed if any write fails)."""
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
    write_all_atomic(files)


def export_dataset(opened: Any, store: Any, tool: str, out: str | Path, *,
                   annotator: str | None = None) -> ExportResult:
    """Write ``opened`` (an imported OpenDataset) as ``tool`` rows with human results (see the module docstring)."""
    out = Path(out)
    if tool not in TOOLS:
        raise ValueError(f"unknown export format {tool!r} (known: {', '.join(TOOLS)})")
    if out.suffix.lower() not in _SUFFIXES[tool]:
        raise ValueError(f"{out}: a {tool} export is {', '.join(_SUFFIXES[tool])}")
    if not opened.payload.get("samples"):
        raise ValueError(f"dataset {opened.name!r} has no samples to export (the shipped set exports with "
                         "`playground labels export`)")
    responses = {u.case_id: u for u in response_units(opened)}
    units = [*opened.units(), *responses.values()]
    catalog = {u.unit_id: u for u in units}
    labels, who, ties = label_rows(store, catalog, annotator)
    by_case: dict[str, list[Label]] = defaultdict(list)
    for lab in labels:
        by_case[catalog[lab.unit_id].case_id].append(lab)
    samples = opened.payload["samples"]
    sample_of = {s["case_id"]: s["sample_id"] or s["case_id"].split(":", 1)[1] for s in samples}
    make = _ragas_row if tool == "ragas" else _deepeval_row
    history = history_of(store, sample_of)
    events = sum(map(len, history.values()))
    if samples:
        first = samples[0]["case_id"]
        history[first] = [*records_of(store, opened.name), *history.get(first, [])]
    rows = [make(s, _human(by_case.get(s["case_id"], []), _verdict(store, responses.get(s["case_id"]), annotator)),
                 history.get(s["case_id"], [])) for s in samples]
    label_table = [{"annotator": lab.annotator, "unit_kind": lab.unit_kind, "unit_id": lab.unit_id,
                    "case_id": catalog[lab.unit_id].case_id, "sample_id": sample_of[catalog[lab.unit_id].case_id],
                    "dimension": lab.dimension, "value": lab.value, "text": catalog[lab.unit_id].text}
                   for lab in sorted(labels, key=lambda x: (x.unit_id, x.dimension))]
    unit_table = [{"unit_kind": u.unit_kind, "unit_id": u.unit_id, "case_id": u.case_id, "response_id": u.response_id,
                   "sample_id": sample_of[u.case_id], "dimensions": " ".join(u.dimensions), "text": u.text,
                   "text_hash": u.text_hash} for u in units]
    files = {out: _encode(rows, out, tool)}
    for path, table, columns in ((side_path(out, "labels"), label_table, LABEL_COLUMNS),
                                 (side_path(out, "units", ".parquet"), unit_table, UNIT_COLUMNS),
                                 (side_path(out, "labels", ".parquet"), label_table, LABEL_COLUMNS)):
        files[path] = _encode(table, path, "table", columns)
    _write_all(files)
    return ExportResult(tuple(files), len(rows), len(labels), who, ties, events, opened.name)
