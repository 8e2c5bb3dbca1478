"""The playground page: ipywidgets drawn from a :class:`~playground.ui.session.LabelSession`.

All state and every decision live in the session; this module only lays out
widgets, forwards clicks to the session and redraws what changed.

Text that comes from the corpus, the cases or the responses is always shown
as text: it goes through :func:`html.escape` before it reaches an ``HTML``
widget (or into option labels and descriptions, which ipywidgets renders as
text), so markup or script in it never runs.

Key elements carry stable CSS classes (``pg-...``) for browser tests and
custom styling: ``pg-annotator``, ``pg-annotator-go``, ``pg-progress``,
``pg-undo``, ``pg-refresh``, ``pg-status``, ``pg-case-list``, ``pg-next``,
``pg-prev``, ``pg-next-unlabelled``, ``pg-scenario``, ``pg-question``,
``pg-passage-<i>-relevant``, ``pg-claim-<i>-supported``,
``pg-claim-<i>-correct``, ``pg-fact-<i>-covered`` (each a ToggleButtons
yes / no / clear; ``...-auto`` beside it shows the harness), ``pg-rates``
(rows ``pg-rate-<dimension>``), ``pg-chart``, ``pg-weight-<dimension>``,
``pg-gate-<dimension>``, ``pg-composite``, ``pg-diagnosis``,
``pg-agreement``, ``pg-export-csv``, ``pg-export-jsonl``, ``pg-download``.
"""
from __future__ import annotations

import base64
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import ipywidgets as W

from ..metrics import DIMENSION_LABELS, DIMENSION_ORDER
from .fragments import agreement_table, composite_html, diagnosis_html, esc, pct, rates_table
from .session import (
    QUESTIONS,
    STATUSES,
    VERDICTS,
    LabelChange,
    LabelSession,
    Scores,
    SessionError,
    ViewUnit,
)

YES, NO, CLEAR = "yes", "no", "clear"
_TO_VALUE = {YES: 1, NO: 0, CLEAR: None}
_FROM_VALUE = {1: YES, 0: NO, None: None}
_STATUS_MARK = {"unlabelled": "○", "partial": "◐", "done": "●"}
ALL = "__all__"

CSS = """
<style>
.pg-app { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 14px; color: #1f2328; }
.pg-app .widget-html-content { line-height: 1.45; }
.pg-header { border-bottom: 1px solid #d0d7de; padding-bottom: 6px; margin-bottom: 6px; align-items: center; }
.pg-title { font-size: 19px; font-weight: 600; margin-right: 14px; }
.pg-muted, .pg-muted * { color: #656d76; font-size: 12px; }
.pg-panel { border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 10px; background: #fff; }
.pg-side { background: #f6f8fa; }
.pg-h { font-weight: 600; font-size: 15px; margin: 6px 0 2px 0; }
.pg-text { white-space: pre-wrap; overflow-wrap: anywhere; }
.pg-box { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; border-left: 3px solid #d0d7de;
          padding: 4px 8px; max-height: 9.5em; overflow-y: auto; font-size: 13px; }
.pg-qbox { font-size: 16px; font-weight: 500; background: #ddf4ff; border-left: 4px solid #0969da; padding: 6px 10px; }
.pg-claim { font-size: 14.5px; background: #fff8c5; border-left: 3px solid #d4a72c; padding: 3px 8px; }
.pg-ref { border-left-color: #2da44e; }
.pg-fact { font-size: 14px; background: #dafbe1; border-left: 3px solid #2da44e; padding: 3px 8px; }
.pg-unit { border-bottom: 1px dashed #d8dee4; padding: 4px 0 6px 0; }
.pg-ask { min-width: 250px; color: #424a53; }
.pg-auto-hidden { color: #8c959f; font-style: italic; font-size: 12px; }
.pg-auto-shown { font-size: 12.5px; }
.pg-differ { color: #bc4c00; font-weight: 600; }
.pg-stale { color: #9a6700; font-size: 12px; }
.pg-status-ok { color: #1a7f37; }
.pg-status-err { color: #cf222e; font-weight: 600; }
.pg-rates table, .pg-agreement table, .pg-variants table { border-collapse: collapse; width: 100%; font-size: 13px; }
.pg-rates td, .pg-rates th, .pg-agreement td, .pg-agreement th, .pg-variants td, .pg-variants th {
    padding: 2px 5px; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top; }
.pg-rates th, .pg-agreement th, .pg-variants th { color: #656d76; font-weight: 500; font-size: 12px; }
.pg-num { font-variant-numeric: tabular-nums; }
.pg-fail { color: #cf222e; font-weight: 600; }
.pg-pass { color: #1a7f37; }
.pg-warn { color: #9a6700; }
.pg-app { height: calc(100vh - 40px); min-height: 560px; }
.pg-app > * { flex: 0 0 auto; }
.pg-app > .pg-body { flex: 1 1 0; min-height: 0; }
.pg-body > .pg-panel { height: 100%; overflow-y: auto; box-sizing: border-box; }
.pg-panel > *, .pg-panel .widget-vbox > * { flex-shrink: 0; }
.pg-ci { color: #656d76; font-size: 12px; }
.pg-verdict-ACCEPT { color: #1a7f37; font-weight: 600; }
.pg-verdict-REVIEW { color: #9a6700; font-weight: 600; }
.pg-verdict-REJECT { color: #cf222e; font-weight: 600; }
.pg-app .widget-toggle-buttons .widget-toggle-button { font-size: 12.5px; }
.pg-app .pg-toggle .mod-active { font-weight: 600; }
.pg-toggle button[data-value="yes"].mod-active { background: #1a7f37; color: #fff; }
.pg-toggle button[data-value="no"].mod-active { background: #cf222e; color: #fff; }
.pg-bar > * { margin-right: 10px !important; }
.pg-readonly { background: #fff8c5; border: 1px solid #d4a72c; padding: 4px 8px; border-radius: 4px; }
</style>
"""


GUIDE = """
<div class='pg-guide-text' style='font-size:13px;line-height:1.5'>
<b>Passage — relevant to the question?</b> Yes when the passage holds information needed to answer this question
(for a multi-turn case: the last question, read with the earlier turns). Judge the passage, not the response.<br>
<b>Claim — supported by the retrieved passages?</b> Yes only when everything the claim states can be found in the
retrieved passages shown above: not in your own knowledge, not in the reference. A citation marker [n] is not
support by itself.<br>
<b>Claim — correct against the reference?</b> Yes when the claim agrees with the reference answer and facts of the
case, whatever the passages say. An abstention ("I can't find that") is correct only when the case must abstain.<br>
<b>Fact — covered by the response?</b> Yes when the response states this reference fact (a paraphrase counts).<br>
<b>clear</b> removes your label; <b>Undo</b> reverts your last change (whichever tab made it). Switch the
<b>response variant</b> to see the same case answered differently and watch each dimension move on its own.
The harness's automatic label appears beside a toggle once you have set it; the numbers on the right count only
your own labels: <i>this case</i> = the passages plus the response on screen, <i>all labelled</i> = everything you
labelled.
</div>
"""


def _html(value: str = "", cls: str = "", **layout) -> W.HTML:
    w = W.HTML(value=value, layout=W.Layout(**layout) if layout else W.Layout())
    for c in cls.split():
        w.add_class(c)
    return w


def _button(text: str, cls: str, tooltip: str = "", style: str = "", width: str = "auto", icon: str = "") -> W.Button:
    b = W.Button(description=text, tooltip=tooltip or text, button_style=style, icon=icon,
                 layout=W.Layout(width=width))
    b.add_class(cls)
    return b


class UnitRow:
    """One labelled unit on the page (reused across cases): its text and a toggle per dimension."""

    def __init__(self, app: PlaygroundApp, kind: str, index: int, dimensions: tuple[str, ...]):
        self.app = app
        self.kind = kind
        self.index = index
        self.unit_id: str | None = None
        prefix = f"pg-{kind}-{index}"
        self.title = _html(cls=f"{prefix}-title pg-muted")
        self.text = _html(cls=f"{prefix}-text")
        self.toggles: dict[str, W.ToggleButtons] = {}
        self.autos: dict[str, W.HTML] = {}
        lines = []
        for dim in dimensions:
            ask = _html(f"{esc(QUESTIONS[dim])}", "pg-ask", width="255px")
            toggle = W.ToggleButtons(options=[YES, NO, CLEAR], value=None,
                                     tooltips=["yes", "no", "remove my label"],
                                     style={"button_width": "54px"}, layout=W.Layout(width="auto"))
            toggle.add_class(f"{prefix}-{dim}")
            toggle.add_class("pg-toggle")
            toggle.observe(self._changed(dim), names="value")
            auto = _html(cls=f"{prefix}-{dim}-auto")
            self.toggles[dim] = toggle
            self.autos[dim] = auto
            lines.append(W.HBox([ask, toggle, auto], layout=W.Layout(align_items="center", flex_flow="row wrap")))
        parts = ([self.title] if kind != "claim" else []) + [self.text] + lines
        self.box = W.VBox(parts, layout=W.Layout(width="100%"))
        self.box.add_class("pg-unit")
        self.box.add_class(prefix)

    def _changed(self, dim: str) -> Callable:
        def handler(change):
            if self.app._syncing or self.unit_id is None:
                return
            self.app._guard(self.app.on_toggle, self, dim, change["new"])
        return handler

    def bind(self, vu: ViewUnit | None) -> None:
        if vu is None:
            self.unit_id = None
            self.box.layout.display = "none"
            return
        self.box.layout.display = None
        self.unit_id = vu.unit.unit_id
        text = esc(vu.unit.text)
        if self.kind == "passage":
            self.title.value = (f"<b>[{vu.index + 1}]</b> {esc(vu.title)} "
                                f"<span class='pg-muted'>· {esc(vu.detail)}</span>")
            self.text.value = f"<div class='pg-box'>{text}</div>"
        elif self.kind == "claim":
            self.text.value = f"<div class='pg-claim pg-text'><b>Claim {vu.index + 1}.</b> {text}</div>"
        else:
            self.title.value = f"<span class='pg-muted'>{esc(vu.title)}</span>"
            self.text.value = f"<div class='pg-fact pg-text'>{text}</div>"
        self.refresh()

    def refresh(self) -> None:
        """Bring toggles and harness notes in line with the session (without firing handlers)."""
        s = self.app.session
        if self.unit_id is None:
            return
        self.app._syncing = True
        try:
            for dim, toggle in self.toggles.items():
                value = _FROM_VALUE[s.label(self.unit_id, dim)]
                if toggle.value != value:
                    toggle.value = value
                disabled = not s.can_label
                if toggle.disabled != disabled:
                    toggle.disabled = disabled
                self.autos[dim].value = self._auto_html(dim)
        finally:
            self.app._syncing = False

    def _auto_html(self, dim: str) -> str:
        s = self.app.session
        uid = self.unit_id
        parts = []
        stale = s.stale_label(uid, dim)
        if stale is not None and s.label(uid, dim) is None:
            parts.append(f"<span class='pg-stale'>earlier label: {_FROM_VALUE[stale]} (text changed since)</span>")
        detail = s.auto_detail(uid, dim)
        if detail is None:
            parts.append("<span class='pg-auto-hidden'>harness: hidden until you label</span>")
        else:
            value = detail["label"]
            score = detail["score"]
            mine = s.label(uid, dim)
            differ = mine is not None and value is not None and mine != value
            txt = f"harness: <b>{_FROM_VALUE.get(value, '?')}</b>"
            if score is not None:
                txt += f" <span class='pg-ci'>({score:.2f})</span>"
            if detail["key"] is not None:
                txt += f" · key: {_FROM_VALUE.get(detail['key'], '?')}"
            if differ:
                txt += " <span class='pg-differ'>≠ you</span>"
            parts.append(f"<span class='pg-auto-shown'>{txt}</span>")
        return " ".join(parts)


class PlaygroundApp:
    """The whole page; ``app.widget`` is what the notebook displays."""

    def __init__(self, session: LabelSession, annotator: str | None = None, reveal: bool = False,
                 chart: bool = True):
        self.session = session
        self._syncing = False
        self._chart = None
        self._chart_enabled = chart
        self._rows: dict[str, list[UnitRow]] = {"passage": [], "claim": [], "fact": []}
        self.timings: dict[str, float] = {}
        if reveal:
            session.reveal_all = True
        self._build()
        if annotator and not session.read_only:
            self._start(annotator)
        else:
            self.render_all()

    # --- layout --------------------------------------------------------------------------------------
    def _build(self) -> None:
        s = self.session
        self.status = _html(cls="pg-status", min_height="1.4em")
        # header: name, progress, actions
        title = _html("<span class='pg-title'>RAG Label Playground</span>")
        if s.read_only:
            names = [("all annotators (consensus)", ALL)] + [(n, n) for n in s.known_annotators()]
            self.viewer = W.Dropdown(options=names, value=ALL if s.annotator is None else s.annotator,
                                     description="Showing", layout=W.Layout(width="330px"))
            self.viewer.add_class("pg-viewer")
            self.viewer.observe(self._on_viewer, names="value")
            who = [self.viewer, _html("<span class='pg-readonly'>Read-only dashboard: labels cannot be changed "
                                      "here.</span>")]
            self.name = None
        else:
            self.name = W.Text(placeholder="your name", description="Name", continuous_update=False,
                               layout=W.Layout(width="250px"))
            self.name.add_class("pg-annotator")
            self.name_go = _button("Start labelling", "pg-annotator-go", "label under this name", "primary")
            self.name_go.on_click(lambda _b: self._guard(self._start, self.name.value))
            self.name.observe(self._on_name, names="value")
            self.bookmark = _html(cls="pg-bookmark pg-muted")
            who = [self.name, self.name_go, self.bookmark]
        self.progress_bar = W.FloatProgress(value=0, min=0, max=1, layout=W.Layout(width="160px"))
        self.progress_bar.add_class("pg-progress-bar")
        self.progress = _html(cls="pg-progress")
        self.undo_b = _button("Undo", "pg-undo", "revert your last change", icon="undo", width="90px")
        self.undo_b.on_click(lambda _b: self._guard(self._undo))
        self.refresh_b = _button("Refresh", "pg-refresh", "reload labels from the store (other tabs' changes)",
                                 icon="refresh", width="100px")
        self.refresh_b.on_click(lambda _b: self._guard(self._refresh))
        self.reveal = W.Checkbox(value=s.reveal_all, description="show harness labels before I label",
                                 indent=False, layout=W.Layout(width="auto"))
        self.reveal.add_class("pg-reveal")
        self.reveal.disabled = s.read_only
        self.reveal.observe(lambda ch: self._guard(self._on_reveal, ch["new"]), names="value")
        actions = [self.undo_b] if not s.read_only else []
        header = W.HBox([title, *who], layout=W.Layout(flex_flow="row wrap", align_items="center"))
        header.add_class("pg-header")
        bar = W.HBox([self.progress_bar, self.progress, *actions, self.refresh_b, self.reveal],
                     layout=W.Layout(flex_flow="row wrap", align_items="center"))
        bar.add_class("pg-bar")
        note = _html("<span class='pg-muted'>Your name only labels your work — it is not a login; anyone can type "
                     "any name. Each toggle is saved at once. Harness labels stay hidden until you have labelled "
                     "the unit, so they do not sway you.</span>")

        # navigation column
        types = [("all case types", ALL)] + [(t.replace("_", " "), t) for t in s.case_types()]
        self.f_type = W.Dropdown(options=types, value=ALL, layout=W.Layout(width="100%"))
        self.f_status = W.Dropdown(options=[("any status", ALL)] + [(x, x) for x in STATUSES], value=ALL,
                                   layout=W.Layout(width="100%"))
        self.f_verdict = W.Dropdown(options=[("any harness decision", ALL)] + [(v, v) for v in VERDICTS], value=ALL,
                                    layout=W.Layout(width="100%"))
        self.f_disagree = W.Checkbox(value=False, description="only where I disagree with the harness", indent=False,
                                     layout=W.Layout(width="100%"))
        for w, c in ((self.f_type, "pg-filter-type"), (self.f_status, "pg-filter-status"),
                     (self.f_verdict, "pg-filter-verdict"), (self.f_disagree, "pg-filter-disagree")):
            w.add_class(c)
            w.observe(lambda _ch: self._guard(self._on_filter), names="value")
        self.case_list = W.Select(options=[], rows=16, layout=W.Layout(width="100%"))
        self.case_list.add_class("pg-case-list")
        self.case_list.observe(self._on_pick, names="value")
        self.list_note = _html(cls="pg-muted")
        self.prev_b = _button("◀ previous", "pg-prev", "previous case in the list", width="48%")
        self.next_b = _button("next ▶", "pg-next", "next case in the list", width="48%")
        self.next_u = _button("next unlabelled ▶▶", "pg-next-unlabelled",
                              "the next case or response variant with something left to label", "info", width="98%")
        self.prev_b.on_click(lambda _b: self._guard(self._move, s.prev_case))
        self.next_b.on_click(lambda _b: self._guard(self._move, s.next_case))
        self.next_u.on_click(lambda _b: self._guard(self._move, s.next_unlabelled))
        scopes = [("my labels", "mine"), ("all annotators", "all"), ("consensus", "consensus")]
        if s.read_only:
            scopes = scopes[1:] + scopes[:1]
        self.export_scope = W.Dropdown(options=scopes, layout=W.Layout(width="100%"))
        self.export_scope.add_class("pg-export-scope")
        self.export_csv = _button("CSV", "pg-export-csv", "prepare a CSV download", width="48%", icon="download")
        self.export_jsonl = _button("JSONL", "pg-export-jsonl", "prepare a JSONL download", width="48%",
                                    icon="download")
        self.export_csv.on_click(lambda _b: self._guard(self._export, "csv"))
        self.export_jsonl.on_click(lambda _b: self._guard(self._export, "jsonl"))
        self.download = _html(cls="pg-download")
        self.roster = _html(cls="pg-roster")
        extra = [_html("<div class='pg-h'>Annotators</div>"), self.roster] if s.read_only else []
        nav = W.VBox([
            *extra, _html("<div class='pg-h'>Cases</div>"), self.f_type, self.f_status, self.f_verdict, self.f_disagree,
            self.case_list, self.list_note, W.HBox([self.prev_b, self.next_b]), self.next_u,
            _html("<div class='pg-h'>Export labels</div>"), self.export_scope,
            W.HBox([self.export_csv, self.export_jsonl]), self.download,
        ], layout=W.Layout(width="270px", min_width="240px", flex="0 0 270px"))
        nav.add_class("pg-panel")
        nav.add_class("pg-side")
        nav.add_class("pg-nav")

        # the case
        self.case_head = _html(cls="pg-case-head")
        self.question = _html(cls="pg-question")
        self.history = _html(cls="pg-history")
        self.scenario = W.ToggleButtons(options=[], style={"button_width": "auto"},
                                        layout=W.Layout(width="auto"))
        self.scenario.add_class("pg-scenario")
        self.scenario.observe(self._on_scenario, names="value")
        self.scenario_note = _html(cls="pg-muted pg-scenario-note")
        self.passages_box = W.VBox([])
        self.claims_box = W.VBox([])
        self.facts_box = W.VBox([])
        self.response_text = _html(cls="pg-response")
        self.decision = _html(cls="pg-decision")
        self.passages_head = _html(cls="pg-h")
        self.response_head = _html(cls="pg-h")
        self.facts_head = _html(cls="pg-h")
        self.reference = _html(cls="pg-reference")
        self._case_parts = [
            self.case_head, self.history, self.question, self.passages_head, self.passages_box,
            self.response_head, W.HBox([self.scenario], layout=W.Layout(flex_flow="row wrap")), self.scenario_note,
            self.response_text, self.reference, self.claims_box, self.facts_head, self.facts_box, self.decision,
        ]
        self._shown_case: str | None = None
        case_col = self._case_column()

        # scores
        self.rates = _html(cls="pg-rates")
        self.chart_img = W.Image(format="png", layout=W.Layout(width="100%", max_width="500px"))
        self.chart_img.add_class("pg-chart")
        self.weights: dict[str, W.FloatSlider] = {}
        self.shares: dict[str, W.HTML] = {}
        self.gate_on: dict[str, W.Checkbox] = {}
        self.gate_floor: dict[str, W.BoundedFloatText] = {}
        grid = [_html("<span class='pg-muted'>dimension</span>"), _html("<span class='pg-muted'>weight</span>"),
                _html("<span class='pg-muted'>share</span>"), _html("<span class='pg-muted'>hard gate ≥</span>")]
        for d in DIMENSION_ORDER:
            sl = W.FloatSlider(value=s.weights[d], min=0, max=1, step=0.05, continuous_update=False,
                               readout_format=".2f", layout=W.Layout(width="150px"))
            sl.add_class(f"pg-weight-{d}")
            sl.observe(lambda ch, d=d: self._guard(self._on_weight, d, ch["new"]), names="value")
            share = _html(cls=f"pg-weight-{d}-share pg-num")
            on = W.Checkbox(value=False, indent=False, layout=W.Layout(width="22px"))
            on.add_class(f"pg-gate-{d}")
            floor = W.BoundedFloatText(value=s.thresholds[d], min=0, max=1, step=0.05, layout=W.Layout(width="68px"))
            floor.add_class(f"pg-gate-{d}-floor")
            on.observe(lambda ch, d=d: self._guard(self._on_gate, d), names="value")
            floor.observe(lambda ch, d=d: self._guard(self._on_gate, d), names="value")
            self.weights[d], self.shares[d], self.gate_on[d], self.gate_floor[d] = sl, share, on, floor
            grid += [_html(DIMENSION_LABELS[d]), sl, share, W.HBox([on, floor])]
        weights_grid = W.GridBox(grid, layout=W.Layout(grid_template_columns="120px 155px 50px auto",
                                                       align_items="center", grid_gap="0 4px"))
        self.composite = _html(cls="pg-composite")
        self.diagnosis = _html(cls="pg-diagnosis")
        self.agreement = _html(cls="pg-agreement")
        self.variants = _html(cls="pg-variants")
        scores_col = W.VBox([
            _html("<div class='pg-h'>The four dimensions</div>"), self.rates, self.chart_img,
            _html("<div class='pg-h'>Diagnosis</div>"), self.diagnosis,
            _html("<div class='pg-h'>Weighted composite <span class='pg-muted'>(not a standard score)</span></div>"),
            weights_grid, self.composite,
            _html("<div class='pg-h'>You versus the harness</div>"), self.agreement,
            _html("<div class='pg-h'>This case, by response variant</div>"), self.variants,
        ], layout=W.Layout(width="470px", flex="0 0 470px"))
        scores_col.add_class("pg-panel")
        scores_col.add_class("pg-scores")

        body = self.body = W.HBox([nav, case_col, scores_col], layout=W.Layout(align_items="stretch", width="100%"))
        body.add_class("pg-body")
        guide = W.Accordion(children=[_html(GUIDE)], titles=("How to label — what each question means",),
                            selected_index=None, layout=W.Layout(width="auto"))
        guide.add_class("pg-guide")
        self.widget = W.VBox([_html(CSS), header, bar, note, guide, self.status, body], layout=W.Layout(width="100%"))
        self.widget.add_class("pg-app")

    def _case_column(self) -> W.VBox:
        col = W.VBox(self._case_parts, layout=W.Layout(flex="1 1 0", min_width="420px", margin="0 8px"))
        col.add_class("pg-panel")
        col.add_class("pg-case")
        return col

    def _new_case_column(self) -> None:
        """A fresh column for a new case, so the page shows it from the top (widgets have no scroll API)."""
        nav, old, scores = self.body.children
        self.body.children = [nav, self._case_column(), scores]
        old.close()

    # --- helpers ---------------------------------------------------------------------------------------
    def _guard(self, fn: Callable, *args) -> Any:
        """Run a user action; errors become a message on the page instead of a traceback."""
        try:
            return fn(*args)
        except SessionError as exc:
            self.say(str(exc), error=True)
        except Exception as exc:
            from ..store import StoreBusyError, StoreError

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

    def say(self, message: str, error: bool = False) -> None:
        cls = "pg-status-err" if error else "pg-status-ok"
        self.status.value = f"<span class='{cls}'>{esc(message)}</span>"

    # --- actions -------------------------------------------------------------------------------------------
    def _start(self, name: str) -> None:
        s = self.session
        known = s.known_annotators()
        tidy = s.set_annotator(name)
        if self.name is not None and self.name.value != tidy:
            self._syncing = True
            try:
                self.name.value = tidy
            finally:
                self._syncing = False
        self.bookmark.value = (f"bookmark <a href='?annotator={esc(quote(tidy, safe=''))}' class='pg-bookmark-link'>"
                               f"this link</a> to come back as {esc(tidy)}")
        self.name_go.description = "Switch name"
        n = len(s.labels)
        if tidy in known:
            msg = f"Welcome back, {tidy}: {n} label{'s' if n != 1 else ''} loaded."
        else:
            msg = f"Labelling as {tidy}. Each toggle is saved at once."
            similar = [k for k in known if k.lower() == tidy.lower()]
            if similar:
                msg += f" Note: names are case-sensitive and '{similar[0]}' also exists."
        if s.stale:
            msg += f" {len(s.stale)} earlier label(s) are on text that changed since; they are shown but not counted."
        self.say(msg)
        self.render_all()

    def _on_name(self, change) -> None:
        if not self._syncing and change["new"].strip():
            self._guard(self._start, change["new"])

    def _on_viewer(self, change) -> None:
        value = change["new"]
        self._guard(self.session.set_annotator, None if value == ALL else value)
        self.render_all()

    def on_toggle(self, row: UnitRow, dim: str, choice: str | None) -> None:
        if choice is None:
            return  # deselected by a sync, not by a click
        t0 = time.perf_counter()
        try:
            change = self.session.set_label(row.unit_id, dim, _TO_VALUE[choice])
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

    def _undo(self) -> None:
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

    def _refresh(self) -> None:
        self.session.refresh()
        if self.session.read_only:
            self._sync_viewer_options()
        self.render_all()
        self.say("Reloaded labels from the store.")

    def _sync_viewer_options(self) -> None:
        s = self.session
        names = [("all annotators (consensus)", ALL)] + [(n, n) for n in s.known_annotators()]
        current = ALL if s.annotator is None else s.annotator
        self._syncing = True
        try:
            self.viewer.unobserve(self._on_viewer, names="value")
            self.viewer.options = names
            self.viewer.value = current if current in [v for _, v in names] else ALL
            self.viewer.observe(self._on_viewer, names="value")
        finally:
            self._syncing = False

    def _on_reveal(self, value: bool) -> None:
        self.session.reveal_all = bool(value) or self.session.read_only
        self._refresh_rows()
        self._render_decision()

    def _on_filter(self) -> None:
        s = self.session
        s.set_filter(
            None if self.f_type.value == ALL else self.f_type.value,
            None if self.f_status.value == ALL else self.f_status.value,
            None if self.f_verdict.value == ALL else self.f_verdict.value,
            bool(self.f_disagree.value),
        )
        self.render_list()

    def _on_pick(self, change) -> None:
        if self._syncing or change["new"] is None or change["new"] == self.session.case_id:
            return
        self._guard(self._go, change["new"])

    def _go(self, case_id: str) -> None:
        self.session.go_to(case_id)
        self._show_case()

    def _show_case(self) -> None:
        """Draw the case now on screen, with its labels reloaded (another tab may have changed them)."""
        changed = self.session.refresh_case()
        self.render_case()
        self.render_scores()
        if changed:
            self.say(f"{changed} label(s) of this case were changed in another tab; showing what is stored.")

    def _move(self, step: Callable) -> None:
        where = step()
        if where is None:
            self.say("Everything in this list is labelled." if step == self.session.next_unlabelled
                     else "No more cases in that direction (check the filters).")
            return
        self.say("")
        self._show_case()

    def _on_scenario(self, change) -> None:
        if self._syncing or change["new"] is None or change["new"] == self.session.response_id:
            return
        self._guard(self._select_response, change["new"])

    def _select_response(self, response_id: str) -> None:
        self.session.select_response(response_id)
        self._show_case()

    def _on_weight(self, dim: str, value: float) -> None:
        if self._syncing:
            return
        self.session.set_weights({dim: value})
        self.render_scores(chart=False)

    def _on_gate(self, dim: str) -> None:
        if self._syncing:
            return
        self.session.set_gate(dim, float(self.gate_floor[dim].value) if self.gate_on[dim].value else None)
        self.render_scores(chart=False)

    def _export(self, fmt: str) -> None:
        name, text, n = self.session.export_text(fmt, self.export_scope.value)
        mime = "text/csv" if fmt == "csv" else "application/x-ndjson"
        data = base64.b64encode(text.encode("utf-8")).decode("ascii")
        self.download.value = (f"<a download='{esc(name)}' href='data:{mime};charset=utf-8;base64,{data}' "
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
        self.render_roster()
        self.render_list()
        self.render_case()
        self.render_scores()

    def _list_label(self, row) -> str:
        mark = _STATUS_MARK[row.status]
        query = " ".join(row.query.split())
        short = query if len(query) <= 46 else query[:45] + "…"
        dis = f" ≠{row.disagreements}" if row.disagreements else ""
        return f"{mark} {row.case_id} {row.labelled_units}/{row.total_units}{dis} · {short}"

    def render_list(self) -> None:
        s = self.session
        rows = s.cases()
        options = [(self._list_label(r), r.case_id) for r in rows]
        self._syncing = True
        try:
            if list(self.case_list.options) != options:
                self.case_list.options = options
            value = s.case_id if s.case_id in {r.case_id for r in rows} else None
            if self.case_list.value != value:
                self.case_list.value = value
        finally:
            self._syncing = False
        total = len(s.case_ids)
        self.list_note.value = (f"{len(rows)} of {total} cases shown · ○ unlabelled ◐ partial ● done · "
                                "n/m = units labelled")
        self._update_list_row()

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
                    self._syncing = True
                    try:
                        self.case_list.options = options
                        self.case_list.value = cid
                    finally:
                        self._syncing = False
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
            turns = "".join(f"<div class='pg-text'><b>{esc(t.role)}:</b> {esc(t.content)}</div>" for t in case.history)
            self.history.value = f"<div class='pg-muted'>Earlier turns</div><div class='pg-box'>{turns}</div>"
        else:
            self.history.value = ""
        self.question.value = f"<div class='pg-qbox pg-text'>{esc(case.query)}</div>"
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
        scen = s.scenarios()
        self._syncing = True
        try:
            options = [(_variant_label(v), rid) for rid, v in scen]
            if list(self.scenario.options) != options:
                self.scenario.options = options
            if self.scenario.value != s.response_id:
                self.scenario.value = s.response_id
        finally:
            self._syncing = False
        response = s.response
        if response is None:
            self.response_head.value = "Response <span class='pg-muted'>— this case has no authored response</span>"
            self.response_text.value = ""
            self.scenario_note.value = ""
        else:
            self.response_head.value = (f"Response <span class='pg-muted'>— {len(scen)} variant"
                                        f"{'s' if len(scen) != 1 else ''} of this case; switch to compare</span>")
            note = f"variant: {esc(_variant_label(response.variant))} · {esc(response.response_id)}"
            if s.reveal_all and response.notes:
                note += f" · author's note: {esc(response.notes)}"
            self.scenario_note.value = note
            self.response_text.value = (f"<div class='pg-muted'>Full response, split into {len(claims)} claim"
                                        f"{'s' if len(claims) != 1 else ''} below — is each supported by the "
                                        "passages, and correct against the reference?</div>"
                                        f"<div class='pg-box'>{esc(response.text)}</div>")
        self.reference.value = ("<div class='pg-muted'>Reference answer (for “correct”)</div>"
                                f"<div class='pg-box pg-ref'>{esc(case.reference_answer)}</div>"
                                if response is not None else "")
        self.facts_head.value = (f"Reference facts <span class='pg-muted'>({len(facts)}) — does the response "
                                 "cover each one?</span>" if response is not None else "")
        if response is not None and not facts:
            self.facts_head.value += "<div class='pg-muted'>This case lists no reference fact.</div>"
        self._render_decision()
        self.render_list()

    def _render_case_head(self) -> None:
        s = self.session
        case = s.case
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

    def _refresh_rows(self) -> None:
        for rows in self._rows.values():
            for r in rows:
                if r.unit_id is not None:
                    r.refresh()

    def render_scores(self, after_label: bool = False, chart: bool = True) -> None:
        s = self.session
        t0 = time.perf_counter()
        sc = s.scores()
        self.timings["scores"] = time.perf_counter() - t0
        p = sc.progress
        self.progress_bar.value = p.fraction
        who = "consensus of all annotators" if s.annotator is None and s.read_only else (s.annotator or "nobody yet")
        vp = s.view_progress()
        self.progress.value = (f"<span class='pg-num'><b>{p.labelled_units} / {p.total_units}</b> units labelled "
                               f"({pct(p.fraction, 1)}) · this view {vp.labelled_units}/{vp.total_units}</span> "
                               f"<span class='pg-muted'>· {esc(who)}"
                               + (f" · {p.stale} stale" if p.stale else "")
                               + (f" · {sc.ties} ties left out" if sc.ties else "") + "</span>")
        self.rates.value = rates_table(sc, s.thresholds)
        self._syncing = True
        try:
            for d in DIMENSION_ORDER:
                self.shares[d].value = f"{100 * sc.normalised_weights[d]:.0f}%"
        finally:
            self._syncing = False
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
        else:
            self.render_list_quiet()
        self.timings["numbers"] = time.perf_counter() - t0
        if chart:
            self.render_chart(sc)
        self.timings["render_total"] = time.perf_counter() - t0

    def render_list_quiet(self) -> None:
        self._update_list_row()

    def _variants_html(self) -> str:
        s = self.session
        scen = s.scenarios()
        if not scen:
            return "<span class='pg-muted'>No responses.</span>"
        head = "".join(f"<th>{DIMENSION_LABELS[d]}</th>" for d in DIMENSION_ORDER[1:])
        rows = [f"<table><tr><th>variant</th>{head}</tr>"]
        for rid, variant in scen:
            rates = s.rates_response(rid)
            here = " style='background:#ddf4ff'" if rid == s.response_id else ""
            cells = "".join(f"<td class='pg-num'>{pct(rates[d].rate) if rates[d].has_data else '–'}</td>"
                            for d in DIMENSION_ORDER[1:])
            rows.append(f"<tr{here}><td>{esc(_variant_label(variant))}</td>{cells}</tr>")
        rows.append("</table><div class='pg-muted'>Your labels per response of this case: switch the variant "
                    "above and watch each dimension move on its own.</div>")
        return "".join(rows)

    def render_chart(self, sc: Scores | None = None) -> None:
        if not self._chart_enabled:
            return
        t0 = time.perf_counter()
        if self._chart is None:
            from .charts import RatesChart

            self._chart = RatesChart(thresholds=self.session.thresholds)
        sc = sc or self.session.scores()
        self.chart_img.value = self._chart.render(sc.current, sc.pooled)
        self.timings["chart"] = time.perf_counter() - t0


def _variant_label(variant: str) -> str:
    return variant.replace("_", " ")


def _describe(change: LabelChange, session: LabelSession, verb: str) -> str:
    new = _FROM_VALUE.get(change.new) or "no label"
    old = _FROM_VALUE.get(change.old) or "no label"
    return f"{verb}: {session.describe(change.unit_id)} · {change.dimension}: {old} → {new}."
