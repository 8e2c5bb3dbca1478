"""Answer-level checks against the reference: correctness of a claim, fact coverage, answer correctness.

* :func:`correctness`: the support score of a claim against the reference answer and facts (as passages).
* :func:`fact_covered`: one of a fact's ``accept`` strings is contained in the response
  (case-insensitive, whitespace collapsed, curly apostrophes straightened).
* :func:`answer_correct`: as :func:`fact_covered` over the accepted strings, or, when the case must be
  abstained on, exactly when :func:`playground.harness.claim_view.is_abstention`.
"""
from __future__ import annotations

from collections.abc import Sequence

from playground.harness.claim_view import is_abstention
from playground.harness.support import support
from playground.harness.support_rules import DEFAULT_KIND

__all__ = ["answer_correct", "correctness", "fact_covered"]

def correctness(claim: str, reference_answer: str, facts_texts: Sequence[str] = (), *,
                kind: str = DEFAULT_KIND) -> float:
    """Support of ``claim`` against the reference answer and the reference facts
    taken as passages (same rules as :func:`support` for ``kind``)."""
    return support(claim, [reference_answer, *facts_texts], kind=kind)


def _norm(text: str) -> str:
    return " ".join(text.replace("’", "'").replace("‘", "'").split()).casefold()


def fact_covered(response_text: str, accept: Sequence[str]) -> bool:
    """A reference fact is covered when one of its ``accept`` strings is
    contained in the response, case-insensitively after collapsing whitespace
    (and straightening curly apostrophes).  Empty accept strings never match."""
    r = _norm(response_text)
    return any(a_n and a_n in r for a_n in (_norm(a) for a in accept))


def answer_correct(response_text: str, accepted: Sequence[str], *,
                   must_abstain: bool = False) -> bool:
    """Answer-level correctness.

    For cases that must be abstained on (``must_abstain``: out of scope,
    cross-tenant) correct exactly when :func:`is_abstention`; otherwise correct
    when any accepted string is contained in the response (as
    :func:`fact_covered`).
    """
    if must_abstain:
        return is_abstention(response_text)
    return fact_covered(response_text, accepted)
