"""Blind labelling: what the harness said, shown only once labelled (or with reveal on).

One part of :class:`~playground.ui.session.LabelSession`, composed into it (``session.reveal``, issue 40.1):
a :class:`Reveal` object given the page state it reads (:class:`RevealState`) in its constructor; the
session hands its methods on under their old names.  See :mod:`playground.ui.session` for the rules."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from ..golden import Dataset
from ..model import Passage, Response, Unit
from .session_types import SessionError

__all__ = ["Reveal", "RevealState"]


class RevealState(Protocol):
    """What :class:`Reveal` reads of the page's state (a :class:`~playground.ui.session.LabelSession` is one):
    reveal on or off, what is answered, the catalog and the harness's labels, scores, keys and decisions."""

    dataset: Dataset
    reveal_all: bool
    response_id: str | None
    text_kind: str
    catalog: Mapping[str, Unit]
    passages: Mapping[str, Sequence[Passage]]
    responses: dict[str, list[Response]]
    variants: dict[str, str]
    auto: dict[tuple[str, str], int]
    auto_score: dict[tuple[str, str], float | None]
    key: dict[tuple[str, str], int | None]
    decisions: dict[str, dict]
    _group: dict[str, tuple[str, str]]
    _response_units: dict[str, list[str]]

    def answered(self, unit_id: str, dimension: str) -> bool: ...

    def _view_ids(self, case_id: str, response_id: str | None) -> list[str]: ...

    def _pairs(self, unit_ids: Iterable[str]) -> Iterator[tuple[str, str]]: ...


class Reveal:
    """Blind labelling: what the harness said, shown only once labelled (or with reveal on)."""

    def __init__(self, state: RevealState):
        self.state = state
        #: The harness's support evidence of each claim shown so far (it takes a few ms to make).
        self._evidence: dict[str, Any] = {}

    def revealed(self, unit_id: str, dimension: str) -> bool:
        return self.state.reveal_all or self.state.answered(unit_id, dimension)

    def response_revealed(self, response_id: str) -> bool:
        """Blind mode: a response's variant and verdict show once every unit of it is answered (or reveal is on)."""
        if self.state.reveal_all:
            return True
        cid = self.group_of_response(response_id)
        return all(self.state.answered(u, d) for u, d in self.state._pairs(self.state._view_ids(cid, response_id)))

    def response_name(self, response_id: str) -> str:
        """``Response 2`` while blind; ``Response 2 · confident hallucination`` once revealed."""
        cid = self.group_of_response(response_id)
        ids = [r.response_id for r in self.state.responses.get(cid, [])]
        name = f"Response {ids.index(response_id) + 1}" if response_id in ids else response_id
        if self.response_revealed(response_id):
            name += f" · {self.state.variants.get(response_id, '').replace('_', ' ')}"
        return name

    def evidence(self, unit_id: str) -> Any:
        """What the harness's support score of a claim rests on (``playground.harness.score.SupportDetail``).

        None for other units, and in blind mode until the claim's "supported" is answered.
        """
        unit = self.state.catalog.get(unit_id)
        if unit is None or unit.unit_kind != "claim" or not self.revealed(unit_id, "supported"):
            return None
        cached = self._evidence.get(unit_id)
        if cached is None:
            from ..harness.score import support_detail

            cid = self.state._group[unit_id][0]
            texts = [p.text for p in self.state.passages.get(cid, [])]
            cached = self._evidence[unit_id] = support_detail(unit.text, texts, kind=self.state.text_kind)
        return cached

    def auto_label(self, unit_id: str, dimension: str) -> int | None:
        """The harness's label, or None while it is hidden (blind mode, not labelled yet)."""
        if not self.revealed(unit_id, dimension):
            return None
        return self.state.auto.get((unit_id, dimension))

    def auto_detail(self, unit_id: str, dimension: str) -> dict[str, Any] | None:
        """``{label, score, key}`` of the harness and the authored answer key; None while hidden."""
        if not self.revealed(unit_id, dimension):
            return None
        pair, s = (unit_id, dimension), self.state
        return {"label": s.auto.get(pair), "score": s.auto_score.get(pair), "key": s.key.get(pair)}

    def decision(self, response_id: str | None = None) -> dict | None:
        """The harness decision of the response, or None while hidden (blind and not fully labelled)."""
        rid = response_id or self.state.response_id
        if rid is None:
            return None
        if not self.response_revealed(rid):
            return None
        return self.state.decisions.get(rid)

    def group_of_response(self, response_id: str) -> str:
        ids = self.state._response_units.get(response_id)
        if ids:
            return self.state._group[ids[0]][0]
        known = self.state.dataset.responses.get(response_id)
        if known is not None and known.case_id in self.state.responses:
            return known.case_id
        for cid, rs in self.state.responses.items():
            if any(r.response_id == response_id for r in rs):
                return cid
        raise SessionError(f"unknown response {response_id!r}")
