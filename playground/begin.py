"""Load and validate BEGIN claim files (``shared/data/begin/claims.jsonl``).

BEGIN (Dziri et al., TACL 2022) holds dialogue responses judged by people
against a knowledge snippet: "Fully attributable" or "Not fully attributable"
("Generic" records were dropped upstream).  The converted file has one JSON
object per line with the fields of :data:`FIELD_TYPES` (see the folder's
README for provenance, licences and caveats).

:func:`load_begin` validates every line and collects *all* problems as
``(line_number, message)`` (1-based); if there is any it raises one
:class:`BeginError` listing them, so a bad file yields nothing.

The bounds of :mod:`playground.importers.limits` hold as for every importer: a
regular file of at most ``MAX_FILE_BYTES``, at most ``MAX_ROWS`` lines, each
cell and nesting within its limit (the line and field named).

Checks, per line: valid JSON object; every field present with its type
(``bool`` is not a string and not a number); ``claim`` not blank;
``corpus`` one of :data:`CORPORA`; ``evidence`` a list of exactly 2 strings
whose first (the knowledge snippet) is not blank; ``label_raw`` one of
:data:`LABEL_RAW` and ``label`` equal to ``label_raw == "Not fully
attributable"``.  Across lines: no duplicate ``example_id``.  Extra fields are
allowed.

Orientation as RAGTruth's: ``label`` True = *not attributable*
(hallucinated, in the broad BEGIN sense); :attr:`BeginRecord.supported` is
``not label``.  The grounding is the knowledge snippet only
(:attr:`BeginRecord.context`); ``evidence[1]``, the previous dialogue turn,
is kept as :attr:`BeginRecord.message` but is not evidence.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .jsonl import LineProblems, json_lines, read_lines
from .limits import LimitExceeded, bounded_lines, check_file

__all__ = [
    "CORPORA",
    "FIELD_TYPES",
    "LABEL_RAW",
    "BeginError",
    "BeginRecord",
    "BeginSample",
    "default_begin_path",
    "load_begin",
    "parse_begin_lines",
    "shared_data_dir",
]

#: Required fields and their JSON types.
FIELD_TYPES: dict[str, type] = {
    "example_id": str,
    "source_id": str,
    "corpus": str,
    "claim": str,
    "evidence": list,
    "label": bool,
    "label_raw": str,
    "model_name": str,
}
#: The BEGIN dialogue corpora.
CORPORA: tuple[str, ...] = ("wow", "cmu_dog", "topicalchat")
#: ``label_raw`` value -> ``label`` (True = not attributable).
LABEL_RAW: dict[str, bool] = {"Fully attributable": False, "Not fully attributable": True}

_TYPE_NAMES = {str: "a string", bool: "a boolean", list: "a list"}


def shared_data_dir() -> Path:
    """The shared real data: ``$PLAYGROUND_SHARED_DATA`` when set, else
    ``<repo>/../shared/data`` (the layout beside the repository)."""
    import os

    from .installed import REPO_ROOT

    env = os.environ.get("PLAYGROUND_SHARED_DATA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


def default_begin_path() -> Path:
    """``begin/claims.jsonl`` in :func:`shared_data_dir` (the shared BEGIN sample)."""
    return shared_data_dir() / "begin" / "claims.jsonl"


class BeginError(LineProblems):
    """A BEGIN file failed validation; ``problems`` lists every ``(line_number,
    message)`` found (line 0 = the file as a whole)."""

    WHAT = "BEGIN claims"


@dataclass(frozen=True)
class BeginRecord:
    """One BEGIN response.  ``label`` True = not fully attributable (human)."""

    example_id: str
    source_id: str
    corpus: str
    claim: str
    knowledge: str
    message: str
    label: bool
    label_raw: str
    model_name: str
    line: int = 0

    @property
    def supported(self) -> bool:
        """Human "supported" label: fully attributable to the knowledge."""
        return not self.label

    @property
    def context(self) -> tuple[str, ...]:
        """The grounding evidence: the knowledge snippet alone."""
        return (self.knowledge,)

    @property
    def task_type(self) -> str:
        """The dialogue corpus, reported as the task type."""
        return self.corpus


@dataclass(frozen=True)
class BeginSample:
    """A validated BEGIN file."""

    path: str
    records: tuple[BeginRecord, ...]

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[BeginRecord]:
        return iter(self.records)


def _check_line(obj: object, ln: int, problems: list[tuple[int, str]]) -> BeginRecord | None:
    if not isinstance(obj, dict):
        problems.append((ln, f"expected a JSON object, got {type(obj).__name__}"))
        return None
    before = len(problems)
    for name, want in FIELD_TYPES.items():
        if name not in obj:
            problems.append((ln, f"missing field {name!r}"))
        elif not isinstance(obj[name], want) or (want is not bool and isinstance(obj[name], bool)):
            problems.append((ln, f"field {name!r} must be {_TYPE_NAMES[want]}, "
                                 f"got {type(obj[name]).__name__} {obj[name]!r:.60}"))
    if len(problems) > before:
        return None
    if not obj["claim"].strip():
        problems.append((ln, "claim is blank"))
    if obj["corpus"] not in CORPORA:
        problems.append((ln, f"corpus {obj['corpus']!r} is not one of {', '.join(CORPORA)}"))
    ev = obj["evidence"]
    if len(ev) != 2 or not all(isinstance(e, str) for e in ev):
        problems.append((ln, f"evidence must be a list of 2 strings (knowledge, message), got {len(ev)} item(s)"
                             + ("" if all(isinstance(e, str) for e in ev) else " with non-strings")))
    elif not ev[0].strip():
        problems.append((ln, "evidence[0] (the knowledge snippet) is blank"))
    raw = obj["label_raw"]
    if raw not in LABEL_RAW:
        problems.append((ln, f"label_raw {raw!r} is not one of {', '.join(map(repr, LABEL_RAW))}"))
    elif obj["label"] != LABEL_RAW[raw]:
        problems.append((ln, f"label is {obj['label']} but label_raw is {raw!r}"))
    if len(problems) > before:
        return None
    return BeginRecord(example_id=obj["example_id"], source_id=obj["source_id"], corpus=obj["corpus"],
                       claim=obj["claim"], knowledge=ev[0], message=ev[1], label=obj["label"],
                       label_raw=raw, model_name=obj["model_name"], line=ln)


def parse_begin_lines(lines: Sequence[str], path: str = "") -> BeginSample:
    """Validate already-read lines (module docstring); raise :class:`BeginError`
    with every problem, or return the sample."""
    problems: list[tuple[int, str]] = []
    records: list[BeginRecord] = []
    first: dict[str, int] = {}
    for ln, obj in bounded_lines(json_lines(lines, problems), problems):
        rec = _check_line(obj, ln, problems)
        if rec is None:
            continue
        if rec.example_id in first:
            problems.append((ln, f"duplicate example_id {rec.example_id!r} (first on line {first[rec.example_id]})"))
            continue
        first[rec.example_id] = ln
        records.append(rec)
    if not records and not problems:
        problems.append((0, "no records"))
    if problems:
        raise BeginError(problems, path)
    return BeginSample(path=path, records=tuple(records))


def load_begin(path: str | Path | None = None) -> BeginSample:
    """Read and validate a BEGIN claim file (UTF-8 JSON lines; default
    :func:`default_begin_path`).  Raises :class:`BeginError` (a ``ValueError``)
    listing every problem (bytes that are not UTF-8 too, by line); ``FileNotFoundError`` if the file is absent."""
    p = default_begin_path() if path is None else Path(path)
    try:
        check_file(p)  # the bounds of playground.importers.limits: the file's size here, its lines as parsed
    except LimitExceeded as exc:
        raise BeginError([(0, str(exc))], str(p)) from None
    return parse_begin_lines(read_lines(p, BeginError), str(p))
