"""Drift: a recorded scorer re-checked on a frozen anchor set (``playground calibrate drift --anchor RESULT``).

The anchor set is a fixed set of samples people labelled (the dataset's labelled samples); the scorer —
typically an LLM judge whose model or serving may have changed under the same name — scores them again
(``RESULT``), and its TPR and TNR there (verdict ``score >= the record's threshold`` against the human
verdict) are compared with the record's: the agreement **held** when each new rate lies inside the record's
95% Wilson interval of it (both bounds included); a rate whose class has no anchor sample is not compared.
The record keeps the check (``anchor: {checked_on, held, last_held, n, tpr, tnr, reason}``): ``last_held``
is the date of the latest check that held (carried over from the previous check when this one did not).
A check that did not hold makes the gate leave the scorer advisory, with the reason.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["anchor_check"]


def anchor_check(entry: dict[str, Any], scores: Sequence[float], human: Sequence[int], on: str) -> dict[str, Any]:
    """The anchor entry of one scorer (module docstring) from its new ``scores`` and the ``human`` verdicts."""
    if len(scores) != len(human):
        raise ValueError(f"{len(scores)} scores for {len(human)} human verdicts")
    verdict = [int(s >= entry["threshold"]) for s in scores]
    out: dict[str, Any] = {"checked_on": on, "n": len(scores)}
    reasons = []
    for rate, cls in (("tpr", 1), ("tnr", 0)):
        pairs = [v for v, h in zip(verdict, human, strict=True) if h == cls]
        k = sum(1 for v in pairs if v == cls)
        new = k / len(pairs) if pairs else None
        out[rate] = {"successes": k, "n": len(pairs), "rate": new}
        low, high = entry[rate]["low"], entry[rate]["high"]
        if new is not None and low is not None and high is not None and not low <= new <= high:
            reasons.append(f"{rate.upper()} {k}/{len(pairs)} = {new:.3f} on the anchor set, outside the record's "
                           f"[{low:.3f}, {high:.3f}]")
    previous = entry.get("anchor") or {}
    out["held"] = not reasons
    out["reason"] = "; ".join(reasons)
    out["last_held"] = on if not reasons else previous.get("last_held")
    return out
