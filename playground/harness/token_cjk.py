"""Word segmentation of Chinese and Japanese text (rule 2 of :mod:`playground.harness.tokens`, before tokens).

Chinese and Japanese are written without spaces, so the token expression would read a whole clause as one
word and a supported paraphrase would share no word with its passage.  :func:`segment_cjk` puts a space
around every word of each run of CJK characters, and leaves every other character as it is: claims
(:func:`playground.harness.tokens.analyze`) and contexts
(:func:`playground.harness.token_keys.context_keys`) are segmented the same way.

* **Chinese** (a run with Han characters and no kana): ``jieba`` (its shipped dictionary and its HMM for
  words not in it; deterministic: the same text gives the same words).
* **Japanese** (a run with hiragana or katakana): ``tinysegmenter``, a pure-Python segmenter of about
  25 KB (a fixed, trained model; no dictionary to download).  A heavier morphological analyser (MeCab
  through fugashi, janome) would split better but brings a dictionary of tens of megabytes.

Function words of both languages (:data:`CJK_STOPWORDS`: particles, copulas, the possessive ``的``) are
stopwords (:data:`playground.harness.token_words.STOPWORDS` includes them).  The segmenters are imported on
the first CJK text, so English-only use does not pay for them.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Callable
from functools import lru_cache

__all__ = ["CJK_STOPWORDS", "has_cjk", "segment_cjk"]

# Han ideographs (with extension A and compatibility ideographs), hiragana and katakana.
_CJK_RUN_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u30fc]+")
_KANA_RE = re.compile(r"[\u3040-\u30ff]")

#: Chinese and Japanese function words: stopwords for coverage.
CJK_STOPWORDS: frozenset[str] = frozenset([
    "的", "了", "是", "在", "和", "与", "及", "也", "就", "都", "而", "把", "被", "这", "那", "个",
    "之", "于", "以", "其", "着", "过", "吗", "呢", "吧", "啊", "并", "或", "由", "从", "对", "将", "为",
    "は", "が", "を", "に", "で", "と", "の", "へ", "も", "や", "か", "から", "まで", "より",
    "です", "ます", "でした", "だ", "た", "て", "し", "な", "ね", "よ", "この", "その", "あの",
    "これ", "それ", "あれ", "する", "します", "した", "いる", "います", "ある", "あります",
])


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Chinese or Japanese character (a Han ideograph or kana)."""
    return _CJK_RUN_RE.search(text) is not None


@lru_cache(maxsize=8_192)
def segment_cjk(text: str) -> str:
    """``text`` with a space around every word of its Chinese and Japanese runs (module docstring)."""
    return _CJK_RUN_RE.sub(_segment_run, text)


def _segment_run(m: re.Match[str]) -> str:
    run = m.group()
    words = _japanese()(run) if _KANA_RE.search(run) else _chinese()(run)
    return " " + " ".join(w for w in words if w.strip()) + " "


@lru_cache(maxsize=1)
def _chinese() -> Callable[[str], list[str]]:
    import jieba

    jieba.setLogLevel(logging.WARNING)  # its dictionary-loading notice is not ours to print
    lcut: Callable[[str], list[str]] = jieba.lcut
    return lcut


@lru_cache(maxsize=1)
def _japanese() -> Callable[[str], list[str]]:
    import tinysegmenter

    tokenize: Callable[[str], list[str]] = tinysegmenter.TinySegmenter().tokenize
    return tokenize
