"""The room's "how many labels, and when to stop" (issue 25.6): per dimension and per scorer.

The truth is the class's **consensus on the calibration sample** (the latest
seeded uniform random sample of the room's dataset, drawn with "Draw
calibration sample"): per (unit, dimension) of a sample unit, the adjudicated
value where there is one, else the majority of the yes/no answers (unsure
answers are left out); a tie without adjudication is left out.  Labels people
chose to give outside the sample say nothing about how many more a scorer needs,
so without a sample there is no figure, and the room says to draw one.

A scorer is a mapping ``(unit_id, dimension) -> 0/1`` (the harness's
automatic labels: :func:`harness_labels` reads them from its per-case
results).  Over the sample units both label, TPR = automatic yes among the
consensus-yes ones, TNR = automatic no among the consensus-no ones, each with a
Wilson interval; :func:`playground.calibrate.needed.needed_for_rates` gives how
many more labels of the random sample bring both intervals under the width,
and :func:`~playground.calibrate.needed.needed_text` says it in words — or that
the width is reached.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import DIMENSIONS
from .needed import Needed, needed_for_rates, needed_text

__all__ = ["NeededRow", "harness_labels", "needed_rows", "sample_consensus"]

Key = tuple[str, str]


def sample_consensus(votes: Mapping[Key, Mapping[str, int]], adjudicated: Mapping[Key, int],
                     units: Iterable[str]) -> dict[Key, int]:
    """The consensus of each (unit, dimension) of ``units`` (module docstring): adjudication, else the yes/no
    majority; ties and unsure-only votes are left out."""
    wanted = set(units)
    out: dict[Key, int] = {}
    for key in sorted(set(votes) | set(adjudicated)):
        if key[0] not in wanted:
            continue
        if key in adjudicated:
            out[key] = int(adjudicated[key])
            continue
        yes = sum(1 for v in votes.get(key, {}).values() if v == 1)
        no = sum(1 for v in votes.get(key, {}).values() if v == 0)
        if yes != no:
            out[key] = int(yes > no)
    return out


def harness_labels(results: Iterable[Mapping[str, Any]]) -> dict[Key, int]:
    """``(unit_id, dimension) -> 0/1`` of the harness from its per-case results (``score_case``'s dicts:
    ``passages[].relevant``, ``responses[].claims[].supported|correct``, ``responses[].facts[].covered``)."""
    out: dict[Key, int] = {}
    for result in results:
        for p in result.get("passages", ()):
            out[(p["unit_id"], "relevant")] = int(p["relevant"])
        for r in result.get("responses", ()):
            for c in r.get("claims", ()):
                out[(c["unit_id"], "supported")] = int(c["supported"])
                out[(c["unit_id"], "correct")] = int(c["correct"])
            for f in r.get("facts", ()):
                out[(f["unit_id"], "covered")] = int(f["covered"])
    return out


@dataclass(frozen=True)
class NeededRow:
    """One scorer on one dimension over the sample: the 2x2 counts, and the labels needed (None: no pair)."""

    scorer: str
    dimension: str
    tp: int
    positives: int
    tn: int
    negatives: int
    need: Needed | None

    @property
    def n(self) -> int:
        return self.positives + self.negatives

    @property
    def text(self) -> str:
        if self.need is None:
            return "no unit of the sample has both a class consensus and this scorer's label yet: label the sample"
        return needed_text(self.need)


def needed_rows(consensus: Mapping[Key, int], scorers: Mapping[str, Mapping[Key, int]], width: float,
                dimensions: Sequence[str] = DIMENSIONS) -> list[NeededRow]:
    """Per scorer (in the given order) and dimension: TP of the consensus-yes pairs, TN of the consensus-no
    pairs, and :func:`~playground.calibrate.needed.needed_for_rates` at ``width``."""
    rows = []
    for name, auto in scorers.items():
        for d in dimensions:
            pairs = [(v, auto[k]) for k, v in consensus.items() if k[1] == d and k in auto]
            pos = [a for h, a in pairs if h == 1]
            neg = [a for h, a in pairs if h == 0]
            tp, tn = sum(pos), sum(1 for a in neg if a == 0)
            need = needed_for_rates(tp, len(pos), tn, len(neg), width) if pairs else None
            rows.append(NeededRow(name, d, tp, len(pos), tn, len(neg), need))
    return rows
