"""Number formats shared by the page, the room and their fragments (a leaf module: it imports nothing of the
playground, so every HTML module may use it without an import cycle).

* :func:`pct` — a share as a percentage: ``0.6 → "60%"``, ``None → "–"``.
* :func:`num` — a statistic to two places: ``0.4567 → "0.46"``, ``None → "–"``.
* :func:`interval` — a share with its interval: ``(0.6, 0.231, 0.882) → "60% [23–88%]"``.
"""
from __future__ import annotations

__all__ = ["interval", "num", "pct"]


def pct(x: float | None, digits: int = 0) -> str:
    """``100·x`` with ``digits`` decimals and ``%``; ``–`` for none (no data)."""
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def num(x: float | None) -> str:
    """``x`` to two decimals; ``–`` for none."""
    return "–" if x is None else f"{x:.2f}"


def interval(rate: float | None, low: float | None, high: float | None) -> str:
    """``rate [low–high]`` as percentages (``60% [23–88%]``): the interval's own ``%`` only once, at its end;
    ``–`` when there is no rate."""
    if rate is None:
        return "–"
    if low is None or high is None:
        return pct(rate)
    return f"{pct(rate)} [{100 * low:.0f}–{pct(high)}]"
