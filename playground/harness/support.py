"""The support score of a claim (steps 3-6) and its evidence: one computation for both.

:func:`support` and :func:`support_detail` both score a claim with :func:`_score` on the claim's view
(:mod:`playground.harness.claim_view`) and the :class:`~playground.harness.context.Context`:
coverage ``hits / (content tokens + speaker items)`` (1.0 when nothing is checked), or
:data:`~playground.harness.support_rules.EXACT_MISS_SCORE` when a number, identifier or name is
missing; with the ``rouge`` rule, averaged with the claim's ROUGE-1 precision against the context.
:func:`support_detail` adds what the score rests on (:class:`SupportDetail`); its ``score`` is
:func:`support`'s by construction.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from playground.harness.claim_view import _ClaimView, _view
from playground.harness.context import Context
from playground.harness.support_entities import swapped
from playground.harness.support_rules import (
    DEFAULT_KIND,
    DEFAULT_SUPPORT_FLOOR,
    DEFAULT_SUPPORT_FLOORS,
    EXACT_MISS_SCORE,
)
from playground.harness.tokens import stem

__all__ = ["SWAP_SEARCH_MIN", "SupportDetail", "support", "support_detail"]

@dataclass(frozen=True)
class SupportDetail:
    """Why a claim got its support score (the steps: :mod:`playground.harness.score`).

    ``score``: the support score.  ``coverage``: share of ``content_tokens``
    present in the context.  ``matched_tokens``/``missing_tokens``: the content
    tokens found / not found.  ``exact_items``: the claim's numbers,
    identifiers and names; ``missing_numbers``/``missing_identifiers``/
    ``missing_names`` those not in the context, ``missing_exact`` all three.
    ``removed``: text removed in step 1 (preamble, abstention, pleasantry).
    ``best_passage``: index of the single passage with the highest coverage
    (None without passages), ``best_passage_coverage`` that coverage.
    ``negations``: negation words in the cleaned claim.  ``speaker_items``:
    first-person pronouns and ``"?"`` found (step 3; each counts as missing).
    """

    score: float
    coverage: float
    content_tokens: tuple[str, ...]
    matched_tokens: tuple[str, ...]
    missing_tokens: tuple[str, ...]
    exact_items: tuple[str, ...]
    missing_numbers: tuple[str, ...]
    missing_identifiers: tuple[str, ...]
    missing_names: tuple[str, ...]
    removed: tuple[str, ...] = ()
    best_passage: int | None = None
    best_passage_coverage: float = 0.0
    negations: tuple[str, ...] = ()
    speaker_items: tuple[str, ...] = ()

    @property
    def missing_exact(self) -> tuple[str, ...]:
        """Numbers, identifiers and names of the claim missing from the context."""
        return self.missing_numbers + self.missing_identifiers + self.missing_names

    def supported(self, floor: float = DEFAULT_SUPPORT_FLOOR) -> bool:
        """The automatic label: ``score >= floor``."""
        return self.score >= floor


def _present(v: _ClaimView, ctx: Context) -> list[bool]:
    keys = ctx.keys
    return [ctx.has(t, True) if k is None else k in keys
            for t, k in zip(v.content, v.content_keys, strict=False)]


def _exact_ok(v: _ClaimView, ctx: Context) -> bool:
    keys = ctx.keys
    for x in v.number_keys:
        if x not in keys:
            return False
    for _, k in v.name_keys:
        if k not in keys:
            return False
    return all(ctx.has(x, True) for x in v.identifiers)


def _coverage(v: _ClaimView, hits: int) -> float:
    """Step 3: ``hits / (content tokens + speaker items)``; 1.0 when nothing is checked (0.0 when only
    speaker items are)."""
    n = len(v.content) + len(v.speaker)
    if not n:
        return 1.0
    return hits / n


def _hits(v: _ClaimView, ctx: Context) -> int:
    """How many of the claim's content tokens are present in the context (``sum(_present(v, ctx))``,
    without the list)."""
    keys = ctx.keys
    hit = 0
    for t, k in zip(v.content, v.content_keys, strict=False):
        if (k in keys) if k is not None else ctx.has(t, True):
            hit += 1
    return hit


def _score(v: _ClaimView, ctx: Context) -> float:
    """Steps 3-6 of support for a claim view: the one computation behind :func:`support` and
    :func:`support_detail` (the reasons of an unverifiable claim are not written: only the score is read)."""
    return _assess(v, ctx, False)[0]


_VERIFIED: tuple[str, ...] = ()
#: A swap is looked for only when the claim would otherwise score at least this, the lowest shipped floor
#: (:data:`~playground.harness.support_rules.DEFAULT_SUPPORT_FLOORS`): below it the claim is unsupported at
#: every shipped floor already, and the search is the costliest step of a claim with a missing name.
SWAP_SEARCH_MIN: float = min(DEFAULT_SUPPORT_FLOORS.values())


def _assess(v: _ClaimView, ctx: Context, explain: bool = True) -> tuple[float, tuple[str, ...]]:
    """``(score, unverifiable)``: steps 3-6 of support, and why the claim cannot be verified (empty when it
    can).  An empty claim (nothing left to check, nothing removed as a preamble or clause) scores
    :data:`EXACT_MISS_SCORE` and is unverifiable; a swapped entity scores :data:`EXACT_MISS_SCORE` (looked
    for when the score is at least :data:`SWAP_SEARCH_MIN`); a missing name or sentence-initial word that is
    not swapped leaves the score as it is and makes the claim unverifiable
    (:mod:`playground.harness.support_entities`)."""
    if v.empty:
        return EXACT_MISS_SCORE, _EMPTY
    score = _coverage(v, _hits(v, ctx)) if _exact_ok(v, ctx) else EXACT_MISS_SCORE
    why = _VERIFIED
    if v.checks:
        keys = ctx.keys
        missing = [n for n, k in v.checks if k not in keys]
        if missing:
            if score >= SWAP_SEARCH_MIN and _any_swapped(v, ctx, missing):
                score = EXACT_MISS_SCORE
            elif score > EXACT_MISS_SCORE:
                why = tuple(f"{_surface(v, n)!r} is not in the context" for n in missing) if explain else _UNSAID
    if v.words:
        return (score + _rouge1_precision(v, ctx)) / 2, why
    return score, why


_EMPTY: tuple[str, ...] = ("empty claim: nothing left to check",)
# The reasons of an unverifiable claim when nobody reads them (support() wants the score alone).
_UNSAID: tuple[str, ...] = ("unverifiable",)


def _any_swapped(v: _ClaimView, ctx: Context, missing: list[str]) -> bool:
    keys = ctx.keys
    missing_keys = frozenset(k for k in v.content_keys if k is not None and k not in keys)
    return any(swapped(v.cleaned, n, ctx.passages, missing_keys) for n in missing)


def _surface(v: _ClaimView, stem_: str) -> str:
    """The claim's word whose stem is ``stem_`` (for a reason a person reads), else the stem."""
    for w in v.cleaned.replace("\n", " ").split():
        w = w.strip(".,;:!?()[]\"'")
        if w and stem(w.lower()) == stem_:
            return w
    return stem_


def _rouge1_precision(v: _ClaimView, ctx: Context) -> float:
    """Step 6 (the ``rouge`` rule): the ROUGE-1 precision of the claim against the context, as
    ``rouge_score`` computes it without stemming -- ``sum_w min(n_claim(w), n_context(w)) / n_claim`` over
    lower-cased ``[a-z0-9]+`` tokens of the claim after step 1's preamble and clause removal (0.0 without
    tokens; :func:`_score` then keeps the score of step 5)."""
    if not v.n_words:
        return 0.0
    words = ctx.words
    return sum(min(n, words[w]) for w, n in v.words) / v.n_words


def support(claim: str, context: str | Sequence[str] | Context, *, off: Iterable[str] = (),
            kind: str | None = DEFAULT_KIND) -> float:
    """Support score of ``claim`` by ``context`` in [0, 1] (the steps: :mod:`playground.harness.score`):
    content-token coverage, or 0.0 when a number, identifier or capitalised
    name of the claim is missing from the context.  Supported when
    ``>= floor`` (default :data:`DEFAULT_SUPPORT_FLOOR`).  ``kind``: the kind of
    text (:data:`KINDS`), which switches off the rules not for it
    (:data:`RULE_KINDS`; ``None``: every rule on); ``off`` names further rules of
    :data:`SUPPORT_RULES` to switch off (for the ablation)."""
    return _score(_view(claim, off, kind), Context.of(context))


def support_detail(claim: str, context: str | Sequence[str] | Context, *,
                   kind: str = DEFAULT_KIND) -> SupportDetail:
    """:func:`support` with its evidence (:class:`SupportDetail`); ``score`` is :func:`support`'s."""
    ctx = Context.of(context)
    v = _view(claim, (), kind)
    present = _present(v, ctx)
    matched = tuple(t for t, p in zip(v.content, present, strict=False) if p)
    missing = tuple(t for t, p in zip(v.content, present, strict=False) if not p)
    keys = ctx.keys
    nums = tuple(x for x in v.number_keys if x not in keys)
    ids = tuple(x for x in v.identifiers if not ctx.has(x, True))
    names = tuple(n for n, k in v.name_keys if k not in keys)
    best, best_cov = None, 0.0
    for i in range(len(ctx.passages)):
        c = _coverage(v, _hits(v, ctx._single(i)))
        if best is None or c > best_cov:
            best, best_cov = i, c
    a = v.analysis
    exact = tuple(sorted(a.numbers)) + tuple(sorted(a.identifiers)) + tuple(sorted(a.names))
    return SupportDetail(
        score=_score(v, ctx), coverage=_coverage(v, len(matched)), content_tokens=v.content,
        matched_tokens=matched, missing_tokens=missing, exact_items=exact, missing_numbers=nums,
        missing_identifiers=ids, missing_names=names, removed=v.removed, best_passage=best,
        best_passage_coverage=best_cov, negations=a.negations, speaker_items=v.speaker,
    )
