"""Seeded choices that do not depend on any library's random stream.

Every random choice in the project (calibration samples, annotator queues,
cross-validation folds, bootstrap draws keyed by a seed) goes through a stable
hash, so the same seed and the same ids give the same choice on every machine,
Python and numpy version.

* :func:`stable_hash` — ``int(sha256(f"{seed}:{key}")[:16], 16)``: a 64-bit
  integer, uniform for practical purposes.
* :func:`ranked` — ids ordered by their stable hash (ties, impossible in
  practice, broken by the id itself).
* :func:`draw_sample` — the first ``n`` of :func:`ranked`: a uniform random
  sample without replacement, since every ordering of the ids is equally likely
  under a random hash.
* :func:`fold_of` — ``stable_hash(seed, group) mod k``: the fold of a group.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable

__all__ = ["draw_sample", "fold_of", "ranked", "stable_hash", "uniform"]


def stable_hash(seed: int | str, key: str) -> int:
    """A 64-bit integer from ``sha256(f"{seed}:{key}")`` (first 16 hex digits)."""
    return int(hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()[:16], 16)


def uniform(seed: int | str, key: str) -> float:
    """A number in [0, 1) from the stable hash: ``stable_hash / 2**64``."""
    return stable_hash(seed, key) / 2.0**64


def ranked(ids: Iterable[str], seed: int | str) -> list[str]:
    """The distinct ``ids`` in the order of their stable hash under ``seed``."""
    return sorted(set(ids), key=lambda i: (stable_hash(seed, i), i))


def draw_sample(ids: Iterable[str], n: int, seed: int | str) -> list[str]:
    """A uniform random sample of ``n`` distinct ids (all of them when fewer), in hash order."""
    if n < 0:
        raise ValueError(f"sample size must be at least 0, got {n}")
    return ranked(ids, seed)[:n]


def fold_of(group: str, k: int, seed: int | str = 0) -> int:
    """The cross-validation fold (0 … k-1) of ``group``: ``stable_hash(seed, group) mod k``."""
    if k < 1:
        raise ValueError(f"the number of folds must be at least 1, got {k}")
    return stable_hash(seed, group) % k
