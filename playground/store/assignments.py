"""Assignments and lessons: which units people are asked to label, stored by name.

An :class:`Assignment` (kind ``queue`` or ``calibration_sample``, see
:mod:`playground.assign`) is saved under its name, replacing one of that
name.  A :class:`Lesson` (the cases a class labels, in order) is saved under
its name; one of that name already stored is refused unless ``replace``.
Names are 1 to 200 characters; lessons' also without NUL.
"""
from __future__ import annotations

import json
from typing import Any

from .base import Cursor
from .checks import canonical_json
from .errors import InvalidLabelError, StoreError
from .handle import StoreHandle
from .statements import LESSON_COLUMNS
from .types import ASSIGNMENT_KINDS, Assignment, Lesson

__all__ = ["Plans"]


class Plans:
    """Assignments (annotator queues, calibration samples) and lessons, over one handle."""

    def __init__(self, handle: StoreHandle):
        self._h = handle
        self._b = handle.db

    def save_assignment(self, assignment: Assignment) -> Assignment:
        """Store ``assignment`` under its name (replacing one of that name); returns it with ``created_at``."""
        a = assignment
        if not isinstance(a.name, str) or not a.name.strip() or len(a.name) > 200:
            raise InvalidLabelError(f"an assignment needs a name of 1 to 200 characters, got {a.name!r}")
        if a.kind not in ASSIGNMENT_KINDS:
            raise InvalidLabelError(f"assignment kind must be one of {', '.join(ASSIGNMENT_KINDS)}, got {a.kind!r}")
        queues = {str(k): [str(u) for u in v] for k, v in a.queues.items()}
        seed = json.dumps(a.seed)

        def tx(cur: Cursor) -> Any:
            now = self._b.now(cur) if not a.created_at else self._b.ts_in(a.created_at)
            cur.execute(
                "INSERT INTO assignments (name, kind, dataset, seed, overlap, queues, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET kind = excluded.kind,"
                " dataset = excluded.dataset, seed = excluded.seed, overlap = excluded.overlap,"
                " queues = excluded.queues, created_at = excluded.created_at",
                (a.name, a.kind, a.dataset, seed, int(a.overlap), canonical_json(queues), now))
            return now

        created = self._b.ts_out(self._h.write(tx))
        return Assignment(a.name, a.kind, a.dataset, a.seed, a.overlap, {k: tuple(v) for k, v in queues.items()},
                          created)

    def _assignment(self, row: tuple[Any, ...]) -> Assignment:
        name, kind, dataset, seed, overlap, queues, created = row
        return Assignment(name, kind, dataset, json.loads(seed), int(overlap),
                          {k: tuple(v) for k, v in json.loads(queues).items()}, self._b.ts_out(created))

    def assignment(self, name: str) -> Assignment | None:
        """The assignment saved under ``name``, or ``None``."""
        row = self._b.read(lambda cur: cur.execute(
            "SELECT name, kind, dataset, seed, overlap, queues, created_at FROM assignments WHERE name = ?",
            (name,)).fetchone())
        return None if row is None else self._assignment(row)

    def assignments(self) -> list[Assignment]:
        """Every saved assignment, sorted by name."""
        rows = self._b.read(lambda cur: cur.execute(
            "SELECT name, kind, dataset, seed, overlap, queues, created_at FROM assignments ORDER BY name").fetchall())
        return [self._assignment(r) for r in rows]

    # --- lessons (schema 4) ----------------------------------------------------------------------------------
    def save_lesson(self, lesson: Lesson, *, replace: bool = False) -> Lesson:
        """Store ``lesson`` under its name; a lesson of that name already there is an error unless
        ``replace``.  Returns it with ``created_at``."""
        x = lesson
        if not isinstance(x.name, str) or not x.name.strip() or len(x.name) > 200 or "\x00" in x.name:
            raise InvalidLabelError(f"a lesson needs a name of 1 to 200 characters, got {x.name!r}")
        if not x.units:
            raise InvalidLabelError(f"lesson {x.name!r} has no unit to label")
        row = (x.name, x.dataset, json.dumps(list(x.cases)), json.dumps(list(x.responses)),
               json.dumps(list(x.units)))

        def tx(cur: Cursor) -> Any:
            now = self._b.now(cur)
            on_conflict = ("DO UPDATE SET dataset = excluded.dataset, cases = excluded.cases, responses ="
                           " excluded.responses, units = excluded.units, created_at = excluded.created_at"
                           if replace else "DO NOTHING")
            written = cur.execute(f"INSERT INTO lessons ({LESSON_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
                                  f" ON CONFLICT (name) {on_conflict} RETURNING created_at", (*row, now)).fetchone()
            if written is None:
                raise StoreError(f"a lesson named {x.name!r} is already in the label store {self._h.url}; nothing was "
                                 "written (delete it first, or choose another name)")
            return written[0]

        created = self._b.ts_out(self._h.write(tx))
        return Lesson(x.name, x.dataset, tuple(x.cases), tuple(x.responses), tuple(x.units), created)

    def _lesson(self, row: tuple[Any, ...]) -> Lesson:
        name, dataset, cases, responses, units, created = row
        return Lesson(name, dataset, tuple(json.loads(cases)), tuple(json.loads(responses)),
                      tuple(json.loads(units)), self._b.ts_out(created))

    def lesson(self, name: str) -> Lesson | None:
        """The lesson named ``name``, or ``None``."""
        row = self._b.read(lambda cur: cur.execute(
            f"SELECT {LESSON_COLUMNS} FROM lessons WHERE name = ?", (name,)).fetchone())
        return None if row is None else self._lesson(row)

    def lessons(self) -> list[Lesson]:
        """Every lesson, sorted by name."""
        rows = self._b.read(lambda cur: cur.execute(f"SELECT {LESSON_COLUMNS} FROM lessons ORDER BY name").fetchall())
        return [self._lesson(r) for r in rows]

    def delete_lesson(self, name: str) -> bool:
        """Remove the lesson ``name`` (its labels stay: they belong to the units); True when one was removed."""
        return bool(self._h.write(lambda cur: cur.execute(
            "DELETE FROM lessons WHERE name = ? RETURNING name", (name,)).fetchone()))
