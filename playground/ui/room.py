"""The instructor's room (``notebooks/room.ipynb``): a live page over the label store for a class.

Every few seconds (``?interval=SECONDS``, default 3) the page reads the events
written since it last looked (:class:`playground.calibrate.room.Room`) and, when
there are any, redraws: per-annotator progress (against their queue when an
assignment exists), agreement between annotators per dimension (pairwise
Cohen's kappa, Fleiss' kappa, Krippendorff's alpha), each student's accuracy
against the answer key, and the teaching moments — the units with the most
disagreement, each with its vote split, unsure answers and comments — where
the instructor settles a disagreement (adjudication).  An assignment
(annotators, overlap, seed) can be made from the page, the queue sizes show;
so can a calibration sample (a seeded uniform random sample of units).

Writes: the room opens the store writable but holds only a
:class:`~playground.calibrate.room.RoomStore`, which can write an adjudication
or an assignment and nothing else; students' labels are read-only here.  When
the store cannot be opened for writing (read-only media, a reader role), the
page opens it read-only and says that adjudication and assignment are off.

The timer is an asyncio task on the kernel's own event loop (the loop that
handles the page's messages), so widgets are only touched from that thread;
outside a kernel a daemon thread does the same.

Settings: ``PLAYGROUND_ROOT``, ``PLAYGROUND_DB``, ``PLAYGROUND_LINK_BASE`` (the
playground's address: case ids then link to ``<base>?case=<case_id>``); in the URL ``?dataset=NAME``,
``?adjudicator=NAME`` (or ``?annotator=NAME``) and ``?interval=SECONDS``.

CSS classes for tests: ``pr-room``, ``pr-updated``, ``pr-status``, ``pr-progress``,
``pr-agreement``, ``pr-accuracy``, ``pr-notes``, ``pr-moments``, ``pr-moment`` (and ``pr-moment-<i>``),
``pr-split``, ``pr-consensus``, ``pr-moment-dimension``, ``pr-moment-count``, ``pr-adj-yes``,
``pr-adj-no``, ``pr-adj-withdraw``,
``pr-adjudicator``, ``pr-assign-annotators``, ``pr-assign-overlap``, ``pr-assign-seed``,
``pr-assign-name``, ``pr-assign-go``, ``pr-assign-result``, ``pr-sample-n``, ``pr-sample-go``, ``pr-sample``.
"""
from __future__ import annotations

import asyncio
import html
import os
import sys
import threading
import time
import traceback
from typing import Any
from urllib.parse import quote

import ipywidgets as W

from ..calibrate.room import (
    AnnotatorProgress,
    DimensionAgreement,
    Room,
    RoomStore,
    StoreReplacedError,
    TeachingMoment,
    UnitNote,
    make_room_assignment,
    make_room_sample,
    sample_coverage,
)
from ..metrics import DIMENSION_LABELS
from ..model import DIMENSION_NAMES, DIMENSIONS
from ..store import UNSURE

__all__ = ["CSS", "MomentRow", "RoomApp", "accuracy_html", "agreement_html", "assignment_html", "case_html", "launch",
           "moment_html", "notes_html", "open_room", "progress_html", "sample_html"]

DEFAULT_INTERVAL = 3.0
ANSWER = {1: "yes", 0: "no", UNSURE: "unsure"}

CSS = """
<style>
.pr-room { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 14px; color: #1f2328;
           max-width: 1400px; overflow-wrap: break-word; }
.pr-room table { max-width: 100%; }
.pr-title { font-size: 19px; font-weight: 600; margin-right: 14px; }
.pr-h { font-weight: 600; font-size: 15px; margin: 10px 0 2px 0; }
.pr-muted, .pr-muted * { color: #656d76; font-size: 12px; }
.pr-room table { border-collapse: collapse; font-size: 13px; }
.pr-room td, .pr-room th { padding: 2px 8px; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top; }
.pr-bar { display: inline-block; height: 8px; background: #0969da; border-radius: 2px; }
.pr-barbg { display: inline-block; width: 120px; height: 8px; background: #eaeef2; border-radius: 2px; }
.pr-moment { border: 1px solid #d0d7de; border-radius: 6px; padding: 6px 10px; margin: 4px 0; }
.pr-text { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; border-left: 3px solid #d0d7de;
           padding: 3px 8px; }
.pr-split { font-weight: 600; }
.pr-tie { color: #bc4c00; }
.pr-settled { color: #1a7f37; font-weight: 600; }
.pr-err { color: #cf222e; font-weight: 600; }
.pr-ok { color: #1a7f37; }
</style>
"""


def esc(text: Any) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def _dim(d: str) -> str:
    return DIMENSION_LABELS.get(DIMENSION_NAMES.get(d, d), d)


def _html(value: str = "", cls: str = "") -> W.HTML:
    w = W.HTML(value=value)
    for c in cls.split():
        w.add_class(c)
    return w


def _row(children: list[Any]) -> W.HBox:
    """A row that wraps on a narrow window instead of scrolling the page sideways."""
    return W.HBox(children, layout=W.Layout(flex_flow="row wrap", align_items="center"))


def _button(text: str, cls: str, tooltip: str = "", style: str = "") -> W.Button:
    b = W.Button(description=text, tooltip=tooltip or text, button_style=style, layout=W.Layout(width="auto"))
    b.add_class(cls)
    return b


# --------------------------------------------------------------------------- HTML fragments (pure)


def _unsure(p: AnnotatorProgress) -> str:
    if not p.unsure:
        return "0"
    dims = ", ".join(f"{_dim(d)} {n}" for d, n in p.unsure_by_dimension)
    return f"{p.unsure} <span class='pr-muted'>({esc(dims)})</span>"


def progress_html(rows: list[AnnotatorProgress], assigned: dict[str, tuple[str, ...]] | None = None) -> str:
    """The progress table; names with a queue but no answer are listed after it, never as a row of zeros."""
    if not rows:
        body = "<span class='pr-muted'>Nobody has labelled yet.</span>"
    else:
        lines = ["<table><tr><th>annotator</th><th>answers</th><th>unsure</th><th>units done</th><th></th></tr>"]
        for p in rows:
            of = "of their queue" if p.queued else "of all units"
            bar = (f"<span class='pr-barbg'><span class='pr-bar' style='width:{round(120 * p.fraction)}px'>"
                   "</span></span>")
            lines.append(f"<tr class='pr-annotator'><td>{esc(p.annotator)}</td><td>{p.answered}</td>"
                         f"<td>{_unsure(p)}</td><td>{p.units_done} / {p.units_total} {of}</td><td>{bar}</td></tr>")
        body = "".join(lines) + "</table>"
    waiting = sorted(set(assigned or {}) - {p.annotator for p in rows})
    if waiting:
        body += f"<div class='pr-muted'>Assigned, no answer yet: {esc(', '.join(waiting))}</div>"
    return body


def agreement_html(agreement: dict[str, DimensionAgreement]) -> str:
    """Per dimension: annotators, shared units, Fleiss' kappa, Krippendorff's alpha; then every pair."""
    head = ["<table><tr><th>dimension</th><th>annotators</th><th>units with ≥2 labels</th>"
            "<th>Fleiss' κ</th><th>Krippendorff's α</th></tr>"]
    pairs = ["<table><tr><th>dimension</th><th>pair</th><th>shared units</th><th>agreement</th>"
             "<th>Cohen's κ [95%]</th></tr>"]
    any_pair = False
    for d in DIMENSIONS:
        ag = agreement.get(d)
        if ag is None or not ag.n_items:
            continue
        fleiss = _num(ag.fleiss) if ag.fleiss is not None else f"<span class='pr-muted'>{esc(ag.fleiss_reason)}</span>"
        alpha = (_num(ag.krippendorff) if ag.krippendorff is not None
                 else f"<span class='pr-muted'>{esc(ag.krippendorff_reason)}</span>")
        head.append(f"<tr class='pr-agree-{d}'><td>{esc(_dim(d))}</td><td>{len(ag.annotators)}</td>"
                    f"<td>{ag.n_shared}</td><td>{fleiss}</td><td>{alpha}</td></tr>")
        for p in ag.pairs:
            any_pair = True
            k = _num(p.kappa)
            if p.kappa is not None and p.low is not None and p.high is not None:
                k += f" [{_num(p.low)}, {_num(p.high)}]"
            note = f" <span class='pr-muted'>{esc(p.reason)}</span>" if p.reason else ""
            pairs.append(f"<tr class='pr-pair'><td>{esc(_dim(d))}</td><td>{esc(p.annotator_a)} – "
                         f"{esc(p.annotator_b)}</td><td>{p.n_shared}</td><td>{_pct(p.agreement)}</td>"
                         f"<td>{k}{note}</td></tr>")
    if len(head) == 1:
        return "<span class='pr-muted'>No labels yet.</span>"
    out = "".join(head) + "</table>"
    out += ("<div class='pr-h' style='font-size:13px'>Pairs on shared units</div>" + "".join(pairs) + "</table>"
            if any_pair else "<div class='pr-muted'>No two annotators have labelled the same unit yet.</div>")
    return out


def accuracy_html(rows: list[dict[str, Any]], has_key: bool) -> str:
    """Annotator × dimension: accuracy against the answer key (correct / n)."""
    if not has_key:
        return "<span class='pr-muted'>This dataset has no answer key.</span>"
    if not rows:
        return "<span class='pr-muted'>No label on a keyed unit yet.</span>"
    dims = [d for d in DIMENSIONS if any(r["dimension"] == d for r in rows)]
    cells = {(r["annotator"], r["dimension"]): r for r in rows}
    out = ["<table><tr><th>annotator</th>" + "".join(f"<th>{esc(_dim(d))}</th>" for d in dims) + "</tr>"]
    for a in sorted({r["annotator"] for r in rows}):
        tds = []
        for d in dims:
            r = cells.get((a, d))
            tds.append("<td>–</td>" if r is None else
                       f"<td>{_pct(r['accuracy'])} <span class='pr-muted'>({r['correct']}/{r['n']})</span></td>")
        out.append(f"<tr class='pr-acc'><td>{esc(a)}</td>{''.join(tds)}</tr>")
    return "".join(out) + "</table>"


def case_html(case_id: str, link_base: str | None) -> str:
    """The case id, a link to it in the playground when ``link_base`` (the playground's address) is known."""
    if not link_base:
        return f"<b>{esc(case_id)}</b>"
    return (f"<a href='{esc(link_base)}?case={quote(case_id, safe='')}' target='_blank' rel='noopener'>"
            f"<b>{esc(case_id)}</b></a>")


def notes_html(notes: list[UnitNote], link_base: str | None = None) -> str:
    """Units with unsure answers or comments: where, the text, unsure per dimension, every comment."""
    if not notes:
        return "<span class='pr-muted'>No unsure answer and no comment yet.</span>"
    rows = ["<table><tr><th>case</th><th>unit</th><th>unsure</th><th>comments</th></tr>"]
    for n in notes:
        unsure = ", ".join(f"{esc(_dim(d))}: {c}" for d, c in n.unsure) or "–"
        comments = "".join(f"<div>💬 {esc(c.annotator)}: {esc(c.text)}</div>" for c in n.comments) or "–"
        rows.append(f"<tr class='pr-note'><td>{case_html(n.case_id, link_base)}</td><td>{esc(n.unit_kind)}: "
                    f"<span class='pr-text-inline'>{esc(n.text)}</span></td><td>{unsure}</td><td>{comments}</td></tr>")
    return "".join(rows) + "</table>"


def moment_html(m: TeachingMoment, link_base: str | None = None) -> str:
    """One teaching moment: where, the text, the split, who said what, unsure answers, comments, the consensus."""
    votes = ", ".join(f"{esc(a)}: {ANSWER.get(v, v)}" for a, v in m.votes)
    split_cls = "pr-split pr-tie" if m.yes == m.no else "pr-split"
    if m.adjudication is not None:
        who = f" by {esc(m.adjudication.adjudicator)}" if m.adjudication.adjudicator else ""
        consensus = (f"<span class='pr-consensus pr-settled'>consensus: {ANSWER[m.adjudication.value]} "
                     f"(adjudicated{who})</span>")
    elif m.consensus is None:
        consensus = "<span class='pr-consensus pr-tie'>consensus: none (tie) — settle it</span>"
    else:
        consensus = f"<span class='pr-consensus'>consensus: {ANSWER[m.consensus]} (majority)</span>"
    comments = "".join(f"<div class='pr-comment'>💬 {esc(c.annotator)}: {esc(c.text)}</div>" for c in m.comments)
    unsure = f" · <span class='pr-unsure'>{m.unsure} unsure</span>" if m.unsure else ""
    return (f"<div>{case_html(m.case_id, link_base)} · {esc(m.unit_kind)} · {esc(_dim(m.dimension))} · "
            f"<span class='{split_cls}'>{esc(m.split)}</span></div>"
            f"<div class='pr-text'>{esc(m.text)}</div>"
            f"<div class='pr-muted'>{votes}{unsure}</div>{comments}<div>{consensus}</div>")


def sample_html(sample: Any, labelled: int, prefix: int) -> str:
    """The current calibration sample: its size and how much of it is labelled, in ranked order."""
    if sample is None:
        return "<span class='pr-muted'>No calibration sample drawn.</span>"
    units = len(sample.queues.get("*", ()))
    return (f"Calibration sample <b>{esc(sample.name)}</b> (seed {esc(sample.seed)}): {units} units, "
            f"{labelled} labelled; the first {prefix} in sample order are all labelled "
            "<span class='pr-muted'>(prediction-powered estimates use that prefix)</span>")


def assignment_html(assignment: Any) -> str:
    queues = dict(assignment.queues)
    sizes = "".join(f"<tr><td>{esc(a)}</td><td>{len(q)}</td></tr>" for a, q in sorted(queues.items()))
    units = len({u for q in queues.values() for u in q})
    return (f"<div class='pr-ok'>Assignment {esc(assignment.name)} saved (overlap {assignment.overlap}, "
            f"seed {esc(assignment.seed)}): {units} units.</div>"
            f"<table><tr><th>annotator</th><th>queue</th></tr>{sizes}</table>")


# --------------------------------------------------------------------------- the page


class MomentRow:
    """A teaching moment on the page and its adjudication buttons; kept (and updated) while its
    (unit, dimension) stays among the moments, so a refresh never pulls a button from under a click."""

    def __init__(self, app: RoomApp, index: int, moment: TeachingMoment):
        self.app = app
        self.info = _html()
        self.yes = _button("settle: yes", "pr-adj-yes", "adjudicate: the consensus is yes")
        self.no = _button("settle: no", "pr-adj-no", "adjudicate: the consensus is no")
        self.withdraw = _button("withdraw", "pr-adj-withdraw", "withdraw the adjudication")
        for b, v in ((self.yes, 1), (self.no, 0), (self.withdraw, None)):
            b.on_click(lambda _b, v=v: app.adjudicate(self.moment, v))
        self.widget = W.VBox([self.info, W.HBox([self.yes, self.no, self.withdraw])])
        self.widget.add_class("pr-moment")
        self.index = -1
        self.update(index, moment)

    def update(self, index: int, moment: TeachingMoment) -> None:
        self.moment = moment
        text = moment_html(moment, self.app.link_base)
        if self.info.value != text:
            self.info.value = text
        writable = self.app.room.source.writable
        self.yes.disabled = self.no.disabled = not writable
        self.withdraw.disabled = moment.adjudication is None or not writable
        if index != self.index:
            if self.index >= 0:
                self.widget.remove_class(f"pr-moment-{self.index}")
            self.widget.add_class(f"pr-moment-{index}")
            self.index = index

    def close(self) -> None:
        for w in (self.info, self.yes, self.no, self.withdraw):
            w.close()
        self.widget.close()


class RoomApp:
    """The room's widgets over a :class:`~playground.calibrate.room.Room`; :meth:`start` begins the timer."""

    def __init__(self, room: Room, *, adjudicator: str | None = None, interval: float = DEFAULT_INTERVAL,
                 note: str = "", link_base: str | None = None):
        self.room = room
        self.link_base = link_base
        self.interval = max(0.5, float(interval))
        self.ticks = 0
        self.last_refresh_s = 0.0
        self._task: Any = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        src = room.source
        self.updated = _html(cls="pr-updated pr-muted")
        self.status = _html(note, "pr-status")
        self.progress = _html(cls="pr-progress")
        self.agreement = _html(cls="pr-agreement")
        self.accuracy = _html(cls="pr-accuracy")
        self.notes = _html(cls="pr-notes")
        moments = self._moment_widgets(adjudicator)
        assign = self._assign_widgets()
        header = _row([_html("<span class='pr-title'>Instructor's room</span>"),
                       _html(f"<span class='pr-muted'>dataset {esc(src.dataset)} · {len(src.catalog)} units · "
                             f"store {esc(src.url)}</span>")])
        self.widget = W.VBox([
            _html(CSS), header, self.updated, self.status,
            _html("<div class='pr-h'>Progress</div>"), self.progress,
            _html("<div class='pr-h'>Agreement between annotators</div>"), self.agreement,
            _html("<div class='pr-h'>Accuracy against the answer key</div>"), self.accuracy,
            _html("<div class='pr-h'>Teaching moments: the most disagreement first</div>"), *moments,
            _html("<div class='pr-h'>Unsure answers and comments</div>"), self.notes,
            _html("<div class='pr-h'>Assign work</div><div class='pr-muted'>Every unit of the dataset goes to at "
                  "least <i>overlap</i> annotators; the seed makes the draw repeatable.</div>"), *assign,
        ])
        self.widget.add_class("pr-room")
        self.render()

    def _moment_widgets(self, adjudicator: str | None) -> list[Any]:
        self.adjudicator = W.Text(value=adjudicator or "", placeholder="your name", description="Adjudicator",
                                  layout=W.Layout(width="280px"))
        self.adjudicator.add_class("pr-adjudicator")
        self.moments = W.VBox([])
        self.moments.add_class("pr-moments")
        self.rows: list[MomentRow] = []
        self.moment_dimension = W.Dropdown(options=[("all dimensions", "")] + [(_dim(d), d) for d in DIMENSIONS],
                                           value="", description="Show", layout=W.Layout(width="260px"))
        self.moment_dimension.add_class("pr-moment-dimension")
        self.moment_dimension.observe(lambda _c: self._guard(self.render), "value")
        self.moment_count = _html(cls="pr-moment-count")
        self.no_moments = _html("<span class='pr-muted'>No disagreement yet.</span>")
        return [_row([self.adjudicator, self.moment_dimension, self.moment_count]), self.moments]

    def _assign_widgets(self) -> list[Any]:
        src = self.room.source
        self.assign_annotators = W.Text(placeholder="alice, bob, carol", description="Annotators",
                                        layout=W.Layout(width="420px"))
        self.assign_annotators.add_class("pr-assign-annotators")
        self._filling = False  # the field follows the annotators seen until someone edits it
        self._annotators_edited = False
        self.assign_annotators.observe(self._on_annotators_edit, "value")
        self.assign_overlap = W.BoundedIntText(value=2, min=1, max=100, description="Overlap",
                                               layout=W.Layout(width="170px"))
        self.assign_overlap.add_class("pr-assign-overlap")
        self.assign_seed = W.Text(value="1", description="Seed", layout=W.Layout(width="170px"))
        self.assign_seed.add_class("pr-assign-seed")
        self.assign_name = W.Text(value="", placeholder="week-1", description="Name", layout=W.Layout(width="240px"))
        self.assign_name.add_class("pr-assign-name")
        self.assign_go = _button("Make assignment", "pr-assign-go", "give each annotator a queue", "primary")
        self.assign_go.on_click(lambda _b: self._guard(self.make_assignment))
        self.assign_go.disabled = not src.writable
        self.assign_result = _html(cls="pr-assign-result")
        self.sample_n = W.BoundedIntText(value=min(50, max(1, len(src.catalog))), min=1, max=max(1, len(src.catalog)),
                                         description="Units", layout=W.Layout(width="170px"))
        self.sample_n.add_class("pr-sample-n")
        self.sample_go = _button("Draw calibration sample", "pr-sample-go",
                                 "a seeded uniform random sample of units (uses the seed above)")
        self.sample_go.on_click(lambda _b: self._guard(self.draw_sample))
        self.sample_go.disabled = not src.writable
        self.sample = _html(cls="pr-sample")
        return [_row([self.assign_annotators, self.assign_overlap, self.assign_seed, self.assign_name,
                      self.assign_go]),
                self.assign_result, _row([self.sample_n, self.sample_go]), self.sample]

    # --- drawing --------------------------------------------------------------------------------
    def render(self) -> None:
        room = self.room
        assignment = room.queues()
        self.progress.value = progress_html(room.progress(), dict(assignment.queues) if assignment else None) + (
            f"<div class='pr-muted'>Queues from the assignment {esc(assignment.name)} (overlap "
            f"{esc(assignment.overlap)}, seed {esc(assignment.seed)}).</div>" if assignment else "")
        self.agreement.value = agreement_html(room.agreement)
        self.accuracy.value = accuracy_html(room.accuracy(), room.key is not None and len(room.key.frame) > 0)
        shown, open_, settled = room.moments(self.moment_dimension.value or None)
        self._render_moments(shown)
        self.moment_count.value = (f"<span class='pr-muted'>showing {len(shown)} of {open_ + settled} "
                                   f"disagreement(s): {open_} open, {settled} adjudicated</span>")
        self.notes.value = notes_html(room.notes(), self.link_base)
        sample = room.sample()
        self.sample.value = sample_html(sample, *(sample_coverage(room.state, sample.queues.get("*", ()))
                                                  if sample is not None else (0, 0)))
        if not self._annotators_edited:
            self._filling = True
            try:
                self.assign_annotators.value = ", ".join(room.state.annotators())
            finally:
                self._filling = False
        self._stamp()

    def _on_annotators_edit(self, change: dict[str, Any]) -> None:
        if not self._filling:
            self._annotators_edited = True

    def _render_moments(self, moments: list[TeachingMoment]) -> None:
        if self.moments.children and [r.moment for r in self.rows] == moments:
            return
        old = {(r.moment.unit_id, r.moment.dimension): r for r in self.rows}
        rows = []
        for i, m in enumerate(moments):
            row = old.pop((m.unit_id, m.dimension), None)
            if row is None:
                row = MomentRow(self, i, m)
            else:
                row.update(i, m)
            rows.append(row)
        self.rows = rows
        self.moments.children = [r.widget for r in rows] if rows else [self.no_moments]
        for r in old.values():
            r.close()

    def _stamp(self) -> None:
        self.updated.value = (f"last change seen {time.strftime('%H:%M:%S')} · {self.room.state.last_event_id} "
                              f"events · looks for changes every {self.interval:g} s")

    def say(self, text: str, error: bool = False) -> None:
        self.status.value = f"<span class='{'pr-err' if error else 'pr-ok'}'>{esc(text)}</span>"

    def _guard(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except ValueError as exc:
            self.say(str(exc), error=True)
        except Exception as exc:  # shown on the page, logged for the server
            self.say(f"{type(exc).__name__}: {exc}", error=True)
            traceback.print_exc(file=sys.__stderr__ or sys.stderr)
        return None

    # --- actions --------------------------------------------------------------------------------
    def refresh(self) -> bool:
        """Read new events; redraw when there were any.  True when something changed."""
        with self._lock:
            changed = self.room.refresh()
            if changed:  # a quiet tick sends nothing: kernel messages count as activity, and the idle cull
                self.render()  # must still be able to end a room nobody looks at once the class is over
            self.ticks += 1
            return changed

    def adjudicate(self, moment: TeachingMoment, value: int | None) -> None:
        def act() -> None:
            self.room.source.adjudicate(moment.unit_id, moment.dimension, value, self.adjudicator.value)
            what = "withdrawn" if value is None else f"settled as {ANSWER[value]}"
            self.say(f"{moment.case_id} {_dim(moment.dimension)}: {what} by {self.adjudicator.value.strip()}.")
            self.refresh()

        self._guard(act)

    def make_assignment(self) -> None:
        seed_text = self.assign_seed.value.strip()
        seed: int | str = int(seed_text) if seed_text.lstrip("-").isdigit() else seed_text
        name = self.assign_name.value.strip() or f"room-{len(self.room.source.assignments()) + 1}"
        names = self.assign_annotators.value.split(",")
        a = make_room_assignment(self.room.source, names, int(self.assign_overlap.value), seed, name)
        self.assign_result.value = assignment_html(a)
        self.say(f"Assignment {a.name} saved.")
        self.render()

    def draw_sample(self) -> None:
        seed_text = self.assign_seed.value.strip()
        seed: int | str = int(seed_text) if seed_text.lstrip("-").isdigit() else seed_text
        name = self.assign_name.value.strip() or f"sample-{len(self.room.source.assignments()) + 1}"
        s = make_room_sample(self.room.source, int(self.sample_n.value), seed, name)
        self.say(f"Calibration sample {s.name} saved.")
        self.render()

    # --- the timer ------------------------------------------------------------------------------
    def start(self) -> None:
        """Refresh every ``interval`` seconds: an asyncio task on the kernel's loop, else a daemon thread."""
        if self._task is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            self._task = loop.create_task(self._tick_async())
        else:
            self._task = threading.Thread(target=self._tick_thread, name="room-refresh", daemon=True)
            self._task.start()

    def stop(self) -> None:
        self._stop.set()
        if isinstance(self._task, asyncio.Task):
            self._task.cancel()
        self._task = None

    def _pause(self) -> float:
        """The wait before the next refresh: the interval, or twice the last refresh when that took longer
        (a class labelling hard must not keep the kernel busy and the adjudication buttons waiting)."""
        return max(self.interval, 2 * self.last_refresh_s)

    async def _tick_async(self) -> None:
        while not self._stop.is_set():
            await asyncio.sleep(self._pause())
            self._tick()

    def _tick_thread(self) -> None:
        while not self._stop.wait(self._pause()):
            self._tick()

    def _tick(self) -> None:
        t0 = time.perf_counter()
        try:
            self.refresh()
        except StoreReplacedError as exc:  # nothing more to read from the old file: say so once and stop
            self.say(str(exc), error=True)
            self.stop()
        except Exception as exc:  # the store may be busy or gone for a moment: say so, keep ticking
            self.say(f"refresh failed ({type(exc).__name__}: {exc}); trying again", error=True)
            traceback.print_exc(file=sys.__stderr__ or sys.stderr)
        finally:
            self.last_refresh_s = time.perf_counter() - t0


# --------------------------------------------------------------------------- opening


def _open_dataset(name: str | None, root: str | None, store: Any) -> tuple[str, Any, dict[str, Any]]:
    """``(name, golden.Dataset, catalog)`` of the named dataset (None: the shipped golden set)."""
    from ..datasets import open_dataset

    od = open_dataset(name, store=store, root=root)
    return od.name, od.dataset, od.catalog()


def _open_store(db: str | None) -> tuple[Any, str]:
    """The store, writable for adjudications and assignments if possible, else read-only (with the reason)."""
    from ..store import open_store

    try:
        return open_store(db or None, create=False), ""
    except Exception as exc:  # read-only media or a reader role: the room still shows everything
        store = open_store(db or None, read_only=True, create=False)
        return store, f"The store cannot be written ({exc}); adjudication and assignment are off."


def open_room(root: str | None = None, db: str | None = None, dataset: str | None = None) -> tuple[Room, str]:
    """A :class:`Room` over the store and dataset, and a note for the page ("" when all is well)."""
    from ..calibrate import key_from_dataset
    from .request import can_write_room

    store, note = _open_store(db)
    may_write = can_write_room()  # serve engineer, issue 29: the page's role, set by the server
    if not may_write:
        note = "This is the observer's view: adjudication and assignment need the instructor's link."
    try:
        name, ds, catalog = _open_dataset(dataset, root, store)
        try:
            key = key_from_dataset(ds)
        except Exception:  # a dataset without an authored key (e.g. an import): accuracy says so
            key = None
        return Room(RoomStore(store, catalog, name, may_write=may_write), key), note
    except BaseException:
        store.close()
        raise


def launch(root: str | None = None, db: str | None = None, *, dataset: str | None = None,
           adjudicator: str | None = None, interval: float | None = None, display: bool = True,
           start: bool = True) -> RoomApp | None:
    """Build the room, show it and start its timer; data or store problems are shown as text."""
    from . import query_params

    t0 = time.perf_counter()
    root = root or os.environ.get("PLAYGROUND_ROOT") or None
    params = query_params()
    try:
        room, note = open_room(root, db, dataset if dataset is not None else params.get("dataset"))
    except Exception as exc:
        body = ("<div class='pr-err' style='color:#cf222e;font-weight:600'>The room cannot start.</div>"
                f"<pre style='white-space:pre-wrap'>{esc(f'{type(exc).__name__}: {exc}')}</pre>")
        if display:
            from IPython.display import display as show

            show(_html(body, "pr-error"))
        return None
    try:
        every = float(interval if interval is not None else params.get("interval")
                      or os.environ.get("PLAYGROUND_ROOM_INTERVAL") or DEFAULT_INTERVAL)
    except ValueError:
        every = DEFAULT_INTERVAL
    name = adjudicator if adjudicator is not None else (params.get("adjudicator") or params.get("annotator"))
    app = RoomApp(room, adjudicator=name, interval=every, note=note,
                  link_base=os.environ.get("PLAYGROUND_LINK_BASE") or None)
    print(f"room: ready in {time.perf_counter() - t0:.2f}s ({len(room.source.catalog)} units, "
          f"{room.state.last_event_id} events)", file=sys.__stderr__ or sys.stderr, flush=True)
    if display:
        from IPython.display import display as show

        show(app.widget)
    if start:
        app.start()
    return app
