"""One labelled unit on the playground page: its text, a toggle per question, the harness and a comment.

A :class:`UnitRow` is reused across cases (the page keeps a pool per kind);
:meth:`UnitRow.bind` puts a :class:`~playground.ui.session.ViewUnit` in it.
Each question line carries the class ``pg-q`` (the keyboard focus moves over
them) and its ToggleButtons the class ``pg-<kind>-<i>-<dimension>`` with the
answers yes / no / unsure / clear.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

import ipywidgets as W

from .fragments import esc, evidence_html, markdown_html
from .session import QUESTIONS, UNSURE, LabelSession, ViewUnit

__all__ = ["ANSWERS", "CLEAR", "FROM_VALUE", "NO", "TO_VALUE", "UNSURE_CHOICE", "YES", "RowHost", "UnitRow",
           "html_widget"]

YES, NO, UNSURE_CHOICE, CLEAR = "yes", "no", "unsure", "clear"
#: The answers of a toggle, in the order of the keys 1 / 2 / 3 / 0.
ANSWERS: tuple[str, ...] = (YES, NO, UNSURE_CHOICE, CLEAR)
TO_VALUE: dict[str, int | None] = {YES: 1, NO: 0, UNSURE_CHOICE: UNSURE, CLEAR: None}
FROM_VALUE: dict[int | None, str | None] = {1: YES, 0: NO, UNSURE: UNSURE_CHOICE, None: None}


def html_widget(value: str = "", cls: str = "", **layout: Any) -> W.HTML:
    w = W.HTML(value=value, layout=W.Layout(**layout) if layout else W.Layout())
    for c in cls.split():
        w.add_class(c)
    return w


class RowHost(Protocol):
    """What a row reads of the page that holds it (the page, :class:`~playground.ui.views.PlaygroundApp`, is one):
    the session it draws, whether the page is syncing or stopped, and where a toggle or a comment goes."""

    session: LabelSession
    syncing: bool
    stopped: bool

    def quiet(self) -> AbstractContextManager[None]: ...

    def guard(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    def on_toggle(self, row: UnitRow, dim: str, choice: str | None) -> None: ...

    def on_comment(self, row: UnitRow, text: str) -> None: ...


class UnitRow:
    """One labelled unit on the page (reused across cases): its text and a toggle per dimension."""

    def __init__(self, app: RowHost, kind: str, index: int, dimensions: tuple[str, ...]):
        self.app = app
        self.kind = kind
        self.index = index
        self.unit_id: str | None = None
        prefix = f"pg-{kind}-{index}"
        self.prefix = prefix
        self.title = html_widget(cls=f"{prefix}-title pg-muted")
        self.text = html_widget(cls=f"{prefix}-text")
        self.toggles: dict[str, W.ToggleButtons] = {}
        self.autos: dict[str, W.HTML] = {}
        self.lines: dict[str, W.HBox] = {}
        lines = []
        for dim in dimensions:
            ask = html_widget(f"{esc(QUESTIONS[dim])}", "pg-ask")
            toggle = W.ToggleButtons(options=list(ANSWERS), value=None,
                                     tooltips=["yes (y, 1)", "no (n, 2)", "unsure: counted in no rate (u, 3)",
                                               "remove my label (c, 0)"],
                                     style={"button_width": "auto"}, layout=W.Layout(width="auto"))
            toggle.add_class(f"{prefix}-{dim}")
            toggle.add_class("pg-toggle")
            toggle.observe(self._changed(dim), names="value")
            auto = html_widget(cls=f"{prefix}-{dim}-auto pg-auto")
            self.toggles[dim] = toggle
            self.autos[dim] = auto
            line = W.HBox([ask, toggle, auto], layout=W.Layout(align_items="center", flex_flow="row wrap"))
            line.add_class("pg-q")
            line.add_class(f"pg-q-{dim}")
            lines.append(line)
            self.lines[dim] = line
        self.evidence = html_widget(cls=f"{prefix}-evidence pg-evidence")
        self.comment = W.Textarea(placeholder="comment on this unit (saved when you leave the box)",
                                  continuous_update=False, rows=1, layout=W.Layout(width="auto"))
        self.comment.add_class("pg-comment")
        self.comment.add_class(f"{prefix}-comment")
        self.comment.observe(self._comment_changed, names="value")
        parts = ([self.title] if kind != "claim" else []) + [self.text, *lines, self.evidence, self.comment]
        self.box = W.VBox(parts, layout=W.Layout(width="100%"))
        self.box.add_class("pg-unit")
        self.box.add_class(prefix)

    def _changed(self, dim: str) -> Callable[[dict[str, Any]], None]:
        def handler(change: dict[str, Any]) -> None:
            if self.app.syncing or self.unit_id is None:
                return
            self.app.guard(self.app.on_toggle, self, dim, change["new"])
        return handler

    def _comment_changed(self, change: dict[str, Any]) -> None:
        if self.app.syncing or self.unit_id is None:
            return
        self.app.guard(self.app.on_comment, self, change["new"])

    def bind(self, vu: ViewUnit | None) -> None:
        if vu is None:
            self.unit_id = None
            self.box.layout.display = "none"
            return
        self.box.layout.display = None
        self.unit_id = vu.unit.unit_id
        for dim, line in self.lines.items():  # a question the unit does not ask (no reference) is not shown
            line_display = None if dim in vu.unit.dimensions else "none"
            if line.layout.display != line_display:
                line.layout.display = line_display
        text = markdown_html(vu.unit.text)
        if self.kind == "passage":
            self.title.value = (f"<b>[{vu.index + 1}]</b> {esc(vu.title)} "
                                f"<span class='pg-muted'>· {esc(vu.detail)}</span>")
            self.text.value = f"<div class='pg-box pg-md'>{text}</div>"
        elif self.kind == "claim":
            self.text.value = (f"<div class='pg-claim pg-md'><span class='pg-claim-no'>Claim {vu.index + 1}.</span>"
                               f"{text}</div>")
        else:
            self.title.value = f"<span class='pg-muted'>{esc(vu.title)}</span>"
            self.text.value = f"<div class='pg-fact pg-md'>{text}</div>"
        self.refresh()

    def refresh(self) -> None:
        """Bring toggles, harness notes, evidence and comment in line with the session (without firing handlers)."""
        s = self.app.session
        if self.unit_id is None:
            return
        uid = self.unit_id
        with self.app.quiet():
            disabled = not s.can_label or self.app.stopped
            for dim, toggle in self.toggles.items():
                value = FROM_VALUE[s.answer(uid, dim)]
                if toggle.value != value:
                    toggle.value = value
                if toggle.disabled != disabled:
                    toggle.disabled = disabled
                self.autos[dim].value = self._auto_html(dim)
            ev = s.evidence(uid) if self.kind == "claim" else None
            self.evidence.value = evidence_html(ev) if ev is not None else ""
            text = s.comment(uid)
            if self.comment.value != text:
                self.comment.value = text
            if self.comment.disabled != disabled:
                self.comment.disabled = disabled

    def _auto_html(self, dim: str) -> str:
        s = self.app.session
        uid = self.unit_id
        assert uid is not None
        parts = []
        stale = s.stale_label(uid, dim)
        if stale is not None and s.answer(uid, dim) is None:
            parts.append(f"<span class='pg-stale'>earlier label: {FROM_VALUE[stale]} (text changed since)</span>")
        detail = s.auto_detail(uid, dim)
        if detail is None:
            parts.append("<span class='pg-auto-hidden'>harness: hidden until you label</span>")
        else:
            value = detail["label"]
            score = detail["score"]
            mine = s.label(uid, dim)
            differ = mine is not None and value is not None and mine != value
            key = detail["key"]
            txt = f"harness: <b>{FROM_VALUE.get(value, '?')}</b>"
            if score is not None:
                txt += f" <span class='pg-ci'>({score:.2f})</span>"
            if key is not None:
                txt += f" · answer key: <b>{FROM_VALUE.get(key, '?')}</b>"
            if mine is not None:  # your answer against each of them, named: "≠ harness", "= key"
                marks = [] if value is None else [("≠ harness", "pg-differ") if differ else ("= harness", "pg-agree")]
                if key is not None:
                    marks.append(("≠ key", "pg-differ") if mine != key else ("= key", "pg-agree"))
                if marks:
                    spans = ", ".join(f"<span class='{c}'>{t}</span>" for t, c in marks)
                    txt += f" · your {FROM_VALUE[mine]}: {spans}"
            parts.append(f"<span class='pg-auto-shown'>{txt}</span>")
        return " ".join(parts)
