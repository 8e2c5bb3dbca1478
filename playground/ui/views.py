"""The playground page: ipywidgets drawn from a :class:`~playground.ui.session.LabelSession`.

All state and every decision live in the session; this module forwards
clicks and keys to the session and redraws what changed.  The panels are
built in :mod:`playground.ui.panels`, drawn by :mod:`playground.ui.render`, a unit's row in
:mod:`playground.ui.rows`, the explanations in :mod:`playground.ui.explain`,
the front-end helper (keys, URL bar, connection watch) in
:mod:`playground.ui.bridge`, the style sheet in :mod:`playground.ui.styles`.

Text that comes from the corpus, the cases or the responses is either
escaped (:func:`~playground.ui.fragments.esc`) or rendered as markdown and
sanitised (:func:`~playground.ui.fragments.markdown_html`) before it reaches
an ``HTML`` widget; option labels and descriptions are rendered as text by
ipywidgets.  Markup or script in the data never runs.

Blind mode: until a response is fully answered (or reveal is on), it is
called "Response 1, 2, ..." everywhere on the page and no filter or badge
shows a harness verdict or its variant.

Key elements carry stable CSS classes (``pg-...``) for browser tests and
custom styling: ``pg-annotator``, ``pg-annotator-go``, ``pg-progress``,
``pg-undo``, ``pg-refresh``, ``pg-status``, ``pg-case-list``, ``pg-next``,
``pg-prev``, ``pg-next-unlabelled``, ``pg-scenario``, ``pg-question``,
``pg-passage-<i>-relevant``, ``pg-claim-<i>-supported``,
``pg-claim-<i>-correct``, ``pg-fact-<i>-covered`` (each a ToggleButtons
yes / no / unsure / clear inside a ``pg-q`` line; ``...-auto`` beside it
shows the harness), ``pg-<kind>-<i>-comment``, ``pg-claim-<i>-evidence``,
``pg-mark-<i>`` (claim i in the response), ``pg-rates`` (rows
``pg-rate-<dimension>``), ``pg-chart``, ``pg-weight-<dimension>``,
``pg-gate-<dimension>``, ``pg-composite``, ``pg-diagnosis``,
``pg-agreement``, ``pg-export-csv``, ``pg-export-jsonl``, ``pg-download``,
``pg-dataset``, ``pg-queue``, ``pg-stopped``.
"""
from __future__ import annotations

import base64
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote, urlencode

import ipywidgets as W

from .bridge import PageBridge
from .fragments import (
    esc,
)
from .panels import ALL, build_case, build_header, build_nav, build_scores
from .render import LIST_CHARS, LIST_WINDOW, PageRender, list_window, short_id, shorten
from .rows import TO_VALUE, UnitRow, html_widget
from .session import EXPORT_MIME, DatasetChangedError, LabelChange, LabelSession, SessionError
from .styles import CSS, GUIDE
from .verdict_panel import VerdictPanel, describe_change

__all__ = ["LIST_CHARS", "LIST_WINDOW", "PlaygroundApp", "list_window", "short_id", "shorten"]



class PlaygroundApp(PageRender):
    """The whole page; ``app.widget`` is what the notebook displays."""

    def __init__(self, session: LabelSession, annotator: str | None = None, reveal: bool = False,
                 chart: bool = True, render: bool = True):
        self.session = session
        self.syncing = False
        self.stopped = False
        self._chart_enabled = chart
        self._rows: dict[str, list[UnitRow]] = {"passage": [], "claim": [], "fact": []}
        self.timings: dict[str, float] = {}
        #: How many times the whole page was drawn (:meth:`render_all`).
        self.renders = 0
        self.name: W.Text | None = None
        #: Whether the name box is open for a name (no name yet, or after "Switch name"); a name in use is
        #: locked so that no key can change it (issue 24.1).
        self.naming = True
        if reveal:
            session.reveal_all = True
        self.bridge = PageBridge()
        self._pings = 0
        self.bridge.handlers.update({
            "hint": lambda msg: self.say(str(msg.get("text", ""))[:200], error=True),
            "next_response": lambda _msg: self.guard(self.next_response),
            "ping": lambda _msg: self.heartbeat(),
        })
        self._build()
        if annotator and not session.read_only:
            self.start(annotator)
        elif render:  # render=False: the caller starts a name next, which draws the page
            self.render_all()

    # --- layout --------------------------------------------------------------------------------------
    def _build(self) -> None:
        self.status = html_widget(cls="pg-status", min_height="1.4em")
        self.verdicts = VerdictPanel(self)  # a response's verdict, note and tags; the guidelines (issue 24.5/24.6)
        top = build_header(self)
        nav = build_nav(self)
        self._case_parts = build_case(self)
        self._shown_case: str | None = None
        scores = build_scores(self)
        guide = W.Accordion(children=[html_widget(GUIDE)], titles=("How to label — what each question means",),
                            selected_index=None, layout=W.Layout(width="auto"))
        guide.add_class("pg-guide")
        guides = self.verdicts.place(self._case_parts, scores, guide)  # before the case column is made of the parts
        self.body = W.HBox([nav, self._case_column(), scores], layout=W.Layout(align_items="stretch", width="100%"))
        self.body.add_class("pg-body")
        self.widget = W.VBox([html_widget(CSS), *top, guides, self.status, self.body], layout=W.Layout(width="100%"))
        self.widget.add_class("pg-app")
        self._sync_verdict_filter()

    def _case_column(self) -> W.VBox:
        col = W.VBox(self._case_parts, layout=W.Layout(margin="0"))
        col.add_class("pg-panel")
        col.add_class("pg-case")
        return col

    def _new_case_column(self) -> None:
        """A fresh column for a new case, so the page shows it from the top (widgets have no scroll API)."""
        nav, old, scores = self.body.children
        self.body.children = [nav, self._case_column(), scores]
        old.close()

    def _pool(self, kind: str, count: int, dims: tuple[str, ...], box: W.VBox) -> list[UnitRow]:
        rows = self._rows[kind]
        while len(rows) < count:
            rows.append(UnitRow(self, kind, len(rows), dims))
        if len(box.children) != len(rows):
            box.children = [r.box for r in rows]
        return rows

    def dataset_names(self) -> list[str]:
        """Datasets the picker offers: :func:`playground.datasets.dataset_names` of the session's store."""
        from ..datasets import dataset_names

        return list(dataset_names(self.session.store))

    def type_options(self) -> list[tuple[str, str]]:
        return [("all case types", ALL)] + [(t.replace("_", " "), t) for t in self.session.case_types()]

    # --- drawing: the render mixin's, plus the verdict panel ---------------------------------------------
    def render_all(self) -> None:
        self.verdicts.render_guidelines()
        self.verdicts.render_counts()  # over every response: on the whole page's drawing and after a verdict or tag
        super().render_all()
        self.verdicts.render()

    # --- helpers ---------------------------------------------------------------------------------------
    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Change widgets without their handlers acting on it."""
        before = self.syncing
        self.syncing = True
        try:
            yield
        finally:
            self.syncing = before

    def guard(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a user action; errors become a message on the page instead of a traceback."""
        try:
            return fn(*args)
        except DatasetChangedError as exc:
            self.stop(str(exc), dataset=True)
        except SessionError as exc:
            self.say(str(exc), error=True)
        except Exception as exc:
            from ..store import StoreBusyError, StoreError, StoreGoneError

            if isinstance(exc, StoreGoneError):
                self.stop(str(exc))
                return None
            if isinstance(exc, StoreBusyError):
                self.say("The label store is busy (many people saving at once); your last change was not saved. "
                         "Click it again.", error=True)
            elif isinstance(exc, StoreError):
                self.say(f"Label store: {exc}", error=True)
            else:
                traceback.print_exc(file=sys.stderr)
                self.say(f"Something went wrong: {type(exc).__name__}: {exc}", error=True)
            if isinstance(exc, StoreError):  # the server's log says it too (issue 30.3)
                print(f"playground: a page's label store action failed: {exc}", file=sys.__stderr__ or sys.stderr,
                      flush=True)
                try:
                    self.session.refresh()
                    self.render_all()
                except Exception:
                    pass
        return None

    _guard = guard  # the name earlier callers used

    def stop(self, reason: str, dataset: bool = False) -> None:
        """The store is gone (deleted or replaced), or (``dataset``) the dataset was re-imported under this page:
        say so plainly and save nothing more."""
        if self.stopped:
            return
        self.stopped = True
        if dataset:
            self.status.value = (f"<div class='pg-stopped pg-dataset-changed'>{esc(reason)} Anything you clicked "
                                 "since the change was NOT saved.</div>")
        else:
            self.status.value = ("<div class='pg-stopped'>The label store has disappeared or been replaced since "
                                 "this page opened, so nothing more can be saved here. Your last change was NOT saved. "
                                 "Tell whoever runs the playground; labels saved before are in the original store. "
                                 f"<span class='pg-muted'>({esc(reason)})</span></div>")
        for rows in self._rows.values():
            for r in rows:
                r.refresh()
        for b in (self.undo_b, self.refresh_b, self.export_csv, self.export_jsonl, self.next_u):
            b.disabled = True
        if self.name is not None:
            self.name.disabled = True
        self.verdicts.render()

    #: Every how many pings (2 s apart) the page checks that its dataset was not re-imported under it.
    CHECK_EVERY = 5

    def heartbeat(self) -> None:
        """On the front-end's ping: every :attr:`CHECK_EVERY` th, stop the page if its dataset changed in the store,
        so the annotator is told before their next click rather than by it."""
        self._pings += 1
        if self.stopped or self._pings % self.CHECK_EVERY:
            return
        try:
            changed = self.session.dataset_changed()
        except Exception:  # a busy or gone store is reported by the next write, with its own words
            return
        if changed:
            self.guard(self.session.check_dataset)

    def say(self, message: str, error: bool = False) -> None:
        if self.stopped:
            return
        cls = "pg-status-err" if error else "pg-status-ok"
        self.status.value = f"<span class='{cls}'>{esc(message)}</span>"

    def update_url(self) -> None:
        """Put the view (name, dataset, case, response, weights, gates, reveal) in the URL bar."""
        params = self.session.url_params()
        self.bridge.query = ("?" + urlencode(params, quote_via=quote)) if params else ""

    # --- actions -------------------------------------------------------------------------------------------
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
        self.start(self.name.value)

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

    def on_reveal(self, value: bool) -> None:
        if self.syncing:
            return
        if self.reveal.disabled and bool(value) != self.session.reveal_all:
            with self.quiet():  # a message set a locked checkbox: the session's mode stands
                self.reveal.value = self.session.reveal_all
            return
        self.session.reveal_all = bool(value) or self.session.read_only
        self._sync_verdict_filter()
        self.render_case()
        self.render_scores(chart=False)
        self.verdicts.render()
        self.update_url()

    def sync_controls(self) -> None:
        """Set the weight, gate and reveal controls from the session (a link changed it after the page was built)."""
        s = self.session
        with self.quiet():
            for d, slider in self.weights.items():
                slider.value = s.weights[d]
                self.gate_on[d].value = d in s.gates
                self.gate_floor[d].value = s.gates.get(d, s.thresholds[d])
            self.reveal.value = s.reveal_all
            self.search.value = s.filter.text
        self._sync_verdict_filter()

    def _sync_verdict_filter(self) -> None:
        """Blind mode: the harness-decision filter is hidden (and off) until reveal is on."""
        shown = self.session.reveal_all
        self.f_verdict.layout.display = None if shown else "none"
        if not shown and self.f_verdict.value != ALL:
            with self.quiet():
                self.f_verdict.value = ALL
            self.on_filter()

    def on_filter(self) -> None:
        """Apply the filters; the harness-decision filter only with reveal on (blind mode, checked here on the
        kernel whatever the page showed: a widget message can set a hidden dropdown)."""
        if self.syncing:
            return
        s = self.session
        verdict = None if self.f_verdict.value == ALL else self.f_verdict.value
        if verdict is not None and not s.reveal_all:
            with self.quiet():
                self.f_verdict.value = ALL
            verdict = None
            self.say("The harness-decision filter is offered only with “show harness labels” on.", error=True)
        s.set_filter(
            None if self.f_type.value == ALL else self.f_type.value,
            None if self.f_status.value == ALL else self.f_status.value,
            verdict,
            bool(self.f_disagree.value),
            str(self.search.value),
        )
        self.render_list()
        self.update_url()

    def on_pick(self, change: dict[str, Any]) -> None:
        if self.syncing or change["new"] is None or change["new"] == self.session.case_id:
            return
        self.guard(self.go, change["new"])

    def go(self, case_id: str, response_id: str | None = None) -> None:
        self.session.go_to(case_id, response_id)
        self.show_case()

    def show_case(self) -> None:
        """Draw the case now on screen, with its labels reloaded (another tab may have changed them)."""
        changed = self.session.refresh_case()
        self.render_case()
        self.render_scores()
        self.bridge.focus_first()
        self.verdicts.render()  # after the focus message: the keys' focus is not held up by the panel's queries
        self.update_url()
        if changed:
            self.say(f"{changed} label(s) of this case were changed in another tab; showing what is stored.")

    def move(self, where: str) -> None:
        s = self.session
        here = (s.case_id, s.response_id)
        step = {"next": s.next_case, "prev": s.prev_case, "unlabelled": s.next_unlabelled}[where]
        if step() is None:
            self.say("Everything here is labelled." if where == "unlabelled"
                     else "No more cases in that direction" + (" in your queue." if s.queue else
                                                               " (check the filters)."))
            return
        if where == "unlabelled" and (s.case_id, s.response_id) == here:
            self.say("Something on this page is still unlabelled: the focus is on it.")
            self.bridge.focus_first()
            return
        self.say("")
        self.show_case()

    def next_response(self) -> None:
        """The key ``s``: the next response of the case on screen (wrapping round)."""
        ids = [rid for rid, _ in self.session.scenarios()]
        if len(ids) > 1 and self.session.response_id in ids:
            self.select_response(ids[(ids.index(self.session.response_id) + 1) % len(ids)])

    def on_scenario(self, change: dict[str, Any]) -> None:
        if self.syncing or change["new"] is None or change["new"] == self.session.response_id:
            return
        self.guard(self.select_response, change["new"])

    def select_response(self, response_id: str) -> None:
        self.session.select_response(response_id)
        self.show_case()

    def on_weight(self, dim: str, value: float) -> None:
        if self.syncing:
            return
        self.session.set_weights({dim: value})
        self.render_scores(chart=False)
        self.update_url()

    def on_gate(self, dim: str) -> None:
        if self.syncing:
            return
        self.session.set_gate(dim, float(self.gate_floor[dim].value) if self.gate_on[dim].value else None)
        self.render_scores(chart=False)
        self.update_url()

    def on_dataset(self, name: str) -> None:
        """Open another dataset on the same store, keeping the name."""
        if name == self.session.dataset_name:
            return
        from .session import open_session_dataset

        old = self.session
        self.session = open_session_dataset(name, old.store, reveal_all=old.reveal_all)
        if old.annotator is not None:
            self.session.set_annotator(old.annotator)
            self.session.use_queue()
        for kind, rows in self._rows.items():
            for r in rows:
                r.box.close()
            self._rows[kind] = []
        for box in (self.passages_box, self.claims_box, self.facts_box):
            box.children = []
        with self.quiet():
            self.f_type.options = self.type_options()
            self.f_type.value = ALL
            self.search.value = ""
        self.session.set_filter()
        self._shown_case = None
        self.render_all()
        self.update_url()
        self.say(f"Dataset {name}: {len(self.session.case_ids)} cases.")

    def export(self, fmt: str) -> None:
        name, content, n = self.session.export_file(fmt, self.export_scope.value)
        data = base64.b64encode(content).decode("ascii")
        self.download.value = (f"<a download='{esc(name)}' href='data:{EXPORT_MIME[fmt]};charset=utf-8;base64,{data}' "
                               f"class='pg-download-link'>⬇ download {esc(name)}</a> "
                               f"<span class='pg-muted'>({n} row{'s' if n != 1 else ''})</span>")



def _describe(change: LabelChange, session: LabelSession, verb: str) -> str:
    return describe_change(change, session, verb)
