"""The rules of the support score and the kinds of text they are for, with the shipped floors.

A table and its look-ups: the rules (:data:`SUPPORT_RULES`, each switchable off for the ablation), the
kinds of text (:data:`KINDS`), which rules are on for which kind (:data:`RULE_KINDS`, its complement
:data:`KIND_OFF`), the shipped floor of each kind (:data:`DEFAULT_SUPPORT_FLOORS`) and the candidate
floors (:data:`SUPPORT_FLOOR_GRID`).  The automatic label is ``support(...) >= floor``; how each rule
scores is in :mod:`playground.harness.score`'s docstring.
"""
from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "DEFAULT_CORRECTNESS_FLOOR",
    "DEFAULT_KIND",
    "DEFAULT_SUPPORT_FLOOR",
    "DEFAULT_SUPPORT_FLOORS",
    "EXACT_MISS_SCORE",
    "KINDS",
    "KIND_OFF",
    "RULE_KINDS",
    "SUPPORT_FLOOR_GRID",
    "SUPPORT_RULES",
    "kind_off",
    "rules_on",
]

#: The shipped support floor of each kind of text (:data:`KINDS`), used when a dataset's own labels are
#: too few to calibrate one, chosen on the tuning parts of the real data (docs/scorers.md): summary by the
#: ``reweighted`` rule of :mod:`playground.calibrate.floor_rules` (``playground calibrate goals
#: --tuning-cv``), dialogue as BEGIN's tuning-part CV chooses it in four of five folds (``playground
#: calibrate ablation --tuning-cv``); qa keeps 0.55 (the rule would choose 0.50: docs/scorers.md says why
#: it was not changed).  The automatic label is ``support(...) >= floor``.
DEFAULT_SUPPORT_FLOORS: dict[str, float] = {"qa": 0.55, "summary": 0.50, "dialogue": 0.75}
#: The shipped support floor of the default kind (qa): the harness configuration's default
#: ``scoring.support_floor`` (one source of truth; ``configs/*.yaml`` do not repeat it).
DEFAULT_SUPPORT_FLOOR: float = DEFAULT_SUPPORT_FLOORS["qa"]
#: The shipped correctness floor (``scoring.correctness_floor``): correctness is support against the
#: reference answer and facts, on the golden set's authored keys best near 0.70.
DEFAULT_CORRECTNESS_FLOOR: float = 0.70
#: Candidate floors for calibrating the support score: 0.05 .. 0.95 step 0.05
#: (all above :data:`EXACT_MISS_SCORE`, so a missing exact item is never
#: supported at any candidate; a coarse grid keeps the choice stable).
SUPPORT_FLOOR_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(1, 20))
#: Score of a claim whose number, identifier or name is missing from the context.
EXACT_MISS_SCORE: float = 0.0

#: The rules of :func:`support`, each switchable off (``off=``) for the ablation
#: (``playground calibrate ablation``): ``artefacts`` (step 0, chat-template
#: tokens, markdown, URLs and unicode variants normalised:
#: :mod:`playground.harness.textnorm`), ``preamble`` (step 1, leading answer
#: preamble removed), ``clauses`` (step 1, abstention and pleasantry clauses
#: removed), ``markers`` (step 1, citation and list markers removed),
#: ``discourse`` (step 2, :data:`DISCOURSE_WORDS` dropped), ``speaker`` (step 3,
#: first-person pronouns and a question mark count as missing content),
#: ``numbers``, ``identifiers``, ``names`` (step 4, each kind of exact item must
#: be present), ``entities`` (step 4b, :mod:`playground.harness.support_entities`: names no other rule
#: checks and sentence-initial capitalised words must be in the context; one swapped for other words at the
#: same place scores 0, one merely missing makes the claim unverifiable), ``rouge`` (step 6, the score
#: averaged with the claim's ROUGE-1 precision).
SUPPORT_RULES: tuple[str, ...] = ("artefacts", "preamble", "clauses", "markers", "discourse", "speaker", "numbers",
                                  "identifiers", "names", "entities", "rouge")
_NO_RULES_OFF: frozenset[str] = frozenset()

#: The kinds of text a dataset can hold: ``qa`` (answers to questions over retrieved passages; the
#: default of an imported dataset and of the golden set), ``summary`` (summaries of a given text) and
#: ``dialogue`` (conversational turns grounded in a knowledge snippet).
KINDS: tuple[str, ...] = ("qa", "summary", "dialogue")
DEFAULT_KIND = "qa"
_ALL_KINDS = frozenset(KINDS)
#: The kinds of text each rule of :data:`SUPPORT_RULES` is for.  A rule is switched off for a kind
#: when switching it off raises both ROC AUC and 5-fold cross-validated kappa on that kind's tuning
#: data by at least 0.005 (``playground calibrate ablation --tuning-cv``; figures in docs/scorers.md):
#: *speaker* is for dialogue only, *names* is off for qa.  A new rule is switched on for a kind when it
#: raises ROC AUC or CV kappa there by at least 0.005 and lowers neither by as much: *rouge* is for
#: summary (kappa +0.038, AUC +0.000) and dialogue (AUC +0.014, kappa +0.004), not qa (kappa -0.036).
#: *markers* is kept for qa although switching it off scores better there: the gain comes from list
#: ordinals ("7.") demanded as exact numbers, which would score correct numbered answers 0 on other data
#: (docs/scorers.md).
RULE_KINDS: dict[str, frozenset[str]] = {
    **dict.fromkeys(SUPPORT_RULES, _ALL_KINDS),
    "speaker": frozenset({"dialogue"}),
    "names": frozenset({"summary", "dialogue"}),
    "rouge": frozenset({"summary", "dialogue"}),
}
#: The rules switched off for each kind (the complement of :data:`RULE_KINDS`).
KIND_OFF: dict[str, frozenset[str]] = {
    kind: frozenset(r for r in SUPPORT_RULES if kind not in RULE_KINDS[r]) for kind in KINDS
}


def _rules_off(off: Iterable[str], kind: str | None = DEFAULT_KIND) -> frozenset[str]:
    out = frozenset(off)
    bad = sorted(out - set(SUPPORT_RULES))
    if bad:
        raise ValueError(f"unknown support rule(s) {', '.join(bad)} (known: {', '.join(SUPPORT_RULES)})")
    return out | kind_off(kind)


def rules_on(kind: str) -> tuple[str, ...]:
    """The rules of :data:`SUPPORT_RULES` that score ``kind`` (in that order): what a run report names as
    applied."""
    off = kind_off(kind)
    return tuple(r for r in SUPPORT_RULES if r not in off)


def kind_off(kind: str | None) -> frozenset[str]:
    """The rules switched off for ``kind`` (:data:`KIND_OFF`; none for ``None``, which the ablation uses
    to switch rules on and off by hand); a ``ValueError`` names an unknown kind."""
    if kind is None:
        return _NO_RULES_OFF
    off = KIND_OFF.get(kind)
    if off is None:
        raise ValueError(f"unknown kind of text {kind!r} (known: {', '.join(KINDS)})")
    return off


#: The rules switched off for the default kind (qa): the common case, looked up once.
_QA_OFF = KIND_OFF[DEFAULT_KIND]
