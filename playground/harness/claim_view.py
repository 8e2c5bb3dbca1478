"""What of a claim the support score checks (steps 0-2 and the speaker items of step 3), and abstention.

:func:`_claim_view` normalises a claim (:mod:`playground.harness.textnorm`), removes its preamble and
its abstention and pleasantry clauses (:mod:`playground.harness.clauses`), tokenises the rest
(:mod:`playground.harness.tokens`) and keeps its distinct content tokens minus
:data:`DISCOURSE_WORDS`, their match keys, its numbers, identifiers and names, its speaker items
(:data:`SPEAKER_WORDS` and ``?``) and its ROUGE-1 word counts, each as the rules switched on ask.
:func:`is_abstention` reads the same view: an abstention clause was removed and at most
:data:`ABSTENTION_MAX_CONTENT` content tokens (no number or identifier) are left.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

from playground.harness.clauses import _ABSTENTION_RE_I, PREAMBLE_RE, _may_trigger, _remove_clauses
from playground.harness.context import _ROUGE_TOKEN_RE
from playground.harness.support_rules import _NO_RULES_OFF, _QA_OFF, DEFAULT_KIND, _rules_off
from playground.harness.textnorm import normalise_output
from playground.harness.token_cjk import has_cjk
from playground.harness.tokens import Analysis, analyze, match_key, match_keys, stem

__all__ = ["ABSTENTION_MAX_CONTENT", "DISCOURSE_WORDS", "SPEAKER_WORDS", "clean_claim", "is_abstention"]

#: Words about the answer itself rather than the world (dropped from the
#: content tokens of claims): compared by stem.
DISCOURSE_WORDS: frozenset[str] = frozenset(
    stem(w) for w in [
        "passage", "passages", "context", "provided", "given", "based", "according", "mentioned", "mention",
        "states", "stated", "summary", "article", "text", "source", "sources", "document", "documents",
        "excerpt", "excerpts", "answer", "question", "following", "below", "above", "here", "word", "words",
        "tip", "tips", "step", "steps", "way", "ways", "information",
        # discourse markers of model answers (what is left of a refusal or pleasantry clause's sentence)
        "unfortunately", "sorry", "sure", "certainly", "overall",
    ]
)

#: Speaker items of step 3: first-person pronouns, as lower-cased word tokens of
#: the cleaned claim (so ``i.e.`` is not one); a question mark is counted
#: separately (once per claim).
SPEAKER_WORDS: frozenset[str] = frozenset({"i", "i'm", "i've", "i'd", "i'll", "me", "my", "myself"})


class _ClaimView(NamedTuple):
    cleaned: str
    removed: tuple[str, ...]
    analysis: Analysis
    content: tuple[str, ...]          # distinct content tokens (discourse words dropped)
    content_keys: tuple[str | None, ...]  # match key per content token, None = identifier
    number_keys: tuple[str, ...]
    identifiers: tuple[str, ...]
    name_keys: tuple[tuple[str, str], ...]  # (name stem, key)
    abstained: bool                   # an abstention clause was removed
    n_content: int                    # content token occurrences, discourse words dropped
    speaker: tuple[str, ...] = ()     # speaker items (step 3): pronouns found, and "?"
    words: tuple[tuple[str, int], ...] = ()  # ROUGE-1 tokens and counts of the normalised claim (rouge rule)
    n_words: int = 0                  # how many ROUGE-1 tokens it has
    checks: tuple[tuple[str, str], ...] = ()  # (stem, key) the entities rule checks: names, sentence-initial words
    empty: bool = False               # nothing left to check and nothing removed: unverifiable


@lru_cache(maxsize=8_192)
def _claim_view(claim: str, off: frozenset[str] = _NO_RULES_OFF) -> _ClaimView:
    text = normalise_output(claim) if "artefacts" not in off else claim
    if not text.isascii():  # an ASCII text has no curly quote
        text = text.replace("’", "'").replace("‘", "'")
    removed: list[str] = []
    m = PREAMBLE_RE.match(text) if "preamble" not in off else None
    if m and m.end() > 0 and text[: m.end()].strip():
        removed.append(text[: m.end()].strip())
        text = text[m.end():]
    gone: tuple[str, ...] = ()
    if "clauses" not in off:
        text, gone = _remove_clauses(text)
    removed.extend(gone)
    abstained = bool(gone) and any(_ABSTENTION_RE_I.search(g) for g in gone)
    words = () if "rouge" in off else tuple(Counter(_ROUGE_TOKEN_RE.findall(text.lower())).items())
    a = analyze(text, markers="markers" not in off)
    all_content = [t for t in a.content if t not in DISCOURSE_WORDS] if "discourse" not in off else list(a.content)
    content = tuple(dict.fromkeys(all_content))
    ids = a.identifiers
    keys = tuple(None if t in ids else match_key(t) for t in content) if ids else tuple(match_keys(content))
    checks = _entity_checks(text, a, content, off) if "entities" not in off else ()
    speaker = _speaker(text, a.words) if "speaker" not in off else ()
    empty = not content and not speaker and not removed
    return _ClaimView(text, tuple(removed), a, content, keys,
                      (tuple(sorted(a.numbers)) if a.numbers else ()) if "numbers" not in off else (),
                      (tuple(sorted(ids)) if ids else ()) if "identifiers" not in off else (),
                      (tuple((n, match_key(n)) for n in sorted(a.names)) if a.names else ())
                      if "names" not in off else (),
                      abstained, len(all_content), speaker, words, sum(n for _, n in words), checks, empty)


def _entity_checks(text: str, a: Analysis, content: tuple[str, ...],
                   off: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """(stem, key) of what the ``entities`` rule checks: sentence-initial capitalised words, the names when
    the ``names`` rule is off, and -- Chinese and Japanese have no capitals -- every CJK content word."""
    stems = set(a.initials)
    if "names" in off:
        stems |= a.names
    if not text.isascii() and has_cjk(text):
        stems.update(t for t in content if has_cjk(t))
    return tuple((n, match_key(n)) for n in sorted(stems) if n not in DISCOURSE_WORDS) if stems else ()


_NO_SPEAKER: tuple[str, ...] = ()
_QUESTION: tuple[str, ...] = ("?",)


def _speaker(text: str, words: tuple[str, ...]) -> tuple[str, ...]:
    if SPEAKER_WORDS.isdisjoint(words):  # most claims: one pass in C
        return _QUESTION if "?" in text else _NO_SPEAKER
    items = tuple(w for w in words if w in SPEAKER_WORDS)
    return (*items, "?") if "?" in text else items


def clean_claim(claim: str) -> str:
    """The claim after step 1 of support (preamble, abstention and pleasantry
    clauses removed; markers are removed later, by tokenisation)."""
    return _claim_view(claim, _QA_OFF).cleaned

def _view(claim: str, off: Iterable[str], kind: str | None) -> _ClaimView:
    if not off and kind == DEFAULT_KIND:
        return _claim_view(claim, _QA_OFF)
    return _claim_view(claim, _rules_off(off, kind))


def is_abstention(text: str) -> bool:
    """Whether a response (or claim) abstains: a conservative refusal detector.

    True when (a) a clause with one of :data:`ABSTENTION_PATTERNS` ("I don't
    know", "I couldn't find", "the knowledge base does not cover", "no
    information about", "unable to answer", "is not mentioned in", "outside
    the scope" ...) is found after the answer preamble and (b) the rest of the
    text -- preamble, abstention and pleasantry clauses removed, as in
    :func:`clean_claim` -- holds no number or identifier and at most
    :data:`ABSTENTION_MAX_CONTENT` (12) content tokens.  Condition (b) keeps
    answers that refuse and then answer anyway ("the docs don't say, but the
    limit is 7 attempts") from counting as abstentions.
    """
    return _is_abstention(text)


#: An abstaining text may keep at most this many content tokens besides its
#: abstention and pleasantry clauses (and no number or identifier).
ABSTENTION_MAX_CONTENT = 12


def _abstains(views: Sequence[_ClaimView]) -> bool:
    if not any(v.abstained for v in views):
        return False
    if any(v.analysis.numbers or v.analysis.identifiers for v in views):
        return False
    return sum(v.n_content for v in views) <= ABSTENTION_MAX_CONTENT


@lru_cache(maxsize=4_096)
def _is_abstention(text: str) -> bool:
    low = text.lower()
    if not _may_trigger(low.replace("’", "'")):
        return False
    return _abstains([_claim_view(text, _QA_OFF)])
