"""Response-level signals: the one record the scorers write and the decision layer reads.

:func:`playground.harness.score.response_signals` computes it from the question,
the retrieved passages and the answer; :func:`playground.harness.decide.decide`
reads it.  All production-available: no gold label enters it.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

__all__ = ["DISAGREEMENT_SIGNALS", "Signals"]

#: The five signals whose population standard deviation is :attr:`Signals.disagreement`.
DISAGREEMENT_SIGNALS: tuple[str, ...] = (
    "groundedness", "attribution", "specificity", "answer_relevance", "context_quality",
)


def _check_unit(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")


@dataclass(frozen=True)
class Signals:
    """Response-level signals, all production-available (see module docstring).

    ``sentence_support`` holds one support score per claim (sentence), in claim
    order, aligned with ``sentences``.  ``abstained`` says whether the response
    declines to answer (a production-side detection, not the case's gold type).
    ``unverifiable`` holds ``(index, reason)`` for every sentence the support rules cannot verify (an
    empty claim; a name missing from the passages that is not swapped for another: the ``entities``
    rule of :mod:`playground.harness.support_entities`).  An empty one (support 0.0) is never below the
    floor (:meth:`below_floor`): it is neither supported nor shown to be unsupported; one with a missing
    name is below the floor when its support is (the rest of it is unsupported anyway).
    """

    groundedness: float
    attribution: float
    specificity: float
    hedging: float
    answer_relevance: float
    context_quality: float
    top_retrieval_similarity: float
    sentence_support: tuple[float, ...]
    sentences: tuple[str, ...]
    abstained: bool = False
    unverifiable: tuple[tuple[int, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "sentence_support", tuple(self.sentence_support))
        object.__setattr__(self, "sentences", tuple(self.sentences))
        if self.unverifiable:
            object.__setattr__(self, "unverifiable", tuple((int(i), str(why)) for i, why in self.unverifiable))
            for i, _ in self.unverifiable:
                if not 0 <= i < len(self.sentences):
                    raise ValueError(f"unverifiable names sentence {i}, but there are {len(self.sentences)} sentences")
        for name in ("groundedness", "attribution", "specificity", "hedging", "answer_relevance",
                     "context_quality", "top_retrieval_similarity"):
            _check_unit(name, getattr(self, name))
        for i, value in enumerate(self.sentence_support):
            _check_unit(f"sentence_support[{i}]", value)
        if len(self.sentence_support) != len(self.sentences):
            raise ValueError(
                f"sentence_support has {len(self.sentence_support)} scores for {len(self.sentences)} sentences"
            )

    @property
    def disagreement(self) -> float:
        """Population standard deviation of (groundedness, attribution, specificity,
        answer_relevance, context_quality).

        Hedging is left out (it is already folded into specificity), and so is
        top retrieval similarity (a property of the retriever, not of the
        answer).  0 when the signals agree; at most 0.5 for values in [0, 1].
        """
        return statistics.pstdev(float(getattr(self, name)) for name in DISAGREEMENT_SIGNALS)

    @property
    def confidence(self) -> float:
        """``min(top_retrieval_similarity, groundedness)``."""
        return min(self.top_retrieval_similarity, self.groundedness)

    def below_floor(self, support_floor: float) -> tuple[tuple[int, str, float], ...]:
        """(index, sentence, support) of every sentence with support < ``support_floor``, by index, but the
        empty ones (in :attr:`unverifiable` with support 0.0)."""
        skip = {i for i, _ in self.unverifiable if self.sentence_support[i] == 0.0} if self.unverifiable else ()
        return tuple(
            (i, sentence, support)
            for i, (sentence, support) in enumerate(zip(self.sentences, self.sentence_support, strict=True))
            if support < support_floor and i not in skip
        )


