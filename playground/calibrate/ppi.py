"""Prediction-powered estimates of each dimension's "yes" rate.

With automatic labels ``f`` on the ``N`` units no person labelled and on the
``n`` units people did label (human labels ``Y``), per
:func:`playground.stats.ppi_mean`::

    theta = mean(f(X_unlab)) + mean(Y_lab - f(X_lab))
    var   = var(f(X_unlab)) / N + var(Y_lab - f(X_lab)) / n

beside the human-only interval and the automatic-only rate.  Labels needed
for an interval ``width`` wide (:func:`playground.stats.ppi_labels_needed`)::

    n >= s_r^2 / ((width / 2 / z)^2 - s_f^2 / N)

None when ``(width / 2 / z)^2 <= s_f^2 / N``: more human labels alone cannot
reach that width.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..stats import ppi_labels_needed, ppi_mean
from .labellings import AutoLabelling, HumanLabelling
from .tables import _r


def ppi_by_dimension(human: HumanLabelling, auto: AutoLabelling, dimensions: Sequence[str] | None = None, *,
                     width: float = 0.10, confidence: float = 0.95) -> pd.DataFrame:
    """Per dimension: the human-only interval, the automatic-only rate and the PPI interval.

    PPI (:func:`playground.stats.ppi_mean`) uses the automatic labels of every
    unit plus the human labels of the units people labelled: ``n_labelled``
    units have both, ``n_unlabelled`` only the automatic label.  Human labels
    of units the scorer never saw are not used (``human_unscored`` counts
    them).  ``labels_needed``: the total human labels for a PPI interval
    ``width`` wide (:func:`playground.stats.ppi_labels_needed`), ``more_labels``
    how many beyond the current ones; None when more human labels alone
    cannot reach that width.
    """
    dims = list(dimensions) if dimensions is not None else [d for d in auto.dimensions() if d in human.dimensions()]
    rows = []
    for dim in dims:
        h = human.frame.loc[human.frame["dimension"] == dim, ["unit_id", "value"]]
        a = auto.frame.loc[auto.frame["dimension"] == dim, ["unit_id", "label"]]
        m = a.merge(h, on="unit_id", how="left")
        has = m["value"].notna().to_numpy()
        y = m["value"].to_numpy()[has].astype(int)
        f_l = m["label"].to_numpy()[has].astype(float)
        f_u = m["label"].to_numpy()[~has].astype(float)
        res = ppi_mean(f_u, f_l, y, confidence)
        needed = ppi_labels_needed(f_u, f_l, y, width, confidence) if len(y) >= 2 and len(f_u) >= 2 else None
        rows.append({
            "dimension": dim, "n_labelled": res.n_labelled, "n_unlabelled": res.n_unlabelled,
            "human_unscored": int(len(h) - has.sum()),
            "human_rate": _r(res.human_mean), "human_low": _r(res.human_only[0]) if res.human_only else None,
            "human_high": _r(res.human_only[1]) if res.human_only else None,
            "human_width": _r(res.human_only_width), "auto_rate": _r(res.auto_only),
            "ppi_rate": _r(res.estimate), "ppi_low": _r(res.low), "ppi_high": _r(res.high), "ppi_width": _r(res.width),
            "rectifier": _r(res.rectifier), "target_width": _r(width), "labels_needed": needed,
            "more_labels": None if needed is None else max(0, needed - res.n_labelled),
            "note": "; ".join(x for x in (res.reason, res.note, _unreachable(needed, res, width)) if x),
        })
    cols = ["dimension", "n_labelled", "n_unlabelled", "human_unscored", "human_rate", "human_low", "human_high",
            "human_width", "auto_rate", "ppi_rate", "ppi_low", "ppi_high", "ppi_width", "rectifier", "target_width",
            "labels_needed", "more_labels", "note"]
    return pd.DataFrame(rows, columns=cols)


def _unreachable(needed: int | None, res: Any, width: float) -> str:
    if needed is None and res.n_labelled >= 2 and res.n_unlabelled >= 2:
        return (f"a {width:g}-wide interval is out of reach with more human labels alone: the automatic labels' "
                "own term is already wider (more unlabelled units would help)")
    return ""
