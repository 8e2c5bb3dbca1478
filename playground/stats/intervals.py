"""The Wilson score interval, and the checks every statistic of :mod:`playground.stats` shares
(confidence level, normal quantile, binary and paired inputs).
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np

__all__ = ["wilson_interval", "z_value"]

#: Variances at or below this are treated as exactly zero (floating-point noise).
_VAR_EPS = 1e-12


# --------------------------------------------------------------------------- helpers


def _check_confidence(confidence: float) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
    c = float(confidence)
    if not (0.0 < c < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return c


@lru_cache(maxsize=64)
def z_value(confidence: float = 0.95) -> float:
    """Two-sided normal quantile ``z = Phi^-1((1 + confidence) / 2)``.

    ``z_value(0.95) = 1.959964``; ``z_value(0.90) = 1.644854``.
    """
    c = _check_confidence(confidence)
    return NormalDist().inv_cdf((1.0 + c) / 2.0)


def _binary(values: Iterable[Any], name: str) -> list[int]:
    """Values as a list of 0/1 ints; ValueError naming the first bad value."""
    out = []
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)) or (isinstance(v, numbers.Real) and v in (0, 1)):
            out.append(int(v))  # type: ignore[arg-type]
        else:
            raise ValueError(f"{name}[{i}] = {v!r}: labels must be 0 or 1")
    return out


def _paired(a: Sequence[Any], b: Sequence[Any], names: tuple[str, str] = ("a", "b")) -> tuple[list[int], list[int]]:
    a_ = _binary(a, names[0])
    b_ = _binary(b, names[1])
    if len(a_) != len(b_):
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same length, got {len(a_)} and {len(b_)}"
        )
    return a_, b_


def _is_int(x: Any) -> bool:
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_))


# --------------------------------------------------------------------------- Wilson


@lru_cache(maxsize=1 << 16)
def _wilson_cached(successes: int, n: int, confidence: float) -> tuple[float, float]:
    z = z_value(confidence)
    z2 = z * z
    centre = (successes + z2 / 2.0) / (n + z2)
    half = z * math.sqrt(successes * (n - successes) / n + z2 / 4.0) / (n + z2)
    low = min(1.0, max(0.0, centre - half))
    high = min(1.0, max(0.0, centre + half))
    # The Wilson bounds are exactly 0 at 0/n and exactly 1 at n/n; remove rounding noise.
    if successes == 0:
        low = 0.0
    if successes == n:
        high = 1.0
    return low, high


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion ``successes / n``; ``None`` when ``n == 0``.

    Wilson (1927), with ``x = successes`` and ``z`` the normal quantile
    (:func:`z_value`, 1.959964 at 95%)::

        centre    = (x + z^2 / 2) / (n + z^2)
        halfwidth = z * sqrt(x (n - x) / n + z^2 / 4) / (n + z^2)
        interval  = (centre - halfwidth, centre + halfwidth), clamped to [0, 1]

    e.g. 3/10 -> (0.1078, 0.6032); 0/10 -> (0, 0.2775); 10/10 -> (0.7225, 1).
    Computed in closed form and cached by ``(successes, n, confidence)``; it
    equals ``statsmodels.stats.proportion.proportion_confint(method="wilson")``
    to 1e-12 (the reference in tests/test_stats.py).  Unlike the Wald interval it
    never collapses to a point at 0/n or n/n and stays inside [0, 1].

    Raises ValueError unless ``successes`` and ``n`` are integers with
    ``0 <= successes <= n``.
    """
    if not _is_int(successes) or not _is_int(n):
        raise ValueError(
            f"successes and n must be integers, got successes={successes!r}, n={n!r}"
        )
    successes, n = int(successes), int(n)
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    c = _check_confidence(confidence)
    if n == 0:
        return None
    return _wilson_cached(successes, n, c)
