"""The word-level rules of the tokeniser (:mod:`playground.harness.tokens`, rules 2-7).

The fixed word lists (:data:`STOPWORDS`, :data:`NEGATIONS`, :data:`NON_NAME_CAPITALS`,
:data:`NUMBER_WORDS`), the token expression :data:`TOKEN_RE` (rule 2), a number's value
(:func:`number_value`: ``"$1,000.50"`` -> ``"1000.5"``), the light stemmer (:func:`stem`, rule 7),
what is an identifier (rule 3), and the facts of one surface word token wherever it stands (its
pieces, content tokens, number values, negations, name stems; cached, bounded by
:data:`CACHE_SIZES`).  Pure functions of strings.
"""
from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

from playground.harness.token_cjk import CJK_STOPWORDS

__all__ = [
    "CACHE_SIZES",
    "MAGNITUDE_SUFFIXES",
    "NEGATIONS",
    "NON_NAME_CAPITALS",
    "NUMBER_WORDS",
    "PREFIX_LEN",
    "STOPWORDS",
    "TOKEN_RE",
    "compound_number",
    "number_value",
    "stem",
]

#: Fixed English stopword list (function words, auxiliaries, pronouns), and the Chinese and Japanese
#: function words of :data:`playground.harness.token_cjk.CJK_STOPWORDS`.
#: Numbers are never stopwords.
STOPWORDS: frozenset[str] = frozenset(
    [
        "a", "about", "above", "after", "again", "against", "all", "almost", "also", "although", "always", "am",
        "among", "an", "and", "another", "any", "anyone", "anything", "are", "aren't", "around", "as", "at", "be",
        "became", "because", "become", "been", "before", "being", "below", "between", "both", "but", "by", "can",
        "cannot", "could", "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "done", "down",
        "during", "each", "either", "else", "etc", "even", "ever", "every", "few", "for", "from", "further", "get",
        "gets", "getting", "got", "had", "hadn't", "has", "hasn't", "have", "haven't", "having", "he", "her", "here",
        "hers", "herself", "him", "himself", "his", "how", "however", "i", "if", "in", "into", "is", "isn't", "it",
        "it's", "its", "itself", "just", "let", "like", "made", "make", "makes", "many", "may", "me", "might", "more",
        "most", "much", "must", "my", "myself", "neither", "no", "nor", "not", "of", "off", "often", "on", "once",
        "one", "only", "or", "other", "others", "otherwise", "our", "ours", "ourselves", "out", "over", "own", "per",
        "perhaps", "quite", "rather", "really", "same", "several", "shall", "she", "should", "shouldn't", "since", "so",
        "some", "something", "such", "than", "that", "that's", "the", "their", "theirs", "them", "themselves", "then",
        "there", "there's", "therefore", "these", "they", "this", "those", "though", "through", "thus", "to", "too",
        "toward", "towards", "under", "until", "up", "upon", "us", "use", "used", "using", "very", "via", "was",
        "wasn't", "we", "well", "were", "weren't", "what", "when", "where", "whether", "which", "while", "who", "whom",
        "whose", "why", "will", "with", "within", "without", "won't", "would", "wouldn't", "yes", "yet", "you", "your",
        "yours", "yourself", "yourselves", "i'm", "i've", "i'd", "i'll", "you're", "you've", "we're", "they're", "he's",
        "she's", "let's",
        *CJK_STOPWORDS,
    ]
)

#: Negation words (stopwords for coverage; reported separately).
NEGATIONS: frozenset[str] = frozenset(
    ["not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "without", "cannot"]
)

#: Capitalised words that are not names even outside sentence starts: common
#: title-case words of headings and list labels.
NON_NAME_CAPITALS: frozenset[str] = frozenset(
    [
        "step", "steps", "note", "tip", "tips", "example", "examples", "summary", "passage", "passages", "answer",
        "question", "conclusion", "overall", "first", "second", "third", "finally", "additionally", "also", "however",
    ]
)

#: Number words and their digit values.
NUMBER_WORDS: dict[str, str] = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16",
    "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
    "eighty": "80", "ninety": "90", "dozen": "12",
}

#: Units that follow a tens word in a hyphenated number word (``twenty-one`` .. ``ninety-nine``):
#: ``one`` is a stopword on its own, so it is only here.
_UNIT_WORDS: dict[str, int] = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                               "eight": 8, "nine": 9}
_TENS_WORDS: frozenset[str] = frozenset({"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                         "ninety"})


def compound_number(parts: list[str] | tuple[str, ...]) -> str | None:
    """The value of a hyphenated number word given as its two lower-cased parts: a tens word and a unit
    (``["twenty", "four"]`` -> ``"24"``); None for anything else."""
    tens, unit = parts
    if tens in _TENS_WORDS and unit in _UNIT_WORDS:
        return str(int(NUMBER_WORDS[tens]) + _UNIT_WORDS[unit])
    return None


#: Length of the match key of alphabetic tokens (rule 8).
PREFIX_LEN = 5

_DATE = r"\d{4}-\d{2}-\d{2}\b"
_TIME = r"\d{1,2}:\d{2}(?::\d{2})?\b"
_PATH = r"(?:/[\w{}<>\-.]+)+/?"
_NUM = r"[$€£]?\d+(?:,\d{3})*(?:\.\d+)*(?:%|°?[A-Za-z]{1,3}\b|°)?"
_WORD = r"[^\W\d]\w*(?:[.\-'/:][^\W_]\w*)*"

#: The tokeniser (rule 2), with one named group per kind.
TOKEN_RE = re.compile(
    rf"(?P<date>{_DATE})|(?P<time>{_TIME})|(?P<path>{_PATH})|(?P<num>{_NUM})|(?P<word>{_WORD})"
)
# The same alternatives without groups, applied to lower-cased context text.
_FAST_RE = re.compile(rf"{_DATE}|{_TIME}|{_PATH}|{_NUM}|{_WORD}")
_NUM_CLEAN_RE = re.compile(r"[^\d.]")
_PIECE_SPLIT_RE = re.compile(r"[-/']")
_PART_SPLIT_RE = re.compile(r"[-./:']")
_CONSONANT_DOUBLES = frozenset("bdgkmnprt")


def number_value(token: str) -> str:
    """Canonical value of a number token: no currency, commas, unit or trailing
    decimal zeros (``"$1,000.50"`` -> ``"1000.5"``, ``"15s"`` -> ``"15"``,
    ``"007"`` -> ``"7"``, ``"$0.65"`` -> ``"0.65"``).  Versions with several
    dots are kept as written.  A magnitude suffix multiplies (:data:`MAGNITUDE_SUFFIXES`):
    ``k`` always (``"$1k"`` == ``"1,000"``, ``"5K"`` -> ``"5000"``), ``m``/``mn``/``b``/``bn`` only after
    a currency sign (``"$2.5m"`` -> ``"2500000"``; ``"5m"`` is five metres, value 5)."""
    if token.isascii() and token.isdigit():  # the common case, without the regex
        return token.lstrip("0") or "0"
    v = _NUM_CLEAN_RE.sub("", token)
    if v.count(".") > 1:
        return v
    unit = token[len(token.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")):].lower()
    factor = MAGNITUDE_SUFFIXES.get(unit) if unit else None
    if factor is not None and (unit == "k" or token[0] in "$€£"):
        return _scaled(v, factor)
    return _plain_value(v)


#: Magnitude suffixes of numbers and their powers of ten (:func:`number_value`).
MAGNITUDE_SUFFIXES: dict[str, int] = {"k": 3, "m": 6, "mn": 6, "b": 9, "bn": 9}


def _plain_value(v: str) -> str:
    if "." in v:
        whole, frac = v.split(".")
        frac = frac.rstrip("0")
        whole = whole.lstrip("0") or "0"
        return f"{whole}.{frac}" if frac else whole
    return v.lstrip("0") or "0"


def _scaled(v: str, power: int) -> str:
    """``v`` (digits with at most one dot) times ``10**power``, exactly (decimal shift, no float)."""
    whole, _, frac = v.partition(".")
    frac = frac.ljust(power, "0")
    return _plain_value(f"{whole}{frac[:power]}.{frac[power:]}" if frac[power:] else whole + frac[:power])


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Light deterministic stemmer (rule 7 of :mod:`playground.harness.tokens`)."""
    w = word
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses") or w.endswith(("ches", "shes", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suf in ("ingly", "edly", "ing", "ied", "ed", "ation", "ly"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            if suf == "ied":
                w += "y"
            elif len(w) >= 4 and w[-1] == w[-2] and w[-1] in _CONSONANT_DOUBLES:
                w = w[:-1]
            break
    if w.endswith("e") and len(w) >= 4 and not w.endswith("ee"):
        w = w[:-1]
    return w



def _is_identifier(tok: str) -> bool:
    if tok.isalpha():
        # camelCase: a capital right after a lower-case letter
        if tok.islower() or tok.isupper() or tok[1:].islower():
            return False
        return any(a.islower() and b.isupper() for a, b in pairwise(tok))
    if "_" in tok or ":" in tok:
        return True
    if any(map(str.isdigit, tok)):
        return True
    if "." in tok:
        return not all(len(p) == 1 for p in tok.split("."))
    if "/" in tok:  # a word list ("pants/jeans/shorts", "and/or") is split; "tcp/ip.v4" is kept
        return not all(p.isalpha() for p in tok.split("/"))
    if any(a.islower() and b.isupper() for a, b in pairwise(tok)):
        return True
    if "-" in tok:
        letters = tok.replace("-", "").replace("'", "")
        return len(letters) > 1 and letters.isupper()
    return False


def _pieces(tok: str) -> list[str]:
    """Lower-cased pieces of a non-identifier word token."""
    low = tok.lower()
    if low.isalpha():
        return [low]
    if "'" in low:
        if low.endswith("'s"):
            low = low[:-2]
        elif low.endswith("n't"):
            return ["not"]
    if "-" in low or "/" in low:
        return [p for p in _PIECE_SPLIT_RE.split(low) if p]
    if "." in low:  # abbreviation such as u.s: one piece without the dots
        return [low.replace(".", "")]
    return [low]


# Bounded caches.  The per-token and per-chunk tokenisers below are pure
# functions, cached in plain dicts (a hit is one dict lookup; functools.lru_cache
# costs about 0.1 us more per hit, and a text has hundreds of chunks).  A cache
# that reaches its size is emptied and starts again: memory stays bounded and new
# text is cached as before; outputs never depend on the cache.
#: Cache sizes (entries) of the per-token and per-chunk tokenisers.
CACHE_SIZES: dict[str, int] = {"word_info": 65_536, "chunk_tokens": 131_072, "chunk_keys": 262_144,
                               "analyses": 8_192, "context_keys": 2_048, "match_keys": 65_536}

# Per-surface-token facts of a word token (independent of its position):
# (is_identifier, lower, pieces, content, numbers, negations, name_stems, all_caps)
_WordInfo = tuple[bool, str, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...],
                  tuple[str, ...] | None, bool]
_WORD_INFO: dict[str, _WordInfo] = {}


def _word_info(tok: str) -> _WordInfo:
    info = _WORD_INFO.get(tok)
    if info is not None:
        return info
    if _is_identifier(tok):
        low = tok.lower()
        info = (True, low, (low,), (low,), (), (), None, False)
    else:
        pieces = _pieces(tok)
        content: list[str] = []
        numbers: list[str] = []
        negs: list[str] = []
        compound = compound_number(pieces) if len(pieces) == 2 and pieces[0] in _TENS_WORDS else None
        if compound is not None:  # "twenty-four" is 24, not 20 and 4
            pieces = [compound]
            content.append(compound)
            numbers.append(compound)
        for piece in pieces if compound is None else ():
            if piece in NEGATIONS:
                negs.append(piece)
            if piece in NUMBER_WORDS:
                v = NUMBER_WORDS[piece]
                content.append(v)
                numbers.append(v)
            elif piece not in STOPWORDS:
                content.append(stem(piece))
        first = pieces[0] if pieces else ""
        name_stems = None
        all_caps = False
        if (compound is None and tok[0].isupper() and len(first) >= 2 and first not in STOPWORDS
                and first not in NON_NAME_CAPITALS and first not in NUMBER_WORDS):
            name_stems = tuple(stem(p) for p in pieces if p not in STOPWORDS and len(p) >= 2)
            bare = tok.replace("-", "").replace("'", "").replace(".", "").replace("/", "")
            all_caps = len(bare) >= 2 and bare.isupper() and bare.isalpha()
        info = (False, tok.lower(), tuple(pieces), tuple(content), tuple(numbers), tuple(negs),
                name_stems or None, all_caps)
    if len(_WORD_INFO) >= CACHE_SIZES["word_info"]:
        _WORD_INFO.clear()
    _WORD_INFO[tok] = info
    return info
