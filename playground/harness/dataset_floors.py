"""Floors of an imported dataset from its own labels: grouped cross-validation, or a stated default.

One floor per scorer per dataset (:data:`SCORED`: the support scorer's against the
people's ``supported`` labels of claims, correctness's against ``correct``).
Where the floor of a harness run on a dataset comes from, first that applies:

1. ``file``: the configuration names a floor file (``scoring.floor_source``);
2. ``configuration``: the configuration sets the floor to a value other than the
   shipped default (``scoring.support_floor`` != ``DEFAULT_SUPPORT_FLOOR``);
3. ``labels``: the dataset's labels suffice -- at least :data:`MIN_PER_CLASS` (10)
   labelled units of *each* class and at least two cases -- and the floor is
   calibrated on them (below);
4. ``default``: the shipped floor of the dataset's kind of text
   (:data:`playground.harness.score.DEFAULT_SUPPORT_FLOORS`; correctness:
   ``DEFAULT_CORRECTNESS_FLOOR``) -- *a default, not a calibration*.

The people's label of a unit (:func:`human_labels`): the adjudicated
(``consensus``) label when there is one, else the majority of the annotators'
yes/no labels (a tie is left out); the harness's own labels never count.

Calibration on labels (:func:`calibrate_floor`): units are put in
``folds`` (5) folds by case (``sampling.fold_of(case_id, folds, 0)``; claims of one case
stay together); in each fold the floor of
:data:`playground.harness.score.SUPPORT_FLOOR_GRID` maximising balanced
accuracy on the other folds is chosen (:func:`playground.calibrate.frozen.choose_floor`,
ties to the floor nearest the kind's default) and applied to the held-out fold;
the pooled held-out kappa and balanced accuracy are recorded (how well the
choosing generalises), and the floor used is the one the same rule chooses on
all labels.  The record (:class:`FloorSource`) goes into the run's report
(``report["floor_source"]``).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..sampling import fold_of
from . import score as S
from .floor_choice import choose_floor, counts_metrics

__all__ = ["MIN_PER_CLASS", "SCORED", "FloorSource", "calibrate_floor", "floor_note", "human_labels"]

#: Fewest labelled units of each class (yes and no) for a floor to be calibrated on a dataset's labels.
MIN_PER_CLASS = 10
#: Scorer (the configuration key of its floor) -> the labelled dimension it is calibrated against.
SCORED: dict[str, str] = {"support_floor": "supported", "correctness_floor": "correct"}
_FOLDS = 5


@dataclass(frozen=True)
class FloorSource:
    """Which floor a run used for one scorer, and where it came from (module docstring).

    ``source``: ``file``, ``configuration``, ``labels`` or ``default``; ``note``: one sentence
    for the report.  With ``labels``: ``n``, ``positives`` (yes labels), ``negatives``,
    ``cases``, ``fold_floors`` and the pooled held-out ``cv_kappa`` and
    ``cv_balanced_accuracy``."""

    key: str
    floor: float
    source: str
    note: str
    kind: str = S.DEFAULT_KIND
    n: int = 0
    positives: int = 0
    negatives: int = 0
    cases: int = 0
    fold_floors: tuple[float | None, ...] = ()
    cv_kappa: float | None = None
    cv_balanced_accuracy: float | None = None

    def record(self) -> dict[str, Any]:
        """JSON-able form."""
        d = asdict(self)
        d["fold_floors"] = list(self.fold_floors)
        return d


def human_labels(labels: Iterable[Any], dimension: str) -> dict[str, int]:
    """``unit_id -> 0/1``: the people's label of each unit on ``dimension`` (module docstring)."""
    votes: dict[str, Counter[int]] = defaultdict(Counter)
    adjudicated: dict[str, int] = {}
    for lb in labels:
        if lb.dimension != dimension or lb.annotator == "harness" or lb.value not in (0, 1):
            continue
        if lb.annotator == "consensus":
            adjudicated[lb.unit_id] = int(lb.value)
        else:
            votes[lb.unit_id][int(lb.value)] += 1
    out = {u: (1 if c[1] > c[0] else 0) for u, c in votes.items() if c[1] != c[0]}
    out.update(adjudicated)
    return out


def _cv(scores: np.ndarray, yes: np.ndarray, groups: Sequence[str], default: float
        ) -> tuple[tuple[float | None, ...], float | None, float | None]:
    fold = np.array([fold_of(g, _FOLDS, 0) for g in groups])
    pred = np.zeros(len(yes), dtype=bool)
    used = np.zeros(len(yes), dtype=bool)
    floors: list[float | None] = []
    for k in range(_FOLDS):
        train, test = fold != k, fold == k
        f, _ = choose_floor(scores[train].tolist(), yes[train].tolist(), S.SUPPORT_FLOOR_GRID, default=default)
        floors.append(f)
        if f is not None and test.any():
            pred[test], used[test] = scores[test] >= f, True
    if not used.any():
        return tuple(floors), None, None
    h, p = ~yes[used], ~pred[used]
    c = [np.array([int(x)]) for x in ((h & p).sum(), (~h & p).sum(), (h & ~p).sum(), (~h & ~p).sum())]
    m = counts_metrics(*c)
    kappa, bal = float(m["kappa"][0]), float(m["balanced_accuracy"][0])
    return tuple(floors), (None if np.isnan(kappa) else round(kappa, 4)), (None if np.isnan(bal) else round(bal, 4))


def calibrate_floor(key: str, scores: Mapping[str, float], cases: Mapping[str, str], labels: Mapping[str, int], *,
                    kind: str, default: float) -> FloorSource:
    """The floor of ``key`` from ``labels`` (unit -> 0/1) of units with ``scores`` (unit -> score) in
    ``cases`` (unit -> case id), or ``default`` when the labels do not suffice (module docstring)."""
    units = sorted(u for u in labels if u in scores)
    yes = np.array([bool(labels[u]) for u in units], dtype=bool)
    pos, neg, groups = int(yes.sum()), int((~yes).sum()), [cases.get(u, u) for u in units]
    n_cases = len(set(groups))
    what = f"{SCORED.get(key, key)} labels of {len(units)} units ({pos} yes, {neg} no) in {n_cases} cases"
    if pos < MIN_PER_CLASS or neg < MIN_PER_CLASS or n_cases < 2:
        return FloorSource(key, default, "default",
                           f"{key} {default:g} is the shipped default for {kind} text, not a calibration: {what}; "
                           f"calibrating needs at least {MIN_PER_CLASS} of each class in at least 2 cases",
                           kind, len(units), pos, neg, n_cases)
    s = np.round(np.array([scores[u] for u in units], dtype=float), 6)
    floor, _ = choose_floor(s.tolist(), yes.tolist(), S.SUPPORT_FLOOR_GRID, default=default)
    if floor is None:  # pragma: no cover - both classes are present, so balanced accuracy is defined
        floor = default
    fold_floors, kappa, bal = _cv(s, yes, groups, default)
    return FloorSource(key, floor, "labels",
                       f"{key} {floor:g} calibrated on this dataset's {what} (balanced accuracy, {_FOLDS}-fold "
                       f"cross-validation grouped by case: held-out kappa {kappa}, balanced accuracy {bal})",
                       kind, len(units), pos, neg, n_cases, fold_floors, kappa, bal)


def floor_note(report: Mapping[str, Any]) -> str:
    """One line per scorer of a dataset run's report: the floor used and where it came from."""
    records = report.get("floor_source") or {}
    return "\n".join(f"floor: {r['note']}" for r in records.values())
