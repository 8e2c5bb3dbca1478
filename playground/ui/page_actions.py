"""The page's actions on labels and names: a toggle saved, a comment, undo, refresh, starting or switching the
annotator's name, and the read-only viewer's choice of annotator (a mixin of
:class:`~playground.ui.views.PlaygroundApp`; every decision is the session's, this forwards and redraws)."""
from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

from .fragments import esc
from .page_state import PageState
from .panels import ALL
from .rows import TO_VALUE, UnitRow
from .session import LabelChange, LabelSession
from .verdict_panel import describe_change

__all__ = ["PageActions"]


class PageActions(PageState):
    """Labels and names: what a click on a yes/no/unsure, a comment, undo, refresh or the name box does."""

    def start(self, name: str, sample: str | None = None) -> None:
        s = self.session
        known = s.known_annotators()
        tidy = s.set_annotator(name)
        assert tidy is not None  # a name was given
        if self.name is not None and self.name.value != tidy:
            with self.quiet():
                self.name.value = tidy
        self.bookmark.value = (f"bookmark <a href='?annotator={esc(quote(tidy, safe=''))}' class='pg-bookmark-link'>"
                               f"this link</a> to come back as {esc(tidy)}")
        self._lock_name()
        n = len(s.labels) + len(s.unsure)
        if tidy in known:
            msg = f"Welcome back, {tidy}: {n} label{'s' if n != 1 else ''} loaded."
        else:
            msg = f"Labelling as {tidy}. Each answer is saved at once."
            similar = [k for k in known if k.lower() == tidy.lower()]
            if similar:
                msg += f" Note: names are case-sensitive and '{similar[0]}' also exists."
        if s.stale:
            msg += f" {len(s.stale)} earlier label(s) are on text that changed since; they are shown but not counted."
        queue = s.use_queue(sample)
        if queue:
            msg += (f" Following the calibration sample {queue!r}." if sample else
                    f" Following the lesson {queue!r}: everyone labels the same units in the same order."
                    if s.queue_lesson else f" Following your queue from the assignment {queue!r}.")
            if s.queue and (s.case_id, s.response_id) not in s.queue and s.next_unlabelled() is None:
                s.go_to(*s.queue[0])
        self.say(msg)
        self.render_all()

    _start = start

    def _lock_name(self) -> None:
        """The name is in use: its box is locked until "Switch name" is clicked."""
        self.naming = False
        self.name_go.description = "Switch name"
        self.name_go.tooltip = "label under another name"
        if self.name is not None:
            self.name.disabled = True
        self.bridge.named()

    def on_name(self, change: dict[str, Any]) -> None:
        """A name committed in the box (Enter, or leaving it): used only while the box is open for a name."""
        if self.syncing:
            return
        if not self.naming and self.session.annotator is not None:
            # A message changed a locked name box: the name in use stays (only "Switch name" changes it).
            with self.quiet():
                if self.name is not None:
                    self.name.value = self.session.annotator
                    self.name.disabled = True
            self.say(f"You are labelling as {self.session.annotator}; click “Switch name” to use another name.",
                     error=True)
            return
        if change["new"].strip():
            self.guard(self.start, change["new"])
            if self.naming:
                self._clear_refused_name()

    def _clear_refused_name(self) -> None:
        """A refused name is cleared from the box (the message above quotes it): a name left standing there
        reads as the name in use, while labels still go under the old name or nowhere."""
        if self.name is not None:
            with self.quiet():
                self.name.value = ""
            self.bridge.focus_name()

    def on_name_button(self) -> None:
        """"Start labelling" uses the name in the box; "Switch name" opens the box for another name."""
        if self.name is None or self.stopped:
            return
        if not self.naming and self.session.annotator is not None:
            self.naming = True
            self.name.disabled = False
            self.name_go.description = "Use this name"
            self.name_go.tooltip = "label under the name in the box (Enter)"
            self.bridge.focus_name()
            self.say(f"Type the other name and press Enter; until then you still label as {self.session.annotator}.")
            return
        self.guard(self.start, self.name.value)
        if self.naming and self.name.value.strip():
            self._clear_refused_name()

    def on_viewer(self, change: dict[str, Any]) -> None:
        value = change["new"]
        self.guard(self.session.set_annotator, None if value == ALL else value)
        self.render_all()

    def on_toggle(self, row: UnitRow, dim: str, choice: str | None) -> None:
        acked = False
        try:
            if self.stopped:
                row.refresh()  # the store or the dataset is gone: show what is stored, save nothing
                return
            if choice is None:
                return  # deselected by a sync, not by a click
            t0 = time.perf_counter()
            assert row.unit_id is not None
            try:
                change = self.session.set_label(row.unit_id, dim, TO_VALUE[choice])
            finally:
                row.refresh()  # show what is really stored ("clear" shows as no selection)
            # acknowledged as soon as it is stored, before the slower redraw: a kernel that dies during the
            # redraw must not leave a stored answer shown as unsaved ("connection lost" unsets unacked ones)
            self.bridge.ack(f"{row.prefix}-{dim}")
            acked = True
            self.timings["toggle_session"] = time.perf_counter() - t0
            if change is not None and change.conflict:
                self.say("This label had been changed in another tab; the page now shows what is stored. "
                         "Click Refresh to load every change made elsewhere.", error=True)
            elif change is not None:
                self.say(_describe(change, self.session, "Saved"))
            self.render_scores(after_label=True)
            self.timings["toggle_total"] = time.perf_counter() - t0
        finally:
            if not acked:
                self.bridge.ack(f"{row.prefix}-{dim}")

    def on_comment(self, row: UnitRow, text: str) -> None:
        if row.unit_id is None:
            return
        if self.stopped:
            row.refresh()  # nothing is saved any more: show the comment that is stored
            return
        try:
            changed = self.session.set_comment(row.unit_id, text)
        finally:
            row.refresh()
        if changed:
            what = self.session.describe(row.unit_id)
            self.say(f"Comment saved on {what}." if text.strip() else f"Comment removed from {what}.")

    def undo(self) -> None:
        s = self.session
        change = s.undo()
        if change is None:
            self.say("Nothing to undo.")
            return
        if change.case_id and change.case_id in s.dataset.cases and (
                change.case_id != s.case_id or (change.response_id and change.response_id != s.response_id)):
            s.go_to(change.case_id, change.response_id or None)
            self.render_case()
        else:
            for rows in self._rows.values():
                for r in rows:
                    if r.unit_id == change.unit_id:
                        r.refresh()
        self.say(_describe(change, self.session, "Undone"))
        self.render_scores()
        self.verdicts.render()  # the undone change may have been a verdict, a note or tags
        self.verdicts.render_counts()

    _undo = undo

    def refresh(self) -> None:
        self.session.refresh()
        if self.session.read_only:
            self._sync_viewer_options()
        self.render_all()
        self.say("Reloaded labels from the store.")

    def _sync_viewer_options(self) -> None:
        s = self.session
        names = [("all annotators (consensus)", ALL)] + [(n, n) for n in s.known_annotators()]
        current = ALL if s.annotator is None else s.annotator
        with self.quiet():
            self.viewer.unobserve(self.on_viewer, names="value")
            self.viewer.options = names
            self.viewer.value = current if current in [v for _, v in names] else ALL
            self.viewer.observe(self.on_viewer, names="value")


def _describe(change: LabelChange, session: LabelSession, verb: str) -> str:
    return describe_change(change, session, verb)
