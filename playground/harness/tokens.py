"""Deterministic tokenisation for the harness scorers.

Everything here is a pure function of strings: no models, no downloads, no
randomness.  The rules:

1. **Normalisation.**  Curly apostrophes become ``'``.  In claims (not in
   contexts) citation and list markers are removed first
   (:func:`strip_markers`): ``[3]``, ``(Passage 2)``, ``passage 2`` /
   ``Passage 2:`` (also source/document; lower, title or upper case),
   ``Step 4:``, list numbers such as ``2.`` at the start of a line or after a
   sentence end, and bullets.  They are formatting, not content.

2. **Tokens** (:data:`TOKEN_RE`, first alternative that matches wins):

   * *date* ``2025-01-13`` and *time* ``09:30`` -- numbers kept whole;
   * *path* ``/v2/endpoints/{id}/replay`` -- an identifier, kept whole;
   * *number*: optional currency sign, digits with optional thousands commas
     and decimals, optional ``%`` or unit suffix of up to three letters
     (``3.5``, ``1,000``, ``15s``, ``$0.65``, ``250``, ``5th``, ``100°F``).  A
     number's *value* (:func:`number_value`) drops the currency sign, the
     thousands commas, trailing decimal zeros and the unit: ``$1,000.50`` ->
     ``1000.5``, ``15s`` -> ``15``.  Units are not compared.  A range ``5-7``
     is two numbers;
   * *word*: a letter or underscore, word characters, and further parts joined
     by ``.``, ``-``, ``'``, ``/`` or ``:`` without spaces (``TW-4291``,
     ``delivery.retry.max_attempts``, ``events:publish``, ``Bergen-Belsen``,
     ``don't``).

3. **Identifiers** (checked exactly, lower-cased): paths; words with an
   underscore, ``:`` or a digit (``snake_case``, ``events:publish``,
   ``TW-4291``, ``v2``); dotted words unless every part is one letter
   (``delivery.retry.max_attempts`` but not ``U.S``); ``/``-joined words with
   a non-letter part (a word list, ``and/or``, ``pants/jeans/shorts``, is
   split into its words); camelCase
   words (a capital right after a lower-case letter, ``maxAttempts``);
   hyphenated words written in capitals (``TW-ENT-HIPAA``); and every token
   that occurs inside a backtick code span (wherever else it occurs in the
   same text).  Any other hyphenated or ``/``-joined word is
   split into its parts (``time-bound`` -> ``time``, ``bound``).  A
   possessive ``'s`` is dropped; ``n't`` becomes ``not``.

4. **Number words** ``two`` .. ``twenty``, ``thirty`` .. ``ninety`` and
   ``dozen`` are numbers with the digit value (``five`` == ``5``); ``one`` is a
   stopword (mostly a pronoun).

5. **Capitalised names**: a word whose first letter is upper-case, at least
   two letters long, not a stopword, number word or :data:`NON_NAME_CAPITALS`
   word (months and weekdays *are* names), and

   * not at the start of a sentence (the text start, after ``. ! ? :`` or a
     line break, or after a removed marker); or
   * at a sentence start but directly followed (only a space between) by
     another capitalised name (``Louis Jordan said`` -> both); or
   * written in capitals (``NASA``).

   Names are kept as stems.  Each part of a hyphenated name is a name.

6. **Stopwords**: the fixed English list :data:`STOPWORDS`.  Negations
   (:data:`NEGATIONS`) are stopwords for coverage but reported separately.

7. **Stemming** (:func:`stem`): light suffix rules on alphabetic words of
   more than three letters: plural ``-ies`` -> ``-y``, ``-sses`` -> ``-ss``,
   ``-es`` after ``ch sh x z`` dropped, ``-s`` dropped (not after ``s u i``);
   then the first of ``-ingly -edly -ing -ied(->y) -ed -ation -ly`` is dropped
   when three letters remain, undoubling a final ``bb dd gg kk mm nn pp rr
   tt`` (``stopped`` -> ``stop``); finally a trailing ``e`` (not ``ee``) is
   dropped from words of four letters or more (``bake``, ``baked``, ``baking``
   -> ``bak``).  The rules conflate inflections; they are not a Porter stemmer.

8. **Matching keys** (:func:`match_key`, :func:`context_keys`): a claim token
   is looked up in a context by its *key*: the first five letters of its stem
   when it is alphabetic (so inflections and derivations match:
   ``motivated`` / ``motivation``, and demonyms: ``Mexico`` / ``Mexican``),
   else the token itself (number values).  A context's keys are the keys of
   its lower-cased tokens except stopwords, each compound token whole (for
   identifiers) and the keys of its parts (``re-examined`` -> ``re``,
   ``exami``), and the number values of number words and numeric parts.
   Identifiers are matched whole (:func:`identifier_present`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from itertools import chain, pairwise
from typing import NamedTuple

__all__ = [
    "CACHE_SIZES",
    "NEGATIONS",
    "NON_NAME_CAPITALS",
    "NUMBER_WORDS",
    "PREFIX_LEN",
    "STOPWORDS",
    "TOKEN_RE",
    "Analysis",
    "KeySet",
    "analyze",
    "content_stems",
    "context_keys",
    "identifier_present",
    "match_key",
    "match_keys",
    "number_value",
    "stem",
    "strip_markers",
    "tokenize",
]

#: Fixed English stopword list (function words, auxiliaries, pronouns).
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

#: Length of the match key of alphabetic tokens (rule 8).
PREFIX_LEN = 5

#: A set of match keys (:func:`context_keys`): a dict whose keys are the members
#: and whose values are None; read it, never change it (it is cached and shared).
#: Not a frozenset because CPython's garbage collector tracks every set and walks
#: it at each collection while it is young, but does not track a dict that holds
#: only strings: for fresh passages, walking their key sets was about 6% of the
#: scorers' time (``bench/bench_score.py --workload fresh``).
KeySet = Mapping[str, None]

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
)
# A list number at the text start, or after a line or sentence end (split in
# two patterns: a search led by a character class is much faster).
_LIST_HINT_START_RE = re.compile(r"\s*\d{1,2}[.)](?:\s|$)")
_LIST_HINT_RE = re.compile(r"[\n.!?:;)]\s*\d{1,2}[.)](?:\s|$)")
_CODE_RE = re.compile(r"`([^`\n]+)`")
_BULLETS = ("*", "-", "•")
_BULLET_LEAD = (" ", "\t", *_BULLETS)
_NUM_CLEAN_RE = re.compile(r"[^\d.]")
_PIECE_SPLIT_RE = re.compile(r"[-/']")
_PART_SPLIT_RE = re.compile(r"[-./:']")
_CONSONANT_DOUBLES = frozenset("bdgkmnprt")


def strip_markers(text: str) -> str:
    """Remove citation and list markers (``[3]``, ``(Passage 2)``, ``passage
    2``, ``Step 4:``, ``2.`` at a line or sentence start, bullets); each
    becomes ``" \\n"`` so the next word counts as a sentence start."""
    cite, paren, src, step, listnum, bullet = _MARKERS
    if "[" in text:
        text = cite[1].sub(" \n", text)
    if "(" in text:
        text = paren[1].sub(" \n", text)
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


def number_value(token: str) -> str:
    """Canonical value of a number token: no currency, commas, unit or trailing
    decimal zeros (``"$1,000.50"`` -> ``"1000.5"``, ``"15s"`` -> ``"15"``,
    ``"007"`` -> ``"7"``, ``"$0.65"`` -> ``"0.65"``).  Versions with several
    dots are kept as written."""
    if token.isascii() and token.isdigit():  # the common case, without the regex
        return token.lstrip("0") or "0"
    v = _NUM_CLEAN_RE.sub("", token)
    if v.count(".") > 1:
        return v
    if "." in v:
        whole, frac = v.split(".")
        frac = frac.rstrip("0")
        whole = whole.lstrip("0") or "0"
        return f"{whole}.{frac}" if frac else whole
    return v.lstrip("0") or "0"


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Light deterministic stemmer (rule 7 of the module docstring)."""
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


class Analysis(NamedTuple):
    """Tokens of one text.

    ``words``: every token lower-cased (stopwords kept, possessives dropped,
    compound non-identifiers split).  ``content``: content tokens in order
    (stopwords dropped; words stemmed, numbers as values, identifiers whole).
    ``numbers``: number values.  ``identifiers``: lower-cased identifiers.
    ``names``: stems of capitalised names.  ``negations``: negation words
    found.  ``exact_count``: occurrences of numbers, identifiers and names.
    """

    words: tuple[str, ...]
    content: tuple[str, ...]
    numbers: frozenset[str]
    identifiers: frozenset[str]
    names: frozenset[str]
    negations: tuple[str, ...]
    exact_count: int = 0

    @property
    def exact(self) -> frozenset[str]:
        """Numbers, identifiers and names: the items checked exactly."""
        return self.numbers | self.identifiers | self.names


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
        for piece in pieces:
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
        if (tok[0].isupper() and len(first) >= 2 and first not in STOPWORDS
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


def analyze(text: str, *, markers: bool = True) -> Analysis:
    """Analyse ``text`` (a claim, query or response) by the module's rules.

    ``markers``: strip citation/list markers first (:func:`strip_markers`).
    Results are cached by ``(text, markers)``.
    """
    cache = _ANALYSES[markers]
    a = cache.get(text)
    if a is None:
        a = _analyze(text, markers)
        if len(cache) >= CACHE_SIZES["analyses"]:
            cache.clear()
        cache[text] = a
    return a


# Analyses by text, one dict per ``markers`` value (no tuple key to build per call).
_ANALYSES: dict[bool, dict[str, Analysis]] = {True: {}, False: {}}
# One empty frozenset for the (frequent) texts without numbers, identifiers or
# names: fewer objects for the garbage collector to walk in the caches.
_NO_ITEMS: frozenset[str] = frozenset()


_SENT_END_RE = re.compile(r"[.!?:\n]")

# Per-token facts independent of position:
# (words, content, numbers, identifiers, negations, name_stems, all_caps, n_exact)
_TokInfo = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...],
                 tuple[str, ...] | None, bool, int]
# A token of a chunk: its _TokInfo, then (gap_has_end, gap_is_space, kind, token).
_ChunkToken = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...],
                    tuple[str, ...] | None, bool, int, bool, bool, str | None, str]
# The concatenated (numbers, identifiers, negations, n_exact) of a chunk's tokens.
_Extra = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], int]
# The concatenated (words, content, extra) of a chunk none of whose tokens can be
# a capitalised name (None otherwise, and for a chunk without tokens): such a
# chunk is taken whole, position does not matter.  ``extra`` is None when the
# chunk has no number, identifier or negation (most chunks).
_Plain = tuple[tuple[str, ...], tuple[str, ...], _Extra | None]
# A chunk's tokens, the has_end and is_space facts of its tail, and its _Plain.
_ChunkEntry = tuple[tuple[_ChunkToken, ...], bool, bool, _Plain | None]


def _token_info(kind: str | None, tok: str, code: bool = False) -> _TokInfo:
    # kind: the TOKEN_RE group matched (Match.lastgroup, typed str | None although
    # every alternative of TOKEN_RE is a named group); anything else is a word.
    if kind == "num" or kind == "date" or kind == "time":
        v = number_value(tok) if kind == "num" else tok
        return ((tok.lower(),), (v,), (v,), (), (), None, False, 1)
    if kind == "path" or code:
        low = tok.lower()
        return ((low,), (low,), (), (low,), (), None, False, 1)
    is_id, low, pieces, cont, nums, negs, name_stems, all_caps = _word_info(tok)
    if is_id:
        return ((low,), (low,), (), (low,), (), None, False, 1)
    return (pieces, cont, nums, (), negs, name_stems, all_caps, len(nums))


_NO_GAP = (False, True)


def _gap_facts(gap: str) -> tuple[bool, bool]:
    """(contains a sentence end, is whitespace only) of the text between tokens."""
    if not gap:
        return _NO_GAP
    return (_SENT_END_RE.search(gap) is not None, not gap.strip())


class _ChunkTokens(dict[str, _ChunkEntry]):
    """A space-separated chunk of (marker-stripped) text -> its tokens, each as
    its token info (8 fields, :func:`_token_info`) followed by
    ``(gap_has_end, gap_is_space, kind, token)`` for the gap before it
    inside the chunk, the same two facts for the chunk's tail, and the chunk
    taken whole when position cannot matter (``_Plain``).  No token spans a
    space, so a text's tokens are its chunks' tokens in order."""

    def __missing__(self, chunk: str) -> _ChunkEntry:
        toks: list[_ChunkToken] = []
        prev = 0
        for m in TOKEN_RE.finditer(chunk):
            kind = m.lastgroup
            end_, ws = _gap_facts(chunk[prev:m.start()])
            toks.append((*_token_info(kind, m.group()), end_, ws, kind, m.group()))
            prev = m.end()
        plain: _Plain | None = None
        if toks and all(t[5] is None for t in toks):
            if len(toks) == 1:
                t0 = toks[0]
                w, c, extra = t0[0], t0[1], (t0[2], t0[3], t0[4], t0[7])
            else:
                w, c = tuple(chain.from_iterable(t[0] for t in toks)), tuple(chain.from_iterable(t[1] for t in toks))
                extra = (tuple(chain.from_iterable(t[2] for t in toks)), tuple(chain.from_iterable(t[3] for t in toks)),
                         tuple(chain.from_iterable(t[4] for t in toks)), sum(t[7] for t in toks))
            plain = (w, c, extra if extra[2] or extra[3] else None)
        entry = (tuple(toks), *_gap_facts(chunk[prev:]), plain)
        if len(self) >= CACHE_SIZES["chunk_tokens"]:
            self.clear()
        self[chunk] = entry
        return entry


_CHUNK_TOKENS = _ChunkTokens()


def _analyze(text: str, markers: bool) -> Analysis:
    t = text.replace("’", "'").replace("‘", "'")
    if markers:
        t = strip_markers(t)
    # Tokens inside backtick code spans are identifiers (wherever they occur).
    code = {m.group() for span in _CODE_RE.findall(t) for m in TOKEN_RE.finditer(span)} \
        if "`" in t else None
    words: list[str] = []
    content: list[str] = []
    numbers: set[str] = set()
    identifiers: set[str] = set()
    names: set[str] = set()
    negations: list[str] = []
    exact_count = 0
    pending: str | None = None  # stem of a sentence-initial capitalised word just seen
    first = True
    carry_end, carry_ws = True, True  # facts of the gap before the next chunk's first token
    whole = not code  # without code spans a plain chunk is taken whole
    for toks, tail_end, tail_ws, plain in map(_CHUNK_TOKENS.__getitem__, t.split(" ")):
        if plain is not None and whole:
            w, c, extra = plain
            words.extend(w)
            content.extend(c)
            if extra is not None:
                nums, ids, negs, n_exact = extra
                if n_exact:
                    exact_count += n_exact
                    if nums:
                        numbers.update(nums)
                    if ids:
                        identifiers.update(ids)
                if negs:
                    negations.extend(negs)
            pending = None
            first = False
            carry_end = tail_end
            carry_ws = tail_ws
            continue
        if not toks:
            carry_end, carry_ws = carry_end or tail_end, carry_ws and tail_ws
            continue
        j = 0
        for w, c, nums, ids, negs, name_stems, all_caps, n_exact, g_end, g_ws, kind, tok in toks:
            if j == 0:
                g_end, g_ws = carry_end or g_end, carry_ws and g_ws
                j = 1
            if code and kind == "word" and tok in code:
                w, c, nums, ids, negs, name_stems, all_caps, n_exact = _token_info(kind, tok, True)
            words.extend(w)
            content.extend(c)
            if n_exact:
                exact_count += n_exact
                if nums:
                    numbers.update(nums)
                if ids:
                    identifiers.update(ids)
            if negs:
                negations.extend(negs)
            if name_stems is None:
                pending = None
            elif all_caps or not (first or g_end):
                names.update(name_stems)
                exact_count += len(name_stems)
                if pending is not None and g_ws:
                    names.add(pending)
                    exact_count += 1
                pending = None
            else:
                pending = name_stems[0]
            first = False
        carry_end, carry_ws = tail_end, tail_ws
    return Analysis(  # positional: words, content, numbers, identifiers, names, negations, exact_count
        tuple(words),
        tuple(content),
        frozenset(numbers) if numbers else _NO_ITEMS,
        frozenset(identifiers) if identifiers else _NO_ITEMS,
        frozenset(names) if names else _NO_ITEMS,
        tuple(negations),
        exact_count,
    )


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens of ``text`` (stopwords and markers kept)."""
    return list(analyze(text, markers=False).words)


def content_stems(text: str) -> tuple[str, ...]:
    """Content tokens of ``text`` in order (markers stripped; see :class:`Analysis`)."""
    return analyze(text).content


def match_key(token: str) -> str:
    """The key under which a claim token (a stem, number value or name stem) is
    looked up in a context: its first :data:`PREFIX_LEN` letters when it is
    alphabetic, else the token itself.  (Identifiers are matched whole, see
    :func:`identifier_present`.)"""
    return token[:PREFIX_LEN] if token.isalpha() else token


class _MatchKeys(dict[str, str]):
    """token -> :func:`match_key` (computed on first use)."""

    def __missing__(self, token: str) -> str:
        key = match_key(token)
        if len(self) >= CACHE_SIZES["match_keys"]:
            self.clear()
        self[token] = key
        return key


_MATCH_KEYS = _MatchKeys()


def match_keys(tokens: Iterable[str]) -> Iterator[str]:
    """:func:`match_key` of each token, in order (a cached lookup per token)."""
    return map(_MATCH_KEYS.__getitem__, tokens)


def _keys_of(tok: str) -> tuple[str, ...]:
    """Keys of one lower-cased context token (rule 8)."""
    c0 = tok[0]
    if c0.isdigit() or c0 in "$€£":
        if (len(tok) == 10 and tok[4] == "-") or ":" in tok:
            return (tok,)  # date or time
        return (number_value(tok),)
    if tok.isalpha():
        if tok in STOPWORDS:
            return ("not",) if tok in NEGATIONS else ()
        v = NUMBER_WORDS.get(tok)
        k = stem(tok)[:PREFIX_LEN]
        return (k,) if v is None else (k, v)
    base = tok
    out: list[str] = []
    if base.endswith("'s"):
        base = base[:-2]
    elif base.endswith("n't"):
        out.append("not")
    if base.isalpha():
        if base not in STOPWORDS:
            out.append(stem(base)[:PREFIX_LEN])
        return tuple(out)
    out.append(base)  # the whole compound token: identifiers are matched whole
    for p in _PART_SPLIT_RE.split(base):
        if not p:
            continue
        if p.isalpha():
            out.append(stem(p)[:PREFIX_LEN])
            if p in NUMBER_WORDS:
                out.append(NUMBER_WORDS[p])
        else:
            out.append(p)
            if p[0].isdigit():
                out.append(number_value(p))
    return tuple(out)


class _ChunkKeys(dict[str, tuple[str, ...]]):
    """Keys of a whitespace-separated chunk of lower-cased context text.  No
    token pattern spans whitespace, so the keys of a text are the union of the
    keys of its chunks; a missing chunk is computed on first use."""

    def __missing__(self, chunk: str) -> tuple[str, ...]:
        out: list[str] = []
        for tok in _FAST_RE.findall(chunk):
            out.extend(_keys_of(tok))
        keys = tuple(dict.fromkeys(out))
        if len(self) >= CACHE_SIZES["chunk_keys"]:
            self.clear()
        self[chunk] = keys
        return keys


_CHUNK_KEYS = _ChunkKeys()


def context_keys(text: str) -> KeySet:
    """The match keys of every token of a context text (rule 8), as a :data:`KeySet`.

    Cached by text.  A claim's content token, number or name is *present* in
    the context when its :func:`match_key` is in this set; an identifier when
    :func:`identifier_present` says so.
    """
    keys = _CONTEXT_KEYS.get(text)
    if keys is None:
        low = text.lower()
        if "’" in low:
            low = low.replace("’", "'")
        keys = dict.fromkeys(chain.from_iterable(map(_CHUNK_KEYS.__getitem__, low.split())))
        if len(_CONTEXT_KEYS) >= CACHE_SIZES["context_keys"]:
            _CONTEXT_KEYS.clear()
        _CONTEXT_KEYS[text] = keys
    return keys


_CONTEXT_KEYS: dict[str, dict[str, None]] = {}


@lru_cache(maxsize=4_096)
def _identifier_re(ident: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.\-/])" + re.escape(ident) + r"(?![\w]|[.\-/:]\w)")


def identifier_present(ident: str, keys: KeySet, lowered: str) -> bool:
    """Whether a (lower-cased) identifier occurs whole in a context: as a whole
    token key when it contains a non-letter (``tw-4291``,
    ``delivery.retry.max_attempts``), else -- camelCase or code-span words,
    whose case the keys do not keep -- by a search of the lower-cased context
    text, not inside a longer identifier."""
    if not ident.isalpha():
        return ident in keys
    return _identifier_re(ident).search(lowered) is not None
