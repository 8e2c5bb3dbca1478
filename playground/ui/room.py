"""The instructor's room (``notebooks/room.ipynb``): a live page over the label store, made for a projector.

Every few seconds (``?interval=SECONDS``, default 3) the page reads the events
written since it last looked (:class:`playground.calibrate.room.Room`) and, when
there are any, redraws, top to bottom: the join link and its QR code (big, for
the back of the room; never a filesystem path), the teaching moments (the most
divided votes first, the answer key beside each, where the instructor settles a
disagreement), one compact row per unit and dimension (the class's votes yes /
no / unsure, the answer key, how many votes match it), agreement in one line per
dimension (Fleiss' kappa, Krippendorff's alpha, the lowest pairs; every pair's
Cohen's kappa folded away), progress (one line; every student folded away),
accuracy against the key, failure-mode counts with Wilson intervals (pooled and per
student), how many more labels of the calibration sample each scorer needs, and unsure
answers and comments.  "Make a lesson" and
"Assign work" (queues, a calibration sample) are folded at the bottom.

A lesson (:mod:`playground.lessons`) scopes everything to its units:
``?lesson=NAME``, by default the newest lesson of the dataset, ``?lesson=-``
for every unit.

Writes: the room opens the store writable but holds only a
:class:`~playground.calibrate.room.RoomStore`, which can write an adjudication,
an assignment or a lesson and nothing else; students' labels are read-only here.  When
the store cannot be opened for writing (read-only media, a reader role), the
page opens it read-only and says that adjudication and assignment are off.

The timer is an asyncio task on the kernel's own event loop (the loop that
handles the page's messages), so widgets are only touched from that thread;
outside a kernel a daemon thread does the same.

Settings: ``PLAYGROUND_ROOT``, ``PLAYGROUND_DB``, ``PLAYGROUND_LINK_BASE`` (the
playground's address: case ids then link to ``<base>?case=<case_id>``, and the
join link is ``<base>?lesson=<name>``); in the URL ``?dataset=NAME``, ``?lesson=NAME``,
``?adjudicator=NAME`` (or ``?annotator=NAME``) and ``?interval=SECONDS``.

CSS classes for tests: ``pr-room``, ``pr-updated``, ``pr-status``, ``pr-progress``,
``pr-agreement``, ``pr-accuracy``, ``pr-notes``, ``pr-moments``, ``pr-moment`` (and ``pr-moment-<i>``),
``pr-split``, ``pr-consensus``, ``pr-moment-dimension``, ``pr-moment-count``, ``pr-adj-yes``,
``pr-adj-no``, ``pr-adj-withdraw``,
``pr-adjudicator``, ``pr-assign-annotators``, ``pr-assign-overlap``, ``pr-assign-seed``,
``pr-assign-name``, ``pr-assign-go``, ``pr-assign-result``, ``pr-sample-n``, ``pr-sample-go``, ``pr-sample``,
``pr-scope``, ``pr-join-box`` (``pr-join-link``, ``pr-qr``), ``pr-units`` (``pr-grid``, ``pr-cell``,
``pr-divided``), ``pr-moment-key``, ``pr-manage``, ``pr-lesson-name``, ``pr-lesson-cases``,
``pr-lesson-responses``, ``pr-lesson-go``, ``pr-lesson-result``; the failure modes and "how many labels"
(:mod:`playground.ui.room_analysis`): ``pr-failures``, ``pr-needed-width``, ``pr-needed``.
"""
from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
import traceback
from typing import Any

import ipywidgets as W

from ..calibrate.room import (
    Room,
    RoomStore,
    StoreReplacedError,
    TeachingMoment,
    make_room_assignment,
    make_room_lesson,
    make_room_sample,
    sample_coverage,
)
from ..calibrate.room_grid import agreement_summary, unit_grid
from ..model import DIMENSIONS
from .room_analysis import RoomAnalysis
from .room_html import (
    ANSWER,
    CSS,
    accuracy_html,
    agreement_html,
    assignment_html,
    case_html,
    dim_name,
    esc,
    grid_html,
    join_html,
    join_url,
    moment_html,
    notes_html,
    personal_links,
    progress_html,
    progress_summary_html,
    sample_html,
    summary_html,
)

__all__ = ["CSS", "MomentRow", "RoomApp", "accuracy_html", "agreement_html", "assignment_html", "case_html",
           "grid_html", "join_html", "launch", "moment_html", "notes_html", "open_room", "progress_html",
           "sample_html", "summary_html"]

DEFAULT_INTERVAL = 3.0


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
        text = moment_html(moment, self.app.link_base, self.app.keys().get((moment.unit_id, moment.dimension)))
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
        # every pair's Cohen's kappa (4 x 435 rows for a class of 30): drawn only while its fold is open
        self.pairs = _html(cls="pr-pairs")
        self.pairs_fold = W.Accordion(children=[self.pairs], titles=("every pair (Cohen's κ)",), selected_index=None)
        self.pairs_fold.add_class("pr-pairs-fold")
        self.pairs_fold.observe(lambda _c: self._guard(self._render_pairs), "selected_index")
        self.accuracy = _html(cls="pr-accuracy")
        self.notes = _html(cls="pr-notes")
        self.grid = _html(cls="pr-units")
        self.analysis = RoomAnalysis(room, self._guard)
        moments = self._moment_widgets(adjudicator)
        manage = W.Accordion(children=[W.VBox(self._lesson_widgets()), W.VBox(self._assign_widgets())],
                             titles=("Make a lesson", "Assign work (queues, calibration sample)"), selected_index=None)
        manage.add_class("pr-manage")
        lesson = room.lesson
        scope = (f"lesson <b>{esc(lesson.name)}</b> · {esc(', '.join(lesson.cases))}" if lesson is not None
                 else f"dataset <b>{esc(src.dataset)}</b> (no lesson: every unit)")
        title = _html(f"<div class='pr-title'>Instructor's room</div><div>{scope} · {len(src.catalog)} units</div>",
                      "pr-scope")
        self.join = _html(join_html(join_url(link_base, lesson.name if lesson is not None else None),
                                    personal_links()), "pr-join-box")
        header = W.HBox([title, self.join], layout=W.Layout(flex_flow="row wrap", justify_content="space-between",
                                                              align_items="flex-start", width="100%"))

        def h(text: str) -> W.HTML:
            return _html(f"<div class='pr-h'>{text}</div>")

        self.widget = W.VBox([
            _html(CSS), header, self.updated, self.status,
            h("Teaching moments: the most divided votes first, the answer key beside each"), *moments,
            h("Every unit: the class's votes, the answer key, how many match it"), self.grid,
            h("Agreement between students"), self.agreement, self.pairs_fold,
            h("Progress"), self.progress,
            h("Accuracy against the answer key"), self.accuracy,
            h("Failure modes: responses tagged of those judged, with 95% Wilson intervals"), self.analysis.failures,
            h("How many labels, and when to stop"), self.analysis.width, self.analysis.needed,
            h("Unsure answers and comments"), self.notes,
            manage,
        ])
        self.widget.add_class("pr-room")
        self.render()

    def _lesson_widgets(self) -> list[Any]:
        """Make a lesson from the room (saved in the store; students follow the newest lesson)."""
        self.lesson_name = W.Text(placeholder="week-1", description="Name", layout=W.Layout(width="240px"))
        self.lesson_name.add_class("pr-lesson-name")
        self.lesson_cases = W.Text(placeholder="GC-0034, GC-0036", description="Cases", layout=W.Layout(width="360px"))
        self.lesson_cases.add_class("pr-lesson-cases")
        self.lesson_responses = W.Text(placeholder="every response of the cases", description="Responses",
                                       layout=W.Layout(width="420px"))
        self.lesson_responses.add_class("pr-lesson-responses")
        self.lesson_go = _button("Create lesson", "pr-lesson-go", "every student labels these units, in order",
                                 "primary")
        self.lesson_go.on_click(lambda _b: self._guard(self.make_lesson))
        self.lesson_go.disabled = not self.room.source.writable or self.room.open_dataset is None
        self.lesson_result = _html(cls="pr-lesson-result")
        return [_row([self.lesson_name, self.lesson_cases, self.lesson_responses, self.lesson_go]),
                self.lesson_result]

    def _moment_widgets(self, adjudicator: str | None) -> list[Any]:
        self.adjudicator = W.Text(value=adjudicator or "", placeholder="your name", description="Adjudicator",
                                  layout=W.Layout(width="280px"))
        self.adjudicator.add_class("pr-adjudicator")
        self.moments = W.VBox([])
        self.moments.add_class("pr-moments")
        self.rows: list[MomentRow] = []
        self.moment_dimension = W.Dropdown(options=[("all dimensions", "")] + [(dim_name(d), d) for d in DIMENSIONS],
                                           value="", description="Show", layout=W.Layout(width="260px"))
        self.moment_dimension.add_class("pr-moment-dimension")
        self.moment_dimension.observe(lambda _c: self._guard(self.render), "value")
        self.moment_count = _html(cls="pr-moment-count")
        # the key beside the votes starts hidden: shown while the class still labels it anchors whoever looks up;
        # the instructor ticks it once the class has labelled (issue 42.5)
        self.show_key = W.Checkbox(value=False, description="show the answer key", indent=False,
                                   layout=W.Layout(width="auto"))
        self.show_key.add_class("pr-show-key")
        self.show_key.observe(lambda _c: self._guard(self._redraw_keys), "value")
        self.no_moments = _html("<span class='pr-muted'>No disagreement yet.</span>")
        return [_row([self.adjudicator, self.moment_dimension, self.show_key, self.moment_count]), self.moments]

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
        whole = "of the lesson" if room.lesson is not None else "of all units"
        queued = (f"<div class='pr-muted'>Queues from the assignment {esc(assignment.name)} (overlap "
                  f"{esc(assignment.overlap)}, seed {esc(assignment.seed)}).</div>" if assignment else "")
        self.progress.value = progress_summary_html(room.progress(), dict(assignment.queues) if assignment else None,
                                                    queued, whole)
        self.agreement.value = summary_html(agreement_summary(room.agreement))
        self._render_pairs()
        self.grid.value = grid_html(unit_grid(room.state, room.source.catalog, self.keys()), self.link_base)
        has_key = room.key is not None and len(room.key.frame) > 0
        self.accuracy.value = ("<details class='pr-accuracy-detail'><summary>every student</summary>"
                               f"{accuracy_html(room.accuracy(), has_key)}</details>")
        shown, open_, settled = room.moments(self.moment_dimension.value or None)
        self._render_moments(shown)
        self.moment_count.value = (f"<span class='pr-muted'>showing {len(shown)} of {open_ + settled} "
                                   f"disagreement(s): {open_} open, {settled} adjudicated</span>")
        self.notes.value = notes_html(room.notes(), self.link_base)
        self.analysis.render()
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

    def keys(self) -> Any:
        """The answer key per (unit_id, dimension) while "show the answer key" is on, else nothing."""
        return self.room.key_values if self.show_key.value else {}

    def _redraw_keys(self) -> None:
        for i, row in enumerate(self.rows):
            row.update(i, row.moment)
        self.render()

    def _render_pairs(self) -> None:
        if self.pairs_fold.selected_index is not None:
            self.pairs.value = agreement_html(self.room.agreement)

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
            self.say(f"{moment.case_id} {dim_name(moment.dimension)}: {what} by {self.adjudicator.value.strip()}.")
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

    def make_lesson(self) -> None:
        from ..lessons import parse_ids

        x = make_room_lesson(self.room.source, self.room.open_dataset, self.lesson_name.value,
                             parse_ids(self.lesson_cases.value), parse_ids(self.lesson_responses.value))
        url = join_url(self.link_base, x.name)
        self.lesson_result.value = (
            f"<div class='pr-ok'>Lesson {esc(x.name)} saved: {len(x.cases)} case(s), {len(x.units)} units, the same "
            f"order for every student.</div><div>Students open {esc(url or '?lesson=' + x.name)}; "
            f"this room shows it at <code>?lesson={esc(x.name)}</code>.</div>")
        self.say(f"Lesson {x.name} saved.")

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


def _room_lesson(store: Any, dataset: str, lesson: str | None) -> Any:
    """The lesson the room shows: the one named, none for ``-`` (every unit), else the newest of the dataset."""
    from ..lessons import lesson_for_page

    if lesson == "-":
        return None
    try:
        return lesson_for_page(store, dataset, lesson)
    except Exception:
        if lesson:
            raise
        return None  # a store that cannot list lessons (read-only, older schema): the whole dataset


def open_room(root: str | None = None, db: str | None = None, dataset: str | None = None,
              lesson: str | None = None) -> tuple[Room, str]:
    """A :class:`Room` over the store and dataset (scoped to ``lesson``: the one named, ``"-"`` for none, by
    default the newest lesson of the dataset), and a note for the page ("" when all is well)."""
    from ..calibrate import key_from_dataset
    from ..calibrate.room_grid import answer_key_values
    from ..datasets import open_dataset
    from ..lessons import lesson_catalog
    from .request import can_write_room

    store, note = _open_store(db)
    may_write = can_write_room()  # serve engineer, issue 29: the page's role, set by the server
    if not may_write:
        note = "This is the observer's view: adjudication and assignment need the instructor's link."
    try:
        od = open_dataset(dataset, store=store, root=root)
        catalog = od.catalog()
        chosen = _room_lesson(store, od.name, lesson)
        if chosen is not None:
            catalog = lesson_catalog(chosen, catalog)
        try:
            key = key_from_dataset(od.dataset)
        except Exception:  # a dataset without an authored key (e.g. an import): accuracy says so
            key = None
        return Room(RoomStore(store, catalog, od.name, may_write=may_write), key,
                    moments=8 if chosen is not None else 20, lesson=chosen,
                    key_values=answer_key_values(od, list(catalog.values())), open_dataset=od), note
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
        room, note = open_room(root, db, dataset if dataset is not None else params.get("dataset"),
                               params.get("lesson") or None)
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
