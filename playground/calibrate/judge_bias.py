"""Bias probes of an Ollama judge: position bias on pairwise prompts, and self-preference.

**Position bias.**  Each pair of answers to one question is put to the judge twice, once in each order
(:data:`PAIRWISE_PROMPT`, a JSON reply ``{"better": "A" | "B"}``).  A judge without position bias picks the
answer shown first half of the time, since each answer is shown first once.  The figure is the share of
the ``2 · pairs`` verdicts that chose the first-shown answer, with its 95% Wilson interval; the judge is
**position-biased** when the whole interval lies outside ``[0.5 − MARGIN, 0.5 + MARGIN]`` (:data:`MARGIN`
0.1; a bound exactly on it does not count).  A reply that is no verdict counts as neither and is reported.
Also reported: the pairs whose choice flipped with the order (the judge preferred a *position*, not an
answer).

**Self-preference.**  When the judge's model also wrote the answers (``--generator`` equals the judge's
model), its leniency on them is measured against people on the same labelled samples: the paired
difference ``judge pass rate − human pass rate`` with Newcombe's interval
(:func:`playground.stats.paired_difference`); self-preferring when the whole interval lies above 0.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..stats import paired_difference, wilson_interval

__all__ = ["MARGIN", "PAIRWISE_PROMPT", "position_probe", "self_preference"]

#: How far from 0.5 the share of first-position choices may lie before it is a bias.
MARGIN = 0.1
PAIRWISE_PROMPT = ("Question: {question}\n\nAnswer A: {a}\n\nAnswer B: {b}\n\nWhich answer is better: more "
                   "correct, better supported, more helpful? Reply with JSON only: {{\"better\": \"A\"}} or "
                   "{{\"better\": \"B\"}}.")
PAIRWISE_FORMAT = {"type": "object", "properties": {"better": {"type": "string", "enum": ["A", "B"]}},
                   "required": ["better"]}


def _choice(reply: str) -> str | None:
    try:
        better = json.loads(reply).get("better")
    except (ValueError, AttributeError):
        return None
    return better if better in ("A", "B") else None


def position_probe(ask: Callable[[str], str], pairs: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
    """Put each ``(question, answer_1, answer_2)`` to ``ask`` (prompt -> reply) in both orders (module docstring)."""
    first = valid = flipped = unreadable = 0
    for question, one, two in pairs:
        picks: list[str | None] = []
        for a, b in ((one, two), (two, one)):
            c = _choice(ask(PAIRWISE_PROMPT.format(question=question, a=a, b=b)))
            if c is None:
                unreadable += 1
                picks.append(None)
                continue
            valid += 1
            first += c == "A"
            picks.append(c)
        flipped += picks[0] is not None and picks[0] == picks[1]  # the same slot both times: the answer changed
    ci = wilson_interval(first, valid) if valid else None
    rate = first / valid if valid else None
    biased = ci is not None and (ci[0] > 0.5 + MARGIN or ci[1] < 0.5 - MARGIN)
    return {"pairs": len(pairs), "verdicts": valid, "unreadable": unreadable, "first_chosen": first,
            "first_rate": rate, "low": None if ci is None else ci[0], "high": None if ci is None else ci[1],
            "order_flipped_pairs": flipped, "biased": biased,
            "reason": (f"the answer shown first is chosen {first}/{valid} = {rate:.2f} [{ci[0]:.2f}, {ci[1]:.2f}], "
                       f"outside [{0.5 - MARGIN:.1f}, {0.5 + MARGIN:.1f}]") if biased and ci and rate is not None
            else ""}


def self_preference(judge_pass: Sequence[int], human_pass: Sequence[int]) -> dict[str, Any]:
    """The judge's leniency on answers its own model wrote: judge minus human pass rate, paired (module docstring)."""
    d = paired_difference(list(judge_pass), list(human_pass))
    prefers = d.low is not None and d.low > 0
    return {"n": d.n, "difference": d.difference, "low": d.low, "high": d.high, "biased": prefers,
            "reason": (f"on answers its own model wrote the judge passes {d.difference:+.3f} more than people "
                       f"[{d.low:.3f}, {d.high:.3f}], n = {d.n}") if prefers else ""}
