"""Prediction-powered inference of a rate: few human labels, many automatic ones."""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .intervals import _VAR_EPS, _binary, _check_confidence, wilson_interval, z_value

__all__ = ["PPIResult", "ppi_labels_needed", "ppi_mean", "ppi_tuning"]

# --------------------------------------------------------------------------- PPI


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
    (see :mod:`playground.calibrate.ppi`).
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
             confidence: float = 0.95, lam: float | None = None) -> PPIResult:
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
    why); when the automatic labels agree with every human label the
    rectifier variance is 0 and the interval can be misleadingly narrow
    (``note`` warns).  Undefined (``estimate`` None) when there are no human
    labels or no unlabelled units.
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
    if n == 0:
        return PPIResult(None, None, None, defined=False,
                         reason="no human labels: nothing to rectify the automatic labels with",
                         **common)
    if big_n == 0:
        return PPIResult(None, None, None, defined=False,
                         reason="no unlabelled units: use the human labels alone (human_only)",
                         **common)
    used = lam_given if lam_given is not None else ppi_tuning(f_u, f_l, y)
    tuned = lam_given is None
    diff = y - used * f_l
    rectifier = float(diff.mean())
    raw = used * float(f_u.mean()) + rectifier
    estimate = min(1.0, max(0.0, raw))
    if n < 2 or big_n < 2:
        return PPIResult(estimate, None, None, rectifier=rectifier, lam=used, tuned=tuned,
                         reason="an interval needs at least 2 labelled and 2 unlabelled units",
                         **common)
    low, high, se, note = _ppi_bounds(f_u, f_l, y, used, raw, c)
    return PPIResult(estimate, low, high, rectifier=rectifier, std_error=se, note=note,
                     lam=used, tuned=tuned, **common)


def _ppi_bounds(f_u: np.ndarray, f_l: np.ndarray, y: np.ndarray, lam: float, raw: float,
                confidence: float) -> tuple[float, float, float, str]:
    """``(low, high, std_error, note)`` of :func:`ppi_mean`'s interval around the unclipped ``raw``
    estimate (formula in its docstring); ``note`` warns when the rectifier variance is 0."""
    var = float(np.var(lam * f_u)) / len(f_u) + float(np.var(y - lam * f_l)) / len(y)
    se = math.sqrt(max(var, 0.0))
    z = z_value(confidence)
    low = min(1.0, max(0.0, raw - z * se))
    high = min(1.0, max(0.0, raw + z * se))
    note = ""
    if float(np.var(y - f_l)) <= _VAR_EPS:
        note = ("the automatic labels agree with every human label, so the rectifier "
                "variance is 0 and the interval may be too narrow; label more units")
    return low, high, se, note


def ppi_labels_needed(auto_unlabelled: Sequence[Any], auto_labelled: Sequence[Any],
                      human_labelled: Sequence[Any], width: float,
                      confidence: float = 0.95, lam: float | None = None) -> int | None:
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
    """
    c = _check_confidence(confidence)
    lam_given = _check_lam(lam)
    if not (isinstance(width, numbers.Real) and 0 < width <= 2 and math.isfinite(width)):
        raise ValueError(f"width must be a number in (0, 2], got {width!r}")
    f_u, f_l, y = _ppi_inputs(auto_unlabelled, auto_labelled, human_labelled)
    if len(y) < 2 or len(f_u) < 2:
        return None
    used = lam_given if lam_given is not None else ppi_tuning(f_u, f_l, y)
    s_f2 = float(np.var(used * f_u))
    s_r2 = float(np.var(y - used * f_l))
    budget = (width / 2.0 / z_value(c)) ** 2 - s_f2 / len(f_u)
    if budget <= 0:
        return None
    return max(2, math.ceil(s_r2 / budget - 1e-9))
