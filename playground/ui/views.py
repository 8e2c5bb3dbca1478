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

import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote, urlencode

import ipywidgets as W

from .bridge import PageBridge
from .fragments import esc
from .page_actions import PageActions
from .page_navigation import PageNavigation
from .panels import ALL, build_case, build_header, build_nav, build_scores
from .render import LIST_CHARS, LIST_WINDOW, list_window, short_id, shorten
from .rows import UnitRow, html_widget
from .session import DatasetChangedError, LabelSession, SessionError
from .styles import CSS, GUIDE
from .verdict_panel import VerdictPanel

__all__ = ["LIST_CHARS", "LIST_WINDOW", "PlaygroundApp", "list_window", "short_id", "shorten"]


class PlaygroundApp(PageActions, PageNavigation):
    """The whole page; ``app.widget`` is what the notebook displays.

    Its parts: the layout and the page's lifecycle here (build, guard, stop, heartbeat, status line, URL), the
    drawing in :class:`~playground.ui.render.PageRender`, the actions on labels and names in
    :class:`~playground.ui.page_actions.PageActions`, navigation and view controls in
    :class:`~playground.ui.page_navigation.PageNavigation`."""

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
