"""Normalisation of model output before any scoring rule (the *artefacts* rule of support).

Real model answers carry text that is formatting, not content.  Left in, it
breaks the exact-item rules: ``</s>`` tokenises as the path ``/s`` (an
identifier no context holds, so the claim scores 0), ``**Note:**`` hides a
sentence start, a URL is an identifier no passage spells the same way.
:func:`normalise_output` removes or rewrites it, each by one rule, in this order:

1. **Unicode** (:data:`UNICODE_MAP`, then NFKC): curly quotes become ``'`` and
   ``"``; en and em dashes, minus signs and non-breaking hyphens become
   ``" - "`` (a dash between words is a pause, between numbers a range: both
   are two tokens); non-breaking, narrow and ideographic spaces become spaces;
   zero-width characters and the byte-order mark are removed; then Unicode NFKC
   (full-width letters, ligatures ``ﬁ``, ``…`` -> ``...``, superscript digits); finally Latin letters
   lose their diacritics (:data:`FOLD_DIACRITICS`: ``é`` -> ``e``; contexts are folded the same way).
   HTML character references (``&rsquo;``, ``&amp;``, ``&#39;``) are decoded
   first (:func:`html.unescape`).
2. **Chat-template tokens** (:data:`CHAT_TOKEN_RE`): special and end-of-sequence
   tokens of common chat templates -- ``<s>``, ``</s>``, ``<unk>``, ``<pad>``,
   ``<eos>``, ``<bos>``, every ``<|...|>`` token (``<|im_end|>``,
   ``<|eot_id|>``, ``<|endoftext|>``, ``<|assistant|>``; with the role name of a
   ``<|start_header_id|>ROLE<|end_header_id|>`` header), ``[INST]``,
   ``[/INST]``, ``<<SYS>>``, ``<</SYS>>``, ``<start_of_turn>`` /
   ``<end_of_turn>`` (with the role after a start, as after ``<|im_start|>``), ``<think>`` / ``</think>``
   -- become a line break (a sentence boundary).
3. **URLs** (:data:`URL_RE`): ``http://``, ``https://``, ``ftp://`` and
   ``www.`` addresses are removed, with the brackets and pointer word around
   one (``(see https://...)``, ``(source: www...)``); a markdown link
   ``[text](url)`` or image ``![alt](url)`` keeps its text.  A URL is a pointer, not a claim about the
   world, and no passage spells it the same way: it is excluded from the
   exact-item rules.
4. **Markdown**: emphasis ``**x**``, ``__x__``, ``*x*``, strikethrough
   ``~~x~~`` and single ``_x_`` keep their text (an underscore counts only
   at a word's edge, around text without underscores, so ``snake_case``,
   ``__init__`` and ``_private`` are untouched); headings ``# ...`` to ``###### ...``, block quotes ``> ...`` and
   horizontal rules (``---``, ``***``, ``___`` alone on a line) lose their
   marker and end a sentence; table pipes ``|`` and alignment rows become
   spaces.  Backtick code spans are kept: they mark identifiers
   (:mod:`playground.harness.tokens`, rule 3).

Slash-joined word lists ("pants/jeans/shorts") are not handled here but by the
tokeniser: a ``/``-joined word whose parts are all letters is split into its
words (:func:`playground.harness.token_words._is_identifier`), as are
``-``-joined words (unless written in capitals, ``TW-ENT-HIPAA``).

Text without any trigger of these rules (:func:`_may_need`: ASCII, and none of
``< INST] ]( * _ # > | ~ & :// www.`` in it) is returned unchanged without running a
regular expression: the cost on clean text is a few substring searches.
"""
from __future__ import annotations

import html
import re
import unicodedata

__all__ = ["CHAT_TOKEN_RE", "FOLD_DIACRITICS", "UNICODE_MAP", "URL_RE", "normalise_output"]

#: Characters rewritten before NFKC (rule 1).
UNICODE_MAP: dict[int, str] = {
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u00b4\u0060\u02bc"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"), '"'),
    **dict.fromkeys(map(ord, "\u2013\u2014\u2015\u2212\u2011\u2012"), " - "),
    **dict.fromkeys(map(ord, "\u00a0\u2007\u202f\u3000\u2009\u200a\u2002\u2003"), " "),
    **dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"), ""),
}
# The grave accent is a backtick: code spans must survive, so it is not mapped.
del UNICODE_MAP[ord("`")]

#: Special tokens of common chat templates (rule 2), matched case-insensitively.
CHAT_TOKEN_RE = re.compile(
    r"<\|start_header_id\|>\s*\w*\s*<\|end_header_id\|>"
    r"|<start_of_turn>\s*(?:user|model|assistant|system)?"
    r"|<\|im_start\|>\s*(?:user|assistant|system)?"
    r"|<\|[a-z_][\w.-]*\|>"
    r"|</?(?:s|unk|pad|eos|bos|think|end_of_turn)>"
    r"|\[/?INST\]|<</?SYS>>",
    re.I,
)
#: URLs (rule 3): a scheme or ``www.`` and everything up to a space, closing bracket or quote,
#: without trailing sentence punctuation.
URL_RE = re.compile(r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>()\[\]\"']*[^\s<>()\[\]\"'.,;:!?]")
# A URL in brackets with a pointer word ("(see https://...)", "(source: www...)"): removed whole.
_URL_PAREN_RE = re.compile(r"\(\s*(?:(?:see|source|sources|ref|reference|more|via|visit|at|from)\b:?\s*)?"
                           r"(?:(?:https?|ftp)://|www\.)[^)\s]*\s*\)")
_MD_LINK_RE = re.compile(r"!?\[([^\]\n]*)\]\(\s*[^)\s]*\s*\)")
_MD_EMPH_RE = re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1|(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=\S)\*(?![\w*])")
_MD_LINE_RE = re.compile(r"(?m)^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|(?:[-*_][ \t]*){3,}$)")
_MD_TABLE_RE = re.compile(r"(?m)^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*(?::?-{3,}:?)?[ \t]*$|\|")
# Single-underscore emphasis ``_x y_``: only around text without underscores, after a space, a bracket or a
# quote and before a space or punctuation, so ``snake_case``, ``__init__`` and ``_private`` are untouched.
_MD_UNDERSCORE_RE = re.compile(r"(?<![\w_])_(?=[^\s_])([^_\n]*?[^\s_])_(?![\w_])")


def _fold_table() -> dict[int, str]:
    """Latin letters with diacritics -> their base letters (``é`` -> ``e``, ``Ø`` -> ``O``, ``ß`` -> ``ss``),
    from their canonical decomposition; other scripts are left alone (a kana's voicing mark is a letter)."""
    table: dict[int, str] = {}
    for code in range(0xC0, 0x250):
        base = "".join(c for c in unicodedata.normalize("NFD", chr(code)) if not unicodedata.combining(c))
        if base != chr(code) and base.isascii() and base.isalpha():
            table[code] = base
    table.update({ord("ß"): "ss", ord("Ø"): "O", ord("ø"): "o", ord("Æ"): "AE", ord("æ"): "ae", ord("Œ"): "OE",
                  ord("œ"): "oe", ord("Ł"): "L", ord("ł"): "l", ord("Đ"): "D", ord("đ"): "d", ord("ı"): "i"})
    return table


#: Latin letters with diacritics and their base letters: claims (:func:`normalise_output`) and contexts
#: (:func:`playground.harness.token_keys.context_keys`) are both folded, so ``São Paulo`` matches ``Sao Paulo``.
FOLD_DIACRITICS: dict[int, str] = _fold_table()

_TRIGGERS = ("<", "INST]", "](", "*", "_", "#", ">", "|", "~", "&", "://", "www.")


def _may_need(text: str) -> bool:
    """False when no rule can apply: ASCII text without any of :data:`_TRIGGERS` in it.

    Written out as one ``in`` per trigger (an ``in`` is one bytecode; ``any(map(text.__contains__, ...))``
    calls a method wrapper per trigger: 9.2 k against 4.2 k instructions per clean 120-character claim
    under callgrind).  A test checks it against :data:`_TRIGGERS`."""
    return (not text.isascii() or "<" in text or "INST]" in text or "](" in text or "*" in text or "_" in text
            or "#" in text or ">" in text or "|" in text or "~" in text or "&" in text or "://" in text
            or "www." in text)


def _unicode(text: str) -> str:
    if "&" in text and ";" in text:
        text = html.unescape(text)
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text.translate(UNICODE_MAP)).translate(FOLD_DIACRITICS)


def _markdown(text: str) -> str:
    if "](" in text:
        text = _MD_LINK_RE.sub(r"\1", text)
    if "*" in text or "__" in text or "~~" in text:
        text = _MD_EMPH_RE.sub(lambda m: m.group(2) if m.group(2) is not None else m.group(3), text)
    if "_" in text:
        text = _MD_UNDERSCORE_RE.sub(r"\1", text)
    if "#" in text or ">" in text or "---" in text or "***" in text or "___" in text:
        text = _MD_LINE_RE.sub("\n", text)
    if "|" in text:
        text = _MD_TABLE_RE.sub(" ", text)
    return text


def normalise_output(text: str) -> str:
    """``text`` with the artefacts of model output normalised or removed (module docstring, rules 1-4)."""
    if not _may_need(text):
        return text
    text = _unicode(text)
    if "<" in text or "INST]" in text:  # every chat token has one of these
        text = CHAT_TOKEN_RE.sub("\n", text)
    text = _markdown(text)
    if "://" in text or "www." in text:
        text = URL_RE.sub(" ", _URL_PAREN_RE.sub(" ", text) if "(" in text else text)
    return text
