"""Ablation of the support scorer: each rule switched off in turn, on the frozen parts.

For each rule of :data:`playground.harness.score.SUPPORT_RULES` (and "all rules", the
rules of each claim's kind of text) the support scorer runs with that rule off as well
(a rule already off for a kind changes nothing there; ``calibrate ablation --tuning-cv``
is the per-kind table on the tuning parts, :mod:`playground.calibrate.tuning_kinds`); its floor is chosen on the
tuning part, exactly as in :mod:`playground.calibrate.frozen`, and the frozen
part is reported (kappa, balanced accuracy, hallucination recall and precision,
with cluster-bootstrap intervals).  ``delta_*`` is the figure with the rule off
minus the figure with every rule on: a rule *pays for itself* out of sample when
switching it off lowers balanced accuracy (delta < 0).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from .frozen import PartReport

__all__ = ["ablation", "ablation_table"]


def _support(off: tuple[str, ...]) -> Any:
    """Support with each item's kind of text and the rules ``off`` switched off as well."""
    from ..harness import score as S
    from .frozen import KindScorer

    def fn(claim: str, context: Sequence[str], kind: str) -> float:
        return S.support(claim, context, off=off, kind=kind)

    return KindScorer(fn)


def ablation(dataset: str, *, n_boot: int = 1000, seed: int = 0, criterion: str = "balanced_accuracy",
             rules: Sequence[str] | None = None) -> PartReport:
    """One :class:`PartReport` of ``dataset`` (``ragtruth`` or ``begin``) whose
    scorers are the support scorer with all rules on (``all rules``) and with
    each rule off in turn (``without <rule>``)."""
    from ..harness import score as S
    from .begin import frozen_begin
    from .ragtruth import frozen_ragtruth

    names = list(S.SUPPORT_RULES if rules is None else rules)
    scorers = [("all rules", _support(()))] + [(f"without {r}", _support((r,))) for r in names]
    if dataset == "ragtruth":
        return frozen_ragtruth(criterion=criterion, n_boot=n_boot, seed=seed, scorers=scorers)
    if dataset == "begin":
        return frozen_begin(criterion=criterion, n_boot=n_boot, seed=seed, scorers=scorers)
    raise ValueError(f"unknown data set {dataset!r} (known: ragtruth, begin)")


def ablation_table(reports: Sequence[PartReport]) -> pd.DataFrame:
    """Overall rows of each report, with ``delta_kappa`` and ``delta_balanced_accuracy``
    against the ``all rules`` row of the same data set."""
    rows: list[dict[str, Any]] = []
    for rep in reports:
        base = rep.scorer("all rules")
        b = base.rows[0] if base.rows else {}
        for s in rep.scorers:
            r = s.rows[0] if s.rows else {}
            row = {"dataset": rep.dataset, "support": s.name, "floor": s.floor,
                   "kappa": r.get("kappa"), "kappa_low": r.get("kappa_low"), "kappa_high": r.get("kappa_high"),
                   "balanced_accuracy": r.get("balanced_accuracy"),
                   "balanced_accuracy_low": r.get("balanced_accuracy_low"),
                   "balanced_accuracy_high": r.get("balanced_accuracy_high"),
                   "recall_hallucinated": r.get("recall_hallucinated"),
                   "precision_hallucinated": r.get("precision_hallucinated")}
            for k in ("kappa", "balanced_accuracy"):
                x, y = r.get(k), b.get(k)
                row[f"delta_{k}"] = None if x is None or y is None else round(x - y, 4)
            rows.append(row)
    return pd.DataFrame(rows)
