"""Who labels what: annotator queues with overlap, and calibration samples (issue 14.6).

:func:`make_assignment` — the rule, deterministic for a seed:

1. The units are put in the order of :func:`playground.sampling.ranked`
   (``unit_ids``, ``seed``): a seeded random order that no library's random
   stream decides.
2. Each unit in that order goes to the ``overlap`` annotators with the fewest
   units so far; among equal loads the annotator whose
   ``stable_hash(seed, f"{unit_id}|{annotator}")`` is smallest comes first
   (then the name).  So every unit gets exactly ``overlap`` different
   annotators and the loads differ by at most one (``n * overlap`` spread over
   ``k`` annotators: each gets ``floor`` or ``ceil`` of ``n * overlap / k``).
3. Each queue keeps the ranked order, so annotators who share units meet them
   in the same order (agreement can be measured early).

``overlap`` must be between 1 and the number of annotators: asking for more
annotators per unit than there are is an error, never silently fewer.

:func:`draw_calibration_sample` — ``playground.sampling.draw_sample`` (the
first ``n`` of the ranked order), kept as one queue under ``"*"``: a uniform
random sample whose labelled prefix is still a uniform sample (what PPI needs).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .sampling import draw_sample, ranked, stable_hash
from .store.core import RESERVED_ANNOTATORS, check_annotator
from .store.types import Assignment, StoredLabel

__all__ = ["CALIBRATION_QUEUE", "QueueProgress", "draw_calibration_sample", "make_assignment", "queue_progress"]

#: The key of a calibration sample's single queue.
CALIBRATION_QUEUE = "*"


def _distinct(unit_ids: Iterable[str]) -> list[str]:
    ids = list(unit_ids)
    bad = [i for i in ids if not isinstance(i, str) or not i]
    if bad:
        raise ValueError(f"unit ids must be non-empty strings; got {bad[:3]!r}")
    return ids


def make_assignment(unit_ids: Iterable[str], annotators: Sequence[str], overlap: int, seed: int | str, *,
                    name: str, dataset: str) -> Assignment:
    """Queues for ``annotators`` so that every unit gets ``overlap`` of them, loads balanced (module docstring)."""
    names = [check_annotator(a) for a in annotators]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"annotator(s) named twice: {', '.join(dupes)}")
    if not names:
        raise ValueError("an assignment needs at least one annotator")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 1:
        raise ValueError(f"overlap must be a whole number of at least 1, got {overlap!r}")
    if overlap > len(names):
        raise ValueError(f"overlap {overlap} needs at least {overlap} annotators, but only {len(names)} were given "
                         f"({', '.join(names)})")
    order = ranked(_distinct(unit_ids), seed)
    load = dict.fromkeys(names, 0)
    queues: dict[str, list[str]] = {n: [] for n in names}
    for uid in order:
        chosen = sorted(names, key=lambda n: (load[n], stable_hash(seed, f"{uid}|{n}"), n))[:overlap]
        for n in chosen:
            load[n] += 1
            queues[n].append(uid)
    return Assignment(name, "queue", dataset, seed, overlap, {n: tuple(q) for n, q in sorted(queues.items())})


def draw_calibration_sample(unit_ids: Iterable[str], n: int, seed: int | str, *, name: str,
                            dataset: str) -> Assignment:
    """``playground.sampling.draw_sample(unit_ids, n, seed)`` as one queue under ``"*"``.

    A uniform random sample of ``n`` distinct units in ranked order (all of
    them when there are fewer, as ``draw_sample``); ``n`` must be a whole
    number of at least 0.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"a calibration sample needs a whole number of units of at least 0, got {n!r}")
    queue = tuple(draw_sample(_distinct(unit_ids), n, seed))
    return Assignment(name, "calibration_sample", dataset, seed, 1, {CALIBRATION_QUEUE: queue})


@dataclass(frozen=True)
class QueueProgress:
    """One queue's progress: ``done`` of its ``size`` units have an answer on every dimension."""

    annotator: str
    done: int
    size: int


def queue_progress(assignment: Assignment, labels: Iterable[StoredLabel],
                   dimensions: Mapping[str, Sequence[str]]) -> list[QueueProgress]:
    """Per queue: how many of its units have an answer (1, 0 or unsure) on every dimension.

    ``labels`` are current labels including unsure ones; ``dimensions`` maps a
    unit id to the dimensions it takes (units missing from it are not done).
    A calibration sample's queue (``"*"``) counts answers by any annotator.
    """
    answered: dict[str, dict[str, set[str]]] = {}
    for label in labels:
        if label.annotator in RESERVED_ANNOTATORS:
            continue
        answered.setdefault(label.annotator, {}).setdefault(label.unit_id, set()).add(label.dimension)
        answered.setdefault(CALIBRATION_QUEUE, {}).setdefault(label.unit_id, set()).add(label.dimension)
    out = []
    for who, queue in sorted(assignment.queues.items()):
        mine = answered.get(who, {})
        done = sum(1 for uid in queue if uid in dimensions and set(dimensions[uid]) <= mine.get(uid, set()))
        out.append(QueueProgress(who, done, len(queue)))
    return out
