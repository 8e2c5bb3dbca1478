"""Find a sample by its text: the case list's search box (issue 24.4).

Rule: the search text is split on white space into terms; a case matches when
**every** term occurs (case-insensitively, after Unicode case folding) in its
text — the question and earlier turns, the reference answer, every response,
and every context (passage) the case has.  An empty search matches every case.

The text of each case is folded once, when the search is made (for an imported
dataset straight from the stored contexts, without making its passages): one
``casefold`` of the case's texts joined by newlines — white space need not be
collapsed, since a term holds none, so a term occurs in :func:`fold` of a text
exactly when it occurs in its ``casefold``.  Each keystroke then scans those
strings.  A search that extends the previous one
(one more letter typed) scans only the previous matches.  ``bench/bench_search.py``
measures a keystroke on 10,000 samples.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["CaseSearch", "case_texts", "fold", "terms"]


def fold(text: str) -> str:
    """Text as searched: case-folded, white space collapsed to single spaces."""
    return " ".join(text.casefold().split())


def terms(text: str) -> tuple[str, ...]:
    """The search's terms: its folded words, each once, in order."""
    return tuple(dict.fromkeys(fold(text).split()))


class CaseSearch:
    """Which of ``case_ids`` hold every term of a search (see the module docstring).

    ``texts(case_id)`` gives the strings of one case that are searched; it is
    called for every case once: by :meth:`prepare` (the page calls it when it
    opens) or else on the first search.
    """

    def __init__(self, case_ids: Sequence[str], texts: Callable[[str], Iterable[str]]):
        self._ids = list(case_ids)
        self._texts = texts
        self._folded: list[str] | None = None
        self._last: tuple[tuple[str, ...], list[int]] = ((), list(range(len(self._ids))))

    def _haystack(self) -> list[str]:
        if self._folded is None:
            texts = self._texts
            self._folded = ["\n".join([t for t in texts(cid) if t]).casefold() for cid in self._ids]
        return self._folded

    def prepare(self) -> CaseSearch:
        """Fold every case's text now (the page does it when it opens, so no keystroke pays for it)."""
        self._haystack()
        return self

    def positions(self, text: str) -> list[int] | None:
        """The positions (in ``case_ids``) of the matching cases, ascending; ``None`` for an empty search."""
        wanted = terms(text)
        if not wanted:
            return None
        before, found = self._last
        # each term of the last search is contained in a term of this one: its matches are a superset
        pool = found if before and all(any(b in w for w in wanted) for b in before) else range(len(self._ids))
        hay = self._haystack()
        out = list(pool)
        for w in wanted:  # one term at a time over what is left: a plain substring test per case
            out = [i for i in out if w in hay[i]]
        self._last = (wanted, out)
        return out

    def matching(self, text: str) -> list[str] | None:
        """The matching case ids in the given order; ``None`` for an empty search (every case)."""
        found = self.positions(text)
        return None if found is None else [self._ids[i] for i in found]


def case_texts(dataset: Any, passages: Mapping[str, Any], responses: Mapping[str, Sequence[Any]]
               ) -> Callable[[str], list[str]]:
    """``texts(case_id)`` for :class:`CaseSearch`: question, earlier turns, reference, responses and contexts.

    An imported dataset's passages (:class:`~playground.datasets.StoredPassages`) give their contexts' text
    without making the passages; other mappings give their passages' ``text``.
    """
    raw = getattr(passages, "context_texts", None)

    def texts(case_id: str) -> list[str]:
        case = dataset.cases[case_id]
        out = [case.query, case.reference_answer, *(t.content for t in case.history)]
        out += [r.text for r in responses.get(case_id, [])]
        if raw is not None:
            out += list(raw(case_id))
        else:
            out += [p.text for p in passages.get(case_id, [])]
        return out

    return texts
