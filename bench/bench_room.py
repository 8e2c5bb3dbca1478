#!/usr/bin/env python
"""Benchmark: what one refresh of the instructor's room costs, with a class's labels in the store.

A SQLite store gets ``--annotators`` people x ``--units`` claims x 2 dimensions
of labels (one bulk import, about 1 in 5 answers differing from the unit's
majority so there are teaching moments).  Then, over
:class:`playground.calibrate.room.Room` (no widgets):

* the room's first load (every event replayed, adjudications and comments read);
* a quiet refresh: no new event (one ``store.events(after=...)`` query);
* a refresh after one new label: the event read, the vote applied, the
  agreement of that one dimension recomputed;
* the page's figures drawn as numbers: progress, teaching moments, unit notes.

Each prints median and range over ``--repeat`` runs.  Run
``python bench/bench_room.py`` (defaults: 30 annotators x 834 units = 50,040 labels).

``--lesson`` measures the projector room of issue 23 instead: the shipped set,
a lesson of 20 units (``LESSON``: GC-0028, 5 passages and 3 responses' claims
and facts), 30 students' answers (the key, 1 in 5 turned over), and the
whole refresh the page does (:meth:`playground.ui.room.RoomApp.refresh`: read
the new events, recompute agreement, draw moments, the unit grid, the agreement
summary, progress) after every student changed one answer.  Target: <= 200 ms.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from machine import describe  # noqa: E402  (bench/machine.py)


def _units(n: int):
    from playground.model import UNIT_DIMENSIONS, Unit, short_hash

    out = []
    for i in range(n):
        text = f"Benchmark claim {i}."
        case_id = f"GC-{i // 20 + 1:04d}"
        out.append(Unit("claim", f"{case_id}-R1:c{i}:{short_hash(text)}", case_id, f"{case_id}-R1",
                        UNIT_DIMENSIONS["claim"], text, short_hash(text, 12)))
    return out


def _timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(1000 * (time.perf_counter() - t0))
    return out


def _line(name: str, ms: list[float]) -> str:
    return f"{name:<42} median {statistics.median(ms):9.2f} ms   range {min(ms):.2f}–{max(ms):.2f} ms  (n={len(ms)})"


#: The lesson of the --lesson benchmark: (cases, responses) of the shipped set, 20 units.
LESSON: tuple[list[str], list[str]] = (["GC-0028"], [])


def lesson_bench(annotators: int, repeat: int) -> int:
    """The projector room over a 20-unit lesson and ``annotators`` students (see the module docstring)."""
    from playground.calibrate.room import Room, RoomStore
    from playground.calibrate.room_grid import answer_key_values
    from playground.datasets import open_dataset
    from playground.lessons import lesson_catalog, make_lesson
    from playground.sampling import stable_hash
    from playground.store import open_store
    from playground.ui.room import RoomApp

    od = open_dataset(None)
    lesson = make_lesson("bench", od, *LESSON)
    catalog = lesson_catalog(lesson, od.catalog())
    key = answer_key_values(od, list(catalog.values()))
    rows = [(f"student-{a:02d}", u, d, key[(uid, d)] ^ int(stable_hash(a, uid + d) % 5 == 0))
            for a in range(annotators) for uid, u in catalog.items() for d in u.dimensions]
    units = list(catalog.values())
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "labels.db") as store:
        store.save_lesson(lesson)
        store.write_rows(rows)
        print(f"lesson of {len(units)} units, {len(rows):,} answers by {annotators} students")
        room = Room(RoomStore(store, catalog, od.name), None, 8, lesson=lesson, key_values=key, open_dataset=od)
        app = RoomApp(room, interval=3, link_base="http://192.0.2.10:8866/")
        flips = iter(range(10**6))

        def class_tick() -> None:  # every student changed one answer since the last refresh
            i = next(flips)
            for a in range(annotators):
                u = units[(i + a) % len(units)]
                store.set_label(f"student-{a:02d}", u, u.dimensions[0], (i + a) % 2)

        ticks = []
        for _ in range(repeat):
            class_tick()
            t0 = time.perf_counter()
            assert app.refresh()
            ticks.append(1000 * (time.perf_counter() - t0))
        quiet = _timed(app.refresh, repeat)
        draw = _timed(app.render, repeat)
        print(_line(f"{annotators} answers changed + page refresh", ticks))
        print(_line("quiet refresh (no new event)", quiet))
        print(_line("  of which drawing the page alone", draw))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--annotators", type=int, default=30)
    p.add_argument("--units", type=int, default=834)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--lesson", action="store_true", help="the projector room over a 20-unit lesson (issue 23)")
    args = p.parse_args(argv)
    if args.lesson:
        print(describe())
        return lesson_bench(args.annotators, args.repeat)

    from playground.calibrate.room import Room, RoomStore
    from playground.sampling import stable_hash
    from playground.store import open_store

    print(describe())
    units = _units(args.units)
    catalog = {u.unit_id: u for u in units}
    rows = []
    for a in range(args.annotators):
        for u in units:
            for d in u.dimensions:
                truth = stable_hash(0, u.unit_id + d) % 2
                flip = stable_hash(a, u.unit_id + d) % 5 == 0
                rows.append((f"student-{a:02d}", u, d, truth ^ flip))
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "labels.db") as store:
        store.write_rows(rows)
        print(f"{len(rows):,} labels by {args.annotators} annotators on {len(units)} units x 2 dimensions")
        rooms: list[Room] = []
        load = _timed(lambda: rooms.append(Room(RoomStore(store, catalog))), 3)
        room = rooms[-1]
        quiet = _timed(room.refresh, args.repeat)
        flips = iter(range(10**6))

        def one_label() -> None:
            i = next(flips)
            store.set_label("teacher-check", units[i % len(units)], "supported", i % 2)
            assert room.refresh()

        write_and_refresh = _timed(one_label, args.repeat)
        writes = _timed(lambda: store.set_label("teacher-check", units[next(flips) % len(units)], "correct", 1),
                        args.repeat)
        def class_tick() -> None:  # every student changed one answer since the last refresh
            i = next(flips)
            for a in range(args.annotators):
                store.set_label(f"student-{a:02d}", units[(i + a) % len(units)], "supported", (i + a) % 2)
            assert room.refresh()

        busy = _timed(class_tick, max(3, args.repeat // 4))
        figures = _timed(lambda: (room.progress(), room.moments(), room.notes()), 5)
        print(_line("first load (replay every event)", load))
        print(_line("quiet refresh (no new event)", quiet))
        print(_line("one label written + refresh", write_and_refresh))
        print(_line("  of which the write alone", writes))
        print(_line(f"{args.annotators} labels (one each) + refresh", busy))
        print(_line("figures (progress, moments, notes)", figures))
        shown, open_, settled = room.moments()
        print(f"teaching moments: {len(shown)} shown of {open_ + settled}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
