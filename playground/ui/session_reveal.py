"""Blind labelling: what the harness said, shown only once labelled (or with reveal on).

One part of :class:`~playground.ui.session.LabelSession` (a mixin over
:class:`~playground.ui.session_types.SessionBase`); see :mod:`playground.ui.session` for the rules."""
from __future__ import annotations

from typing import Any

from .session_types import (
    SessionBase,
    SessionError,
)

__all__ = ["RevealPart"]


class RevealPart(SessionBase):
    """Blind labelling: what the harness said, shown only once labelled (or with reveal on)."""

    def revealed(self, unit_id: str, dimension: str) -> bool:
        return self.reveal_all or self.answered(unit_id, dimension)

    def response_revealed(self, response_id: str) -> bool:
        """Blind mode: a response's variant and verdict show once every unit of it is answered (or reveal is on)."""
        if self.reveal_all:
            return True
        cid = self._group_of_response(response_id)
        return all(self.answered(u, d) for u, d in self._pairs(self._view_ids(cid, response_id)))

    def response_name(self, response_id: str) -> str:
        """``Response 2`` while blind; ``Response 2 · confident hallucination`` once revealed."""
        cid = self._group_of_response(response_id)
        ids = [r.response_id for r in self.responses.get(cid, [])]
        name = f"Response {ids.index(response_id) + 1}" if response_id in ids else response_id
        if self.response_revealed(response_id):
            name += f" · {self.variants.get(response_id, '').replace('_', ' ')}"
        return name

    def evidence(self, unit_id: str) -> Any:
        """What the harness's support score of a claim rests on (``playground.harness.score.SupportDetail``).

        None for other units, and in blind mode until the claim's "supported" is answered.
        """
        unit = self.catalog.get(unit_id)
        if unit is None or unit.unit_kind != "claim" or not self.revealed(unit_id, "supported"):
            return None
        cached = self._evidence.get(unit_id)
        if cached is None:
            from ..harness.score import support_detail

            cid = self._group[unit_id][0]
            cached = self._evidence[unit_id] = support_detail(unit.text, [p.text for p in self.passages.get(cid, [])],
                                                                kind=getattr(self, "text_kind", "qa"))
        return cached

    def auto_label(self, unit_id: str, dimension: str) -> int | None:
        """The harness's label, or None while it is hidden (blind mode, not labelled yet)."""
        if not self.revealed(unit_id, dimension):
            return None
        return self.auto.get((unit_id, dimension))

    def auto_detail(self, unit_id: str, dimension: str) -> dict[str, Any] | None:
        """``{label, score, key}`` of the harness and the authored answer key; None while hidden."""
        if not self.revealed(unit_id, dimension):
            return None
        return {"label": self.auto.get((unit_id, dimension)), "score": self.auto_score.get((unit_id, dimension)),
                "key": self.key.get((unit_id, dimension))}

    def decision(self, response_id: str | None = None) -> dict | None:
        """The harness decision of the response, or None while hidden (blind and not fully labelled)."""
        rid = response_id or self.response_id
        if rid is None:
            return None
        if not self.response_revealed(rid):
            return None
        return self.decisions.get(rid)

    def _group_of_response(self, response_id: str) -> str:
        ids = self._response_units.get(response_id)
        if ids:
            return self._group[ids[0]][0]
        known = self.dataset.responses.get(response_id)
        if known is not None and known.case_id in self.responses:
            return known.case_id
        for cid, rs in self.responses.items():
            if any(r.response_id == response_id for r in rs):
                return cid
        raise SessionError(f"unknown response {response_id!r}")
