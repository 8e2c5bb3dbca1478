"""Citation and list markers of claims (rule 1 of :mod:`playground.harness.tokens`).

:func:`strip_markers` removes ``[3]``, ``(Passage 2)``, ``passage 2`` / ``Passage 2:`` (also
source/document; lower, title or upper case), ``Step 4:``, list numbers such as ``2.`` at the start
of a line or after a sentence end, enumerators in brackets (``(1)``, ``(b)``, ``(iv)``) at the text start
or after a space, and bullets: formatting, not content.  Each marker becomes
``" \\n"``, so the next word counts as a sentence start.  Each pattern runs only when the text holds
a substring it needs.
"""
from __future__ import annotations

import re

__all__ = ["strip_markers"]

_SRCWORD = r"(?:[Pp]assages?|PASSAGES?|[Ss]ources?|SOURCES?|[Dd]ocuments?|DOCUMENTS?|[Dd]oc)"
# The marker patterns, each with substrings one of which it needs (the regex
# runs only when one is present; see strip_markers).
_MARKERS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    (("[",), re.compile(r"\[\s*\d+(?:\s*[,\-]\s*\d+)*\s*\]")),
    (("(",), re.compile(rf"\(\s*{_SRCWORD}\s*\d+(?:\s*(?:,|and|&)\s*\d+)*\s*\)")),
    (("assage", "ASSAGE", "ource", "OURCE", "ocument", "OCUMENT", "oc ", "OC "),
     re.compile(rf"\b{_SRCWORD}\s+\d+(?:\s*(?:,|and|&)\s*\d+)*\b\s*:?")),
    (("tep", "TEP"), re.compile(r"\b(?:[Ss]tep|STEP)\s+\d+\s*[:.]")),
    ((".", ")"), re.compile(r"(?:^|(?<=[\n.!?:;)])|(?<=[.!?:;)]\s))\s*\d{1,2}[.)](?=\s|$)")),
    # (?m)^: at the text start or after a line break
    (("\n", "*", "•", "-"), re.compile(r"(?m)^[ \t]*[*\-•][ \t]+")),
    # "(1) " / "(b) ": an enumerator in brackets at the text start or after a space, before a space
    (("(",), re.compile(r"(?:^|(?<=\s))\((?:\d{1,2}|[a-z]|[ivx]{1,4})\)(?=\s|$)")),
)
# A list number at the text start, or after a line or sentence end (split in
# two patterns: a search led by a character class is much faster).
_LIST_HINT_START_RE = re.compile(r"\s*\d{1,2}[.)](?:\s|$)")
_LIST_HINT_RE = re.compile(r"[\n.!?:;)]\s*\d{1,2}[.)](?:\s|$)")
_BULLETS = ("*", "-", "•")
_BULLET_LEAD = (" ", "\t", *_BULLETS)


def strip_markers(text: str) -> str:
    """Remove citation and list markers (``[3]``, ``(Passage 2)``, ``passage
    2``, ``Step 4:``, ``2.`` at a line or sentence start, ``(1)`` / ``(b)`` after a space, bullets); each
    becomes ``" \\n"`` so the next word counts as a sentence start."""
    cite, paren, src, step, listnum, bullet, enum = _MARKERS
    if "[" in text:
        text = cite[1].sub(" \n", text)
    if "(" in text:
        text = enum[1].sub(" \n", paren[1].sub(" \n", text))
    if any(map(text.__contains__, src[0])):
        text = src[1].sub(" \n", text)
    if "tep" in text or "TEP" in text:
        text = step[1].sub(" \n", text)
    # the two hints match wherever the list-number pattern can (at the text start;
    # after a line or sentence end)
    if _LIST_HINT_START_RE.match(text) or _LIST_HINT_RE.search(text):
        text = listnum[1].sub(" \n", text)
    if _has_bullet(text):
        text = bullet[1].sub(" \n", text)
    return text


def _has_bullet(text: str) -> bool:
    """Whether a line of ``text`` starts with spaces or tabs and a bullet (only
    there can the bullet pattern match)."""
    for line in text.split("\n") if "\n" in text else (text,):
        if line[:1] in _BULLET_LEAD and line.lstrip(" \t")[:1] in _BULLETS:
            return True
    return False

