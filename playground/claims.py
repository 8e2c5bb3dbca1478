"""Deterministic claim splitter: a response becomes a list of sentences.

Rules, applied left to right over the text:

1. A sentence ends at ``.``, ``!`` or ``?`` (with any closing quotes or
   brackets right after it) when whitespace and then an upper-case letter,
   a digit, a quote, an opening bracket other than a citation marker, a list
   marker or the end of the text follow.  ``3.5`` or ``v2.1`` never split
   (no whitespace after the dot).
2. A dot that closes a known abbreviation (``e.g.``, ``i.e.``, ``vs.``,
   ``approx.``, ``Dr.``, ``No.`` …) or a single-letter initial does not end a
   sentence; ``etc.`` ends one only when an upper-case letter follows.
3. Citation markers (``[1]``, ``[2, 3]``, ``[1][4]``) that follow a sentence
   end belong to that sentence: "Retries are capped at 5. [2] Then …" yields
   "Retries are capped at 5. [2]".
4. A blank line, or a line break followed by a list marker (``-``, ``*``,
   ``•``, ``1.``), always ends a sentence; the ``1.`` of a list item is not
   a sentence end itself.

Offsets (``start``/``end``) index the original text, so
``text[claim.start:claim.end] == claim.text`` for every claim.
"""
from __future__ import annotations

import re

from .model import Claim

__all__ = ["split_claims"]


_ABBREVIATIONS = frozenset(
    {
        "e.g.", "i.e.", "vs.", "approx.", "cf.", "dr.", "mr.", "mrs.", "ms.",
        "no.", "nos.", "fig.", "inc.", "ltd.", "co.", "jr.", "sr.", "st.",
        "u.s.", "u.k.", "ext.", "ref.", "a.m.", "p.m.", "ca.", "est.", "dept.", "min.", "max.",
    }
)
_CITATION = re.compile(r"\s*(\[\d+(?:\s*,\s*\d+)*\])+")
_HARD_BREAK = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:[-*•]|\d+[.)])\s)")
_LIST_NUMBER = re.compile(r"(?:^|\n)[ \t]*\d+[.)]$")
_END = re.compile(r"[.!?]+[\"'”’)\]]*")


def _is_abbreviation(text: str, dot: int) -> bool:
    """True when the ``.`` at ``dot`` closes an abbreviation or an initial."""
    start = dot
    while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "([\"'":
        start -= 1
    token = text[start : dot + 1].lower()
    if token in _ABBREVIATIONS:
        return True
    # A single-letter initial such as "J." in "J. Smith".
    return len(token) == 2 and text[start].isalpha() and text[start].isupper()


def _sentence_ends(segment: str) -> list[int]:
    """End offsets (exclusive) of the sentences inside one hard-broken segment."""
    ends: list[int] = []
    for match in _END.finditer(segment):
        end = match.end()
        citation = _CITATION.match(segment, end)
        if citation:
            end = citation.end()  # "[2]" after the sentence end belongs to it
        rest = segment[end:]
        if rest and not rest[0].isspace():
            continue  # "3.5", "v2.1", "example.com"
        following = rest.lstrip()
        if not following:
            continue  # the segment's end closes the sentence anyway
        if _LIST_NUMBER.search(segment, 0, match.end()):
            continue  # "1." opening a numbered list item
        if (
            segment[match.start()] == "."
            and match.end() - match.start() == 1
            and _is_abbreviation(segment, match.start())
        ):
            token_start = segment.rfind(" ", 0, match.start()) + 1
            if segment[token_start : match.end()].lower() != "etc." or not following[0].isupper():
                continue
        nxt = following[0]
        if nxt.isupper() or nxt.isdigit() or nxt in "\"'“‘(-*•[":
            ends.append(end)
    return ends


def split_claims(text: str, response_id: str = "") -> list[Claim]:
    """Split ``text`` into claims (see the module docstring for the rules)."""
    claims: list[Claim] = []
    segment_start = 0
    boundaries = [m.start() for m in _HARD_BREAK.finditer(text)] + [len(text)]
    for boundary in boundaries:
        segment = text[segment_start:boundary]
        piece_start = 0
        for end in [*_sentence_ends(segment), len(segment)]:
            piece = segment[piece_start:end]
            stripped = piece.strip()
            if stripped:
                start = segment_start + piece_start + (len(piece) - len(piece.lstrip()))
                claims.append(Claim(response_id, len(claims), stripped, start, start + len(stripped)))
            piece_start = end
        segment_start = boundary
    return claims
