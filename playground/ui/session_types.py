"""The records of a labelling page's session (no widgets): what :mod:`playground.ui.session` and its parts
share, and the base class that declares the session's state."""
from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..golden import Dataset
from ..metrics import (
    DIMENSION_ORDER,
    Agreement,
    Composite,
    Diagnosis,
    DimensionRate,
)
from ..model import Passage, Response, Unit
from ..store import InvalidLabelError, check_annotator
from ..store.types import CaseProgress as Progress  # the store's record: one progress type (issue 27)

__all__ = [
    "DEFAULT_WEIGHTS",
    "EXPORT_MIME",
    "QUESTIONS",
    "STATUSES",
    "VERDICTS",
    "CaseFilter",
    "CaseRow",
    "DatasetChangedError",
    "LabelChange",
    "Progress",
    "Scores",
    "SessionBase",
    "SessionError",
    "ViewUnit",
    "format_weights",
    "parse_weights",
    "validate_annotator",
]

#: The page's download formats (``playground.store.io.format_bytes``) and their media types.
EXPORT_MIME: dict[str, str] = {"csv": "text/csv", "jsonl": "application/x-ndjson",
                               "parquet": "application/vnd.apache.parquet"}

#: Statuses of a case for one annotator.
STATUSES: tuple[str, ...] = ("unlabelled", "partial", "done")
#: Verdicts of the harness decision.
VERDICTS: tuple[str, ...] = ("ACCEPT", "REVIEW", "REJECT")
#: The question each label answers, for the page.
QUESTIONS: dict[str, str] = {
    "relevant": "relevant to the question?",
    "supported": "supported by the retrieved passages?",
    "correct": "correct against the reference?",
    "covered": "covered by the response?",
}
DEFAULT_WEIGHTS: dict[str, float] = dict.fromkeys(DIMENSION_ORDER, 0.25)


class SessionError(ValueError):
    """A request the session cannot honour (no annotator, read-only, unknown unit ...); the message is for people."""

class DatasetChangedError(SessionError):
    """The dataset was re-imported (``import --replace``) since this page opened: its text may be gone, so
    nothing more is saved from this page (a label on text that no longer exists would be orphaned at once)."""

def validate_annotator(name: Any) -> str:
    """The annotator name a person typed, tidied (NFC, surrounding and repeated spaces removed), then checked.

    The check is the store's one rule for names everywhere
    (:func:`playground.store.check_annotator`: at most 64 characters, no
    control or format characters, not one of
    :data:`playground.store.RESERVED_ANNOTATORS`); a refused name raises
    :class:`SessionError` with the store's reason.  A name is an identity, not
    authentication: anyone can type any name.
    """
    if not isinstance(name, str):
        raise SessionError("Type your name first.")
    name = " ".join(unicodedata.normalize("NFC", name).split())
    if not name:
        raise SessionError("Type your name first.")
    try:
        return check_annotator(name)
    except InvalidLabelError as exc:
        raise SessionError(f"That name cannot be used: {exc}.") from None

@dataclass(frozen=True)
class ViewUnit:
    """A unit as the page shows it: its position, text and what the harness said."""

    unit: Unit
    kind: str           # passage | claim | fact
    index: int          # 0-based position among its kind on the page
    title: str = ""     # passage: article title and locator; fact: fact id
    detail: str = ""    # passage: rank and retrieval score
    passage: Passage | None = None

@dataclass(frozen=True)
class LabelChange:
    """One change of one label, as the session applied it."""

    unit_id: str
    dimension: str
    old: int | None
    new: int | None
    case_id: str
    response_id: str
    action: str  # set | clear | undo
    #: True when the store's previous value was not what this page showed (another tab changed it).
    conflict: bool = False

@dataclass(frozen=True)
class CaseRow:
    """A case in the case list, with this annotator's progress on it."""

    case_id: str
    case_type: str
    query: str
    status: str
    labelled_units: int
    total_units: int
    labelled_pairs: int
    total_pairs: int
    disagreements: int
    verdicts: tuple[str, ...]

@dataclass(frozen=True)
class CaseFilter:
    """Which cases the case list shows; ``None``/``False`` means no restriction."""

    case_type: str | None = None
    status: str | None = None
    verdict: str | None = None
    disagreement: bool = False
    #: Search text (:mod:`playground.ui.search`: every word in the question, answers or contexts).
    text: str = ""

@dataclass(frozen=True)
class Scores:
    """Everything the score panel shows, recomputed after each change."""

    current: dict[str, DimensionRate]
    pooled: dict[str, DimensionRate]
    composite_current: Composite | None
    composite_pooled: Composite | None
    composite_error: str
    diagnosis_current: Diagnosis
    diagnosis_pooled: Diagnosis
    agreement: dict[str, Agreement]
    progress: Progress
    weights: dict[str, float]
    normalised_weights: dict[str, float]
    gates: dict[str, float]
    ties: int = 0


def format_weights(weights: Mapping[str, float]) -> str:
    """``faithfulness:0.4,correctness:0.3`` in dimension order (for the URL)."""
    return ",".join(f"{d}:{weights[d]:g}" for d in DIMENSION_ORDER if d in weights)


def parse_weights(text: str, what: str = "weights", unit_interval: bool = False) -> dict[str, float]:
    """The inverse of :func:`format_weights`; one :class:`SessionError` lists every bad item."""
    out: dict[str, float] = {}
    problems: list[str] = []
    for item in (x for x in text.split(",") if x.strip()):
        name, sep, value = item.partition(":")
        name = name.strip()
        if not sep or name not in DIMENSION_ORDER:
            problems.append(f"{item.strip()!r} is not dimension:value (dimensions: {', '.join(DIMENSION_ORDER)})")
            continue
        try:
            v = float(value)
        except ValueError:
            problems.append(f"{name}: {value.strip()!r} is not a number")
            continue
        if not (v >= 0 and (v <= 1 or not unit_interval)) or v != v or v == float("inf"):
            problems.append(f"{name}: {v:g} is out of range ({'0 to 1' if unit_interval else 'at least 0'})")
            continue
        out[name] = v
    if problems:
        raise SessionError(f"The link's {what} cannot be used: " + "; ".join(problems) + ".")
    return out


class SessionBase:
    """The state of a :class:`~playground.ui.session.LabelSession`, declared for the type checker (no behaviour):
    what ``LabelSession.__init__`` and its parts set (the catalog, the labels, the view), and the parts' methods
    one part calls in another, which the session hands on (each part's module named beside them).  Each part
    reads it through a protocol of its own listing only what it uses (``CatalogState``, ``LabellingState``, ...)."""

    # the dataset and the store (LabelSession.__init__)
    dataset: Dataset
    dataset_name: str
    revision: str
    harness_source: str
    store: Any
    read_only: bool
    reveal_all: bool
    harness: Any
    _harness: Any
    case_ids: list[str]
    results: dict[str, dict]
    passages: Mapping[str, Sequence[Passage]]
    _hits: dict[str, list]
    # the catalog (session_catalog)
    catalog: Any
    _units: dict[str, Unit]
    responses: dict[str, list[Response]]
    _view_units: dict[tuple[str, str], list[ViewUnit]]
    _case_units: dict[str, list[str]]
    _response_units: dict[str, list[str]]
    _group: dict[str, tuple[str, str]]
    auto: dict[tuple[str, str], int]
    auto_score: dict[tuple[str, str], float | None]
    key: dict[tuple[str, str], int | None]
    decisions: dict[str, dict]
    variants: dict[str, str]
    _built: set[str]
    _counts: dict[str, tuple[int, int]]
    total_units: int
    total_pairs: int
    # the view: weights, filter, case on screen, queue (LabelSession.__init__, session_navigation)
    weights: dict[str, float]
    gates: dict[str, float]
    thresholds: dict[str, float]
    filter: CaseFilter
    case_id: str | None
    response_id: str | None
    annotator: str | None
    queue_name: str | None
    queue_units: list[str]
    queue_sample: bool
    lesson_name: str | None
    queue_lesson: bool
    queue: list[tuple[str, str | None]]
    _ties: set[tuple[str, str]]
    # labels (session_labels._reset_labels)
    labels: dict[tuple[str, str], int]
    unsure: set[tuple[str, str]]
    stale: dict[tuple[str, str], int]
    comments: dict[str, str]
    counter: Any
    _tables: dict[str, list[int]]
    _agreement_cache: dict[str, Any]
    _case_stats: dict[str, tuple[int, int, int, int, int]]
    _rows: dict[str, tuple[Any, CaseRow]]
    _listed: tuple[CaseFilter, list[CaseRow]] | None
    _unsearched: tuple[CaseFilter, list[CaseRow]] | None

    # the parts' methods one part calls in another, handed on by LabelSession (the part's module beside them)
    build_case: Callable[[str], None]  # session_catalog
    build_cases: Callable[[Iterable[str]], None]  # session_catalog
    build_all: Callable[[], None]  # session_catalog
    _first_response: Callable[[str | None], str | None]  # session_catalog
    answered: Callable[[str, str], bool]  # session_labels
    _build_labelled: Callable[..., None]  # session_labels

    # session_navigation
    _view_ids: Callable[[str, str | None], list[str]]
    _pairs: Callable[[Iterable[str]], Iterator[tuple[str, str]]]
    _restat: Callable[[str], None]

    # session_reveal
    response_name: Callable[[str], str]
    _group_of_response: Callable[[str], str]
