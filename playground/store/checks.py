"""The label store's rules for what it accepts: names, values, notes, comments, units, and whose dataset a case is.

Kept apart from :mod:`.core` so the store's smaller modules (tags, guidelines,
replay) share one set of rules without importing the store class.

Unit kinds: the three of :data:`playground.model.UNIT_KINDS` plus
:data:`RESPONSE_KIND` (``"response"``, dimension :data:`VERDICT_DIMENSION`
``"pass"``): a whole response's pass/fail verdict (issue 24.6).  Response units
are not in ``model.UNIT_KINDS``, so the four dimensions, progress and rates
never see them; the store accepts them (:data:`STORE_UNIT_DIMENSIONS`).
"""
from __future__ import annotations

import json
import unicodedata
from typing import Any

from ..model import UNIT_DIMENSIONS, Unit
from .errors import InvalidLabelError
from .types import UNSURE, DatasetInfo

__all__ = [
    "APP_NAME", "CONSENSUS_ANNOTATOR", "ENV_VAR", "MAX_COMMENT_LENGTH", "MAX_NAME_LENGTH", "MAX_NOTE_LENGTH",
    "RESERVED_ANNOTATORS", "RESPONSE_KIND", "SHIPPED_DATASET", "STORE_UNIT_DIMENSIONS", "TAGS_DIMENSION",
    "VERDICT_DIMENSION",
    "annotator_problem", "canonical_json", "check_annotator", "check_comment", "check_note", "check_unit",
    "check_unit_identity", "check_value", "dataset_info", "dataset_of_case",
]

#: The shipped set's name (as :data:`playground.datasets.SHIPPED`).
SHIPPED_DATASET = "golden"
#: The unit kind of a whole response (error analysis): one label, its pass/fail verdict.
RESPONSE_KIND = "response"
#: The one dimension of a response unit: 1 = pass, 0 = fail, UNSURE.
VERDICT_DIMENSION = "pass"
#: The ``dimension`` of ``tags`` events (and of the undo events that revert them).
TAGS_DIMENSION = "tags"
#: Which dimensions each unit kind takes in the store: the model's, plus ``response: ("pass",)``.
STORE_UNIT_DIMENSIONS: dict[str, tuple[str, ...]] = {**UNIT_DIMENSIONS, RESPONSE_KIND: (VERDICT_DIMENSION,)}


def dataset_of_case(case_id: str) -> str:
    """The dataset a case id belongs to: the part before the first ``:`` (``NAME:sample`` of an imported
    dataset), else the shipped set ``golden`` (its case ids, ``GC-0001``, have no colon)."""
    head, sep, _ = case_id.partition(":")
    return head if sep and head else SHIPPED_DATASET


#: Environment variable naming the store (a path, ``sqlite:///...`` or ``postgresql://...``).
ENV_VAR = "PLAYGROUND_DB"
APP_NAME = "rag-label-playground"
#: Adjudicated labels are stored under this reserved name; they never vote in consensus.
CONSENSUS_ANNOTATOR = "consensus"
#: Names no person may label under: ``consensus`` (adjudicated labels) and ``harness``
#: (automatic judgements).  :meth:`LabelStore.annotators` never returns them and they never vote.
RESERVED_ANNOTATORS = frozenset({"consensus", "harness"})
MAX_NAME_LENGTH = 64
MAX_COMMENT_LENGTH = 10_000
#: Unicode categories an annotator name may not contain: controls, format characters
#: (bidirectional overrides, zero-width characters), line/paragraph separators, surrogates.
_BAD_NAME_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def annotator_problem(annotator: Any, *, allow_reserved: bool = False) -> str | None:
    """Why ``annotator`` is not a usable name, or ``None`` when it is (see :func:`check_annotator`)."""
    if not isinstance(annotator, str) or not annotator.strip():
        return f"annotator name must be a non-empty string, got {annotator!r}"
    name = annotator.strip()
    bad = sorted({f"U+{ord(c):04X}" for c in name if unicodedata.category(c) in _BAD_NAME_CATEGORIES})
    if bad:
        return f"annotator name {name!r} contains control or format characters ({', '.join(bad)})"
    if len(name) > MAX_NAME_LENGTH:
        return f"annotator name is {len(name)} characters long, more than {MAX_NAME_LENGTH}"
    if name in RESERVED_ANNOTATORS and not allow_reserved:
        return f"{name!r} is a reserved name ({', '.join(sorted(RESERVED_ANNOTATORS))}); label under your own name"
    return None


def check_annotator(annotator: Any, *, allow_reserved: bool = False) -> str:
    """The annotator name, stripped of surrounding white space, if usable; else :class:`InvalidLabelError`.

    The one rule for names everywhere (store, imports, the page): a non-empty
    string after stripping, at most :data:`MAX_NAME_LENGTH` (64) characters,
    no control or format characters (Unicode categories Cc, Cf, Zl, Zp, Cs),
    and not one of :data:`RESERVED_ANNOTATORS`.
    """
    problem = annotator_problem(annotator, allow_reserved=allow_reserved)
    if problem is not None:
        raise InvalidLabelError(problem)
    return str(annotator).strip()


def check_value(value: Any, *, unsure: bool = True) -> int | None:
    """1, 0, :data:`UNSURE` (2) or None (bools count as 1/0); anything else raises :class:`InvalidLabelError`."""
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in ((0, 1, UNSURE) if unsure else (0, 1)):
        return int(value)
    allowed = "1, 0, UNSURE (2)" if unsure else "1, 0"
    raise InvalidLabelError(f"label value must be {allowed} or None (to clear), got {value!r}")


def canonical_json(payload: Any) -> str:
    """``json.dumps`` with sorted keys, no spaces, UTF-8 kept, NaN refused: one text per value."""
    try:
        return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidLabelError(f"a dataset payload must be JSON-able: {exc}") from None


MAX_NOTE_LENGTH = 10_000


def check_note(note: Any) -> None:
    """A note is ``None`` or text without NUL of at most :data:`MAX_NOTE_LENGTH` characters."""
    if note is None:
        return
    if not isinstance(note, str) or "\x00" in note or len(note) > MAX_NOTE_LENGTH:
        raise InvalidLabelError(f"a note must be text without NUL characters, at most {MAX_NOTE_LENGTH} characters")


def check_comment(text: Any) -> str:
    """A comment: text without NUL, stripped, at most :data:`MAX_COMMENT_LENGTH` characters (``""`` clears)."""
    if text is None:
        return ""
    if not isinstance(text, str) or "\x00" in text:
        raise InvalidLabelError(f"a comment must be text without NUL characters, got {type(text).__name__}")
    stripped: str = text.strip()
    if len(stripped) > MAX_COMMENT_LENGTH:
        raise InvalidLabelError(f"a comment is at most {MAX_COMMENT_LENGTH} characters, got {len(stripped)}")
    return stripped


def dataset_info(name: str, kind: str, digest: str, created: str, payload: Any) -> DatasetInfo:
    """A :class:`DatasetInfo` with ``cases``/``units`` taken from ``payload["summary"]`` when they are integers."""
    summary = payload.get("summary") if isinstance(payload, dict) else None
    summary = summary if isinstance(summary, dict) else {}

    def count(key: str) -> int | None:
        v = summary.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    return DatasetInfo(name, kind, digest, created, count("cases"), count("units"))


def check_unit_identity(unit: Any) -> None:
    """``unit`` is a :class:`Unit` of a kind the store takes, with an id and a text hash."""
    if not isinstance(unit, Unit):
        raise InvalidLabelError(f"expected a playground.model.Unit, got {type(unit).__name__}")
    if unit.unit_kind not in STORE_UNIT_DIMENSIONS:
        raise InvalidLabelError(f"unknown unit kind {unit.unit_kind!r} (known: {', '.join(STORE_UNIT_DIMENSIONS)})")
    if not unit.unit_id or "\x00" in unit.unit_id:
        raise InvalidLabelError(f"bad unit id {unit.unit_id!r}")
    if not isinstance(unit.text_hash, str) or not unit.text_hash:
        raise InvalidLabelError(f"unit {unit.unit_id} has no text hash")


def check_unit(unit: Any, dimension: str) -> None:
    """``unit`` is a :class:`Unit` with a known kind, an id, a text hash, and it takes ``dimension``."""
    check_unit_identity(unit)
    allowed = [d for d in unit.dimensions if d in STORE_UNIT_DIMENSIONS[unit.unit_kind]]
    if dimension not in allowed:
        raise InvalidLabelError(
            f"dimension {dimension!r} is not labelled on {unit.unit_kind} {unit.unit_id} "
            f"(it takes: {', '.join(allowed)})"
        )


