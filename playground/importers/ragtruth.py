"""Import a RAGTruth claim file as playground cases, responses, passages, claim units and human labels.

``playground import ragtruth FILE [--db STORE]`` (or ``--out DIR`` for a data set file, no store).

The file is read and validated by :func:`load_ragtruth` (every malformed
line is reported with its line number; a bad file imports nothing: no data
set file, no label; the checks are below).  A good file becomes an
:class:`~playground.importers.claim_dataset.ImportedDataset`:

=============  ==========================================  ====================================
what           id                                          from
=============  ==========================================  ====================================
case           ``RT-S<source_id>``                         one RAGTruth source (question or
                                                           article); ``case_type``
                                                           ``ragtruth_qa`` / ``ragtruth_summary``
response       ``RT-<response_id>``                        one generated response (its claims
                                                           joined by spaces; the original text
                                                           is not in the file)
passage        ``RT-P<hash12 of the text>``                an evidence string (deduplicated)
claim unit     ``RT-<response_id>:c<claim_index>:<hash8>`` one claim; dimension ``supported``
                                                           only (RAGTruth labels nothing else)
=============  ==========================================  ====================================

The claim unit id is :attr:`playground.model.Claim.claim_id` of the response
``RT-<response_id>`` (same scheme as the golden set).  Its ``text_hash`` covers
the claim and its evidence, since the judgement rests on both.  The human
label is ``supported = not label`` (RAGTruth's ``label`` is *hallucinated*),
filed under the annotator :data:`HUMAN_ANNOTATOR`.

Passages are stored as evidence of the claims, not as units: the claim file
carries neither the question nor relevance labels, so there is nothing to
judge a passage's relevance against.

Cases of an imported data set are not golden-set cases (``model.CASE_TYPES``
is the golden set's list); they exist only in the label store (the dataset
``ragtruth``, stored in the same transaction as its labels) or in a data set
file ``DIR/ragtruth.dataset.json``, written with deterministic bytes (sorted keys,
stable orders, no timestamps, no absolute paths) so that importing the same
file twice gives the same bytes.

Reading a claim file (``claims.jsonl``).

A claim file holds one JSON object per line (see
``shared/data/ragtruth/README.md``).  :func:`load_ragtruth` validates every
line strictly and collects *all* problems as ``(line_number, message)``
(1-based line numbers); if there is any, it raises one :class:`RagTruthError`
listing them, so a bad file imports nothing.

Checks, per line: valid JSON object; every required field present with the
right type (:data:`FIELD_TYPES`; ``bool`` is not accepted as a number and
numbers are not accepted as ``bool``); ``claim_index``/``claim_start`` >= 0;
``claim`` not blank; ``example_id == f"{response_id}:{claim_index}"``;
``claim_end - claim_start == len(claim)``; ``evidence`` a list of exactly 4
strings with at least one non-empty; ``evidence_mask`` a list of 4 booleans
equal to "evidence string non-empty"; ``label == bool(label_types)``.
Across lines: no duplicate ``example_id``; all claims of a response share
``source_id``, ``task_type``, ``source_name``, ``generator_model`` and
``temperature``; within a response ``claim_index`` increases and spans do not
overlap.  Unknown extra fields are allowed.

Orientation: RAGTruth's ``label`` is True when the claim is *hallucinated*;
the playground's "supported" label is ``not label``.
"""
from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import limits
from ..files import write_atomic
from ..jsonl import LineProblems, json_lines, read_lines
from ..model import Claim, Label, Unit, short_hash
from .claim_dataset import HUMAN_ANNOTATOR, ImportedDataset, payload_of

__all__ = [
    "CASE_TYPES",
    "DATASET_FILE",
    "FIELD_TYPES",
    "HUMAN_ANNOTATOR",
    "ImportResult",
    "RagTruthError",
    "RagTruthRecord",
    "RagTruthSample",
    "build_dataset",
    "case_id_of",
    "claim_unit",
    "claim_unit_id",
    "group_by_response",
    "import_ragtruth",
    "load_ragtruth",
    "parse_ragtruth_lines",
    "passage_id_of",
    "response_id_of",
]

#: Required fields and their JSON types (``float`` accepts ints too).
FIELD_TYPES: dict[str, type] = {
    "example_id": str,
    "source_id": str,
    "response_id": str,
    "claim_index": int,
    "claim_start": int,
    "claim_end": int,
    "claim": str,
    "label": bool,
    "evidence": list,
    "evidence_mask": list,
    "task_type": str,
    "source_name": str,
    "generator_model": str,
    "temperature": float,
    "granularity": str,
    "label_types": list,
    "implicit_true": bool,
    "due_to_null": bool,
}

_RESPONSE_SHARED = ("source_id", "task_type", "source_name", "generator_model", "temperature")


class RagTruthError(LineProblems):
    """A claim file failed validation; ``problems`` lists every
    ``(line_number, message)`` found (line 0 = the file as a whole)."""

    WHAT = "RAGTruth claims"


@dataclass(frozen=True)
class RagTruthRecord:
    """One RAGTruth claim.  ``label`` True = hallucinated (human); see
    :attr:`supported` for the playground orientation.  ``line`` is the 1-based
    line number in the file it came from."""

    example_id: str
    source_id: str
    response_id: str
    claim_index: int
    claim_start: int
    claim_end: int
    claim: str
    label: bool
    label_types: tuple[str, ...]
    evidence: tuple[str, ...]
    evidence_mask: tuple[bool, ...]
    task_type: str
    source_name: str
    generator_model: str
    temperature: float
    granularity: str
    implicit_true: bool
    due_to_null: bool
    line: int = 0

    @property
    def supported(self) -> bool:
        """Human "supported" label: not hallucinated."""
        return not self.label

    @property
    def context(self) -> tuple[str, ...]:
        """The non-empty evidence strings (the claim's retrieved context)."""
        return tuple(e for e in self.evidence if e)


@dataclass(frozen=True)
class RagTruthSample:
    """A validated claim file."""

    path: str
    records: tuple[RagTruthRecord, ...]

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[RagTruthRecord]:
        return iter(self.records)

    @property
    def responses(self) -> dict[str, tuple[RagTruthRecord, ...]]:
        """Records grouped by ``response_id`` (file order)."""
        return group_by_response(self.records)

    @property
    def sources(self) -> tuple[str, ...]:
        """Distinct ``source_id`` values in file order."""
        return tuple(OrderedDict.fromkeys(r.source_id for r in self.records))

    @property
    def positives(self) -> int:
        """Number of hallucinated claims."""
        return sum(r.label for r in self.records)


def group_by_response(records: Iterable[RagTruthRecord]) -> dict[str, tuple[RagTruthRecord, ...]]:
    """``{response_id: records}`` in first-appearance order, records sorted by
    ``claim_index``."""
    out: dict[str, list[RagTruthRecord]] = OrderedDict()
    for r in records:
        out.setdefault(r.response_id, []).append(r)
    return OrderedDict((k, tuple(sorted(v, key=lambda r: r.claim_index))) for k, v in out.items())


def _type_ok(value: object, want: type) -> bool:
    if want is bool:
        return isinstance(value, bool)
    if want is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if want is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, want)


_TYPE_NAMES = {str: "a string", int: "an integer", bool: "a boolean", list: "a list",
               float: "a number"}


def _type_problems(obj: dict[str, Any]) -> list[str]:
    """A missing field or a field of the wrong type (:data:`FIELD_TYPES`), one message each."""
    out = []
    for name, want in FIELD_TYPES.items():
        if name not in obj:
            out.append(f"missing field {name!r}")
        elif not _type_ok(obj[name], want):
            out.append(f"field {name!r} must be {_TYPE_NAMES[want]}, "
                       f"got {type(obj[name]).__name__} {obj[name]!r:.60}")
    return out


def _rule_problems(obj: dict[str, Any]) -> list[str]:
    """The per-line rules of the module docstring on a line whose fields have the right types."""
    out = []
    if obj["claim_index"] < 0:
        out.append(f"claim_index must be >= 0, got {obj['claim_index']}")
    if obj["claim_start"] < 0:
        out.append(f"claim_start must be >= 0, got {obj['claim_start']}")
    if not obj["claim"].strip():
        out.append("claim is blank")
    want_id = f"{obj['response_id']}:{obj['claim_index']}"
    if obj["example_id"] != want_id:
        out.append(f"example_id {obj['example_id']!r} != response_id:claim_index {want_id!r}")
    span = obj["claim_end"] - obj["claim_start"]
    if span != len(obj["claim"]):
        out.append(f"claim_end - claim_start = {span} but len(claim) = {len(obj['claim'])}")
    ev = obj["evidence"]
    if len(ev) != 4 or not all(isinstance(e, str) for e in ev):
        out.append(f"evidence must be a list of 4 strings, got {len(ev)} item(s)"
                   + ("" if all(isinstance(e, str) for e in ev) else " with non-strings"))
    elif not any(e.strip() for e in ev):
        out.append("evidence has no non-empty string")
    mask = obj["evidence_mask"]
    if len(mask) != 4 or not all(isinstance(m, bool) for m in mask):
        out.append("evidence_mask must be a list of 4 booleans")
    elif len(ev) == 4 and all(isinstance(e, str) for e in ev) \
            and list(mask) != [bool(e) for e in ev]:
        out.append(f"evidence_mask {mask} does not match the non-empty evidence strings")
    lt = obj["label_types"]
    if not all(isinstance(x, str) for x in lt):
        out.append("label_types must be a list of strings")
    elif obj["label"] != bool(lt):
        out.append(f"label is {obj['label']} but label_types is {lt!r}")
    return out


def _check_line(obj: object, ln: int, problems: list[tuple[int, str]]) -> RagTruthRecord | None:
    if not isinstance(obj, dict):
        problems.append((ln, f"expected a JSON object, got {type(obj).__name__}"))
        return None
    found = _type_problems(obj) or _rule_problems(obj)
    if found:
        problems.extend((ln, msg) for msg in found)
        return None
    return RagTruthRecord(
        example_id=obj["example_id"], source_id=obj["source_id"], response_id=obj["response_id"],
        claim_index=obj["claim_index"], claim_start=obj["claim_start"],
        claim_end=obj["claim_end"], claim=obj["claim"], label=obj["label"],
        label_types=tuple(obj["label_types"]), evidence=tuple(obj["evidence"]),
        evidence_mask=tuple(obj["evidence_mask"]),
        task_type=obj["task_type"], source_name=obj["source_name"],
        generator_model=obj["generator_model"], temperature=float(obj["temperature"]),
        granularity=obj["granularity"], implicit_true=obj["implicit_true"],
        due_to_null=obj["due_to_null"], line=ln,
    )


def parse_ragtruth_lines(lines: Sequence[str], path: str = "") -> RagTruthSample:
    """Validate already-read lines (see the module docstring); raise
    :class:`RagTruthError` with every problem, or return the sample."""
    problems: list[tuple[int, str]] = []
    records: list[RagTruthRecord] = []
    for ln, obj in limits.bounded_lines(json_lines(lines, problems), problems):
        rec = _check_line(obj, ln, problems)
        if rec is not None:
            records.append(rec)
    # cross-line checks
    first_line: dict[str, int] = {}
    by_resp: dict[str, RagTruthRecord] = {}
    last_in_resp: dict[str, RagTruthRecord] = {}
    for r in records:
        if r.example_id in first_line:
            problems.append((r.line, f"duplicate example_id {r.example_id!r} "
                                     f"(first on line {first_line[r.example_id]})"))
            continue
        first_line[r.example_id] = r.line
        head = by_resp.get(r.response_id)
        if head is None:
            by_resp[r.response_id] = r
        else:
            for f in _RESPONSE_SHARED:
                if getattr(r, f) != getattr(head, f):
                    problems.append((r.line, f"{f} {getattr(r, f)!r} differs from "
                                             f"{getattr(head, f)!r} on line {head.line} "
                                             f"(same response {r.response_id!r})"))
        prev = last_in_resp.get(r.response_id)
        if prev is not None:
            if r.claim_index <= prev.claim_index:
                problems.append((r.line, f"claim_index {r.claim_index} does not increase "
                                         f"(line {prev.line} has {prev.claim_index})"))
            if r.claim_start < prev.claim_end:
                problems.append((r.line, f"span {r.claim_start}-{r.claim_end} overlaps or "
                                         f"precedes span {prev.claim_start}-{prev.claim_end} "
                                         f"on line {prev.line}"))
        last_in_resp[r.response_id] = r
    if not records and not problems:
        problems.append((0, "no records"))
    if problems:
        raise RagTruthError(problems, path)
    return RagTruthSample(path=path, records=tuple(records))


def load_ragtruth(path: str | Path) -> RagTruthSample:
    """Read and validate a RAGTruth claim file (UTF-8 JSON lines).

    Raises :class:`RagTruthError` (a ``ValueError``) listing every problem as
    ``(line_number, message)``; ``FileNotFoundError`` if the file is absent.  The bounds of
    :mod:`.limits` hold: a regular file of at most ``MAX_FILE_BYTES`` (line 0), at most ``MAX_ROWS``
    claims, each cell and nesting within its limit (the line and field named).
    """
    try:
        limits.check_file(path)
    except limits.LimitExceeded as exc:
        raise RagTruthError([(0, str(exc))], str(Path(path))) from None
    return parse_ragtruth_lines(read_lines(path, RagTruthError), str(Path(path)))


# --------------------------------------------------------------------------- import


#: File name of the imported data set inside ``--out``.
DATASET_FILE = "ragtruth.dataset.json"
#: Case type per RAGTruth task type.
CASE_TYPES: dict[str, str] = {"QA": "ragtruth_qa", "Summary": "ragtruth_summary", "Data2txt": "ragtruth_data2txt"}


def case_id_of(source_id: str) -> str:
    """``RT-S<source_id>``: one case per RAGTruth source."""
    return f"RT-S{source_id}"


def response_id_of(response_id: str) -> str:
    """``RT-<response_id>``."""
    return f"RT-{response_id}"


def passage_id_of(text: str) -> str:
    """``RT-P<first 12 hex digits of SHA-256(text)>``."""
    return f"RT-P{short_hash(text, 12)}"


def claim_unit_id(record: RagTruthRecord) -> str:
    """``RT-<response_id>:c<claim_index>:<hash8 of the claim text>``."""
    return Claim(response_id_of(record.response_id), record.claim_index, record.claim,
                 record.claim_start, record.claim_end).claim_id


def claim_text_hash(record: RagTruthRecord) -> str:
    """Hash of what the judgement rests on: the claim and its non-empty evidence."""
    return short_hash(record.claim + "\n" + "\n\n".join(record.context), 12)


def claim_unit(record: RagTruthRecord) -> Unit:
    """The claim as a labellable unit (dimension ``supported`` only)."""
    return Unit("claim", claim_unit_id(record), case_id_of(record.source_id), response_id_of(record.response_id),
                ("supported",), record.claim, claim_text_hash(record))


def build_dataset(sample: RagTruthSample | Sequence[RagTruthRecord], *, source_file: str = "",
                  source_sha256: str = "", annotator: str = HUMAN_ANNOTATOR) -> ImportedDataset:
    """Convert validated records (file order) into an :class:`ImportedDataset`."""
    records = list(sample.records if isinstance(sample, RagTruthSample) else sample)
    cases: dict[str, dict[str, Any]] = {}
    responses: dict[str, dict[str, Any]] = {}
    passages: dict[str, str] = {}
    units: list[Unit] = []
    labels: list[Label] = []
    claims: dict[str, dict[str, Any]] = {}
    by_response: dict[str, list[RagTruthRecord]] = {}
    for r in records:
        by_response.setdefault(r.response_id, []).append(r)
    for r in records:
        cid = case_id_of(r.source_id)
        rid = response_id_of(r.response_id)
        case = cases.setdefault(cid, {
            "case_id": cid, "case_type": CASE_TYPES.get(r.task_type, "ragtruth_" + r.task_type.lower()),
            "tenant": "ragtruth", "source_id": r.source_id, "task_type": r.task_type, "source_name": r.source_name,
            "query": f"RAGTruth {r.task_type} ({r.source_name}) source {r.source_id}: "
                     "the question or article is not part of the claim file, only the evidence of each claim",
            "responses": [],
        })
        if rid not in responses:
            case["responses"].append(rid)
            mine = sorted(by_response[r.response_id], key=lambda x: x.claim_index)
            responses[rid] = {
                "response_id": rid, "case_id": cid, "ragtruth_response_id": r.response_id, "origin": "model",
                "variant": "ragtruth", "generator_model": r.generator_model, "temperature": r.temperature,
                "text": " ".join(x.claim for x in mine),
                "claims": [claim_unit_id(x) for x in mine],
                "hallucinated_claims": sum(x.label for x in mine),
            }
        evidence_ids = []
        for text in r.evidence:
            if text:
                pid = passage_id_of(text)
                passages.setdefault(pid, text)
                evidence_ids.append(pid)
        unit = claim_unit(r)
        units.append(unit)
        labels.append(Label(annotator, "claim", unit.unit_id, "supported", int(r.supported)))
        claims[unit.unit_id] = {
            "example_id": r.example_id, "source_id": r.source_id, "claim_index": r.claim_index,
            "claim_start": r.claim_start, "claim_end": r.claim_end, "evidence": evidence_ids,
            "hallucinated": r.label, "label_types": list(r.label_types), "implicit_true": r.implicit_true,
            "due_to_null": r.due_to_null, "task_type": r.task_type, "line": r.line,
        }
    for case in cases.values():
        case["responses"].sort()
    return ImportedDataset("ragtruth", source_file, source_sha256, cases, responses, passages, tuple(units),
                           tuple(labels), claims, annotator)


@dataclass(frozen=True)
class ImportResult:
    """What :func:`import_ragtruth` did."""

    dataset: ImportedDataset
    path: Path | None
    labels_changed: int = 0
    labels_unchanged: int = 0
    store: str = ""

    def summary(self) -> str:
        c = self.dataset.counts()
        text = (f"RAGTruth: {c['claims']} claims ({c['hallucinated']} hallucinated) in {c['responses']} responses "
                f"of {c['cases']} sources, {c['passages']} distinct evidence passages")
        if self.path is not None:
            text += f"\n  data set written to {self.path}"
        if self.store:
            text += (f"\n  dataset and {c['labels']} human labels under '{self.dataset.human_annotator}' "
                     f"in {self.store} (one transaction)")
        return text


def _write_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a temporary file beside it, fsynced, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)


def import_ragtruth(path: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None, store: Any = None, *,
                    annotator: str = HUMAN_ANNOTATOR, name: str = "ragtruth", replace: bool = True,
                    sample: Any = None) -> ImportResult:
    """Validate ``path`` and import it: into ``store`` (the dataset and its labels), or as a file in ``out_dir``.

    All or nothing whatever step fails: the file is validated completely first
    (:class:`RagTruthError` lists every bad line, and
    nothing is written); into a store, the dataset (:func:`payload_of`) and
    its human labels go in ONE transaction
    (:meth:`playground.store.LabelStore.put_dataset`); into ``out_dir`` the
    data set file (the older layout, still read by
    :func:`playground.units.load_catalog`) is written to a temporary file and
    renamed.  Exactly one of ``store`` and ``out_dir`` is given.  ``sample``: what
    :func:`load_ragtruth` returned for ``path``, when the
    caller has validated it already (the file is then parsed once).
    """

    if (store is None) == (out_dir is None):
        raise ValueError("import_ragtruth: give a label store or an output folder (exactly one)")
    path = Path(path)
    if sample is None:
        sample = load_ragtruth(path)  # raises with every problem (the file's size first); nothing written yet
    raw = path.read_bytes()
    dataset = build_dataset(sample, source_file=path.name, source_sha256=hashlib.sha256(raw).hexdigest(),
                            annotator=annotator)
    if store is None:
        target = Path(out_dir) / DATASET_FILE  # type: ignore[arg-type]
        _write_file(target, dataset.to_json())
        return ImportResult(dataset, target)
    catalog = dataset.catalog()
    rows = [(lab.annotator, catalog[lab.unit_id], lab.dimension, lab.value) for lab in dataset.labels]
    store.put_dataset(name, "ragtruth", payload_of(dataset), label_rows=rows, replace=replace)
    return ImportResult(dataset, None, len(rows), 0, store.url)
