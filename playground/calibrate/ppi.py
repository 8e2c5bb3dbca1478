"""Prediction-powered estimates of each dimension's "yes" rate, on a uniform random calibration sample.

With automatic labels ``f`` on every unit and human labels ``Y`` on a sample
of ``n`` of them, per :func:`playground.stats.ppi_mean` (PPI++, power-tuned)::

    theta = lam * mean(f(X_unlab)) + mean(Y_lab - lam * f(X_lab))
    var   = Var(lam * f(X_unlab)) / N + Var(Y_lab - lam * f(X_lab)) / n

beside the human-only interval and the automatic-only rate.  Labels needed
for an interval ``width`` wide (:func:`playground.stats.ppi_labels_needed`,
from the tuned variance)::

    n >= s_r^2 / ((width / 2 / z)^2 - s_f^2 / N)

None when ``(width / 2 / z)^2 <= s_f^2 / N``: more human labels alone cannot
reach that width.

A thin slice (:func:`playground.stats.thin_slice`: fewer than 5 labels of one
value, or fewer than 5 units where the scorer and the person disagree — all
"yes", all "no", or agreement everywhere included) gives PPI no spread to
estimate its error from: the ``ppi_*`` columns then hold the human labels'
own Clopper–Pearson interval (``lam`` 0), ``note`` says why, and
``labels_needed`` is what that interval needs for ``width``
(:func:`playground.stats.exact_labels_needed`), never a zero-width claim.

The calibration sample (the rule every caller follows)
------------------------------------------------------
PPI is valid only when the labelled units are a *uniform random sample* of the
units.  Units people happened to label are not: they may be the hard ones, the
ones the scorer flagged, the first cases of the list.  The sample is therefore
drawn, with a seed, before labelling: the calibration sample of size m is the
first m units of ``playground.sampling.ranked(unit_ids, seed)``
(``playground calibrate sample --size M --seed S`` prints them; the labelling
page's calibration-sample mode queues them in that order).  Given the seed,
:func:`calibration_sample` takes the *longest prefix* of that ranking in which
every unit has a human label; PPI uses exactly those units, and labels of
units beyond the prefix are counted (``outside_sample``) but not used.  Since
the ranking sorts by a per-unit hash, the prefix of a subset (one dimension's
units) is the subset of the prefix, so one drawn sample serves every dimension.
Without a seed there is no sample: the PPI columns stay empty, ``valid`` is
False and ``note`` says why.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..sampling import ranked
from ..stats import PPIResult, ppi_labels_needed, ppi_mean, wilson_interval
from ..stats.ppi import MIN_EACH
from .labellings import AutoLabelling, HumanLabelling
from .tables import _r

__all__ = ["PPI_COLUMNS", "CalibrationSample", "calibration_sample", "ppi_by_dimension", "unreachable_note"]

#: Columns of :func:`ppi_by_dimension`, in order.
PPI_COLUMNS = ["dimension", "valid", "sample_seed", "n_labelled", "n_unlabelled", "outside_sample", "human_unscored",
               "human_rate", "human_low", "human_high", "human_width", "auto_rate", "ppi_rate", "ppi_low", "ppi_high",
               "ppi_width", "lam", "rectifier", "target_width", "labels_needed", "more_labels", "note"]

NOT_A_SAMPLE = ("the labelled units are not a drawn calibration sample, so a PPI interval would not be valid "
                "(units people chose to label need not resemble the rest); draw one with `playground calibrate "
                "sample --size N --seed S`, label those units, and pass --sample-seed S")


@dataclass(frozen=True)
class CalibrationSample:
    """The labelled prefix of the seeded ranking: ``sample`` in ranking order, ``outside`` the other labelled ids."""

    seed: int | str
    sample: tuple[str, ...]
    outside: tuple[str, ...]
    next_unlabelled: str | None


def calibration_sample(unit_ids: Iterable[str], labelled: Iterable[str], seed: int | str) -> CalibrationSample:
    """The longest prefix of ``ranked(unit_ids, seed)`` whose every unit is in ``labelled`` (module docstring).

    ``next_unlabelled`` is the first unit of the ranking without a label (label
    it next to grow the sample), None when every unit is labelled.  Labelled
    ids that are not among ``unit_ids`` are neither in the sample nor outside it.
    """
    order = ranked(unit_ids, seed)
    have = set(labelled)
    m = 0
    while m < len(order) and order[m] in have:
        m += 1
    sample = tuple(order[:m])
    outside = tuple(u for u in order[m:] if u in have)
    return CalibrationSample(seed, sample, outside, order[m] if m < len(order) else None)


def ppi_by_dimension(human: HumanLabelling, auto: AutoLabelling, dimensions: Sequence[str] | None = None, *,
                     width: float = 0.10, confidence: float = 0.95, sample_seed: int | str | None = None,
                     lam: float | None = None, prediction: str = "label", min_each: int = MIN_EACH) -> pd.DataFrame:
    """Per dimension: the human-only interval, the automatic-only rate and the PPI++ interval (:data:`PPI_COLUMNS`).

    The automatic labels of every unit enter as ``f``; the human labels of the
    calibration sample drawn with ``sample_seed`` (:func:`calibration_sample`)
    as ``Y``: ``n_labelled`` units have both, ``n_unlabelled`` only the
    automatic label (including ``outside_sample`` labelled units beyond the
    sample's prefix, whose human labels are not used).  Human labels of units
    the scorer never saw are not used either (``human_unscored``).  Without
    ``sample_seed`` the PPI columns are None and ``valid`` is False: the
    interval would not be valid on units people chose.  ``lam``: None tunes
    the power-tuning parameter (PPI++), 1 is classical PPI.
    ``labels_needed``: the total human labels for a PPI interval ``width``
    wide, from the tuned variance; ``more_labels`` how many beyond the
    current sample; None when more human labels alone cannot reach that width.
    ``prediction``: the automatic column used as ``f`` — the 0/1 ``label``, or
    the ``score`` itself (a per-sample tool score predicting each of the
    sample's units).  ``min_each``: :func:`playground.stats.thin_slice`'s
    minimum (1 keeps only its one-value rules).
    """
    dims = list(dimensions) if dimensions is not None else [d for d in auto.dimensions() if d in human.dimensions()]
    rows = [_dimension_row(human, auto, dim, width, confidence, sample_seed, lam, prediction, min_each)
            for dim in dims]
    frame = pd.DataFrame(rows, columns=PPI_COLUMNS)
    for col in ("labels_needed", "more_labels", "sample_seed"):  # whole numbers or None, not floats
        frame[col] = pd.Series([r[col] for r in rows], dtype=object, index=frame.index)
    return frame


def _dimension_row(human: HumanLabelling, auto: AutoLabelling, dim: str, width: float, confidence: float,
                   sample_seed: int | str | None, lam: float | None, prediction: str = "label",
                   min_each: int = MIN_EACH) -> dict[str, Any]:
    h = human.frame.loc[human.frame["dimension"] == dim, ["unit_id", "value"]]
    a = auto.frame.loc[auto.frame["dimension"] == dim, ["unit_id", prediction]].rename(columns={prediction: "label"})
    m = a.merge(h, on="unit_id", how="left")
    has = m["value"].notna()
    scored_labelled = m.loc[has, "unit_id"].astype(str).tolist()
    if sample_seed is None:
        sample: set[str] = set()
        outside = len(scored_labelled)
    else:
        cs = calibration_sample(m["unit_id"].astype(str), scored_labelled, sample_seed)
        sample, outside = set(cs.sample), len(cs.outside)
    in_sample = m["unit_id"].astype(str).isin(sample).to_numpy()
    y = m["value"].to_numpy()[in_sample].astype(int)
    f_l = m["label"].to_numpy()[in_sample].astype(float)
    f_u = m["label"].to_numpy()[~in_sample].astype(float)
    res = ppi_mean(f_u, f_l, y, confidence, lam, min_each=min_each)
    # human-only figures: over the sample when there is one, else over every labelled unit
    hy = y if sample_seed is not None else m.loc[has, "value"].astype(int).to_numpy()
    human_ci = wilson_interval(int(hy.sum()), len(hy), confidence)
    valid = sample_seed is not None and res.low is not None
    needed = (ppi_labels_needed(f_u, f_l, y, width, confidence, lam, min_each=min_each)
              if valid and len(y) >= 2 and len(f_u) >= 2 else None)
    shown: PPIResult | None = res if sample_seed is not None else None
    notes = [NOT_A_SAMPLE] if sample_seed is None else [res.reason, res.note, unreachable_note(needed, res, width)]
    if sample_seed is not None and outside:
        notes.append(f"{outside} labelled unit(s) beyond the sample's prefix are not used (label the ranking in "
                     "order to use them)")
    return {
        "dimension": dim, "valid": valid, "sample_seed": sample_seed,
        "n_labelled": res.n_labelled if sample_seed is not None else int(has.sum()),
        "n_unlabelled": res.n_unlabelled if sample_seed is not None else int((~has).sum()),
        "outside_sample": outside, "human_unscored": int(len(h) - has.sum()),
        "human_rate": _r(float(hy.mean())) if len(hy) else None,
        "human_low": _r(human_ci[0]) if human_ci else None, "human_high": _r(human_ci[1]) if human_ci else None,
        "human_width": _r(human_ci[1] - human_ci[0]) if human_ci else None, "auto_rate": _r(res.auto_only),
        "ppi_rate": _r(shown.estimate) if shown else None, "ppi_low": _r(shown.low) if shown else None,
        "ppi_high": _r(shown.high) if shown else None, "ppi_width": _r(shown.width) if shown else None,
        "lam": _r(shown.lam) if shown else None, "rectifier": _r(shown.rectifier) if shown else None,
        "target_width": _r(width), "labels_needed": needed,
        "more_labels": None if needed is None else max(0, needed - res.n_labelled),
        "note": "; ".join(x for x in notes if x),
    }


def unreachable_note(needed: int | None, res: PPIResult, width: float) -> str:
    """Why ``labels_needed`` is None although an interval exists ('' otherwise)."""
    if needed is None and res.low is not None and res.n_labelled >= 2 and res.n_unlabelled >= 2:
        return (f"a {width:g}-wide interval is out of reach with more human labels alone: the automatic labels' "
                "own term is already wider (more unlabelled units would help)")
    return ""
