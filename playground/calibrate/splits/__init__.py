"""Frozen test splits of the real data sets, by source (decided before any figure was read).

Rule (fixed once, before the frozen parts were scored by anything):

* The unit of the split is the **source**: RAGTruth's ``source_id`` (one question or
  article; several responses share it) and BEGIN's ``source_id`` (a hash of the
  knowledge snippet).  Claims of one source share their evidence, so a split by line
  would leak.
* A source is **frozen** when ``playground.sampling.uniform(SPLIT_SEED, f"{corpus}:{source_id}")
  < FROZEN_FRACTION`` (``corpus`` = ``ragtruth`` or ``begin``), i.e. about 40% of the sources.
  40% rather than 30% because RAGTruth's natural hallucination rate is 6%: 30% of the
  natural-rate sample would hold about 27 hallucinated claims, too few for an interval.
* **RAGTruth exception**: every source of ``ragtruth/claims.jsonl`` is *tuning*, whatever its
  hash, because the support rules were written and their floor chosen on that whole file
  before this split existed.  The frozen RAGTruth sources therefore all come from
  ``validation-sample.jsonl`` (which shares source ids with ``claims.jsonl``; one list
  serves both files).
* **Golden set**: the shipped synthetic cases are split by case id the same way
  (``corpus`` = ``golden``) for the golden-key figures of the correctness and
  relevance scorers.  The harness defaults (floors 0.70, threshold 0.50) were set on the
  whole golden set before this split, so its frozen part is less pristine than the
  real data sets' (said wherever its figures are printed).
* The frozen source ids are committed as lists (``ragtruth_frozen.txt``,
  ``begin_frozen.txt``, ``golden_frozen.txt``: one id a line, ``#`` comments), package data beside this module.
  The lists, not the rule, are authoritative: a record whose source is on the list is
  frozen; every other record is tuning.  :func:`split_sources` recomputes the rule, and a
  test checks that it reproduces the committed lists.

Tune rules only on :func:`tuning`; report on :func:`frozen`.
"""
from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Protocol, TypeVar

from playground.sampling import uniform

__all__ = [
    "CORPORA",
    "FROZEN_FRACTION",
    "SPLIT_SEED",
    "frozen",
    "frozen_sources",
    "is_frozen",
    "split_path",
    "split_sources",
    "tuning",
]

#: Seed of the split's stable hash.
SPLIT_SEED = "frozen-split-2026-12"
#: Share of sources (by hash) in the frozen part.
FROZEN_FRACTION = 0.40
#: Corpora with a committed split.
CORPORA = ("ragtruth", "begin", "golden")

_DIR = Path(__file__).resolve().parent


class _HasSource(Protocol):
    @property
    def source_id(self) -> str: ...


R = TypeVar("R", bound=_HasSource)


def split_path(corpus: str) -> Path:
    """The committed list of frozen source ids of ``corpus``."""
    if corpus not in CORPORA:
        raise ValueError(f"unknown corpus {corpus!r} (known: {', '.join(CORPORA)})")
    return _DIR / f"{corpus}_frozen.txt"


@cache
def frozen_sources(corpus: str) -> frozenset[str]:
    """The committed frozen source ids of ``corpus`` (comment and blank lines skipped)."""
    lines = split_path(corpus).read_text(encoding="utf-8").splitlines()
    return frozenset(s.strip() for s in lines if s.strip() and not s.startswith("#"))


def split_sources(corpus: str, source_ids: Iterable[str], exclude: Iterable[str] = ()) -> list[str]:
    """The rule: sorted distinct ``source_ids`` with ``uniform(SPLIT_SEED, corpus:id) <
    FROZEN_FRACTION``, minus ``exclude`` (sources already used for tuning)."""
    ex = set(exclude)
    return sorted(s for s in set(source_ids)
                  if s not in ex and uniform(SPLIT_SEED, f"{corpus}:{s}") < FROZEN_FRACTION)


def is_frozen(corpus: str, source_id: str) -> bool:
    """Whether ``source_id`` is on the committed frozen list of ``corpus``."""
    return source_id in frozen_sources(corpus)


def frozen(corpus: str, records: Iterable[R]) -> list[R]:
    """The records whose source is frozen (file order kept)."""
    fs = frozen_sources(corpus)
    return [r for r in records if r.source_id in fs]


def tuning(corpus: str, records: Iterable[R]) -> list[R]:
    """The records whose source is not frozen (file order kept)."""
    fs = frozen_sources(corpus)
    return [r for r in records if r.source_id not in fs]
