"""Step 1 of support: the text of a claim that asserts nothing about the world.

A leading answer preamble (:data:`PREAMBLE_RE`: "Based on the provided passages, ...", "Here are the
steps ...:", "Sure!"), and every clause that is an abstention or a pleasantry
(:data:`ABSTENTION_PATTERNS`, :data:`PLEASANTRY_PATTERNS`: "the passages do not mention ...", "unable
to answer", "I hope this helps").  A clause runs between ``. ! ? ; : ,`` followed by a space, brackets
and line breaks (:func:`_remove_clauses`).  The patterns are written in lower case and matched on
lower-cased text, behind a cheap substring pre-check (:func:`_may_trigger`).
"""
from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence

__all__ = ["ABSTENTION_PATTERNS", "CLAUSE_FIRST_LETTERS", "PLEASANTRY_PATTERNS", "PREAMBLE_RE"]

#: Leading answer preambles removed from claims (up to the first colon of a
#: "here is/are" lead-in, or a leading "based on / according to the passages,").
PREAMBLE_RE = re.compile(
    r"""^\s*(?:(?:sure|certainly|of\ course)[!,.]?\s*)?
    (?:(?:based\ on|according\ to|from|using)\s+(?:the|these|this|your)\s+(?:\w+\s+){0,2}?
       (?:passages?|information|context|sources?|texts?|articles?|documents?|excerpts?|knowledge\ base)
       \s*,?\s*)?
    (?:here(?:'s|\ is|\ are)[^:\n]*:)?""",
    re.I | re.X,
)

_SRC = (r"(?:the\s+)?(?:provided\s+|given\s+)?(?:passages?|context|articles?|texts?|sources?|documents?|"
        r"documentation|docs|excerpts?|search\s+results?|knowledge\s+base|information(?:\s+provided)?)")
_NOT = r"(?:do(?:es)?|did)\s*(?:not|n't)"

#: Phrases of an abstention (refusal to answer): regular expressions, case-
#: insensitive.  Used by :func:`is_abstention` and removed (whole clause) from
#: claims before support is scored.
ABSTENTION_PATTERNS: tuple[str, ...] = (
    r"\bi\s+(?:do\s*(?:not|n't)|don't)\s+know\b",
    r"\bi\s*(?:'m|\s+am)\s+not\s+(?:able|sure)\s+(?:to\s+)?(?:answer|find|say)\b",
    r"\bi\s+(?:could\s*(?:not|n't)|can(?:\s*not|'t)|cannot|was\s+unable\s+to|am\s+unable\s+to|"
    r"did\s*(?:not|n't))\s+(?:find|locate|see|answer|determine)\b",
    r"\b(?:unable|not\s+able)\s+to\s+(?:answer|find|determine|provide\s+an?\s+answer)\b",
    rf"\b{_SRC}\s+(?:{_NOT}|lacks?|has\s+no|have\s+no)\s+(?:\w+ly\s+)?"
    r"(?:provide|mention|say|specify|contain|include|state|give|address|discuss|cover|"
    r"offer|explain|list|describe|have|answer)\b",
    r"\b(?:it|they|this|these)\s+(?:do(?:es)?|did)\s*(?:not|n't)\s+(?:\w+ly\s+)?"
    r"(?:mention|say|specify|state|address|discuss|explain|describe|cover|document|give|list|"
    r"provide\s+(?:\w+\s+){0,2}(?:information|details?|guid\w+|instructions?|data|answers?|specifics))\b",
    rf"\b{_SRC}\s+(?:has|have|contains?|holds?)\s+no\b",
    r"\bno\s+(?:specific\s+|relevant\s+|further\s+)?(?:information|mention|details?|data|record)\s+"
    r"(?:about|on|of|regarding|for|in)\b",
    r"\bthere\s+is\s+no\s+(?:\w+\s+)?(?:information|mention|answer)\b",
    r"\b(?:is|are)\s+not\s+(?:clear|specified|mentioned|provided|stated|covered|documented)\s+"
    r"(?:in|from|by)\b",
    r"\bit\s+is\s+(?:not|un)clear\s+(?:from|in|based|how|what|whether|which|if)\b",
    r"\bcannot\s+be\s+(?:determined|answered|found)\b",
    r"\b(?:outside|beyond)\s+(?:the\s+)?(?:scope|knowledge\s+base)\b",
    r"\b(?:i|we)\s+(?:do\s*(?:not|n't)|don't)\s+have\s+(?:any\s+)?(?:information|access|data|details)\b",
    # refusals as models phrase them: "I cannot provide an answer", "unable to give a definitive response"
    r"\b(?:can\s*not|can't|could\s*(?:not|n't)|unable\s+to|not\s+able\s+to)\s+(?:provide|give|offer)\s+"
    r"(?:you\s+(?:with\s+)?)?(?:an?\s+|any\s+|the\s+)?(?:\w+\s+){0,2}?(?:answer|response|information|details?)\b",
    r"\b(?:not|n't)\s+(?:possible|enough\s+information)\s+to\s+(?:answer|determine|say|tell|know)\b",
    r"\b(?:not\s+enough|insufficient|no\s+sufficient)\s+(?:information|context|details?|data)\b",
)
#: Conversational pleasantries removed (whole clause) from claims.
PLEASANTRY_PATTERNS: tuple[str, ...] = (
    r"\bhope\s+(?:this|that|it)\s+helps\b",
    r"\bfeel\s+free\s+to\b",
    r"\blet\s+me\s+know\b",
    r"\bif\s+you\s+have\s+any\s+(?:further\s+|other\s+|more\s+|additional\s+)?questions\b",
    # "Sure, I can help you with that!", "I'd be happy to help", "Great question"
    r"\b(?:i\s+can|i'd\s+be\s+(?:happy|glad)\s+to|i\s+am\s+(?:happy|glad)\s+to|happy\s+to|glad\s+to)\s+"
    r"(?:help|assist)(?:\s+you)?(?:\s+with\s+(?:that|this|it|your\s+question))?(?=\s*[!.,;:]|\s*$)",
    r"\bgreat\s+question\b",
)
#: Every pattern of :data:`ABSTENTION_PATTERNS` and :data:`PLEASANTRY_PATTERNS`
#: starts with ``\b`` and then one of these letters (a test matches each pattern
#: on an example and compares the combined expressions with a plain alternation).
CLAUSE_FIRST_LETTERS = "abcdefghiklnopstuw"


def _alternatives(patterns: Sequence[str]) -> str:
    r"""One expression that matches where the first of ``patterns`` to match does, with the same
    span: ``\b``, a look-ahead for :data:`CLAUSE_FIRST_LETTERS`, then the patterns without their
    ``\b``.  Checking the letter first spares the engine trying every alternative at every word
    start (9.1 -> 5.5 us per claim that reaches the expression)."""
    if not all(p.startswith(r"\b") for p in patterns):
        raise ValueError("every abstention and pleasantry pattern must start with \\b")
    return rf"\b(?=[{CLAUSE_FIRST_LETTERS}])(?:" + "|".join(f"(?:{p[2:]})" for p in patterns) + ")"


# The patterns are written in lower case and applied to lower-cased text (much
# faster than re.I); :func:`_lower_same` falls back to re.I when lower-casing
# changes the length of the text (rare non-ASCII letters).
_REMOVABLE_RE = re.compile(_alternatives(ABSTENTION_PATTERNS + PLEASANTRY_PATTERNS))
_ABSTENTION_RE_I = re.compile(_alternatives(ABSTENTION_PATTERNS), re.I)
_REMOVABLE_RE_I = re.compile(_REMOVABLE_RE.pattern, re.I)
# Every abstention or pleasantry pattern contains one of these substrings: a
# text without any of them cannot match (a cheap pre-check).
_TRIGGERS: tuple[str, ...] = ("not", "n't", "unable", "lack", "no ", "no\n", "unclear",
                              "outside", "beyond", "hope", "free", "let me", "question", "insufficient",
                              "help", "assist")
# Clause boundaries: sentence punctuation, a comma, colon or semicolon
# followed by space or the end, line breaks, brackets.
_DELIM_RE = re.compile(r"[.!?:;,](?=\s|$)|[\n()\[\]]")


def _lower_same(text: str) -> tuple[str, bool]:
    low = text.lower()
    return low, len(low) == len(text)


def _may_trigger(low: str) -> bool:
    """Whether ``low`` holds any of :data:`_TRIGGERS`: one ``in`` per trigger, written out (half the
    instructions of ``any(map(low.__contains__, _TRIGGERS))``; a test checks it against the tuple)."""
    return ("not" in low or "n't" in low or "unable" in low or "lack" in low or "no " in low or "no\n" in low
            or "unclear" in low or "outside" in low or "beyond" in low or "hope" in low or "free" in low
            or "let me" in low or "question" in low or "insufficient" in low or "help" in low or "assist" in low)


def _remove_clauses(text: str) -> tuple[str, tuple[str, ...]]:
    """Remove every clause (text between :data:`_DELIM_RE` boundaries, its
    closing delimiter included) that contains an abstention or pleasantry."""
    low, same = _lower_same(text)
    if not _may_trigger(low if same else text.lower()):
        return text, ()
    rx, target = (_REMOVABLE_RE, low) if same else (_REMOVABLE_RE_I, text)
    matches = list(rx.finditer(target))
    if not matches:
        return text, ()
    delims = [m.start() for m in _DELIM_RE.finditer(text)]
    spans: list[tuple[int, int]] = []
    for m in matches:
        i = bisect_left(delims, m.start())
        a = delims[i - 1] + 1 if i > 0 else 0
        j = bisect_left(delims, m.end())
        b = delims[j] + 1 if j < len(delims) else len(text)
        if spans and a <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(b, spans[-1][1]))
        else:
            spans.append((a, b))
    removed = tuple(text[a:b].strip() for a, b in spans if text[a:b].strip())
    out, last = [], 0
    for a, b in spans:
        out.append(text[last:a])
        out.append(" ")
        last = b
    out.append(text[last:])
    return "".join(out), removed
