"""Drawing the playground page from its session: the case list, the case, the numbers.

The rendering half of :class:`~playground.ui.views.PlaygroundApp` (a mixin;
its methods take the app as ``self``).  Nothing here changes the session:
it reads it and sets widget values.  The case list's lines are made by
:func:`shorten` and :func:`short_id`, and hold at most :data:`LIST_WINDOW`
cases around the one on screen (:func:`list_window`).
"""
from __future__ import annotations

import time
from contextlib import AbstractContextManager
from typing import Any

import ipywidgets as W

from ..metrics import DIMENSION_LABELS, DIMENSION_ORDER
from .explain import variant_html, why_html
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
from .rows import UnitRow
from .session import LabelSession, Progress, Scores

__all__ = ["LIST_CHARS", "LIST_WINDOW", "PageRender", "list_window", "short_id", "shorten"]

_STATUS_MARK = {"unlabelled": "○", "partial": "◐", "done": "●"}


#: The case list holds at most this many cases, around the one on screen: a browser draws a 10,000-entry
#: list in seconds (1.5 s of a 10k dataset's page open, bench/bench_import.py); filters and next/previous
#: reach the rest.
LIST_WINDOW = 200
#: Characters of one case-list line: what the 280 px list shows at 12 px without cutting (the browser test
#: measures every line at 1280 px); the question is cut at a word boundary to fit.
LIST_CHARS = 34


def shorten(text: str, limit: int = 46) -> str:
    """``text`` on one line, cut at the last word boundary within ``limit`` characters (then "…"); a single word
    longer than ``limit`` is cut inside it."""
    one = " ".join(text.split())
    if len(one) <= limit:
        return one
    cut = one[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut[:limit - 1]).rstrip(" ,.;:") + "…"


#: A sample id this long or longer, of hex digits (and dashes), is shown by its first :data:`SHORT_HEX` digits.
LONG_HEX = 17
SHORT_HEX = 10
_HEX = frozenset("0123456789abcdefABCDEF-")


def short_id(case_id: str) -> str:
    """A case id without its dataset's prefix (``halu_jsonl:h0002640e49`` → ``h0002640e49``): stable (the id is
    a hash of the sample) and short enough to read in the list.  A long hex id — a trace's 32-digit trace id, a
    UUID — is shown by its first :data:`SHORT_HEX` hex digits (``traces:4bf92f3577b34da6a3ce929d0e0e4736`` →
    ``4bf92f3577``), as short as a hash id and still the prefix a tracing tool finds it by."""
    sid = case_id.rsplit(":", 1)[-1]
    if len(sid) >= LONG_HEX and set(sid) <= _HEX:
        return sid.replace("-", "")[:SHORT_HEX]
    return sid


def list_window(count: int, at: int, size: int = LIST_WINDOW) -> tuple[int, int]:
    """``(start, stop)`` of the ``size`` list positions shown: all of them when ``count <= size``, else a
    window with ``at`` in its middle (``start = at - size // 2``), moved inside ``[0, count)`` at the ends."""
    if count <= size:
        return 0, count
    start = min(max(0, at - size // 2), count - size)
    return start, start + size


class PageRender:
    """The drawing methods of the page (see the module docstring), and the state of the page they read (set by
    :class:`~playground.ui.views.PlaygroundApp` and the panel builders of :mod:`playground.ui.panels`)."""

    session: LabelSession
    syncing: bool
    stopped: bool
    renders: int
    timings: dict[str, float]
    _chart_enabled: bool
    _rows: dict[str, list[UnitRow]]
    _shown_case: str | None
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
    search: Any
    scenario_note: Any
    undo_b: Any
    variants: Any
    viewer: Any
    weights: dict[str, W.FloatSlider]
    shares: dict[str, W.HTML]
    gate_on: dict[str, W.Checkbox]
    gate_floor: dict[str, W.BoundedFloatText]

    # what the app itself defines (views.PlaygroundApp)
    def quiet(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _new_case_column(self) -> None:
        raise NotImplementedError

    def update_url(self) -> None:
        raise NotImplementedError

    def _pool(self, kind: str, count: int, dims: tuple[str, ...], box: W.VBox) -> list[UnitRow]:
        raise NotImplementedError

    # --- rendering -----------------------------------------------------------------------------------------
    def render_roster(self) -> None:
        if not self.session.read_only:
            return
        rows = self.session.annotator_progress()
        if not rows:
            self.roster.value = "<span class='pg-muted'>Nobody has labelled yet.</span>"
            return
        body = "".join(f"<tr><td>{esc(name)}</td><td class='pg-num'>{p.labelled_units}/{p.total_units}</td>"
                       f"<td class='pg-num'>{pct(p.unit_fraction)}</td></tr>" for name, p in rows)
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
        dis = f" ≠{row.disagreements}" if row.disagreements else ""
        head = f"{mark} {short_id(row.case_id)} {row.labelled_units}/{row.total_units}{dis} · "
        return head + shorten(row.query, max(12, LIST_CHARS - len(head)))

    def render_list(self) -> None:
        s = self.session
        rows = s.cases()
        start, stop = list_window(len(rows), next((i for i, r in enumerate(rows) if r.case_id == s.case_id), 0))
        options = [(self._list_label(r), r.case_id) for r in rows[start:stop]]
        with self.quiet(), self.case_list.hold_sync():  # new options and the selection: one message
            if list(self.case_list.options) != options:
                self.case_list.options = options
            value = s.case_id if s.case_id in {cid for _, cid in options} else None
            if self.case_list.value != value:
                self.case_list.value = value
        lesson = s.lesson_cases()
        total = len(s.case_ids) if lesson is None else len(lesson)
        window = f" (the list holds {start + 1:,}–{stop:,}, around this case)" if stop - start < len(rows) else ""
        found = f" matching “{esc(s.filter.text)}”" if s.filter.text else ""
        of = f"{total:,} cases" if lesson is None else f"{total:,} case{'s' if total != 1 else ''} of the lesson"
        self.list_note.value = (f"{len(rows):,} of {of} shown{found}{window} · ○ unlabelled ◐ partial "
                                "● done · n/m = units labelled")
        self._render_queue()
        self._update_list_row()

    def _render_queue(self) -> None:
        s = self.session
        qp = s.queue_progress()
        if qp is None:
            self.queue_note.value = ""
            return
        what = "calibration sample" if s.queue_sample else ("lesson" if s.queue_lesson else "your queue")
        # progress reads against the lesson ("7 / 17 in this lesson")
        count = (f"<span class='pg-num pg-lesson-progress'>{qp.labelled_units} / {qp.total_units}</span> in this "
                 "lesson" if s.queue_lesson else
                 f"<span class='pg-num'>{qp.labelled_units} / {qp.total_units}</span> units done")
        self.queue_note.value = (f"<div class='pg-queue-box'><b>{esc(what)}</b> {esc(s.queue_name or '')}: "
                                 f"{count} ({pct(qp.unit_fraction)}). "
                                 "next / previous / next unlabelled follow it.</div>")

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
                    with self.quiet(), self.case_list.hold_sync():  # one message, not options then selection
                        self.case_list.options = options
                        self.case_list.value = cid
                break

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
        self.passages_head.value += why_html("relevant")
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
        if s.response is not None:
            self.facts_head.value += why_html("covered")
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
        self._render_note()
        has_reference = bool(case.reference_answer.strip())  # none: "correct" is not asked (claim_dimensions)
        ask = ("is each supported by the passages, and correct against the reference?" if has_reference else
               "is each supported by the passages? (This sample has no reference answer, so “correct” is not "
               "asked.)")
        self.response_text.value = (f"<div class='pg-muted'>Full response, split into {len(claims)} claim"
                                    f"{'s' if len(claims) != 1 else ''} below (highlighted) — {ask}</div>"
                                    f"<div class='pg-box pg-md'>{response_html(response.text, claims)}</div>")
        self.reference.value = ("<div class='pg-muted'>Reference answer (for “correct”)</div>"
                                f"<div class='pg-box pg-ref pg-md'>{markdown_html(case.reference_answer)}</div>"
                                if has_reference else "<div class='pg-muted pg-no-reference'>No reference answer "
                                "for this sample: “correct” is not asked, and coverage has no facts to check.</div>")

    def _render_note(self) -> None:
        """The line under the response switch: its name, and once revealed its variant and what it was built for."""
        s = self.session
        response = s.response
        if response is None:
            self.scenario_note.value = ""
            return
        note = f"{esc(s.response_name(response.response_id))} · {esc(response.response_id)}"
        if not s.response_revealed(response.response_id):
            note += " · its variant and the harness decision show once you have labelled all of it"
        else:
            if s.reveal_all and response.notes:
                note += f" · author's note: {esc(response.notes)}"
            note += variant_html(response.variant)
        self.scenario_note.value = note

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
            variant = s.response.variant
            self.decision.value = (f"<div><b>Harness decision:</b> <span class='pg-verdict-{v}'>{v}</span> "
                                   f"<span class='pg-muted'>{esc(d.get('failure_type') or '')} — "
                                   f"{esc(d.get('reason', ''))}</span></div>{variant_html(variant)}")

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
            self._render_note()
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
        qp = s.queue_progress() if s.queue_lesson else None
        if qp is not None:  # a lesson page reads against the lesson's units, never the dataset's
            p = Progress("", qp.labelled_units, qp.total_units, qp.labelled_pairs, qp.total_pairs,
                         p.stale_pairs)
        self.progress_bar.value = p.unit_fraction
        who = "consensus of all annotators" if s.annotator is None and s.read_only else (s.annotator or "nobody yet")
        vp = s.view_progress()
        self.progress.value = (f"<span class='pg-num'><b>{p.labelled_units} / {p.total_units}</b> units labelled "
                               + (f"in lesson {esc(s.queue_name or '')} " if qp is not None else "")
                               + f"({pct(p.unit_fraction, 1)}) · this view {vp.labelled_units}/{vp.total_units}</span> "
                               f"<span class='pg-muted'>· {esc(who)}"
                               + (f" · {p.stale_pairs} stale" if p.stale_pairs else "")
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
