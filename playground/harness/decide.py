"""The decision layer: response-level signals in, ACCEPT / REVIEW / REJECT out, with a reason.

Pure functions of numbers: no I/O, no model, no gold label.  Every threshold
comes from the ``decision`` section of the configuration
(:data:`playground.harness.config.DEFAULTS`), passed in as ``thresholds``,
plus ``scoring.support_floor`` passed separately; none is written here.

Signals (all in [0, 1], computed by the scorers from production-available
inputs only — the question, the retrieved passages and the answer):

* ``groundedness`` — mean sentence coverage (support) of the answer by the passages;
* ``attribution`` — how much of the answer can be traced to a cited/retrieved source;
* ``specificity`` — how concrete the answer is (numbers, identifiers, names);
  hedging lowers it.  High specificity with low attribution is the signature of
  a confident hallucination;
* ``hedging`` — how much the answer hedges ("might", "it depends", ...);
* ``answer_relevance`` — does the answer address the question;
* ``context_quality`` — do the retrieved passages address the question;
* ``top_retrieval_similarity`` — similarity of the best retrieved passage.

The gold labels (case type, must-abstain, correctness against the reference)
never enter :class:`Signals` nor :func:`decide`: the decision must be
computable in production.  :func:`flags` separates the two worlds explicitly.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .config import DEFAULTS
from .signals import DISAGREEMENT_SIGNALS, Signals

__all__ = [
    "DISAGREEMENT_SIGNALS", "FAILURE_TYPES", "NEXT_ACTIONS", "RULES", "THRESHOLD_KEYS", "VERDICTS", "Decision",
    "Flags", "Rule", "Signals", "check_thresholds", "decide", "flags", "review_queue",
]


VERDICTS: tuple[str, ...] = ("ACCEPT", "REVIEW", "REJECT")
FAILURE_TYPES: tuple[str, ...] = ("hallucination", "vague", "poor_retrieval", "off_topic", "uncertain", "borderline")
NEXT_ACTIONS: tuple[str, ...] = (
    "serve",
    "retry with a specific prompt",
    "regenerate with a grounding prompt",
    "retrieve more documents",
    "human review",
)

#: Every decision threshold :func:`decide` and :func:`flags` read (all from ``DEFAULTS["decision"]``).
THRESHOLD_KEYS: tuple[str, ...] = (
    "reject_groundedness",
    "accept_groundedness",
    "high_specificity",
    "low_specificity",
    "high_hedging",
    "low_attribution",
    "min_context_quality",
    "min_answer_relevance",
    "confidence_review",
    "max_signal_disagreement",
    "borderline_margin",
)

@dataclass(frozen=True)
class Rule:
    """One row of the decision table."""

    name: str
    condition: str
    verdict: str
    failure_type: str | None
    next_action: str


#: The decision table, in order; the first rule whose condition holds decides.
RULES: tuple[Rule, ...] = (
    Rule("abstained_no_context", "abstained and context_quality < min_context_quality",
         "ACCEPT", None, "serve"),
    Rule("abstained_with_context", "abstained (and context_quality >= min_context_quality)",
         "REVIEW", "uncertain", "human review"),
    Rule("poor_retrieval", "context_quality < min_context_quality",
         "REJECT", "poor_retrieval", "retrieve more documents"),
    Rule("off_topic_grounded", "answer_relevance < min_answer_relevance, but groundedness >= accept_groundedness "
         "and no sentence below support_floor (a paraphrase of the passages that shares few words with the question)",
         "REVIEW", "off_topic", "human review"),
    Rule("off_topic", "answer_relevance < min_answer_relevance",
         "REJECT", "off_topic", "retry with a specific prompt"),
    Rule("unverifiable", "a sentence the support rules cannot verify (an empty claim; a name not in the passages "
         "and not swapped for another) and no sentence below support_floor (an empty one never is)",
         "REVIEW", "uncertain", "human review"),
    Rule("confident_hallucination",
         "a sentence below support_floor and specificity >= high_specificity and "
         "(attribution < low_attribution or groundedness < reject_groundedness)",
         "REJECT", "hallucination", "regenerate with a grounding prompt"),
    Rule("unspecific", "specificity < low_specificity",
         "REVIEW", "vague", "retry with a specific prompt"),
    Rule("ungrounded", "groundedness < reject_groundedness",
         "REJECT", "hallucination", "regenerate with a grounding prompt"),
    Rule("hedged", "hedging >= high_hedging",
         "REVIEW", "vague", "retry with a specific prompt"),
    Rule("signals_disagree", "disagreement > max_signal_disagreement",
         "REVIEW", "uncertain", "human review"),
    Rule("low_confidence", "confidence < confidence_review",
         "REVIEW", "uncertain", "human review"),
    Rule("borderline",
         "|groundedness - accept_groundedness| <= borderline_margin, or some sentence's "
         "|support - support_floor| <= borderline_margin",
         "REVIEW", "borderline", "human review"),
    Rule("accept", "groundedness >= accept_groundedness and no sentence below support_floor",
         "ACCEPT", None, "serve"),
    Rule("otherwise", "none of the above (middle-band groundedness, or an unsupported sentence)",
         "REVIEW", "uncertain", "human review"),
)
_RULES = {rule.name: rule for rule in RULES}
#: Float slack for "within the margin" (0.80 - 0.75 is 0.05000000000000004 in binary).
_EPS = 1e-9


@dataclass(frozen=True)
class Decision:
    """What to do with one response, and why.

    ``confidence`` is ``min(top_retrieval_similarity, groundedness)``;
    ``low_coverage_sentences`` holds (index, sentence, support) for every
    sentence whose support is below the support floor, sorted by index;
    ``rule`` names the row of :data:`RULES` that decided.
    """

    verdict: str
    failure_type: str | None
    reason: str
    next_action: str
    confidence: float
    low_coverage_sentences: tuple[tuple[int, str, float], ...]
    rule: str = ""


def check_thresholds(thresholds: Mapping[str, float], support_floor: float) -> None:
    """Raise ValueError listing every missing, unknown or out-of-range threshold."""
    problems: list[str] = []
    known = set(THRESHOLD_KEYS) | set(DEFAULTS["decision"])
    missing = [k for k in THRESHOLD_KEYS if k not in thresholds]
    if missing:
        problems.append(f"missing decision threshold(s): {', '.join(missing)}")
    unknown = sorted(k for k in thresholds if k not in known)
    if unknown:
        problems.append(f"unknown decision threshold(s): {', '.join(unknown)}")
    for key in THRESHOLD_KEYS:
        if key in thresholds:
            value = thresholds[key]
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not number or math.isnan(value) or not 0 <= value <= 1:
                problems.append(f"decision.{key} must be a number in [0, 1], got {value!r}")
    floor_is_number = isinstance(support_floor, int | float) and not isinstance(support_floor, bool)
    if not floor_is_number or not 0 <= support_floor <= 1:
        problems.append(f"support_floor must be a number in [0, 1], got {support_floor!r}")
    if not problems:
        if thresholds["reject_groundedness"] > thresholds["accept_groundedness"]:
            problems.append("decision.reject_groundedness must not exceed decision.accept_groundedness")
        if thresholds["low_specificity"] > thresholds["high_specificity"]:
            problems.append("decision.low_specificity must not exceed decision.high_specificity")
    if problems:
        raise ValueError("; ".join(problems))


def _f(x: float) -> str:
    return f"{x:.2f}"


def _values(xs: Sequence[float]) -> str:
    return ", ".join(_f(x) for x in xs)


def _within(value: float, target: float, margin: float) -> bool:
    return abs(value - target) <= margin + _EPS


class _Rules:
    """The rules of :func:`decide` in groups, over the signals, thresholds and floor they share."""

    def __init__(self, signals: Signals, thresholds: Mapping[str, float], support_floor: float):
        self.s = signals
        self.t = thresholds
        self.floor = support_floor
        self.low = signals.below_floor(support_floor)
        self.confidence = signals.confidence

    def result(self, name: str, reason: str) -> Decision:
        rule = _RULES[name]
        return Decision(rule.verdict, rule.failure_type, reason, rule.next_action, self.confidence, self.low, name)

    def below_text(self) -> str:
        n, low = len(self.s.sentences), self.low
        return (
            f"{len(low)} of {n} sentence{'s' if n != 1 else ''} "
            f"{'is' if len(low) == 1 else 'are'} below the support floor {_f(self.floor)} "
            f"({_values([support for _, _, support in low])})"
        )

    def abstention(self) -> Decision | None:
        """Rules 1-2: an abstention is judged before its other (meaningless) signals."""
        s, t = self.s, self.t
        if s.abstained:
            if s.context_quality < t["min_context_quality"]:
                return self.result(
                    "abstained_no_context",
                    f"the response abstains and the retrieved context is weak (context quality "
                    f"{_f(s.context_quality)} < {_f(t['min_context_quality'])}): there is nothing to answer from",
                )
            return self.result(
                "abstained_with_context",
                f"the response abstains although the retrieved context looks relevant (context quality "
                f"{_f(s.context_quality)} >= {_f(t['min_context_quality'])})",
            )
        return None

    def evidence(self) -> Decision | None:
        """Rules 3-4: a retrieval failure, then an off-topic answer."""
        s, t = self.s, self.t
        # 3: retrieval
        if s.context_quality < t["min_context_quality"]:
            return self.result(
                "poor_retrieval",
                f"context quality {_f(s.context_quality)} is below {_f(t['min_context_quality'])}: "
                f"the retrieved passages do not address the question",
            )
        # 4: relevance; an answer the passages fully support is sent to a person, not rejected: answer
        # relevance counts the question's words, and a correct paraphrase may share few of them
        if s.answer_relevance < t["min_answer_relevance"] and s.groundedness >= t["accept_groundedness"] \
                and not self.low:
            return self.result(
                "off_topic_grounded",
                f"answer relevance {_f(s.answer_relevance)} is below {_f(t['min_answer_relevance'])}, but the "
                f"answer is grounded (groundedness {_f(s.groundedness)} >= {_f(t['accept_groundedness'])}, no "
                f"sentence below the support floor {_f(self.floor)}): a person should check it answers the question",
            )
        if s.answer_relevance < t["min_answer_relevance"]:
            return self.result(
                "off_topic",
                f"answer relevance {_f(s.answer_relevance)} is below {_f(t['min_answer_relevance'])}: "
                f"the answer does not address the question",
            )
        return None

    def grounding(self) -> Decision | None:
        """Rules 4b and 5-8: unverifiable sentences, confident hallucination, nothing concrete, not grounded,
        hedging."""
        s, t = self.s, self.t
        low = self.low
        # 4b: what the rules cannot verify goes to a person (an answer with an unsupported sentence is judged
        # by the rules below, which see it)
        if s.unverifiable and not low:
            parts = "; ".join(f"sentence {i + 1} ({s.sentences[i][:60]!r}): {why}" for i, why in s.unverifiable)
            return self.result("unverifiable", f"unverifiable: {parts}")
        # 5: confident hallucination (a specific answer with an unsupported sentence and a weak source)
        weak_source = []
        if s.attribution < t["low_attribution"]:
            weak_source.append(f"attribution is low ({_f(s.attribution)} < {_f(t['low_attribution'])})")
        if s.groundedness < t["reject_groundedness"]:
            weak_source.append(f"groundedness is low ({_f(s.groundedness)} < {_f(t['reject_groundedness'])})")
        if low and s.specificity >= t["high_specificity"] and weak_source:
            return self.result(
                "confident_hallucination",
                f"{self.below_text()} while specificity is high ({_f(s.specificity)} >= "
                f"{_f(t['high_specificity'])}) and {' and '.join(weak_source)}: likely confident hallucination",
            )
        # 6: nothing concrete
        if s.specificity < t["low_specificity"]:
            return self.result(
                "unspecific",
                f"specificity {_f(s.specificity)} is below {_f(t['low_specificity'])} (hedging "
                f"{_f(s.hedging)}): the answer says nothing concrete",
            )
        # 7: not grounded
        if s.groundedness < t["reject_groundedness"]:
            detail = f"; {self.below_text()}" if low else ""
            return self.result(
                "ungrounded",
                f"groundedness {_f(s.groundedness)} is below {_f(t['reject_groundedness'])}{detail}: "
                f"the answer is largely not supported by the retrieved passages",
            )
        # 8: hedging
        if s.hedging >= t["high_hedging"]:
            return self.result(
                "hedged",
                f"hedging {_f(s.hedging)} is at or above {_f(t['high_hedging'])} (specificity "
                f"{_f(s.specificity)}, groundedness {_f(s.groundedness)}): the answer hedges instead of committing",
            )
        return None

    def uncertainty(self) -> Decision | None:
        """Rules 9-11: signals that disagree, low confidence, borderline values."""
        s, t = self.s, self.t
        support_floor = self.floor
        confidence = self.confidence
        # 9: disagreement
        if s.disagreement > t["max_signal_disagreement"]:
            parts = ", ".join(f"{name.replace('_', ' ')} {_f(getattr(s, name))}" for name in DISAGREEMENT_SIGNALS)
            return self.result(
                "signals_disagree",
                f"the signals disagree (population standard deviation {_f(s.disagreement)} > "
                f"{_f(t['max_signal_disagreement'])}: {parts})",
            )
        # 10: low confidence
        if confidence < t["confidence_review"]:
            return self.result(
                "low_confidence",
                f"confidence {_f(confidence)} = min(top retrieval similarity {_f(s.top_retrieval_similarity)}, "
                f"groundedness {_f(s.groundedness)}) is below {_f(t['confidence_review'])}",
            )
        # 11: borderline
        margin = t["borderline_margin"]
        near = []
        if _within(s.groundedness, t["accept_groundedness"], margin):
            near.append(
                f"groundedness {_f(s.groundedness)} is within {_f(margin)} of the accept threshold "
                f"{_f(t['accept_groundedness'])}"
            )
        near_sentences = [support for support in s.sentence_support if _within(support, support_floor, margin)]
        if near_sentences:
            k = len(near_sentences)
            near.append(
                f"{k} sentence{'s' if k != 1 else ''} within {_f(margin)} of the support floor "
                f"{_f(support_floor)} ({_values(near_sentences)})"
            )
        if near:
            return self.result("borderline", "; ".join(near))
        return None

    def settle(self) -> Decision:
        """Rules 12-13: accept, otherwise review."""
        s, t = self.s, self.t
        support_floor = self.floor
        low = self.low
        confidence = self.confidence
        # 12: accept
        if s.groundedness >= t["accept_groundedness"] and not low:
            return self.result(
                "accept",
                f"groundedness {_f(s.groundedness)} >= {_f(t['accept_groundedness'])}, every sentence at or "
                f"above the support floor {_f(support_floor)}, confidence {_f(confidence)}",
            )
        # 13: otherwise
        if low:
            reason = f"{self.below_text()} although groundedness is {_f(s.groundedness)}"
        else:
            reason = (
                f"groundedness {_f(s.groundedness)} lies between the reject threshold "
                f"{_f(t['reject_groundedness'])} and the accept threshold {_f(t['accept_groundedness'])}"
            )
        return self.result("otherwise", reason)


def decide(signals: Signals, thresholds: Mapping[str, float], support_floor: float) -> Decision:
    """Decide ACCEPT / REVIEW / REJECT for one response; the first matching rule wins.

    ``thresholds`` is the ``decision`` section of the configuration (every key of
    :data:`THRESHOLD_KEYS`); ``support_floor`` is ``scoring.support_floor``.  Below,
    "a sentence below the floor" means some ``sentence_support < support_floor``
    and ``confidence = min(top_retrieval_similarity, groundedness)``.

    Each rule's next action ("serve", "human review", "retry with a specific prompt", "regenerate with a
    grounding prompt", "retrieve more documents") is in :data:`RULES`.

    ==  =======================  =======  ==============  ==========================================================
    #   rule                     verdict  failure type    condition
    ==  =======================  =======  ==============  ==========================================================
    1   abstained_no_context     ACCEPT   —               abstained and context_quality < min_context_quality
                                                          (nothing to answer from)
    2   abstained_with_context   REVIEW   uncertain       abstained, context looks relevant
    3   poor_retrieval           REJECT   poor_retrieval  context_quality < min_context_quality
    4a  off_topic_grounded       REVIEW   off_topic       answer_relevance < min_answer_relevance, but groundedness
                                                          >= accept_groundedness and no sentence below the floor
    4   off_topic                REJECT   off_topic       answer_relevance < min_answer_relevance
    4b  unverifiable             REVIEW   uncertain       a sentence the rules cannot verify (``unverifiable``) and
                                                          no sentence below the floor (an empty one never is)
    5   confident_hallucination  REJECT   hallucination   a sentence below the floor and specificity >= high_specificity
                                                          and (attribution < low_attribution or groundedness <
                                                          reject_groundedness)
    6   unspecific               REVIEW   vague           specificity < low_specificity
    7   ungrounded               REJECT   hallucination   groundedness < reject_groundedness
    8   hedged                   REVIEW   vague           hedging >= high_hedging
    9   signals_disagree         REVIEW   uncertain       disagreement > max_signal_disagreement
    10  low_confidence           REVIEW   uncertain       confidence < confidence_review
    11  borderline               REVIEW   borderline      groundedness within borderline_margin of accept_groundedness,
                                                          or a sentence's support within borderline_margin of the floor
    12  accept                   ACCEPT   —               groundedness >= accept_groundedness and no sentence below
                                                          the floor
    13  otherwise                REVIEW   uncertain       middle-band groundedness, or an unsupported sentence in an
                                                          otherwise grounded answer
    ==  =======================  =======  ==============  ==========================================================

    Why this order: abstentions are judged first (their other signals are
    meaningless); a retrieval failure is named before the answer is blamed for
    it; off-topic before grounding.  A specific but unsupported answer is a
    confident hallucination (5).  An answer that says nothing concrete (6) is
    vague even when unsupported — there is nothing specific to be wrong about
    and a sharper prompt is the fix — so it comes before the generic
    groundedness reject (7); but a hedged answer that still asserts unsupported
    specifics is rejected by 7 before the hedging rule (8) could soften it.
    "Within the margin" is inclusive.  An ACCEPT therefore implies no sentence
    below the floor, no unverifiable sentence (4b: ACCEPT means verified) and confidence >=
    confidence_review, i.e. the response is never also in the review queue of :func:`flags`.
    """
    check_thresholds(thresholds, support_floor)
    rules = _Rules(signals, thresholds, support_floor)
    for group in (rules.abstention, rules.evidence, rules.grounding, rules.uncertainty):
        decision = group()
        if decision is not None:
            return decision
    return rules.settle()


# --- flags ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Flags:
    """Per-response flags.

    * ``hallucination`` and ``grounded_but_wrong`` read correctness labels, which
      compare the answer with the reference: they are gold, for evaluation only.
    * ``review_queue`` reads only production-available signals (sentence support
      and confidence) — never a gold label — so the same rule can route live
      traffic; ``review_reasons`` says why (empty when not queued).
    """

    hallucination: bool
    grounded_but_wrong: bool
    review_queue: bool
    review_reasons: tuple[str, ...] = ()


def review_queue(signals: Signals, *, support_floor: float, confidence_review: float) -> tuple[str, ...]:
    """Why a response goes to the review queue (empty: it does not).

    Production-only by construction (its arguments hold no gold): queued when a
    sentence's support is below ``support_floor``, when confidence =
    min(top retrieval similarity, groundedness) is below ``confidence_review``, or when a sentence is
    unverifiable (:attr:`Signals.unverifiable`).
    """
    reasons: list[str] = []
    low = signals.below_floor(support_floor)
    if low:
        reasons.append(
            f"{len(low)} sentence{'s' if len(low) != 1 else ''} below the support floor "
            f"{_f(support_floor)} ({_values([x for _, _, x in low])})"
        )
    if signals.confidence < confidence_review:
        reasons.append(f"confidence {_f(signals.confidence)} is below {_f(confidence_review)}")
    if signals.unverifiable:
        k = len(signals.unverifiable)
        reasons.append(f"{k} sentence{'s' if k != 1 else ''} unverifiable")
    return tuple(reasons)


def flags(
    signals: Signals,
    decision: Decision,
    *,
    claim_supported: Sequence[bool],
    claim_correct: Sequence[bool],
    answer_correct: bool | None,
    support_floor: float,
    thresholds: Mapping[str, float],
) -> Flags:
    """Evaluation flags of one response.

    ``claim_supported[i]`` / ``claim_correct[i]`` label claim ``i`` (claim order,
    aligned with ``signals.sentences``); supported may be a person's label or
    the automatic one (``support >= support_floor``), correct is judged against
    the reference (gold).  ``answer_correct`` is the response-level verdict, or
    None when unknown.

    * hallucination: some claim ``i`` is both unsupported and incorrect
      (``not claim_supported[i] and not claim_correct[i]``);
    * grounded_but_wrong: there is at least one claim, every claim is supported,
      and the answer is wrong (``answer_correct is False`` or some claim incorrect);
    * review_queue: :func:`review_queue` with ``thresholds["confidence_review"]`` —
      uses ``signals`` and ``decision.confidence`` only, never the labels above.
    """
    supported = [bool(x) for x in claim_supported]
    correct = [bool(x) for x in claim_correct]
    if not (len(supported) == len(correct) == len(signals.sentences)):
        raise ValueError(
            f"labels misaligned: {len(supported)} supported, {len(correct)} correct, {len(signals.sentences)} sentences"
        )
    if not math.isclose(decision.confidence, signals.confidence):
        raise ValueError("decision was not made from these signals (confidence differs)")
    hallucination = any(not s and not c for s, c in zip(supported, correct, strict=True))
    grounded_but_wrong = bool(supported) and all(supported) and (answer_correct is False or not all(correct))
    reasons = review_queue(signals, support_floor=support_floor, confidence_review=thresholds["confidence_review"])
    return Flags(hallucination, grounded_but_wrong, bool(reasons), reasons)
