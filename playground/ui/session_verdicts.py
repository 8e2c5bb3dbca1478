"""Error analysis on the page (issue 24.6): a response's pass/fail verdict, note and failure-mode tags.

One part of :class:`~playground.ui.session.LabelSession`, composed into it
(``session.verdicts``, issue 40.1): a :class:`Verdicts` object given the page
state it reads (:class:`VerdictsState`) in its constructor; the session hands
its methods on under their old names.  The response on screen is
a label unit of kind ``response`` with the single dimension ``pass``
(:func:`playground.verdicts.response_unit`), outside the four dimensions, so
progress, rates and the diagnosis are unchanged by it.  Everything is written
to the store at once, as ordinary events with history and undo:

* the **verdict**: ``store.set_label(annotator, unit, "pass", 1 | 0 | UNSURE | None)``;
* the **note** (what went wrong, in words): the unit's comment;
* the **tags**: the whole set of failure modes this annotator gives the
  response (``store.set_tags``), each from the dataset's taxonomy; a new tag
  typed while labelling is added to the taxonomy first (open coding), its name
  checked by :func:`playground.verdicts.validate_tag` (lower-case letters,
  digits, ``-`` and ``_``, 1–40 characters, starting with a letter) — a bad
  name is a :class:`~playground.ui.session_types.SessionError` with the rule
  in words and nothing is written.

Blind labelling: the shipped set's **authored** verdict and tags of a response
(:meth:`Verdicts.authored`) show only once this annotator has given the
response a verdict (or reveal is on), beside the variant reveal.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..golden import Dataset
from ..model import Unit
from ..store import UNSURE
from .session_types import SessionError

__all__ = ["VERDICT_VALUES", "Verdicts", "VerdictsState"]

#: The verdict choices and their stored values (``clear`` removes the verdict).
VERDICT_VALUES: dict[str, int | None] = {"pass": 1, "fail": 0, "unsure": UNSURE, "clear": None}


class VerdictsState(Protocol):
    """What :class:`Verdicts` reads of the page's state (a :class:`~playground.ui.session.LabelSession` is one):
    the dataset and its name, the store, who labels, the response on screen, read-only and reveal."""

    dataset: Dataset
    dataset_name: str
    store: Any
    annotator: str | None
    response_id: str | None
    read_only: bool
    reveal_all: bool

    def check_dataset(self) -> None: ...


class Verdicts:
    """A response's verdict, note and tags, the taxonomy, the failure-mode counts and the guidelines."""

    def __init__(self, state: VerdictsState):
        self.state = state
        self._units: Any = None  # the dataset's response units, made once (10,000 responses take 0.2 s to hash)
        self._key: dict[str, Any] | None = None  # the shipped set's verdict key, made once

    def _response(self, response_id: str | None) -> Any:
        rid = response_id or self.state.response_id
        response = self.state.dataset.responses.get(rid) if rid else None
        if response is None:
            raise SessionError("no response on screen to judge" if rid is None else f"unknown response {rid!r}")
        return response

    def response_unit(self, response_id: str | None = None) -> Unit:
        """The label unit of a response (kind ``response``, dimension ``pass``): the one on screen by default."""
        from ..verdicts import response_unit

        r = self._response(response_id)
        return response_unit(r.case_id, r.response_id, r.text)

    def _writable(self, what: str) -> None:
        if self.state.read_only:
            raise SessionError(f"This page is read-only: {what} cannot be changed here.")
        if self.state.annotator is None:
            raise SessionError(f"Type your name first: {what} are saved under it.")
        self.state.check_dataset()

    def verdict(self, response_id: str | None = None) -> int | None:
        """This annotator's current verdict (1 pass, 0 fail, UNSURE), or None; a verdict on text that changed
        since is not current (None)."""
        if self.state.annotator is None or self._response_or_none(response_id) is None:
            return None
        unit = self.response_unit(response_id)
        s = self.state
        for lab in s.store.labels(annotator=s.annotator, unit_ids=[unit.unit_id], include_unsure=True):
            if lab.dimension == "pass" and lab.text_hash == unit.text_hash:
                return int(lab.value)
        return None

    def _response_or_none(self, response_id: str | None) -> Any:
        rid = response_id or self.state.response_id
        return self.state.dataset.responses.get(rid) if rid else None

    def set_verdict(self, value: int | None, response_id: str | None = None) -> bool:
        """Save the verdict (1, 0, UNSURE; None clears it); returns whether the store changed."""
        if value is not None and value not in (0, 1, UNSURE):
            raise SessionError(f"a verdict is 1 (pass), 0 (fail), {UNSURE} (unsure) or None (clear), not {value!r}")
        self._writable("verdicts")
        unit = self.response_unit(response_id)
        s = self.state
        return s.store.set_label(s.annotator, unit, "pass", value, dataset=s.dataset_name) is not None

    def note(self, response_id: str | None = None) -> str:
        """This annotator's note on the response ("" when none)."""
        if self.state.annotator is None or self._response_or_none(response_id) is None:
            return ""
        unit = self.response_unit(response_id)
        said = self.state.store.comments(unit_ids=[unit.unit_id], annotator=self.state.annotator)
        return next((c.text for c in said), "")

    def set_note(self, text: str, response_id: str | None = None) -> bool:
        """Save the note ("" removes it); returns whether the store changed."""
        self._writable("notes")
        unit = self.response_unit(response_id)
        s = self.state
        return s.store.set_comment(s.annotator, unit, str(text).strip(), dataset=s.dataset_name) is not None

    def tags(self, response_id: str | None = None) -> tuple[str, ...]:
        """This annotator's failure-mode tags on the response (names resolved through renames and merges)."""
        if self.state.annotator is None or self._response_or_none(response_id) is None:
            return ()
        unit = self.response_unit(response_id)
        found = [t for t in self.state.store.tags(unit_ids=[unit.unit_id], annotator=self.state.annotator)
                 if t.text_hash == unit.text_hash]
        return tuple(found[0].tags) if found else ()

    def taxonomy(self) -> list[str]:
        """The dataset's failure modes a tag can be (merged ones left out), in the taxonomy's order."""
        return [m.name for m in self.state.store.taxonomy(self.state.dataset_name) if m.merged_into is None]

    def set_tags(self, tags: Sequence[str], response_id: str | None = None) -> bool:
        """Give the response exactly ``tags`` (each a failure mode of the taxonomy); whether the store changed."""
        self._writable("tags")
        known = set(self.taxonomy())
        unknown = [t for t in tags if t not in known]
        if unknown:
            raise SessionError(f"not a failure mode of {self.state.dataset_name}: {', '.join(unknown)} (add it first)")
        ordered = tuple(dict.fromkeys(tags))
        unit = self.response_unit(response_id)
        s = self.state
        return s.store.set_tags(s.annotator, unit, ordered, dataset=s.dataset_name) is not None

    def toggle_tag(self, name: str, on: bool, response_id: str | None = None) -> bool:
        """Add ``name`` to the response's tags (``on``) or take it off."""
        now = list(self.tags(response_id))
        new = [*now, name] if on and name not in now else [t for t in now if t != name or on]
        return self.set_tags(new, response_id)

    def add_tag(self, name: str, response_id: str | None = None) -> str:
        """Open coding: a failure mode typed while labelling joins the taxonomy (if new) and tags the response.
        Returns the name as stored; a name that breaks the rule is refused with the rule in words."""
        from ..verdicts import validate_tag

        self._writable("tags")
        try:
            tidy = validate_tag(str(name).strip())
        except ValueError as exc:
            raise SessionError(str(exc)) from None
        known = {m.name: m for m in self.state.store.taxonomy(self.state.dataset_name)}
        if tidy in known and known[tidy].merged_into is not None:
            raise SessionError(f"the tag {tidy!r} was merged into {known[tidy].merged_into!r}: use that one")
        now = self.tags(response_id)
        if tidy not in now:  # the store adds a new name to the taxonomy in the same write (open coding)
            self.state.store.set_tags(self.state.annotator, self.response_unit(response_id), (*now, tidy),
                                dataset=self.state.dataset_name)
        return tidy

    def failure_counts(self, annotator: str | None = None) -> tuple[list[Any], Any]:
        """``(rows, pass)`` over every response of the dataset: :func:`playground.verdicts.failure_mode_table`
        and :func:`playground.verdicts.pass_rate`, for ``annotator`` (None: pooled over everyone)."""
        from ..verdicts import failure_mode_table, pass_rate, response_units

        if self._units is None:
            self._units = response_units(self.state.dataset)
        store = self.state.store
        return failure_mode_table(store, self._units, annotator), pass_rate(store, self._units, annotator)

    def authored(self, response_id: str | None = None) -> tuple[int | None, tuple[str, ...]] | None:
        """The shipped set's authored ``(verdict, tags)`` of the response, once this annotator has judged it (or
        reveal is on); None while blind, or for a dataset with no authored verdicts."""
        r = self._response_or_none(response_id)
        if r is None or self.state.dataset_name != "golden":
            return None
        if not self.state.reveal_all and self.verdict(r.response_id) is None:
            return None
        key = self._verdict_key().get(r.response_id)
        return None if key is None else (key.verdict, key.tags)

    def _verdict_key(self) -> dict[str, Any]:
        """The shipped set's verdict key (:func:`playground.verdict_key.verdict_key`), made once per session."""
        if self._key is None:
            from ..verdict_key import verdict_key

            self._key = verdict_key(self.state.dataset)
        return self._key

    def guidelines(self) -> Any:
        """The dataset's current guidelines (``Guidelines(dataset, version, markdown, author, created_at)``) or
        None."""
        return self.state.store.guidelines(self.state.dataset_name)
