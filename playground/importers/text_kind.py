"""The kind of text of an imported dataset, inferred when the import does not say (issue 36.4).

The support scorer's rules depend on the kind of text (``playground.harness.score.KINDS``: qa, summary,
dialogue).  ``playground import ... --text-kind KIND`` records it; without the option the kind is inferred
from the samples by :func:`infer_text_kind`, and the import says which it chose and why:

1. **dialogue** when at least half the samples are conversations: they carry earlier turns (a RAGAS
   multi-turn sample, a ``history``), or their question holds at least two speaker-labelled lines
   (``User:``, ``Assistant:``, ``Apprentice:``, ``Wizard:``, ``Speaker 1:``, ``A:`` ... at a line start);
2. **summary** when at least half the samples ask for a summary: the question is empty, or it asks to
   summarise (``summarise``, ``summarize``, ``summary``, ``sum up``, ``tl;dr``, ``key points``, ``recap``);
3. **qa** otherwise.

Ties (exactly half) go to the first rule that reaches half.  Pure function of the samples: no model.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .core import Sample

__all__ = ["TextKindChoice", "infer_text_kind", "text_kind_choice"]

_SPEAKER_LINE_RE = re.compile(
    r"(?im)^\s*(?:user|assistant|human|ai|bot|agent|customer|client|system|apprentice|wizard|speaker\s*\w+|"
    r"[ab]|q|a)\s*:")
_SUMMARY_RE = re.compile(r"(?i)\b(?:summari[sz]e|summary|summarise|sum\s+up|tl;?\s*dr|key\s+points|recap)\b")


@dataclass(frozen=True)
class TextKindChoice:
    """The kind of text of a dataset and why (``source``: ``option`` or ``inferred``)."""

    kind: str
    source: str
    reason: str

    def line(self) -> str:
        """One line for the import's output."""
        return f"text kind: {self.kind} ({self.reason})"


def _is_dialogue(s: Sample) -> bool:
    return bool(s.history) or len(_SPEAKER_LINE_RE.findall(s.query)) >= 2


def _asks_summary(s: Sample) -> bool:
    return not s.query.strip() or _SUMMARY_RE.search(s.query) is not None


def infer_text_kind(samples: Sequence[Sample]) -> TextKindChoice:
    """The kind of text of ``samples`` by the module's rules, with the counts that decided it."""
    n = len(samples)
    if not n:
        return TextKindChoice("qa", "inferred", "inferred: no samples, qa by default")
    dialogue = sum(map(_is_dialogue, samples))
    if 2 * dialogue >= n:
        return TextKindChoice("dialogue", "inferred", f"inferred: {dialogue} of {n} samples are conversations "
                                                       "(earlier turns or speaker-labelled lines)")
    summary = sum(map(_asks_summary, samples))
    if 2 * summary >= n:
        return TextKindChoice("summary", "inferred", f"inferred: {summary} of {n} samples have no question or "
                                                      "ask for a summary")
    return TextKindChoice("qa", "inferred", f"inferred: of {n} samples {dialogue} are conversations and {summary} "
                                             "ask for a summary, fewer than half each; --text-kind sets another kind")


def text_kind_choice(samples: Sequence[Sample], option: str | None) -> TextKindChoice:
    """``option`` when the import names a kind (``--text-kind``), else :func:`infer_text_kind`."""
    if option is not None:
        return TextKindChoice(option, "option", "set with --text-kind")
    return infer_text_kind(samples)
