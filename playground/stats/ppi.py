"""Prediction-powered inference of a rate: few human labels, many automatic ones."""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .exact import clopper_pearson_interval, exact_labels_needed
from .intervals import _VAR_EPS, _binary, _check_confidence, wilson_interval, z_value

__all__ = ["MIN_EACH", "PPIResult", "ppi_labels_needed", "ppi_mean", "ppi_tuning", "thin_slice"]

# --------------------------------------------------------------------------- PPI

#: A normal interval needs at least this many labelled units of each value, and this many on which the
#: scorer and the person disagree (the np >= 5 rule of thumb for a normal approximation to a binomial).
MIN_EACH = 5


@dataclass(frozen=True)
class PPIResult:
    """Prediction-powered estimate of a rate, beside the human-only and automatic-only ones.

    ``estimate``/``low``/``high``: the PPI++ point estimate and interval (None
    when not ``defined``; ``low``/``high`` also None when fewer than two units
    are on either side, see ``reason``).  ``lam`` is the power-tuning
    parameter used (1 = classical PPI, 0 = the human labels alone);
    ``tuned`` says whether it was estimated from the data.  ``rectifier`` =
    mean(human - lam * automatic) on the labelled units.  ``human_only`` is
    the Wilson interval of the human labels, ``human_mean`` their mean;
    ``auto_only`` the mean of all automatic labels (labelled and unlabelled
    units), i.e. what trusting the scorer would say.  The interval is valid
    only when the labelled units are a uniform random sample of all units
    (see :mod:`playground.calibrate.ppi`).  ``fallback`` is '' for a PPI++
    interval, else why ``low``/``high`` are the human labels' own Wilson
    interval instead (:func:`ppi_mean`: a labelled slice or its residuals of
    one value).
    """

    estimate: float | None
    low: float | None
    high: float | None
    n_labelled: int
    n_unlabelled: int
    human_only: tuple[float, float] | None
    auto_only: float | None
    human_mean: float | None = None
    rectifier: float | None = None
    std_error: float | None = None
    confidence: float = 0.95
    defined: bool = True
    reason: str = ""
    note: str = ""
    lam: float | None = None
    tuned: bool = False
    fallback: str = ""

    @property
    def width(self) -> float | None:
        """Width of the PPI interval, ``high - low``."""
        return None if self.low is None or self.high is None else self.high - self.low

    @property
    def human_only_width(self) -> float | None:
        """Width of the human-only Wilson interval."""
        return None if self.human_only is None else self.human_only[1] - self.human_only[0]


def _as_rates(values: Iterable[Any], name: str) -> np.ndarray:
    arr = np.asarray([float(v) for v in values], dtype=float)
    if arr.size and (not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1):
        raise ValueError(f"{name} must be finite numbers in [0, 1]")
    return arr


def _ppi_inputs(auto_unlabelled: Sequence[Any], auto_labelled: Sequence[Any],
                human_labelled: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three PPI inputs as float arrays, checked: rates in [0, 1], human labels 0/1, paired lengths."""
    f_u = _as_rates(auto_unlabelled, "auto_unlabelled")
    f_l = _as_rates(auto_labelled, "auto_labelled")
    y = np.asarray(_binary(human_labelled, "human_labelled"), dtype=float)
    if len(f_l) != len(y):
        raise ValueError(
            f"auto_labelled and human_labelled must have the same length, "
            f"got {len(f_l)} and {len(y)}")
    return f_u, f_l, y


def _check_lam(lam: float | None) -> float | None:
    if lam is None:
        return None
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not 0 <= lam <= 1:
        raise ValueError(f"lam must be a number in [0, 1] or None (tuned), got {lam!r}")
    return float(lam)


def ppi_tuning(f_u: np.ndarray, f_l: np.ndarray, y: np.ndarray) -> float:
    """The power-tuning parameter of PPI++ for a mean (Angelopoulos, Duchi & Zrnic 2023, eq. for the mean)::

        lam = Cov(Y, f(X)) / ((1 + n / N) Var(f(X)))     clipped to [0, 1]

    with ``Cov`` over the n labelled units (ddof = 0) and ``Var`` over all n + N
    automatic labels (ddof = 1), as ``ppi_py.ppi_mean_ci``.  It minimises the
    estimated variance of the PPI++ estimate; 0 (the human labels alone) when
    the automatic labels do not vary.
    """
    n, big_n = len(y), len(f_u)
    var_f = float(np.var(np.concatenate([f_l, f_u]), ddof=1))
    if var_f <= _VAR_EPS or n < 2 or big_n < 1:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (f_l - f_l.mean())))
    return min(1.0, max(0.0, cov / ((1.0 + n / big_n) * var_f)))


def ppi_mean(auto_unlabelled: Sequence[Any], auto_labelled: Sequence[Any], human_labelled: Sequence[Any],
             confidence: float = 0.95, lam: float | None = None, *, min_each: int = MIN_EACH) -> PPIResult:
    """Prediction-powered inference for a rate: PPI++ (power-tuned) by default, classical PPI with ``lam=1``.

    ``auto_unlabelled`` are automatic labels f(X) on the N units no person
    labelled; ``auto_labelled``/``human_labelled`` the automatic and human
    labels on the n units a person did label (same order).  Labels are 0/1 (a
    score in [0, 1] is also accepted for ``f``).  With ``lam`` from
    :func:`ppi_tuning` unless given::

        theta = lam * mean(f(X_unlab)) + mean(Y_lab - lam * f(X_lab))
        var   = Var(lam * f(X_unlab)) / N + Var(Y_lab - lam * f(X_lab)) / n     (ddof = 0)
        interval = theta -+ z * sqrt(var), clipped to [0, 1]

    PPI: Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, *Science* 382 (2023);
    PPI++ and ``lam``: Angelopoulos, Duchi & Zrnic, "PPI++: Efficient
    prediction-powered inference", arXiv:2311.01453 (2023).  Equal to
    ``ppi_py.ppi_mean_ci`` / ``ppi_mean_pointestimate`` (checked in the tests).
    ``lam = 1`` is classical PPI, ``lam = 0`` the human labels' own normal
    interval; the tuned ``lam`` is never wider than either (asymptotically).

    Valid only when the labelled units are a uniform random sample of all
    units.  The point estimate is clipped to [0, 1].  The interval needs
    N >= 2 and n >= 2 (else ``low``/``high`` are None and ``reason`` says
    why).  Undefined (``estimate`` None) when there are no human labels or no
    unlabelled units.

    No interval claims more than its labels hold: on a slice too thin for a
    normal interval (:func:`thin_slice`) the estimate is the human mean,
    ``lam`` 0, and ``low``/``high`` the human labels' own Clopper–Pearson
    interval; ``fallback`` and ``note`` say why.
    """
    c = _check_confidence(confidence)
    lam_given = _check_lam(lam)
    f_u, f_l, y = _ppi_inputs(auto_unlabelled, auto_labelled, human_labelled)
    n, big_n = len(y), len(f_u)
    human_ci = wilson_interval(int(y.sum()), n, c)
    human_mean = float(y.mean()) if n else None
    all_auto = np.concatenate([f_u, f_l])
    auto_only = float(all_auto.mean()) if all_auto.size else None
    common: dict[str, Any] = {"n_labelled": n, "n_unlabelled": big_n, "human_only": human_ci,
                              "auto_only": auto_only, "human_mean": human_mean, "confidence": c}
    if n == 0 or big_n == 0:
        return PPIResult(None, None, None, defined=False, reason=(
            "no human labels: nothing to rectify the automatic labels with" if n == 0 else
            "no unlabelled units: use the human labels alone (human_only)"), **common)
    used = lam_given if lam_given is not None else ppi_tuning(f_u, f_l, y)
    tuned = lam_given is None
    thin = thin_slice(f_l, y, used, min_each) if n >= 2 and big_n >= 2 else ""
    if thin:
        return _exact_result(y, thin, c, common)
    diff = y - used * f_l
    rectifier = float(diff.mean())
    raw = used * float(f_u.mean()) + rectifier
    estimate = min(1.0, max(0.0, raw))
    if n < 2 or big_n < 2:
        return PPIResult(estimate, None, None, rectifier=rectifier, lam=used, tuned=tuned,
                         reason="an interval needs at least 2 labelled and 2 unlabelled units", **common)
    low, high, se = _ppi_bounds(f_u, f_l, y, used, raw, c)
    return PPIResult(estimate, low, high, rectifier=rectifier, std_error=se, lam=used, tuned=tuned, **common)


def _exact_result(y: np.ndarray, thin: str, confidence: float, common: dict[str, Any]) -> PPIResult:
    """:func:`ppi_mean` on a thin slice: the human mean and its Clopper–Pearson interval, ``lam`` 0."""
    mean = float(y.mean())
    low, high = clopper_pearson_interval(int(y.sum()), len(y), confidence) or (0.0, 1.0)
    return PPIResult(mean, low, high, rectifier=mean, lam=0.0, tuned=False, fallback=thin,
                     note=f"{thin}: the interval is the human labels' own Clopper-Pearson interval, not PPI's "
                     "(label more units of the drawn sample)", **common)


def thin_slice(f_l: np.ndarray, y: np.ndarray, lam: float, min_each: int = MIN_EACH) -> str:
    """Why the labelled slice is too thin for PPI's normal interval ('' when it is not; :func:`ppi_mean`).

    PPI's interval is a normal one: it needs a spread to estimate.  A thin slice gets the human labels'
    own Clopper–Pearson interval instead (exact: never below the nominal coverage, where Wilson's dips
    near 0 and 1, see :mod:`playground.stats.exact`): from 20 labels all "yes" [0.832, 1.000], not
    PPI's [1.000, 1.000].  In a seeded simulation (``tests/test_ppi.py``) the result covers the true
    rate at least nominally (94.4-99.4%) at rates 0.02, 0.5 and 0.98 with 20, 50 and 200 labels, where
    the one-value rules alone (``min_each=1``) covered 89.6% at 0.02 with 200.

    Too thin: fewer than ``min_each`` human labels of one value (all of one value included); the
    residuals ``Y - lam f`` or ``Y - f`` of one value; fewer than ``min_each`` units where the scorer
    and the person disagree (``|Y - f| >= 1/2``)."""
    n, yes = len(y), int(y.sum())
    if n and min(yes, n - yes) == 0:
        return f"all {n} labelled units are {'yes (1)' if yes else 'no (0)'}"
    if min(yes, n - yes) < min_each:
        few = "yes" if yes < n - yes else "no"
        return f"only {min(yes, n - yes)} of the {n} labelled units are {few} (fewer than {min_each})"
    if float(np.var(y - lam * f_l)) <= _VAR_EPS or float(np.var(y - f_l)) <= _VAR_EPS:
        return f"the scorer agrees with the person on all {n} labelled units, so the residuals take one value"
    apart = int(np.sum(np.abs(y - f_l) >= 0.5))
    if apart < min_each:
        return (f"the scorer and the person disagree on only {apart} of the {n} labelled units (fewer than "
                f"{min_each}), too few to estimate PPI's correction from")
    return ""


def _ppi_bounds(f_u: np.ndarray, f_l: np.ndarray, y: np.ndarray, lam: float, raw: float,
                confidence: float) -> tuple[float, float, float]:
    """``(low, high, std_error)`` of :func:`ppi_mean`'s interval around the unclipped ``raw`` estimate
    (formula in its docstring)."""
    var = float(np.var(lam * f_u)) / len(f_u) + float(np.var(y - lam * f_l)) / len(y)
    se = math.sqrt(max(var, 0.0))
    z = z_value(confidence)
    low = min(1.0, max(0.0, raw - z * se))
    high = min(1.0, max(0.0, raw + z * se))
    return low, high, se


def ppi_labels_needed(auto_unlabelled: Sequence[Any], auto_labelled: Sequence[Any],
                      human_labelled: Sequence[Any], width: float, confidence: float = 0.95,
                      lam: float | None = None, *, min_each: int = MIN_EACH) -> int | None:
    """Total number of human labels n for which the PPI++ interval would be ``width`` wide.

    From the current estimates, with ``lam`` tuned as in :func:`ppi_mean`
    unless given, ``s_f^2 = Var(lam f(X_unlab))`` and ``s_r^2 = Var(Y_lab -
    lam f(X_lab))`` (ddof = 0, as the interval), holding N (the unlabelled
    units) fixed, the half-width ``h = width / 2`` requires::

        z * sqrt(s_f^2 / N + s_r^2 / n) <= h
        n >= s_r^2 / ((h / z)^2 - s_f^2 / N)          (rounded up, at least 2)

    Returns the *total* n (subtract the current ``n_labelled`` for the extra
    labels to collect), or None when the width cannot be reached by more human
    labels alone (``(h / z)^2 <= s_f^2 / N``: the unlabelled term by itself is
    already wider) or when fewer than 2 units are on either side.  The
    estimate is only as good as ``s_r^2``: from a handful of labels it is rough
    (0 when the scorer happened to agree with every human label), ``lam`` is
    held at its current value, and the clipping to [0, 1] is ignored.

    A thin slice (:func:`thin_slice`; :func:`ppi_mean`'s interval is then the
    human labels' Clopper–Pearson interval) needs what that interval needs:
    :func:`~playground.stats.exact.exact_labels_needed` at the slice's rate.
    """
    c = _check_confidence(confidence)
    lam_given = _check_lam(lam)
    if not (isinstance(width, numbers.Real) and 0 < width <= 2 and math.isfinite(width)):
        raise ValueError(f"width must be a number in (0, 2], got {width!r}")
    f_u, f_l, y = _ppi_inputs(auto_unlabelled, auto_labelled, human_labelled)
    if len(y) < 2 or len(f_u) < 2:
        return None
    used = lam_given if lam_given is not None else ppi_tuning(f_u, f_l, y)
    if thin_slice(f_l, y, used, min_each):
        return exact_labels_needed(int(y.sum()), len(y), width, c)
    s_f2 = float(np.var(used * f_u))
    s_r2 = float(np.var(y - used * f_l))
    budget = (width / 2.0 / z_value(c)) ** 2 - s_f2 / len(f_u)
    if budget <= 0:
        return None
    return max(2, math.ceil(s_r2 / budget - 1e-9))

