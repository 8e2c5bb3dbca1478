"""``playground lesson``: what the class labels, the same units in the same order for every student.

* ``playground lesson create NAME --cases GC-0036,GC-0007 [--responses ...] [--dataset NAME]``
* ``playground lesson list`` — every lesson in the store, with its size and progress.
* ``playground lesson show NAME`` — its cases, responses, units in order, and each student's progress.
* ``playground lesson delete NAME`` — removes the lesson (labels stay: they belong to the units).
* ``playground lesson grades NAME --format canvas|moodle --out FILE`` — each student's result against the
  answer key (:mod:`playground.grades`) as a Canvas gradebook or Moodle grade import CSV.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .labels import terminal_safe
from .options import add_db, add_root

__all__ = ["register", "run_lesson"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "lesson", help="lessons: the cases a class labels, in the same order for everyone",
        description="Make, list, show and delete lessons saved in the label store. A lesson fixes the units a "
        "class labels: per case (in the order given) its retrieved passages, then per response its claims and "
        "facts. Every student's page walks those units in that order and counts progress against them; the "
        "room, agreement, teaching moments and 'labels export --lesson' scope themselves to them.",
        epilog="examples:\n  playground lesson create week-1 --cases GC-0034,GC-0036\n"
        "  playground lesson create stale --cases GC-0034 --responses GC-0034-R1,GC-0034-R4\n"
        "  playground lesson list\n  playground lesson show week-1\n  playground lesson delete week-1\n"
        "  playground lesson grades week-1 --format canvas --out week-1-canvas.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", choices=("create", "list", "show", "delete", "grades"))
    p.add_argument("name", nargs="?", default=None, help="the lesson's name (create, show, delete, grades)")
    p.add_argument("--cases", default=None, metavar="GC-0036,GC-0007", help="cases of the lesson, in order")
    p.add_argument("--responses", default=None, metavar="GC-0036-R1,...",
                   help="only these responses of the cases (default: every response of each case)")
    p.add_argument("--dataset", default="golden", metavar="NAME", help="dataset (default: golden, the shipped set)")
    p.add_argument("--replace", action="store_true", help="replace a lesson of the same name")
    p.add_argument("--format", dest="grade_format", choices=("canvas", "moodle"), default=None,
                   help="grades: the gradebook file to write (Canvas gradebook CSV or Moodle grade import CSV)")
    p.add_argument("--out", default=None, metavar="FILE", help="grades: the file to write (UTF-8 CSV)")
    p.add_argument("--section", default="", metavar="NAME", help="grades: the Section column of a Canvas file")
    add_db(p)
    add_root(p)
    p.set_defaults(func=run_lesson)


def _progress_lines(lesson: Any, store: Any, catalog: Any) -> list[str]:
    from ..assign import queue_progress
    from ..lessons import lesson_catalog
    from ..store import Assignment

    units = lesson_catalog(lesson, catalog)
    labels = store.current_labels(units, include_unsure=True)
    names = sorted({lb.annotator for lb in labels})
    queues = Assignment(lesson.name, "queue", lesson.dataset, "", 1, dict.fromkeys(names, lesson.units))
    rows = queue_progress(queues, labels, {u: x.dimensions for u, x in units.items()})
    return [f"  {terminal_safe(p.annotator)}: {p.done} / {p.size} in this lesson" for p in rows] or [
        "  nobody has labelled yet"]


def _create(args: argparse.Namespace, store: Any) -> int:
    from ..datasets import open_dataset
    from ..lessons import make_lesson, parse_ids

    od = open_dataset(args.dataset, store=store, root=args.root)
    lesson = make_lesson(args.name or "", od, parse_ids(args.cases), parse_ids(args.responses))
    saved = store.save_lesson(lesson, replace=args.replace)
    print(f"saved lesson {terminal_safe(saved.name)} (dataset {terminal_safe(saved.dataset)}): "
          f"{len(saved.cases)} case(s), {len(saved.units)} unit(s) for every student, in the same order")
    return 0


def _show(args: argparse.Namespace, store: Any) -> int:
    from ..datasets import open_dataset

    lesson = store.lesson(args.name)
    if lesson is None:
        known = ", ".join(terminal_safe(x.name) for x in store.lessons()) or "none"
        print(f"error: no lesson named {terminal_safe(args.name)} (known: {known})", file=sys.stderr)
        return 1
    catalog = open_dataset(lesson.dataset, store=store, root=args.root).catalog()
    lines = [f"{terminal_safe(lesson.name)}: dataset {terminal_safe(lesson.dataset)}, created {lesson.created_at}",
             f"  cases: {', '.join(lesson.cases)}",
             f"  responses: {', '.join(lesson.responses) or 'every response of those cases'}",
             f"  units ({len(lesson.units)}, in this order):"]
    lines += [f"    {i:>3}. {catalog[u].unit_kind if u in catalog else '(gone)':<8} {terminal_safe(u)}"
              for i, u in enumerate(lesson.units, 1)]
    lines += ["  progress:", *_progress_lines(lesson, store, catalog)]
    print("\n".join(lines))
    return 0


def _grades(args: argparse.Namespace, store: Any) -> int:
    from ..files import write_atomic
    from ..grades import canvas_csv, grades_of_lesson, moodle_csv

    found = grades_of_lesson(store, args.name, root=args.root)
    if found is None:
        known = ", ".join(terminal_safe(x.name) for x in store.lessons()) or "none"
        print(f"error: no lesson named {terminal_safe(args.name)} (known: {known})", file=sys.stderr)
        return 1
    lesson, grades = found
    text = (canvas_csv(lesson.name, grades, args.section) if args.grade_format == "canvas"
            else moodle_csv(lesson.name, grades))
    write_atomic(args.out, text.encode("utf-8"))
    kind = "Canvas gradebook CSV" if args.grade_format == "canvas" else "Moodle grade import CSV"
    print(f"wrote {args.out} ({kind}, UTF-8): {len(grades)} student(s) of lesson {terminal_safe(lesson.name)} "
          f"against its answer key ({grades[0].keyed if grades else 0} keyed item(s))")
    for g in grades:
        dims = ", ".join(f"{d.dimension} {d.score:.2f}" for d in g.dimensions)
        print(f"  {terminal_safe(g.annotator)}: overall {g.overall:.2f} ({dims}); answered {g.answered} of {g.keyed}")
    return 0


def _list(args: argparse.Namespace, store: Any) -> int:
    found = store.lessons()
    if not found:
        print("no lessons saved (make one: playground lesson create NAME --cases GC-0034,GC-0036)")
        return 0
    for x in found:
        print(f"{terminal_safe(x.name)}: dataset {terminal_safe(x.dataset)}, {len(x.cases)} case(s) "
              f"({', '.join(x.cases)}), {len(x.units)} unit(s), created {x.created_at}")
    return 0


def run_lesson(args: argparse.Namespace) -> int:
    """``create``, ``list``, ``show`` or ``delete`` a lesson."""
    from ..datasets import DatasetNotFound
    from ..grades import GradeError
    from ..lessons import LessonError
    from ..store import InvalidLabelError, StoreError, open_store

    if args.action != "list" and not args.name:
        print(f"error: 'lesson {args.action}' needs the lesson's NAME", file=sys.stderr)
        return 2
    if args.action == "create" and not args.cases:
        print("error: 'lesson create' needs --cases GC-0036,GC-0007", file=sys.stderr)
        return 2
    if args.action == "grades" and (not args.grade_format or not args.out):
        print("error: 'lesson grades' needs --format canvas|moodle and --out FILE", file=sys.stderr)
        return 2
    try:
        with open_store(args.db, create=args.action == "create") as store:
            if args.action == "create":
                return _create(args, store)
            if args.action == "show":
                return _show(args, store)
            if args.action == "list":
                return _list(args, store)
            if args.action == "grades":
                return _grades(args, store)
            if not store.delete_lesson(args.name):
                print(f"error: no lesson named {terminal_safe(args.name)}", file=sys.stderr)
                return 1
            print(f"deleted lesson {terminal_safe(args.name)} (its labels are kept)")
            return 0
    except (StoreError, InvalidLabelError, LessonError, DatasetNotFound, GradeError, OSError) as exc:
        print(f"error: {terminal_safe(exc)}", file=sys.stderr)
        return 1
