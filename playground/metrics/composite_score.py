"""The weighted composite of the four rates (a teaching figure, not a standard score)."""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .rates import COMPOSITE_LABEL, DIMENSION_ORDER, DimensionRate

__all__ = ["Composite", "composite"]

# --------------------------------------------------------------------------- composite


@dataclass(frozen=True)
class Composite:
    """A weighted mean of the rates with data; not a standard score.

    ``value`` is None when no positively weighted dimension has data
    (``reason`` says so).  ``weights_used`` are the weights actually applied,
    normalised to sum 1 over the dimensions with data and positive weight.
    ``dropped`` lists dimensions with positive weight but no data (their weight
    was redistributed), ``zero_weight`` those the user weighted 0 (or left
    out).  ``gated`` is True when any hard gate fails; ``gate_failures``
    explains each one (the value is still reported: a gated composite must not
    be used to rank).
    """

    value: float | None
    weights_used: dict[str, float]
    dropped: list[str]
    zero_weight: list[str]
    gated: bool
    gate_failures: list[str]
    label: str = COMPOSITE_LABEL
    reason: str = ""


def _fmt_num(x: float, other: float | None = None, decimals: int = 2) -> str:
    """``x`` with ``decimals`` places, more if needed so that it differs from ``other``."""
    d = decimals
    while other is not None and x != other and d < 6 and f"{x:.{d}f}" == f"{other:.{d}f}":
        d += 1
    return f"{x:.{d}f}"


def _check_known(mapping: Mapping[str, Any], what: str) -> None:
    for key in mapping:
        if key not in DIMENSION_ORDER:
            raise ValueError(f"unknown dimension {key!r} in {what}; expected one of "
                             f"{DIMENSION_ORDER}")


def _check_number(value: Any, where: str, low: float = 0.0, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{where} must be a finite number, got {value!r}")
    if not (low <= float(value) <= high):
        raise ValueError(f"{where} must be between {low} and {high}, got {value!r}")
    return float(value)


def composite(rates: Mapping[str, DimensionRate], weights: Mapping[str, float],
              gates: Mapping[str, float] | None = None) -> Composite:
    """Weighted composite of the four rates, with optional hard gates.

    With user weights ``w_d >= 0`` and D the dimensions that have data and
    ``w_d > 0``::

        value = sum_{d in D} w_d * rate_d / sum_{d in D} w_d

    so the applied weights ``w_d / sum_D w`` sum to 1 and ``value`` lies
    between the smallest and largest rate in D.  A dimension missing from
    ``weights`` has weight 0.  ``gates`` maps a dimension to a floor: the
    composite is gated when ``rate_d < floor`` or when the gated dimension has
    no data (a floor that cannot be checked is not passed).  Raises ValueError
    for unknown dimensions, negative or non-finite weights, all-zero weights,
    or floors outside [0, 1].
    """
    _check_known(weights, "weights")
    w = {d: _check_number(weights.get(d, 0.0), f"weight of {d}") for d in DIMENSION_ORDER}
    if not any(v > 0 for v in w.values()):
        raise ValueError("at least one weight must be positive")
    gates = dict(gates or {})
    _check_known(gates, "gates")
    floors = {d: _check_number(gates[d], f"gate of {d}", 0.0, 1.0)
              for d in DIMENSION_ORDER if d in gates}

    def rate_of(d: str) -> float | None:
        r = rates.get(d)
        return None if r is None or not r.has_data else r.rate

    used = [d for d in DIMENSION_ORDER if w[d] > 0 and rate_of(d) is not None]
    dropped = [d for d in DIMENSION_ORDER if w[d] > 0 and rate_of(d) is None]
    zero = [d for d in DIMENSION_ORDER if w[d] == 0]
    total = sum(w[d] for d in used)
    weights_used = {d: w[d] / total for d in used}
    value: float | None
    if used:
        used_rates = {d: float(rate_of(d) or 0.0) for d in used}  # every used dimension has a rate
        value = sum(weights_used[d] * used_rates[d] for d in used)
        lo = min(used_rates.values())
        hi = max(used_rates.values())
        value = min(hi, max(lo, value))  # guard against rounding outside [min, max]
        reason = ""
    else:
        value = None
        reason = "no weighted dimension has data"
    failures = []
    for d, floor in floors.items():
        r = rate_of(d)
        if r is None:
            failures.append(f"{d} has no data (gate {_fmt_num(floor)} cannot be checked)")
        elif r < floor:
            failures.append(f"{d} {_fmt_num(r, floor)} < gate {_fmt_num(floor, r)}")
    return Composite(value, weights_used, dropped, zero, bool(failures), failures,
                     COMPOSITE_LABEL, reason)
