"""Load and validate RAGTruth claim files (``claims.jsonl``).

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

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .jsonl import LineProblems, json_lines, read_lines

__all__ = [
    "FIELD_TYPES",
    "RagTruthError",
    "RagTruthRecord",
    "RagTruthSample",
    "group_by_response",
    "load_ragtruth",
    "parse_ragtruth_lines",
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


def _check_line(obj: object, ln: int, problems: list[tuple[int, str]]) -> RagTruthRecord | None:
    if not isinstance(obj, dict):
        problems.append((ln, f"expected a JSON object, got {type(obj).__name__}"))
        return None
    bad = False
    for name, want in FIELD_TYPES.items():
        if name not in obj:
            problems.append((ln, f"missing field {name!r}"))
            bad = True
        elif not _type_ok(obj[name], want):
            problems.append((ln, f"field {name!r} must be {_TYPE_NAMES[want]}, "
                                 f"got {type(obj[name]).__name__} {obj[name]!r:.60}"))
            bad = True
    if bad:
        return None
    ok = True

    def fail(msg: str) -> None:
        nonlocal ok
        problems.append((ln, msg))
        ok = False

    if obj["claim_index"] < 0:
        fail(f"claim_index must be >= 0, got {obj['claim_index']}")
    if obj["claim_start"] < 0:
        fail(f"claim_start must be >= 0, got {obj['claim_start']}")
    if not obj["claim"].strip():
        fail("claim is blank")
    want_id = f"{obj['response_id']}:{obj['claim_index']}"
    if obj["example_id"] != want_id:
        fail(f"example_id {obj['example_id']!r} != response_id:claim_index {want_id!r}")
    span = obj["claim_end"] - obj["claim_start"]
    if span != len(obj["claim"]):
        fail(f"claim_end - claim_start = {span} but len(claim) = {len(obj['claim'])}")
    ev = obj["evidence"]
    if len(ev) != 4 or not all(isinstance(e, str) for e in ev):
        fail(f"evidence must be a list of 4 strings, got {len(ev)} item(s)"
             + ("" if all(isinstance(e, str) for e in ev) else " with non-strings"))
    elif not any(e.strip() for e in ev):
        fail("evidence has no non-empty string")
    mask = obj["evidence_mask"]
    if len(mask) != 4 or not all(isinstance(m, bool) for m in mask):
        fail("evidence_mask must be a list of 4 booleans")
    elif len(ev) == 4 and all(isinstance(e, str) for e in ev) \
            and list(mask) != [bool(e) for e in ev]:
        fail(f"evidence_mask {mask} does not match the non-empty evidence strings")
    lt = obj["label_types"]
    if not all(isinstance(x, str) for x in lt):
        fail("label_types must be a list of strings")
    elif obj["label"] != bool(lt):
        fail(f"label is {obj['label']} but label_types is {lt!r}")
    if not ok:
        return None
    return RagTruthRecord(
        example_id=obj["example_id"], source_id=obj["source_id"], response_id=obj["response_id"],
        claim_index=obj["claim_index"], claim_start=obj["claim_start"],
        claim_end=obj["claim_end"], claim=obj["claim"], label=obj["label"],
        label_types=tuple(lt), evidence=tuple(ev), evidence_mask=tuple(mask),
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
    for ln, obj in json_lines(lines, problems):
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
    ``(line_number, message)``; ``FileNotFoundError`` if the file is absent.
    """
    return parse_ragtruth_lines(read_lines(path, RagTruthError), str(Path(path)))
