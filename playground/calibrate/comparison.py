"""Human versus automatic labels of one dimension, on the units both labelled.

With the confusion matrix (rows human, columns automatic; TN = h0a0,
FP = h0a1, FN = h1a0, TP = h1a1) and ``n`` paired units:

* human and automatic rates ``yes / n`` with Wilson intervals (:class:`Rate`);
* agreement ``p_o = (TN + TP) / n``; Cohen's kappa ``(p_o - p_e) / (1 - p_e)``
  with its interval; PABAK ``2 p_o - 1``; MCC; base rate = the accuracy of
  always predicting the human majority class (all from
  :func:`playground.metrics.agreement`, human = reference);
* the true positive rate ``TPR = TP / (TP + FN)`` (of the units people say
  "yes", the share the scorer says "yes" to) and the true negative rate
  ``TNR = TN / (TN + FP)``, each with its Wilson interval — the error rates a
  gate corrects for (:mod:`playground.calibrate.record`);
* F1 of the "no" class and balanced accuracy ``(TPR + TNR) / 2``;
* the paired difference automatic rate - human rate with its interval
  (:func:`playground.stats.paired_difference`, Newcombe 1998 method 10): the
  two rates are of the same units, so their Wilson intervals overlapping does
  not mean "no difference" — read this interval instead;
* the disagreeing units, each with a link ``{base}?case=<case_id>``
  (``{base}?dataset=<name>&case=<case_id>`` for an imported dataset, so the
  page opens that dataset; :func:`case_link`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pandas as pd

from ..metrics import agreement
from ..stats import KappaResult, PairedDifference, balanced_accuracy, f1_score, paired_difference, wilson_interval
from .labellings import AutoLabelling, HumanLabelling
from .tables import _r

__all__ = ["Comparison", "Rate", "case_link", "compare", "paired"]


def case_link(case_id: str, base: str = "", dataset: str | None = None) -> str:
    """Link to a case in the playground: ``{base}?case=<case_id>``, ``{base}?dataset=<name>&case=<case_id>`` with a
    dataset (both URL-quoted)."""
    where = "" if dataset is None else f"dataset={quote(str(dataset), safe='')}&"
    return f"{base}?{where}case={quote(str(case_id), safe='')}"


def paired(human: HumanLabelling, auto: AutoLabelling, dimension: str) -> pd.DataFrame:
    """The units of ``dimension`` both labellings have, sorted by unit id.

    Columns: ``unit_id, unit_kind, case_id, response_id, group, human, label, score``
    (``group``: the human labelling's ``group`` column if present, else the case id).
    """
    h = human.frame[human.frame["dimension"] == dimension]
    a = auto.frame[auto.frame["dimension"] == dimension]
    hcols = ["unit_id", "unit_kind", "case_id", "response_id", "value"] + (["group"] if "group" in h.columns else [])
    m = h[hcols].merge(a[["unit_id", "case_id", "response_id", "score", "label"]], on="unit_id", how="inner",
                       suffixes=("", "_auto"))
    for c in ("case_id", "response_id"):
        m[c] = [x or y for x, y in zip(m[c], m[c + "_auto"], strict=True)]
    if "group" not in m.columns:
        m["group"] = m["case_id"]
    m = m.rename(columns={"value": "human"})
    cols = ["unit_id", "unit_kind", "case_id", "response_id", "group", "human", "label", "score"]
    return m[cols].sort_values("unit_id", kind="mergesort").reset_index(drop=True)


@dataclass(frozen=True)
class Rate:
    """A proportion with its Wilson interval (``rate``/``low``/``high`` None when ``n == 0``)."""

    successes: int
    n: int
    rate: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, values: Sequence[int], confidence: float = 0.95) -> Rate:
        k, n = int(sum(values)), len(values)
        ci = wilson_interval(k, n, confidence)
        return cls(k, n, k / n if n else None, ci[0] if ci else None, ci[1] if ci else None)

    def __str__(self) -> str:
        if self.rate is None:
            return "no data"
        return f"{self.rate:.1%} [{self.low:.1%}, {self.high:.1%}] ({self.successes}/{self.n})"


@dataclass(frozen=True, eq=False)
class Comparison:
    """Human versus automatic labels of one dimension on the units both labelled.

    Confusion rows are the human label, columns the automatic one:
    ``((h0a0, h0a1), (h1a0, h1a1))``.  ``base_rate`` is the accuracy of always
    predicting the human majority class; ``f1_no`` the F1 of the "no" class
    (automatic "no" against human "no").  ``disagreements``: one row per
    disagreeing unit (unit_id, unit_kind, case_id, response_id, human, auto,
    score, link).
    """

    dimension: str
    human_name: str
    auto_name: str
    n: int
    human_only: int
    auto_only: int
    human_rate: Rate
    auto_rate: Rate
    agreement: float | None
    kappa: KappaResult
    base_rate: float | None
    mcc: float | None
    pabak: float | None
    f1_no: float | None
    balanced_accuracy: float | None
    confusion: tuple[tuple[int, int], tuple[int, int]]
    threshold: float | None
    disagreements: pd.DataFrame
    #: automatic rate - human rate on the same units, with the Newcombe (1998) paired interval
    difference: PairedDifference | None = None
    #: TP / (TP + FN) and TN / (TN + FP) with Wilson intervals (n = the human "yes" and "no" units)
    tpr: Rate = Rate(0, 0, None, None, None)
    tnr: Rate = Rate(0, 0, None, None, None)

    def figures(self) -> dict[str, Any]:
        """The figures as one flat, rounded row."""
        k, d = self.kappa, self.difference
        return {
            "dimension": self.dimension, "human": self.human_name, "automatic": self.auto_name, "n": self.n,
            "human_rate": _r(self.human_rate.rate), "human_low": _r(self.human_rate.low),
            "human_high": _r(self.human_rate.high), "auto_rate": _r(self.auto_rate.rate),
            "auto_low": _r(self.auto_rate.low), "auto_high": _r(self.auto_rate.high),
            "agreement": _r(self.agreement), "kappa": _r(k.kappa), "kappa_low": _r(k.low), "kappa_high": _r(k.high),
            "base_rate": _r(self.base_rate), "mcc": _r(self.mcc), "pabak": _r(self.pabak), "f1_no": _r(self.f1_no),
            "tpr": _r(self.tpr.rate), "tpr_low": _r(self.tpr.low), "tpr_high": _r(self.tpr.high),
            "tnr": _r(self.tnr.rate), "tnr_low": _r(self.tnr.low), "tnr_high": _r(self.tnr.high),
            "balanced_accuracy": _r(self.balanced_accuracy), "threshold": _r(self.threshold),
            "h0a0": self.confusion[0][0], "h0a1": self.confusion[0][1],
            "h1a0": self.confusion[1][0], "h1a1": self.confusion[1][1],
            "human_only": self.human_only, "auto_only": self.auto_only,
            "auto_minus_human": _r(d.difference) if d else None, "diff_low": _r(d.low) if d else None,
            "diff_high": _r(d.high) if d else None,
            "kappa_note": k.reason or k.note,
        }

    def confusion_frame(self) -> pd.DataFrame:
        (a, b), (c, d) = self.confusion
        return pd.DataFrame([[a, b], [c, d]], index=["human no", "human yes"], columns=["auto no", "auto yes"])


def compare(human: HumanLabelling, auto: AutoLabelling, dimension: str, *, link_base: str | None = "",
            confidence: float = 0.95, dataset: str | None = None) -> Comparison:
    """Human versus automatic labels of ``dimension`` (see :class:`Comparison`).

    Only units both labelled are compared; ``human_only``/``auto_only`` count
    the others.  Kappa, its interval, PABAK, MCC and the confusion matrix come
    from :func:`playground.metrics.agreement` (human = reference).
    ``link_base``: prefix of the playground links (None: no links); ``dataset``:
    the imported dataset the units belong to (its name goes into the links).
    """
    p = paired(human, auto, dimension)
    h_ids = set(human.frame.loc[human.frame["dimension"] == dimension, "unit_id"])
    a_ids = set(auto.frame.loc[auto.frame["dimension"] == dimension, "unit_id"])
    hv = p["human"].astype(int).tolist()
    av = p["label"].astype(int).tolist()
    ag = agreement(dict(zip(p["unit_id"], hv, strict=True)), dict(zip(p["unit_id"], av, strict=True)), confidence)
    dis = p[p["human"] != p["label"]].copy()
    dis = dis.rename(columns={"label": "auto"})[["unit_id", "unit_kind", "case_id", "response_id", "human", "auto",
                                                 "score"]]
    dis["link"] = ["" if link_base is None else case_link(c, link_base, dataset) for c in dis["case_id"]]
    dis = dis.reset_index(drop=True)
    n = len(p)
    return Comparison(
        dimension=dimension, human_name=human.name, auto_name=auto.name, n=n,
        human_only=len(h_ids - a_ids), auto_only=len(a_ids - h_ids),
        human_rate=Rate.of(hv, confidence), auto_rate=Rate.of(av, confidence),
        agreement=ag.percent, kappa=ag.kappa, base_rate=ag.kappa.base_rate, mcc=ag.mcc, pabak=ag.pabak,
        f1_no=f1_score(hv, av, positive=0) if n else None,
        balanced_accuracy=balanced_accuracy(hv, av) if n else None,
        confusion=ag.confusion, threshold=auto.threshold(dimension), disagreements=dis,
        difference=paired_difference(av, hv, confidence),
        tpr=Rate.of([a for h, a in zip(hv, av, strict=True) if h == 1], confidence),
        tnr=Rate.of([1 - a for h, a in zip(hv, av, strict=True) if h == 0], confidence),
    )
