"""How many more labels of the random sample would bring an interval under a chosen width.

For a rate ``k / n`` with a Wilson interval (TPR: of the human-"yes" samples;
TNR: of the human-"no" ones), the labels needed for a width ``w`` are the
smallest ``m >= n`` whose Wilson interval at the same rate, ``round(rate·m)``
of ``m``, is at most ``w`` wide (searched by bisection; the width falls as m
grows).  A class is a share ``q`` of the random sample, so ``m`` of that class
take about ``ceil((m - n) / q)`` more samples.  The scorer's figure is the
larger of the TPR and TNR needs: when both intervals are already under ``w``,
it is 0 and :func:`needed_text` says the width is *reached*.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..stats import wilson_interval

__all__ = ["LIFT_CAP", "Needed", "class_labels_needed", "labels_to_lift", "needed_for_rates", "needed_text"]

_MAX = 10_000_000


def _width(k: int, n: int) -> float:
    ci = wilson_interval(k, n)
    return math.inf if ci is None else ci[1] - ci[0]


def class_labels_needed(k: int, n: int, width: float) -> int:
    """The smallest ``m >= n`` with the Wilson width of ``round(k/n · m)`` of ``m`` at most ``width``."""
    if not 0 < width < 1:
        raise ValueError(f"the target width must be in (0, 1), got {width!r}")
    rate = k / n if n else 0.5
    if n and _width(k, n) <= width:
        return n
    lo, hi = max(n, 1), max(n, 1)
    while _width(round(rate * hi), hi) > width:
        lo, hi = hi, hi * 2
        if hi > _MAX:
            raise ValueError("the width is out of reach")
    while lo < hi:  # the smallest m in (lo, hi] that reaches the width
        mid = (lo + hi) // 2
        if _width(round(rate * mid), mid) <= width:
            hi = mid
        else:
            lo = mid + 1
    return hi


@dataclass(frozen=True)
class Needed:
    """More random-sample labels for TPR's and TNR's intervals to be ``width`` wide, and their maximum."""

    width: float
    tpr_width: float
    tnr_width: float
    more_for_tpr: int
    more_for_tnr: int

    @property
    def more(self) -> int:
        return max(self.more_for_tpr, self.more_for_tnr)

    @property
    def reached(self) -> bool:
        return self.more == 0


def needed_for_rates(tp: int, npos: int, tn: int, nneg: int, width: float) -> Needed:
    """More random-sample labels (samples of either class, at the sample's class shares) for ``width``."""
    n = npos + nneg

    def more(k: int, m: int) -> int:
        if m and _width(k, m) <= width:
            return 0
        share = m / n if n and m else 0.5
        return math.ceil((class_labels_needed(k, m, width) - m) / share)

    return Needed(width, _width(tp, npos), _width(tn, nneg), more(tp, npos), more(tn, nneg))


def needed_text(need: Needed) -> str:
    """One plain sentence: reached, or how many more labels of the random sample."""
    widths = f"TPR interval {need.tpr_width:.3f} wide, TNR {need.tnr_width:.3f}"
    if need.reached:
        return f"reached: both intervals are at most {need.width:g} wide ({widths}); more labels are optional"
    return (f"about {need.more} more labels of the random sample (in its order) to bring both intervals under "
            f"{need.width:g} ({widths}; TPR needs {need.more_for_tpr}, TNR {need.more_for_tnr})")


#: :func:`labels_to_lift` looks this far (labels of one class) before it says the bar is out of reach.
LIFT_CAP = 100_000


def labels_to_lift(k: int, n: int, bar: float, least: int = 0) -> int | None:
    """More labels of one class for the Wilson lower bound of ``k / n`` to reach ``bar`` (the gate's bar rule).

    The smallest ``m >= max(n, least)`` whose 95% Wilson lower bound of ``round(k/n · m)`` of ``m`` is at least
    ``bar``, minus ``n`` (the new labels assumed to agree at today's rate; scanned upwards, so the rounding's
    wobble cannot skip the first ``m``).  ``0`` when ``k / n`` already reaches it with ``n >= least``; ``None``
    when no ``m`` up to ``n +`` :data:`LIFT_CAP` does: the rate itself is at or under the bar (more labels
    only narrow the interval around it), or so near it that the count is out of reach, or ``n == 0``.
    """
    if n == 0 or k / n <= bar:
        return None
    rate = k / n
    for m in range(max(n, least), n + LIFT_CAP + 1):
        ci = wilson_interval(round(rate * m), m)
        if ci is not None and ci[0] >= bar:
            return m - n
    return None
