"""The difference of two rates measured on the same units, with Newcombe's interval for paired data."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .intervals import _check_confidence, _paired, wilson_interval

__all__ = ["PairedDifference", "paired_difference"]

# --------------------------------------------------------------------------- paired difference


@dataclass(frozen=True)
class PairedDifference:
    """The difference of two rates measured on the same units, ``rate_a - rate_b``, with its interval.

    ``a_only`` counts units where ``a`` says 1 and ``b`` 0, ``b_only`` the
    reverse (the discordant pairs; only they move the difference).  ``low``/
    ``high`` None when undefined (no units; ``reason`` says so).
    """

    difference: float | None
    low: float | None
    high: float | None
    n: int
    rate_a: float | None
    rate_b: float | None
    a_only: int
    b_only: int
    confidence: float = 0.95
    defined: bool = True
    reason: str = ""

    @property
    def excludes_zero(self) -> bool:
        """True when the interval lies entirely on one side of 0 (the two rates differ)."""
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


def paired_difference(a: Sequence[Any], b: Sequence[Any], confidence: float = 0.95) -> PairedDifference:
    """Interval for ``mean(a) - mean(b)`` of two 0/1 labellings of the same units (Newcombe 1998, method 10).

    Two rates of the same units are correlated, so two Wilson intervals side
    by side say nothing about their difference (overlap is not "no
    difference").  With the paired table ``e`` (a = 1, b = 1), ``f`` (a = 1,
    b = 0), ``g`` (a = 0, b = 1), ``h`` (both 0), ``n`` units,
    ``p_a = (e + f) / n``, ``p_b = (e + g) / n``, ``D = p_a - p_b = (f - g) / n``,
    Wilson intervals ``(l_a, u_a)``, ``(l_b, u_b)`` (:func:`wilson_interval`)::

        phi = (e h - f g - n/2) / sqrt((e+f)(g+h)(e+g)(f+h))  when e h - f g > n/2
              0                                               when 0 <= e h - f g <= n/2
              (e h - f g) / sqrt(...)                         when e h - f g < 0
              0                                               when a margin is 0
        low  = D - sqrt((p_a - l_a)^2 - 2 phi (p_a - l_a)(u_b - p_b) + (u_b - p_b)^2)
        high = D + sqrt((p_b - l_b)^2 - 2 phi (p_b - l_b)(u_a - p_a) + (u_a - p_a)^2)

    Newcombe, R. G. (1998), "Improved confidence intervals for the difference
    between binomial proportions based on paired data", *Statistics in
    Medicine* 17, 2635-2650, method 10 (score intervals, no continuity
    correction; ``phi`` as there).  His example e, f, g, h = 36, 12, 2, 0
    gives D = 0.2000, 95% interval (0.0569, 0.3404).  The interval stays
    inside [-1, 1] and is not degenerate at 0/n or n/n.
    """
    c = _check_confidence(confidence)
    a_, b_ = _paired(a, b)
    n = len(a_)
    e = sum(1 for x, y in zip(a_, b_, strict=True) if x and y)
    f = sum(1 for x, y in zip(a_, b_, strict=True) if x and not y)
    g = sum(1 for x, y in zip(a_, b_, strict=True) if y and not x)
    h = n - e - f - g
    if n == 0:
        return PairedDifference(None, None, None, 0, None, None, 0, 0, c, False, "no units")
    p_a, p_b = (e + f) / n, (e + g) / n
    ci_a, ci_b = wilson_interval(e + f, n, c), wilson_interval(e + g, n, c)
    assert ci_a is not None and ci_b is not None
    (l_a, u_a), (l_b, u_b) = ci_a, ci_b
    margins = (e + f) * (g + h) * (e + g) * (f + h)
    cross = e * h - f * g
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    else:
        phi = (cross - n / 2 if cross > 0 else cross) / math.sqrt(margins)
    d = (f - g) / n
    low = d - math.sqrt(max(0.0, (p_a - l_a) ** 2 - 2 * phi * (p_a - l_a) * (u_b - p_b) + (u_b - p_b) ** 2))
    high = d + math.sqrt(max(0.0, (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2))
    return PairedDifference(d, max(-1.0, low), min(1.0, high), n, p_a, p_b, f, g, c)
