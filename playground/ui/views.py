"""The playground page: ipywidgets drawn from a :class:`~playground.ui.session.LabelSession`.

All state and every decision live in the session; this module forwards
clicks and keys to the session and redraws what changed.  The panels are
built in :mod:`playground.ui.panels`, a unit's row in :mod:`playground.ui.rows`,
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

from ..metrics import DIMENSION_LABELS, DIMENSION_ORDER
from .bridge import PageBridge
from .fragments import (
    agreement_table,
    composite_html,
    diagnosis_html,
    esc,
    markdown_html,
    pct,
    rates_table,
    response_html,
)
from .panels import ALL, build_case, build_header, build_nav, build_scores
from .rows import FROM_VALUE, TO_VALUE, UnitRow, html_widget
from .session import EXPORT_MIME, LabelChange, LabelSession, Scores, SessionError
from .styles import CSS, GUIDE

__all__ = ["LIST_WINDOW", "PlaygroundApp", "list_window"]

_STATUS_MARK = {"unlabelled": "○", "partial": "◐", "done": "●"}


#: The case list holds at most this many cases, around the one on screen: a browser draws a 10,000-entry
#: list in seconds (1.5 s of a 10k dataset's page open, bench/bench_import.py); filters and next/previous
#: reach the rest.
LIST_WINDOW = 200


def list_window(count: int, at: int, size: int = LIST_WINDOW) -> tuple[int, int]:
    """``(start, stop)`` of the ``size`` list positions shown: all of them when ``count <= size``, else a
    window with ``at`` in its middle (``start = at - size // 2``), moved inside ``[0, count)`` at the ends."""
    if count <= size:
        return 0, count
    start = min(max(0, at - size // 2), count - size)
    return start, start + size


class PlaygroundApp:
    """The whole page; ``app.widget`` is what the notebook displays."""

    # widgets made by the panel builders (playground.ui.panels)
    agreement: Any
    bookmark: Any
    case_head: Any
    case_list: Any
    chart: Any
    claims_box: Any
    composite: Any
    dataset_pick: W.Dropdown | None
    decision: Any
    diagnosis: Any
    download: Any
    export_csv: Any
    export_jsonl: Any
    export_scope: Any
    f_disagree: Any
    f_status: Any
    f_type: Any
    f_verdict: Any
    facts_box: Any
    facts_head: Any
    history: Any
    list_note: Any
    name_go: Any
    next_b: Any
    next_u: Any
    passages_box: Any
    passages_head: Any
    prev_b: Any
    progress: Any
    progress_bar: Any
    question: Any
    queue_note: Any
    rates: Any
    reference: Any
    refresh_b: Any
    response_head: Any
    response_text: Any
    reveal: Any
    roster: Any
    scenario: Any
    scenario_note: Any
    undo_b: Any
    variants: Any
    viewer: Any
    weights: dict[str, W.FloatSlider]
    shares: dict[str, W.HTML]
    gate_on: dict[str, W.Checkbox]
    gate_floor: dict[str, W.BoundedFloatText]

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
        if reveal:
            session.reveal_all = True
        self.bridge = PageBridge()
        self.bridge.handlers.update({
            "hint": lambda msg: self.say(str(msg.get("text", ""))[:200], error=True),
            "next_response": lambda _msg: self.guard(self.next_response),
        })
        self._build()
        if annotator and not session.read_only:
            self.start(annotator)
        elif render:  # render=False: the caller starts a name next, which draws the page
            self.render_all()

    # --- layout --------------------------------------------------------------------------------------
    def _build(self) -> None:
        self.status = html_widget(cls="pg-status", min_height="1.4em")
        top = build_header(self)
        nav = build_nav(self)
        self._case_parts = build_case(self)
        self._shown_case: str | None = None
        scores = build_scores(self)
        self.body = W.HBox([nav, self._case_column(), scores], layout=W.Layout(align_items="stretch", width="100%"))
        self.body.add_class("pg-body")
        guide = W.Accordion(children=[html_widget(GUIDE)], titles=("How to label — what each question means",),
                            selected_index=None, layout=W.Layout(width="auto"))
        guide.add_class("pg-guide")
        self.widget = W.VBox([html_widget(CSS), *top, guide, self.status, self.body], layout=W.Layout(width="100%"))
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

    def dataset_names(self) -> list[str]:
        """Datasets the picker offers: :func:`playground.datasets.dataset_names` of the session's store."""
        from ..datasets import dataset_names

        return list(dataset_names(self.session.store))

    def type_options(self) -> list[tuple[str, str]]:
        return [("all case types", ALL)] + [(t.replace("_", " "), t) for t in self.session.case_types()]

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
            if isinstance(exc, StoreError):
                try:
                    self.session.refresh()
                    self.render_all()
                except Exception:
                    pass
        return None

    _guard = guard  # the name earlier callers used

    def stop(self, reason: str) -> None:
        """The store is gone (deleted or replaced): say so plainly and save nothing more."""
        self.stopped = True
        self.status.value = ("<div class='pg-stopped'>The label store has disappeared or been replaced since this "
                             "page opened, so nothing more can be saved here. Your last change was NOT saved. "
                             "Tell whoever runs the playground; labels saved before are in the original store. "
                             f"<span class='pg-muted'>({esc(reason)})</span></div>")
        for rows in self._rows.values():
            for r in rows:
                r.refresh()
        for b in (self.undo_b, self.refresh_b, self.export_csv, self.export_jsonl, self.next_u):
            b.disabled = True
        if self.name is not None:
            self.name.disabled = True

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
        self.name_go.description = "Switch name"
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

    def on_name(self, change: dict[str, Any]) -> None:
        if not self.syncing and change["new"].strip():
            self.guard(self.start, change["new"])

    def on_viewer(self, change: dict[str, Any]) -> None:
        value = change["new"]
        self.guard(self.session.set_annotator, None if value == ALL else value)
        self.render_all()

    def on_toggle(self, row: UnitRow, dim: str, choice: str | None) -> None:
        try:
            if choice is None or self.stopped:
                return  # deselected by a sync, not by a click; or the store is gone
            t0 = time.perf_counter()
            assert row.unit_id is not None
            try:
                change = self.session.set_label(row.unit_id, dim, TO_VALUE[choice])
            finally:
                row.refresh()  # show what is really stored ("clear" shows as no selection)
            self.timings["toggle_session"] = time.perf_counter() - t0
            if change is not None and change.conflict:
                self.say("This label had been changed in another tab; the page now shows what is stored. "
                         "Click Refresh to load every change made elsewhere.", error=True)
            elif change is not None:
                self.say(_describe(change, self.session, "Saved"))
            self.render_scores(after_label=True)
            self.timings["toggle_total"] = time.perf_counter() - t0
        finally:
            self.bridge.ack(f"{row.prefix}-{dim}")

    def on_comment(self, row: UnitRow, text: str) -> None:
        if self.stopped or row.unit_id is None:
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
        self.session.reveal_all = bool(value) or self.session.read_only
        self._sync_verdict_filter()
        self.render_case()
        self.render_scores(chart=False)
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
        s = self.session
        s.set_filter(
            None if self.f_type.value == ALL else self.f_type.value,
            None if self.f_status.value == ALL else self.f_status.value,
            None if self.f_verdict.value == ALL else self.f_verdict.value,
            bool(self.f_disagree.value),
        )
        self.render_list()

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
        from . import open_session_dataset

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

    # --- rendering -----------------------------------------------------------------------------------------
    def render_roster(self) -> None:
        if not self.session.read_only:
            return
        rows = self.session.annotator_progress()
        if not rows:
            self.roster.value = "<span class='pg-muted'>Nobody has labelled yet.</span>"
            return
        body = "".join(f"<tr><td>{esc(name)}</td><td class='pg-num'>{p.labelled_units}/{p.total_units}</td>"
                       f"<td class='pg-num'>{pct(p.fraction)}</td></tr>" for name, p in rows)
        self.roster.value = (f"<table style='width:100%;font-size:12.5px'><tr><th align=left>name</th>"
                             f"<th align=left>units</th><th align=left>done</th></tr>{body}</table>"
                             "<div class='pg-muted'>Refresh to update.</div>")

    def render_all(self) -> None:
        self.renders += 1
        self.render_roster()
        self.render_list()
        self.render_case()
        self.render_scores()
        self.update_url()

    def _list_label(self, row: Any) -> str:
        mark = _STATUS_MARK[row.status]
        query = " ".join(row.query.split())
        short = query if len(query) <= 46 else query[:45] + "…"
        dis = f" ≠{row.disagreements}" if row.disagreements else ""
        return f"{mark} {row.case_id} {row.labelled_units}/{row.total_units}{dis} · {short}"

    def render_list(self) -> None:
        s = self.session
        rows = s.cases()
        start, stop = list_window(len(rows), next((i for i, r in enumerate(rows) if r.case_id == s.case_id), 0))
        options = [(self._list_label(r), r.case_id) for r in rows[start:stop]]
        with self.quiet():
            if list(self.case_list.options) != options:
                self.case_list.options = options
            value = s.case_id if s.case_id in {cid for _, cid in options} else None
            if self.case_list.value != value:
                self.case_list.value = value
        total = len(s.case_ids)
        window = f" (the list holds {start + 1:,}–{stop:,}, around this case)" if stop - start < len(rows) else ""
        self.list_note.value = (f"{len(rows):,} of {total:,} cases shown{window} · ○ unlabelled ◐ partial ● done · "
                                "n/m = units labelled")
        self._render_queue()
        self._update_list_row()

    def _render_queue(self) -> None:
        s = self.session
        qp = s.queue_progress()
        if qp is None:
            self.queue_note.value = ""
            return
        what = "calibration sample" if s.queue_sample else ("lesson" if s.queue_lesson else "your queue")
        # lesson engineer (issue 23): progress reads against the lesson ("7 / 17 in this lesson")
        count = (f"<span class='pg-num pg-lesson-progress'>{qp.labelled_units} / {qp.total_units}</span> in this "
                 "lesson" if s.queue_lesson else
                 f"<span class='pg-num'>{qp.labelled_units} / {qp.total_units}</span> units done")
        self.queue_note.value = (f"<div class='pg-queue-box'><b>{esc(what)}</b> {esc(s.queue_name or '')}: "
                                 f"{count} ({pct(qp.fraction)}). next / previous / next unlabelled follow it.</div>")

    def _update_list_row(self) -> None:
        """Refresh the label of the case on screen in the list (after a toggle)."""
        s = self.session
        if s.case_id is None:
            return
        options = list(self.case_list.options)
        for i, (label, cid) in enumerate(options):
            if cid == s.case_id:
                new = self._list_label(s.case_row(cid))
                if new != label:
                    options[i] = (new, cid)
                    with self.quiet():
                        self.case_list.options = options
                        self.case_list.value = cid
                break

    def _pool(self, kind: str, count: int, dims: tuple[str, ...], box: W.VBox) -> list[UnitRow]:
        rows = self._rows[kind]
        while len(rows) < count:
            rows.append(UnitRow(self, kind, len(rows), dims))
        if len(box.children) != len(rows):
            box.children = [r.box for r in rows]
        return rows

    def render_case(self) -> None:
        s = self.session
        case = s.case
        if case is None:
            self.case_head.value = "<i>No case in this dataset.</i>"
            return
        if self._shown_case is not None and self._shown_case != case.case_id:
            self._new_case_column()
        self._shown_case = case.case_id
        self._render_case_head()
        if case.history:
            turns = "".join(f"<div class='pg-md'><b>{esc(t.role)}:</b> {markdown_html(t.content)}</div>"
                            for t in case.history)
            self.history.value = f"<div class='pg-muted'>Earlier turns</div><div class='pg-box'>{turns}</div>"
        else:
            self.history.value = ""
        self.question.value = f"<div class='pg-qbox pg-md'>{markdown_html(case.query)}</div>"
        passages = s.view_units("passage")
        claims = s.view_units("claim")
        facts = s.view_units("fact")
        self.passages_head.value = (f"Retrieved passages <span class='pg-muted'>({len(passages)}) — is each one "
                                    "relevant to the question?</span>")
        if not passages:
            self.passages_head.value += "<div class='pg-muted'>Retrieval returned no passage for this case.</div>"
        for kind, units, dims, box in (("passage", passages, ("relevant",), self.passages_box),
                                       ("claim", claims, ("supported", "correct"), self.claims_box),
                                       ("fact", facts, ("covered",), self.facts_box)):
            rows = self._pool(kind, len(units), dims, box)
            for i, row in enumerate(rows):
                row.bind(units[i] if i < len(units) else None)
        self._render_scenarios()
        self._render_response([c.unit.text for c in claims])
        self.facts_head.value = (f"Reference facts <span class='pg-muted'>({len(facts)}) — does the response "
                                 "cover each one?</span>" if s.response is not None else "")
        if s.response is not None and not facts:
            self.facts_head.value += "<div class='pg-muted'>This case lists no reference fact.</div>"
        self._render_decision()
        self.render_list()

    def _render_scenarios(self) -> None:
        s = self.session
        options = [(s.response_name(rid), rid) for rid, _ in s.scenarios()]
        with self.quiet():
            if list(self.scenario.options) != options:
                self.scenario.options = options
            if self.scenario.value != s.response_id:
                self.scenario.value = s.response_id

    def _render_response(self, claims: list[str]) -> None:
        s = self.session
        case, response = s.case, s.response
        assert case is not None
        if response is None:
            self.response_head.value = "Response <span class='pg-muted'>— this case has no authored response</span>"
            self.response_text.value = ""
            self.scenario_note.value = ""
            self.reference.value = ""
            return
        n = len(s.scenarios())
        self.response_head.value = (f"Response <span class='pg-muted'>— {n} response{'s' if n != 1 else ''} "
                                    "of this case; switch to compare (s)</span>")
        note = f"{esc(s.response_name(response.response_id))} · {esc(response.response_id)}"
        if not s.response_revealed(response.response_id):
            note += " · its variant and the harness decision show once you have labelled all of it"
        elif s.reveal_all and response.notes:
            note += f" · author's note: {esc(response.notes)}"
        self.scenario_note.value = note
        self.response_text.value = (f"<div class='pg-muted'>Full response, split into {len(claims)} claim"
                                    f"{'s' if len(claims) != 1 else ''} below (highlighted) — is each supported by "
                                    "the passages, and correct against the reference?</div>"
                                    f"<div class='pg-box pg-md'>{response_html(response.text, claims)}</div>")
        self.reference.value = ("<div class='pg-muted'>Reference answer (for “correct”)</div>"
                                f"<div class='pg-box pg-ref pg-md'>{markdown_html(case.reference_answer)}</div>")

    def _render_case_head(self) -> None:
        s = self.session
        case = s.case
        assert case is not None
        row = s.case_row(case.case_id)
        self.case_head.value = (f"<div class='pg-h'>Case {esc(case.case_id)} "
                                f"<span class='pg-muted'>· {esc(case.case_type.replace('_', ' '))} · tenant "
                                f"{esc(case.tenant)} · {row.labelled_units}/{row.total_units} units labelled "
                                f"({row.status})</span></div>")

    def _render_decision(self) -> None:
        s = self.session
        if s.response is None:
            self.decision.value = ""
            return
        d = s.decision()
        if d is None:
            self.decision.value = ("<div class='pg-auto-hidden'>Harness decision on this response: hidden until you "
                                   "have labelled every unit of it.</div>")
        elif d:
            v = esc(d.get("verdict", ""))
            self.decision.value = (f"<div><b>Harness decision:</b> <span class='pg-verdict-{v}'>{v}</span> "
                                   f"<span class='pg-muted'>{esc(d.get('failure_type') or '')} — "
                                   f"{esc(d.get('reason', ''))}</span></div>")

    def render_scores(self, after_label: bool = False, chart: bool = True) -> None:
        s = self.session
        t0 = time.perf_counter()
        sc = s.scores()
        self.timings["scores"] = time.perf_counter() - t0
        self._render_progress(sc)
        self.rates.value = rates_table(sc, s.thresholds)
        with self.quiet():
            for d in DIMENSION_ORDER:
                self.shares[d].value = f"{100 * sc.normalised_weights[d]:.0f}%"
        self.composite.value = (composite_html(sc.composite_current, "this case")
                                + composite_html(sc.composite_pooled, "all labelled")
                                + "<div class='pg-muted'>Weights are normalised to sum to 1 over the dimensions "
                                "with data; a gated composite must not be used to rank.</div>")
        self.diagnosis.value = (diagnosis_html(sc.diagnosis_current, "this case")
                                + diagnosis_html(sc.diagnosis_pooled, "all labelled"))
        self.agreement.value = agreement_table(sc.agreement)
        self.variants.value = self._variants_html()
        if after_label:
            self._update_list_row()
            self._render_decision()
            self._render_case_head()
            self._render_scenarios()
            self._render_queue()
        else:
            self._update_list_row()
        self.timings["numbers"] = time.perf_counter() - t0
        if chart:
            self.render_chart(sc)
        self.timings["render_total"] = time.perf_counter() - t0

    def _render_progress(self, sc: Scores) -> None:
        s = self.session
        p = sc.progress
        self.progress_bar.value = p.fraction
        who = "consensus of all annotators" if s.annotator is None and s.read_only else (s.annotator or "nobody yet")
        vp = s.view_progress()
        self.progress.value = (f"<span class='pg-num'><b>{p.labelled_units} / {p.total_units}</b> units labelled "
                               f"({pct(p.fraction, 1)}) · this view {vp.labelled_units}/{vp.total_units}</span> "
                               f"<span class='pg-muted'>· {esc(who)}"
                               + (f" · {p.stale} stale" if p.stale else "")
                               + (f" · {sc.ties} ties left out" if sc.ties else "") + "</span>")

    def _variants_html(self) -> str:
        s = self.session
        scen = s.scenarios()
        if not scen:
            return "<span class='pg-muted'>No responses.</span>"
        head = "".join(f"<th>{DIMENSION_LABELS[d]}</th>" for d in DIMENSION_ORDER[1:])
        rows = [f"<table><tr><th>response</th>{head}</tr>"]
        for rid, _variant in scen:
            rates = s.rates_response(rid)
            here = " style='background:#ddf4ff'" if rid == s.response_id else ""
            cells = "".join(f"<td class='pg-num'>{pct(rates[d].rate) if rates[d].has_data else '–'}</td>"
                            for d in DIMENSION_ORDER[1:])
            rows.append(f"<tr{here}><td>{esc(s.response_name(rid))}</td>{cells}</tr>")
        rows.append("</table><div class='pg-muted'>Your labels per response of this case: switch the response "
                    "above and watch each dimension move on its own.</div>")
        return "".join(rows)

    def render_chart(self, sc: Scores | None = None) -> None:
        if not self._chart_enabled:
            return
        t0 = time.perf_counter()
        from .charts import rates_svg

        sc = sc or self.session.scores()
        self.chart.value = rates_svg(sc.current, sc.pooled, self.session.thresholds)
        self.timings["chart"] = time.perf_counter() - t0


def _describe(change: LabelChange, session: LabelSession, verb: str) -> str:
    new = FROM_VALUE.get(change.new) or "no label"
    old = FROM_VALUE.get(change.old) or "no label"
    return f"{verb}: {session.describe(change.unit_id)} · {change.dimension}: {old} → {new}."
