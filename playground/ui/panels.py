"""The panels of the playground page, built once per page: header, case list, the case, the scores.

Each ``build_*`` function creates the widgets of one panel, stores on the
:class:`~playground.ui.page_state.PageState` (the page,
:class:`~playground.ui.views.PlaygroundApp`, is one) those it updates later, wires
their events to the page's actions and returns the panel's box.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as W

from ..metrics import DIMENSION_LABELS, DIMENSION_ORDER
from .explain import why_html
from .page_state import PageState
from .rows import html_widget
from .session import STATUSES, VERDICTS, may_export_everyone

__all__ = ["ALL", "build_case", "build_header", "build_nav", "build_scores", "button", "export_scopes", "on_click"]

ALL = "__all__"


def export_scopes(read_only: bool) -> list[tuple[str, str]]:
    """The export choices: every annotator's labels only where the role may see them (serve engineer, issue 29:
    :func:`playground.ui.session.may_export_everyone`); a read-only dashboard lists them first."""
    scopes = [("my labels", "mine"), ("all annotators", "all"), ("consensus", "consensus")]
    if not may_export_everyone(read_only):
        scopes = [sc for sc in scopes if sc[1] != "all"]
    return scopes[1:] + scopes[:1] if read_only else scopes


def button(text: str, cls: str, tooltip: str = "", style: str = "", width: str = "auto", icon: str = "") -> W.Button:
    b = W.Button(description=text, tooltip=tooltip or text, button_style=style, icon=icon,
                 layout=W.Layout(width=width))
    b.add_class(cls)
    return b


def on_click(b: W.Button, app: PageState, action: Callable[..., Any], *args: Any) -> None:
    """Run ``action`` on a click, unless the button is disabled: ipywidgets delivers a click message to a
    disabled button too, and the kernel, not the page, decides what is allowed."""
    b.on_click(lambda btn: None if btn.disabled else app.guard(action, *args))


def _who(app: PageState) -> list[W.Widget]:
    s = app.session
    if s.read_only:
        names = [("all annotators (consensus)", ALL)] + [(n, n) for n in s.known_annotators()]
        app.viewer = W.Dropdown(options=names, value=ALL if s.annotator is None else s.annotator,
                                description="Showing", layout=W.Layout(width="330px"))
        app.viewer.add_class("pg-viewer")
        app.viewer.observe(app.on_viewer, names="value")
        app.name = None
        return [app.viewer, html_widget("<span class='pg-readonly'>Read-only dashboard: labels cannot be changed "
                                        "here.</span>")]
    app.name = W.Text(placeholder="your name", description="Name", continuous_update=False,
                      layout=W.Layout(width="250px"))
    app.name.add_class("pg-annotator")
    app.name_go = button("Start labelling", "pg-annotator-go", "label under this name", "primary")
    on_click(app.name_go, app, app.on_name_button)
    app.name.observe(app.on_name, names="value")
    app.bookmark = html_widget(cls="pg-bookmark pg-muted")
    return [app.name, app.name_go, app.bookmark]


def build_header(app: PageState) -> list[W.Widget]:
    """Title, name (or viewer), dataset picker; the bar with progress, undo, refresh, reveal; the note."""
    s = app.session
    title = html_widget("<span class='pg-title'>RAG Label Playground</span>")
    pick: list[W.Widget] = []
    names = app.dataset_names()
    app.dataset_pick = None
    if len(names) > 1:
        app.dataset_pick = W.Dropdown(options=names, value=s.dataset_name if s.dataset_name in names else names[0],
                                      description="Dataset", layout=W.Layout(width="260px"))
        app.dataset_pick.add_class("pg-dataset")
        app.dataset_pick.observe(lambda ch: app.guard(app.on_dataset, ch["new"]), names="value")
        pick = [app.dataset_pick]
    header = W.HBox([title, *_who(app), *pick, app.bridge],
                    layout=W.Layout(flex_flow="row wrap", align_items="center"))
    header.add_class("pg-header")
    app.progress_bar = W.FloatProgress(value=0, min=0, max=1, layout=W.Layout(width="160px"))
    app.progress_bar.add_class("pg-progress-bar")
    app.progress = html_widget(cls="pg-progress")
    app.undo_b = button("Undo", "pg-undo", "revert your last change (z)", icon="undo", width="90px")
    on_click(app.undo_b, app, app.undo)
    app.refresh_b = button("Refresh", "pg-refresh", "reload labels from the store (other tabs' changes)",
                           icon="refresh", width="100px")
    on_click(app.refresh_b, app, app.refresh)
    app.reveal = W.Checkbox(value=s.reveal_all, description="show harness labels before I label",
                            indent=False, layout=W.Layout(width="auto"))
    app.reveal.add_class("pg-reveal")
    app.reveal.disabled = s.read_only
    app.reveal.observe(lambda ch: app.guard(app.on_reveal, ch["new"]), names="value")
    actions = [app.undo_b] if not s.read_only else []
    keys = html_widget("<span class='pg-keyhint'>Keys: <b>?</b> shows them — j/k unit, y/n/u/c answer, "
                       "→/← case, z undo, p/f/m verdict</span>")
    bar = W.HBox([app.progress_bar, app.progress, *actions, app.refresh_b, app.reveal, keys],
                 layout=W.Layout(flex_flow="row wrap", align_items="center"))
    bar.add_class("pg-bar")
    note = html_widget("<span class='pg-muted'>Your name only labels your work — it is not a login; anyone can "
                       "type any name. Each answer is saved at once. Harness labels and response variants stay "
                       "hidden until you have labelled, so they do not sway you.</span>")
    return [header, bar, note]


def build_nav(app: PageState) -> W.VBox:
    """The case list with its filters and buttons, the export."""
    s = app.session
    app.search = W.Text(value=s.filter.text, placeholder="search question, answer, passages (/)",
                        continuous_update=True, layout=W.Layout(width="100%"))
    app.search.add_class("pg-search")
    app.search.observe(lambda _ch: app.guard(app.on_filter), names="value")
    app.f_type = W.Dropdown(options=app.type_options(), value=ALL, layout=W.Layout(width="100%"))
    app.f_status = W.Dropdown(options=[("any status", ALL)] + [(x, x) for x in STATUSES], value=ALL,
                              layout=W.Layout(width="100%"))
    app.f_verdict = W.Dropdown(options=[("any harness decision", ALL)] + [(v, v) for v in VERDICTS], value=ALL,
                               layout=W.Layout(width="100%"))
    app.f_disagree = W.Checkbox(value=False, description="only where I disagree with the harness", indent=False,
                                layout=W.Layout(width="100%"))
    for w, c in ((app.f_type, "pg-filter-type"), (app.f_status, "pg-filter-status"),
                 (app.f_verdict, "pg-filter-verdict"), (app.f_disagree, "pg-filter-disagree")):
        w.add_class(c)
        w.observe(lambda _ch: app.guard(app.on_filter), names="value")
    app.case_list = W.Select(options=[], rows=16, layout=W.Layout(width="100%"))
    app.case_list.add_class("pg-case-list")
    app.case_list.observe(app.on_pick, names="value")
    app.list_note = html_widget(cls="pg-muted")
    app.queue_note = html_widget(cls="pg-queue")
    app.prev_b = button("◀ previous", "pg-prev", "previous case (← or [)", width="48%")
    app.next_b = button("next ▶", "pg-next", "next case (→ or ])", width="48%")
    app.next_u = button("next unlabelled ▶▶", "pg-next-unlabelled",
                        "the first case or response with something left to label, from this one (g)", "info",
                        width="98%")
    on_click(app.prev_b, app, app.move, "prev")
    on_click(app.next_b, app, app.move, "next")
    on_click(app.next_u, app, app.move, "unlabelled")
    app.export_scope = W.Dropdown(options=export_scopes(s.read_only), layout=W.Layout(width="100%"))
    app.export_scope.add_class("pg-export-scope")
    app.export_csv = button("CSV", "pg-export-csv", "prepare a CSV download", width="48%", icon="download")
    app.export_jsonl = button("JSONL", "pg-export-jsonl", "prepare a JSONL download", width="48%", icon="download")
    on_click(app.export_csv, app, app.export, "csv")
    on_click(app.export_jsonl, app, app.export, "jsonl")
    app.download = html_widget(cls="pg-download")
    app.roster = html_widget(cls="pg-roster")
    extra = [html_widget("<div class='pg-h'>Annotators</div>"), app.roster] if s.read_only else []
    nav = W.VBox([
        *extra, html_widget("<div class='pg-h'>Cases</div>"), app.queue_note, app.search, app.f_type, app.f_status,
        app.f_verdict, app.f_disagree, app.case_list, app.list_note, W.HBox([app.prev_b, app.next_b]), app.next_u,
        html_widget("<div class='pg-h'>Export labels</div>"), app.export_scope,
        W.HBox([app.export_csv, app.export_jsonl]), app.download,
    ], layout=W.Layout(width="280px"))
    for c in ("pg-panel", "pg-side", "pg-nav"):
        nav.add_class(c)
    return nav


def build_case(app: PageState) -> list[W.Widget]:
    """The widgets of the case column (the column itself is made fresh per case by the app)."""
    app.case_head = html_widget(cls="pg-case-head")
    app.question = html_widget(cls="pg-question")
    app.history = html_widget(cls="pg-history")
    app.scenario = W.ToggleButtons(options=[], style={"button_width": "auto"}, layout=W.Layout(width="auto"))
    app.scenario.add_class("pg-scenario")
    app.scenario.observe(app.on_scenario, names="value")
    app.scenario_note = html_widget(cls="pg-muted pg-scenario-note")
    app.passages_box = W.VBox([])
    app.claims_box = W.VBox([])
    app.facts_box = W.VBox([])
    app.response_text = html_widget(cls="pg-response")
    app.decision = html_widget(cls="pg-decision")
    app.passages_head = html_widget(cls="pg-h")
    app.response_head = html_widget(cls="pg-h")
    app.facts_head = html_widget(cls="pg-h")
    app.reference = html_widget(cls="pg-reference")
    claims_why = html_widget(why_html("supported") + why_html("correct"), cls="pg-claims-why")
    # The response under judgement comes right after the question, so it is on screen when a case opens
    # (1280 x 800, issue 23.7); the passages, then the claims to judge against them, follow.
    return [
        app.case_head, app.history, app.question,
        app.response_head, W.HBox([app.scenario], layout=W.Layout(flex_flow="row wrap")), app.scenario_note,
        app.response_text, app.passages_head, app.passages_box, app.reference, claims_why, app.claims_box,
        app.facts_head, app.facts_box, app.decision,
    ]


def _weights_grid(app: PageState) -> W.GridBox:
    s = app.session
    app.weights, app.shares, app.gate_on, app.gate_floor = {}, {}, {}, {}
    grid: list[W.Widget] = [html_widget("<span class='pg-muted'>dimension</span>"),
                            html_widget("<span class='pg-muted'>weight</span>"),
                            html_widget("<span class='pg-muted'>share</span>"),
                            html_widget("<span class='pg-muted'>hard gate ≥</span>")]
    for d in DIMENSION_ORDER:
        sl = W.FloatSlider(value=s.weights[d], min=0, max=1, step=0.05, continuous_update=False,
                           readout_format=".2f", layout=W.Layout(width="150px"))
        sl.add_class(f"pg-weight-{d}")
        sl.observe(lambda ch, d=d: app.guard(app.on_weight, d, ch["new"]), names="value")
        share = html_widget(cls=f"pg-weight-{d}-share pg-num")
        on = W.Checkbox(value=d in s.gates, indent=False, layout=W.Layout(width="22px"))
        on.add_class(f"pg-gate-{d}")
        floor = W.BoundedFloatText(value=s.gates.get(d, s.thresholds[d]), min=0, max=1, step=0.05,
                                   layout=W.Layout(width="68px"))
        floor.add_class(f"pg-gate-{d}-floor")
        on.observe(lambda ch, d=d: app.guard(app.on_gate, d), names="value")
        floor.observe(lambda ch, d=d: app.guard(app.on_gate, d), names="value")
        app.weights[d], app.shares[d], app.gate_on[d], app.gate_floor[d] = sl, share, on, floor
        grid += [html_widget(DIMENSION_LABELS[d]), sl, share, W.HBox([on, floor])]
    box = W.GridBox(grid, layout=W.Layout(align_items="center", grid_gap="0 4px"))
    box.add_class("pg-weights")
    return box


def build_scores(app: PageState) -> W.VBox:
    """Rates, chart, diagnosis, weights and gates, composite, agreement, the case by response."""
    app.rates = html_widget(cls="pg-rates")
    app.chart = html_widget(cls="pg-chart pg-chart-svg", width="100%")
    weights_grid = _weights_grid(app)
    app.composite = html_widget(cls="pg-composite")
    app.diagnosis = html_widget(cls="pg-diagnosis")
    app.agreement = html_widget(cls="pg-agreement")
    app.variants = html_widget(cls="pg-variants")
    col = W.VBox([
        html_widget("<div class='pg-h'>The four dimensions</div>"), app.rates, html_widget(why_html("wilson")),
        app.chart,
        html_widget("<div class='pg-h'>Diagnosis</div>"), app.diagnosis,
        html_widget("<div class='pg-h'>Weighted composite <span class='pg-muted'>(not a standard score)</span></div>"),
        html_widget(why_html("composite")), weights_grid, app.composite,
        html_widget("<div class='pg-h'>You versus the harness</div>"), app.agreement,
        html_widget("<div class='pg-h'>This case, by response</div>"), app.variants,
    ], layout=W.Layout(width="auto"))
    col.add_class("pg-panel")
    col.add_class("pg-scores")
    return col
