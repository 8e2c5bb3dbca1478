"""Domain types of the RAG Label Playground.

Everything a person or a scorer labels is one of three *units*:

============  ==============================  ======================  ===========================
unit kind     what it is                      dimension(s)            unit id
============  ==============================  ======================  ===========================
``passage``   a passage retrieved for a case  ``relevant``            ``<case_id>::<passage_id>``
``claim``     one sentence of a response      ``supported``,          ``<response_id>:c<index>:<hash8>``
                                              ``correct``
``fact``      a reference fact of the case,   ``covered``             ``<response_id>::<fact_id>``
              judged against one response
============  ==============================  ======================  ===========================

A passage's relevance depends on the question, so the same passage retrieved for
two cases is two units; a fact's coverage depends on the response, so the same
fact under two responses is two units.

Ids are stable across re-ingestion: a passage id is its locator plus a short
hash of its text, a claim id its response id, index and a short hash of its
text, a fact id is assigned by a person in the golden set.  ``Unit.text_hash``
hashes everything the judgement rests on (e.g. question and passage text), so a
label whose unit text changed can be shown as stale instead of being applied
silently.

All types are frozen dataclasses: values, comparable and hashable.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

__all__ = [
    "ABSTAIN_CASE_TYPES", "CASE_TYPES", "DIMENSIONS", "DIMENSION_NAMES", "UNIT_DIMENSIONS", "UNIT_KINDS",
    "VARIANTS", "Case", "Claim", "ClaimKey", "Dimension", "Document", "Fact", "Label", "Locator", "Passage",
    "Response", "Section", "Turn", "Unit", "UnitKind", "fact_unit_id", "passage_unit_id", "short_hash", "slugify",
]


UnitKind = Literal["passage", "claim", "fact"]
Dimension = Literal["relevant", "supported", "correct", "covered"]

UNIT_KINDS: tuple[str, ...] = ("passage", "claim", "fact")
DIMENSIONS: tuple[str, ...] = ("relevant", "supported", "correct", "covered")
#: Which dimensions each unit kind takes.
UNIT_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "passage": ("relevant",),
    "claim": ("supported", "correct"),
    "fact": ("covered",),
}
#: The evaluation dimension (rate) each label dimension feeds.
DIMENSION_NAMES: dict[str, str] = {
    "relevant": "context_relevance",
    "supported": "faithfulness",
    "correct": "correctness",
    "covered": "coverage",
}
CASE_TYPES: tuple[str, ...] = (
    "normal",
    "out_of_scope",
    "exact_identifier",
    "multi_turn",
    "stale_conflict",
    "cross_tenant",
)
#: Case types whose right answer is an abstention.
ABSTAIN_CASE_TYPES: frozenset[str] = frozenset({"out_of_scope", "cross_tenant"})
VARIANTS: tuple[str, ...] = (
    "grounded_correct",
    "confident_hallucination",
    "vague_hedging",
    "incomplete",
    "grounded_but_wrong",
    "correct_but_unsupported",
    "proper_abstention",
    "wrong_abstention",
    "cross_tenant_leak",
    "fabricated_citation",
)


def short_hash(text: str, length: int = 8) -> str:
    """First ``length`` hex digits of the SHA-256 of ``text`` (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def slugify(text: str) -> str:
    """Lower-case ASCII slug: runs of anything but ``[a-z0-9]`` become one ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@dataclass(frozen=True, order=True)
class Locator:
    """Where a piece of ground truth lives: a ``##`` section of one article."""

    tenant: str
    slug: str
    heading: str

    def __str__(self) -> str:
        return f"{self.tenant}/{self.slug}#{slugify(self.heading)}"

    def document_key(self) -> tuple[str, str]:
        return (self.tenant, self.slug)


@dataclass(frozen=True)
class Section:
    """One ``##`` section of an article; ``line`` is the 1-based heading line."""

    heading: str
    text: str
    line: int


@dataclass(frozen=True)
class Document:
    """A corpus article (markdown with YAML front matter)."""

    tenant: str
    slug: str
    title: str
    version: int
    updated: date
    sections: tuple[Section, ...]
    path: str
    supersedes: str | None = None

    def locator(self, heading: str) -> Locator:
        return Locator(self.tenant, self.slug, heading)

    @property
    def text(self) -> str:
        return "\n\n".join(f"## {s.heading}\n\n{s.text}" for s in self.sections)


@dataclass(frozen=True)
class Passage:
    """A chunk of a document, as retrieved.  ``passage_id`` = locator + hash of text."""

    locator: Locator
    text: str
    title: str = ""
    updated: date | None = None
    #: Further sections a fixed-size window reaches into (empty for heading chunks).
    overlaps: tuple[Locator, ...] = ()

    @property
    def locators(self) -> tuple[Locator, ...]:
        """Every section this passage draws text from."""
        return (self.locator, *self.overlaps)

    @property
    def passage_id(self) -> str:
        return f"{self.locator}@{short_hash(self.text)}"


@dataclass(frozen=True)
class Turn:
    """An earlier turn of a multi-turn conversation."""

    role: Literal["user", "assistant"]
    content: str


@dataclass(frozen=True)
class Fact:
    """A reference fact; covered by a response when one ``accept`` string appears in it."""

    fact_id: str
    statement: str
    accept: tuple[str, ...]


@dataclass(frozen=True)
class Case:
    """A golden-set case: a question with its ground truth."""

    case_id: str
    case_type: str
    tenant: str
    query: str
    history: tuple[Turn, ...]
    expected_sources: tuple[Locator, ...]
    reference_answer: str
    reference_facts: tuple[Fact, ...]
    must_contain: tuple[str, ...] = ()
    forbidden_text: tuple[str, ...] = ()
    notes: str = ""
    #: Retrieved sections, besides the expected sources, that the answer key judges relevant to the question
    #: (they state part of the answer); see :func:`playground.golden.passage_key`.
    relevant_sections: tuple[Locator, ...] = ()

    @property
    def must_abstain(self) -> bool:
        return self.case_type in ABSTAIN_CASE_TYPES


@dataclass(frozen=True)
class ClaimKey:
    """The answer key of one claim: what a careful annotator should find."""

    text: str
    supported: bool
    correct: bool


@dataclass(frozen=True)
class Response:
    """A candidate answer to a case: authored (teaching/calibration) or model-generated.

    ``key_claims``/``key_facts`` hold the authored answer key (empty for
    generated responses).  ``origin`` is ``authored`` or ``model``; for model
    output ``meta`` carries model name, prompt hash and options.
    """

    response_id: str
    case_id: str
    variant: str
    text: str
    origin: str = "authored"
    key_claims: tuple[ClaimKey, ...] = ()
    key_facts: tuple[tuple[str, bool], ...] = ()
    notes: str = ""
    meta: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Claim:
    """One sentence of a response, as produced by :func:`playground.claims.split_claims`."""

    response_id: str
    index: int
    text: str
    start: int
    end: int

    @property
    def claim_id(self) -> str:
        return f"{self.response_id}:c{self.index}:{short_hash(self.text)}"


@dataclass(frozen=True)
class Unit:
    """Anything a person labels (see module docstring for the id scheme)."""

    unit_kind: str
    unit_id: str
    case_id: str
    response_id: str  # "" for passages (they belong to the case)
    dimensions: tuple[str, ...]
    text: str
    text_hash: str


@dataclass(frozen=True)
class Label:
    """One judgement: ``value`` is 1 (yes) or 0 (no)."""

    annotator: str
    unit_kind: str
    unit_id: str
    dimension: str
    value: int


def passage_unit_id(case_id: str, passage_id: str) -> str:
    return f"{case_id}::{passage_id}"


def fact_unit_id(response_id: str, fact_id: str) -> str:
    return f"{response_id}::{fact_id}"
