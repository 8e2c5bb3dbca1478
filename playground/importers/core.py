"""The shared, all-or-nothing core of the dataset importers (RAGAS, DeepEval, any table).

Reading a file gives rows (one JSON object per line, the items of a JSON
array, CSV records, Parquet rows), each with its place: ``line N`` (JSONL,
CSV — the physical line where the record starts), ``item N`` (JSON) or
``row N`` (Parquet).  A format module turns rows into :class:`Sample` s,
adding a :class:`~playground.errors.Problem` (file, place, field, what) for
everything wrong; :func:`check_samples` adds the problems across rows
(duplicate ids).  When there is any problem the import raises one
:class:`~playground.errors.DataError` listing them all and nothing is written.

A good file becomes a *payload* (:func:`build_payload`): JSON with every
sample as stored, which :func:`build_dataset` turns into a
:class:`playground.golden.Dataset` plus the passages of each case:

=============  ==========================================  =====================================
what           id                                          from
=============  ==========================================  =====================================
case           ``<dataset>:<sample id>``                   one sample: query, history, reference;
                                                           the sample id is the file's own id
                                                           (``id``, DeepEval's
                                                           ``additional_metadata.id``, ``--map
                                                           id=COLUMN``) or ``h`` + 10 hex digits
                                                           of SHA-256 over history and query
                                                           (``-2``, ``-3``… for repeats)
response       ``<case id>/R``                             the sample's response (one per case)
passage unit   ``<case id>::<dataset>/<context id>#<n>@h`` each retrieved context, in order;
                                                           ``n`` its 1-based position, context
                                                           id the file's (or ``ctx<n>``), ``h``
                                                           8 hex digits of its text's SHA-256
claim unit     ``<response id>:c<i>:<hash8>``              the response split by
                                                           :func:`playground.claims.split_claims`;
                                                           ``supported`` and ``correct``
fact unit      ``<response id>::F<n>``                     the reference split the same way, or
                                                           the facts given in a column
=============  ==========================================  =====================================

Unit text hashes are those of the golden set (:func:`playground.golden.passage_unit`,
:func:`~playground.golden.response_units`): a relevance label rests on the
question and the passage, a claim's on its text, a fact's on the fact and the
response.  Re-importing a changed file therefore keeps every label; those on
changed text are reported stale (a changed context or claim gets a new id, so
its old label is *orphaned*; a changed response marks its fact labels
*changed*).  The dataset name is in every id, so two datasets never share a
unit.  Automatic coverage of an imported fact is deterministic: its
``accept`` string is the fact itself, and the dataset harness
(:mod:`playground.harness.run_dataset`) scores it by token coverage.
"""
from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import limits  # the bounds read at each call (limits.MAX_ROWS…), so one module holds them
from ..claims import split_claims
from ..corpus import Corpus
from ..errors import DataError, Problem
from ..golden import Dataset
from ..limits import LimitExceeded, check_file, check_text, check_value, too_many_rows
from ..model import Case, Fact, Locator, Passage, Response, Turn, slugify
from .rows import Place, Row, bounded_rows

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "NAME_RULE",
    "SUFFIXES",
    "Place",
    "Row",
    "Sample",
    "build_dataset",
    "build_payload",
    "case_id_of",
    "check_name",
    "check_samples",
    "detect_other_format",
    "events_cell",
    "file_format",
    "list_cell",
    "payload_head",
    "raise_problems",
    "read_rows",
    "response_id_of",
    "sample_from_payload",
    "sample_id_cell",
    "sample_rows",
    "text_cell",
]

FORMAT = "rag-label-playground/dataset"
FORMAT_VERSION = 1
#: File suffix → reader format.
SUFFIXES: dict[str, str] = {".jsonl": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
NAME_RULE = "1–64 characters of a-z, 0-9, '-' and '_', starting with a letter or digit, not 'golden'"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_ID = re.compile(r"^[^\s:/#@]{1,120}$")


@dataclass(frozen=True)
class Sample:
    """One RAG sample as imported: a question (with history), its contexts, one response, a reference."""

    place: Place
    query: str
    response: str
    contexts: tuple[str, ...] = ()
    context_ids: tuple[str, ...] = ()
    history: tuple[Turn, ...] = ()
    reference: str = ""
    reference_contexts: tuple[str, ...] = ()
    facts: tuple[str, ...] | None = None
    sample_id: str | None = None
    #: Format-specific fields kept for the export (JSON-able): DeepEval metadata, RAGAS messages.
    extra: dict[str, Any] = field(default_factory=dict)
    #: The label history of the sample's units as a playground export carries it
    #: (:func:`playground.store.replay.event_dict` dicts); not part of the payload.
    events: tuple[dict[str, Any], ...] = ()


def check_name(name: str) -> str:
    """The dataset name, after checking it against :data:`NAME_RULE` (ValueError otherwise)."""
    if not isinstance(name, str) or not _NAME.match(name) or name == "golden":
        raise ValueError(f"dataset name {name!r} is not usable: {NAME_RULE}")
    return name


def file_format(path: Path) -> str:
    """``jsonl``, ``json``, ``csv`` or ``parquet`` from the file's suffix (ValueError otherwise)."""
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"{path}: unsupported file type {path.suffix or '(none)'!r}: "
                         f"give a {', '.join(SUFFIXES)} file")
    return fmt


# --- reading rows ------------------------------------------------------------------------------


def _parsed(text: str, place: Place, problems: list[Problem]) -> Any:
    """``json.loads(text)`` within the bounds of :mod:`.limits`; None (and a problem) otherwise."""
    try:
        obj = json.loads(text)
        check_value(obj)
    except json.JSONDecodeError as exc:
        problems.append(place.problem(f"invalid JSON: {exc.msg} (column {exc.colno})"))  # jsonl.json_value's wording
        return None
    except RecursionError:
        problems.append(place.problem(f"nested deeper than the limit of {limits.MAX_DEPTH} levels"))
        return None
    except LimitExceeded as exc:
        problems.append(place.problem(str(exc), exc.field))
        return None
    return obj


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` one at a time: :func:`playground.jsonl.split_lines`'s, without a list of them all."""
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", start)
        if stop < 0:
            yield text[start:]
            return
        yield text[start:stop]
        start = stop + 1


def _read_jsonl(text: str, name: str, problems: list[Problem], limit: int) -> list[Row]:
    rows: list[Row] = []
    for n, line in enumerate(_lines(text), 1):
        if not line.strip():
            continue
        if len(rows) >= limit:
            problems.append(Problem(name, too_many_rows(len(rows) + 1, limit), "", n))
            return []
        place = Place(name, "line", n)
        obj = _parsed(line, place, problems)
        if obj is None:
            continue
        if not isinstance(obj, dict):
            problems.append(place.problem(f"expected a JSON object, got {type(obj).__name__}"))
            continue
        rows.append(Row(place, obj))
    return rows


def _read_json(text: str, name: str, problems: list[Problem], limit: int) -> list[Row]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem(name, f"invalid JSON: {exc.msg} (column {exc.colno})", "", exc.lineno))
        return []
    except RecursionError:
        problems.append(Problem(name, f"nested deeper than the limit of {limits.MAX_DEPTH} levels"))
        return []
    if isinstance(data, list) and len(data) > limit:
        problems.append(Problem(name, too_many_rows(len(data), limit)))
        return []
    if not isinstance(data, list):
        problems.append(Problem(name, f"expected a JSON array of objects, got {type(data).__name__}"))
        return []
    rows = []
    for n, obj in enumerate(data, 1):
        place = Place(name, "item", n)
        if not isinstance(obj, dict):
            problems.append(place.problem(f"expected a JSON object, got {type(obj).__name__}"))
            continue
        try:
            check_value(obj)  # each item a row: its own cells and nesting (the array is not a level)
        except LimitExceeded as exc:
            problems.append(place.problem(str(exc), exc.field))
            return []
        rows.append(Row(place, obj))
    return rows


def _read_csv(text: str, name: str, problems: list[Problem], limit: int) -> list[Row]:
    """Records of a CSV text; strict: a quote left open (a truncated file) or a stray quote is a problem.

    Every cell goes through :func:`playground.store.io.restore_cell`, which undoes
    the leading ``'`` the exports put before a cell a spreadsheet would run.
    """
    from ..store.io import restore_cell

    # the csv module's own cap (131,072) lifted to the file's: each cell is checked against the cell limit
    # as it is read, so the problem names its column
    before = csv.field_size_limit(limits.MAX_FILE_BYTES)
    try:
        return _csv_rows(csv.reader(io.StringIO(text, newline=""), strict=True), name, problems, restore_cell, limit)
    finally:
        csv.field_size_limit(before)


def _csv_rows(reader: Any, name: str, problems: list[Problem], restore: Callable[[str], str],
              limit: int) -> list[Row]:
    try:
        header = next(reader)
    except StopIteration:
        problems.append(Problem(name, "empty file: no header row"))
        return []
    except csv.Error as exc:
        problems.append(Problem(name, f"malformed CSV: {exc}", "", 1))
        return []
    dupes = sorted(c for c, k in Counter(header).items() if k > 1)
    if dupes:
        problems.append(Problem(name, f"duplicate column(s) {', '.join(dupes)}", "", 1))
    rows: list[Row] = []
    while True:
        start = reader.line_num + 1
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.append(Problem(name, f"malformed CSV: {exc}", "", start))
            break
        if not any(cell.strip() for cell in record):
            continue
        if len(rows) >= limit:
            problems.append(Problem(name, too_many_rows(len(rows) + 1, limit), "", start))
            return []
        place = Place(name, "line", start)
        if len(record) != len(header):
            problems.append(place.problem(f"{len(record)} cells, the header has {len(header)}"))
            continue
        try:
            for h, v in zip(header, record, strict=True):
                check_text(v, h)
        except LimitExceeded as exc:
            problems.append(place.problem(str(exc), exc.field))
            return []
        rows.append(Row(place, {h: (restore(v) if v != "" else None)
                                for h, v in zip(header, record, strict=True)}))
    return rows


def _read_parquet(path: Path, name: str, problems: list[Problem], limit: int) -> list[Row]:
    """Rows of a Parquet file, its row count checked in the footer first and its text batch by batch.

    A file of few bytes can hold much text (dictionary-encoded, compressed): the
    rows are made 256 at a time and the import stops at the first bound crossed.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        if pf.metadata.num_rows > limit:
            problems.append(Problem(name, too_many_rows(pf.metadata.num_rows, limit)))
            return []
        return bounded_rows((obj for batch in pf.iter_batches(batch_size=256) for obj in batch.to_pylist()),
                            name, problems, limit)
    except (pa.ArrowException, OSError) as exc:
        problems.append(Problem(name, f"not a readable Parquet file: {exc}"))
        return []


def read_rows(path: str | Path, problems: list[Problem], max_rows: int | None = None) -> tuple[str, list[Row]]:
    """``(format, rows)`` of ``path``; problems (malformed lines, non-UTF-8 text, a bound crossed…) go to ``problems``.

    ``max_rows``: at most this many rows (default :data:`~playground.importers.limits.MAX_ROWS`).
    """
    limit = limits.MAX_ROWS if max_rows is None else max_rows
    path = Path(path)
    if path.is_dir():  # a Hugging Face save_to_disk folder
        from . import hf_disk

        return "hf-disk", hf_disk.read_rows(path, problems, limit=limit)
    fmt = file_format(path)
    name = path.name
    try:
        check_file(path, text=fmt != "parquet")
    except LimitExceeded as exc:
        problems.append(Problem(name, str(exc)))
        return fmt, []
    if fmt == "parquet":
        return fmt, _read_parquet(path, name, problems, limit)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problems.append(Problem(name, f"not UTF-8 text (byte {exc.start})", "", line))
        return fmt, []
    del raw  # the text alone while the rows are made (at 100,000 samples each is about 100 MiB)
    readers: dict[str, Callable[[str, str, list[Problem], int], list[Row]]] = {
        "jsonl": _read_jsonl, "json": _read_json, "csv": _read_csv}
    return fmt, readers[fmt](text, name, problems, limit)


# --- cells ---------------------------------------------------------------------------------------


def text_cell(row: Row, key: str, problems: list[Problem], *, required: bool, label: str = "") -> str:
    """A string field; None/absent is "" (a problem when required); other types are a problem."""
    value = row.data.get(key)
    label = label or key
    if value is None or (isinstance(value, float) and value != value):  # NaN from pandas-made files
        if required:
            problems.append(row.place.problem("missing or empty", label))
        return ""
    if not isinstance(value, str):
        problems.append(row.place.problem(f"must be a string, got {type(value).__name__}", label))
        return ""
    if required and not value.strip():
        problems.append(row.place.problem("empty", label))
    return value


def list_cell(row: Row, key: str, problems: list[Problem], *, split: str | None = None,
              label: str = "") -> tuple[str, ...]:
    """A list-of-strings field: a list; in a text cell, a Python/JSON list literal or ``split``-joined text.

    RAGAS's ``to_csv`` writes a list as its Python repr (``['a', 'b']``),
    parsed here with :func:`ast.literal_eval` (literals only, never code);
    DeepEval joins with ``|`` (``split="|"``).  Integers (RAGAS context ids
    may be ints) become strings.  Absent or empty is ``()``.
    """
    value = row.data.get(key)
    label = label or key
    if value is None or (isinstance(value, float) and value != value):
        return ()
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("["):
            try:
                value = ast.literal_eval(stripped)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                try:
                    value = json.loads(stripped)
                except (json.JSONDecodeError, RecursionError):
                    problems.append(row.place.problem("not a list: the cell starts with '[' but is no list literal",
                                                      label))
                    return ()
        elif split is not None:
            return tuple(p for p in value.split(split)) if value else ()
        else:
            problems.append(row.place.problem("must be a list of strings, got text", label))
            return ()
    if not isinstance(value, list | tuple):
        problems.append(row.place.problem(f"must be a list of strings, got {type(value).__name__}", label))
        return ()
    out = []
    for i, item in enumerate(value, 1):
        if isinstance(item, bool) or not isinstance(item, str | int):
            problems.append(row.place.problem(f"item {i} must be a string, got {type(item).__name__}", label))
        else:
            out.append(str(item))
    return tuple(out)


def sample_id_cell(row: Row, value: Any, label: str, problems: list[Problem]) -> str | None:
    """A sample's own id (str or int) checked against the id rule, or None when absent."""
    if value is None or (isinstance(value, float) and value != value) or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        problems.append(row.place.problem(f"id must be a string or integer, got {type(value).__name__}", label))
        return None
    text = str(value)
    if not _ID.match(text):
        problems.append(row.place.problem(
            f"id {text!r} is not usable: 1–120 characters without spaces, ':', '/', '#' or '@'", label))
        return None
    return text


def events_cell(row: Row, value: Any, label: str, problems: list[Problem]) -> tuple[dict[str, Any], ...]:
    """The label history a playground export put in a row: a list of objects, or its JSON text in CSV/Parquet.

    Absent or empty is ``()``; each event is checked later, against the dataset name
    (:func:`playground.store.replay.check_events`).
    """
    if value is None or (isinstance(value, float) and value != value) or value == "":
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            problems.append(row.place.problem("not a JSON list of label events", label))
            return ()
    if not isinstance(value, list | tuple) or not all(isinstance(e, dict) for e in value):
        problems.append(row.place.problem("must be a list of label events (objects)", label))
        return ()
    return tuple(value)


def detect_other_format(rows: Sequence[Row], expected: str, problems: list[Problem]) -> bool:
    """True (and one problem) when the rows are plainly another tool's format than ``expected``."""
    if not rows:
        return False
    keys = set(rows[0].data)
    guesses = (
        ("ragas", {"user_input"}, "a RAGAS dataset (user_input…): use `playground import ragas`"),
        ("deepeval", {"input", "actual_output"},
         "a DeepEval dataset (input, actual_output…): use `playground import deepeval`"),
        ("ragtruth", {"claim", "label", "context"}, "a RAGTruth claim file: use `playground import ragtruth`"),
    )
    for kind, needed, what in guesses:
        if kind != expected and needed <= keys:
            mine = {"ragas": {"user_input"}, "deepeval": {"input"}}.get(expected, set())
            if not mine <= keys or not mine:
                problems.append(Problem(rows[0].place.file, f"this looks like {what}"))
                return True
    return False


def check_samples(samples: Sequence[Sample], problems: list[Problem]) -> None:
    """Problems across rows: a sample id given twice (both places named)."""
    seen: dict[str, Place] = {}
    for s in samples:
        if s.sample_id is None:
            continue
        if s.sample_id in seen:
            first = seen[s.sample_id]
            problems.append(s.place.problem(f"duplicate sample id {s.sample_id!r} (first at {first})", "id"))
        else:
            seen[s.sample_id] = s.place


def raise_problems(problems: list[Problem], path: Path, what: str) -> None:
    if problems:
        raise DataError(problems, f"{path}: not a valid {what} file, nothing was imported")


# --- payload -------------------------------------------------------------------------------------


def case_id_of(dataset: str, sample_id: str) -> str:
    """``<dataset>:<sample id>``."""
    return f"{dataset}:{sample_id}"


def response_id_of(case_id: str) -> str:
    """``<case id>/R``: the one response of an imported case."""
    return f"{case_id}/R"


def _content_id(sample: Sample) -> str:
    key = json.dumps([[t.role, t.content] for t in sample.history] + [sample.query], ensure_ascii=False)
    return "h" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]


def _facts(sample: Sample) -> list[str]:
    if sample.facts is not None:
        return [f for f in sample.facts if f.strip()]
    return [c.text for c in split_claims(sample.reference)] if sample.reference.strip() else []


def sample_rows(name: str, samples: Iterable[Sample]) -> Iterator[dict[str, Any]]:
    """The stored row of each sample, in order (case ids as in the module docstring; repeats ``-2``, ``-3``…)."""
    repeats: Counter[str] = Counter()
    for s in samples:
        sid = s.sample_id
        if sid is None:
            base = _content_id(s)
            repeats[base] += 1
            sid = base if repeats[base] == 1 else f"{base}-{repeats[base]}"
        facts = _facts(s)
        yield {
            "case_id": case_id_of(name, sid), "sample_id": s.sample_id, "place": str(s.place),
            "query": s.query, "history": [[t.role, t.content] for t in s.history], "response": s.response,
            "contexts": list(s.contexts), "context_ids": list(s.context_ids), "reference": s.reference,
            "reference_contexts": list(s.reference_contexts), "facts": facts,
            "facts_given": s.facts is not None, "extra": s.extra,
        }


def payload_head(name: str, kind: str, *, source: str, source_sha256: str, source_format: str) -> dict[str, Any]:
    """The payload's keys other than ``samples``; ``summary`` is filled in by whoever counts the units."""
    return {
        "format": FORMAT, "version": FORMAT_VERSION, "name": name, "kind": kind,
        "source": {"file": source, "sha256": source_sha256, "format": source_format},
        "summary": {"cases": None, "units": None},
    }


def build_payload(name: str, kind: str, samples: Sequence[Sample], *, source: str, source_sha256: str,
                  source_format: str) -> dict[str, Any]:
    """The stored form of an imported dataset (JSON-able, deterministic for the same input)."""
    rows = list(sample_rows(name, samples))
    payload = payload_head(name, kind, source=source, source_sha256=source_sha256, source_format=source_format)
    payload["summary"]["cases"] = len(rows)
    payload["samples"] = rows
    return payload


def sample_from_payload(row: dict[str, Any]) -> Sample:
    """A stored sample back as a :class:`Sample` (for exports)."""
    return Sample(Place("", "item", 0), row["query"], row["response"], tuple(row["contexts"]),
                  tuple(row["context_ids"]), tuple(Turn(r, c) for r, c in row["history"]), row["reference"],
                  tuple(row["reference_contexts"]), tuple(row["facts"]) if row["facts_given"] else None,
                  row["sample_id"], dict(row["extra"]))


def build_dataset(payload: dict[str, Any], root: Path) -> tuple[Dataset, dict[str, list[Passage]]]:
    """The :class:`~playground.golden.Dataset` (no corpus) and passages per case of a payload."""
    name = payload["name"]
    cases: dict[str, Case] = {}
    responses: dict[str, Response] = {}
    passages: dict[str, list[Passage]] = {}
    for row in payload["samples"]:
        cid = row["case_id"]
        history = tuple(Turn(r, c) for r, c in row["history"])
        facts = tuple(Fact(f"F{i}", text, (text,)) for i, text in enumerate(row["facts"], 1))
        cases[cid] = Case(cid, "multi_turn" if history else "normal", name, row["query"], history, (),
                          row["reference"], facts)
        rid = response_id_of(cid)
        responses[rid] = Response(rid, cid, "imported", row["response"], origin="imported")
        ids = row["context_ids"]
        passages[cid] = [
            Passage(Locator(name, slugify(ids[i]) if i < len(ids) and slugify(ids[i]) else f"ctx{i + 1}", str(i + 1)),
                    text, title=ids[i] if i < len(ids) else "")
            for i, text in enumerate(row["contexts"])
        ]
    return Dataset(root, Corpus(()), cases, responses), passages
