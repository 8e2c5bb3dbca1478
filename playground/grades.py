"""Grades for the LMS: each student's labels of a lesson against its answer key, as Canvas or Moodle import them.

The rules (``playground lesson grades LESSON``):

* The **key** is the answer key of the lesson's units
  (:func:`playground.calibrate.room_grid.answer_key_values`): one 0/1 value per
  (unit, dimension) that has one.  A lesson whose units have no key (an import
  without authored answers) has no grades: :class:`GradeError` says so.
* A **student** is every annotator with a current label on a unit of the lesson
  (``consensus`` and ``harness`` are not people).  Only the current label of
  each (unit, dimension) counts: a student who changed an answer is graded on
  the last one; a label whose unit text changed since (stale) counts for nothing.
* Per dimension: ``keyed`` the key's items of that dimension in the lesson,
  ``answered`` those the student labelled (yes, no or unsure), ``correct``
  those whose label equals the key (unsure never does), and the score::

      score = 100 * correct / keyed          (an unanswered item scores as wrong)

  ``overall`` is the same over every dimension's items together (not the mean
  of the dimension scores: a dimension with more items weighs more).  Scores are
  rounded half-up to two decimals and written with a "." decimal point.

The files (:func:`canvas_csv`, :func:`moodle_csv`) are UTF-8 without a byte
order mark, comma-separated, CRLF line ends (RFC 4180), one row per student
sorted by name; their columns are described on each function and in
``docs/instructor.md``.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

__all__ = ["CANVAS_IDENTITY", "FORMATS", "DimensionGrade", "GradeError", "StudentGrade", "canvas_csv",
           "grade_columns", "grades_of_lesson", "lesson_grades", "moodle_csv", "score_text"]

#: The identity columns of a Canvas gradebook CSV, in Canvas's order (its export and import).
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
FORMATS = ("canvas", "moodle")
#: Annotators that are not students.
NOT_STUDENTS = frozenset({"consensus", "harness"})


class GradeError(ValueError):
    """Grades that cannot be given (the message names the lesson and why)."""


@dataclass(frozen=True)
class DimensionGrade:
    """One student's result on one dimension of the lesson's key."""

    dimension: str
    keyed: int
    answered: int
    correct: int

    @property
    def score(self) -> float:
        """``100 * correct / keyed`` rounded half-up to 2 decimals (0 when nothing is keyed)."""
        return _percent(self.correct, self.keyed)


@dataclass(frozen=True)
class StudentGrade:
    """One student's result: per dimension (in the lesson's dimension order) and over all of them."""

    annotator: str
    dimensions: tuple[DimensionGrade, ...]

    @property
    def keyed(self) -> int:
        return sum(d.keyed for d in self.dimensions)

    @property
    def answered(self) -> int:
        return sum(d.answered for d in self.dimensions)

    @property
    def correct(self) -> int:
        return sum(d.correct for d in self.dimensions)

    @property
    def overall(self) -> float:
        """``100 * correct / keyed`` over every dimension's items, rounded half-up to 2 decimals."""
        return _percent(self.correct, self.keyed)


def _percent(part: int, whole: int) -> float:
    if whole <= 0:
        return 0.0
    return float((Decimal(100 * part) / Decimal(whole)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def score_text(score: float) -> str:
    """A score as the files write it: two decimals, "." as the decimal point, no thousands separator."""
    return f"{score:.2f}"


DIMENSION_ORDER = ("relevant", "supported", "correct", "covered")


def lesson_grades(lesson_name: str, key: Mapping[tuple[str, str], int], labels: Iterable[Any]) -> list[StudentGrade]:
    """Every student's :class:`StudentGrade` on the lesson's ``key`` from the current ``labels`` (module rules).

    ``key``: ``{(unit_id, dimension): 0/1}`` of the lesson's units; ``labels``: current labels (objects with
    ``annotator``, ``unit_id``, ``dimension``, ``value``: 1, 0 or 2 for unsure) of those units.  Sorted by
    name (case-folded, then as written).  :class:`GradeError` when the key is empty.
    """
    if not key:
        raise GradeError(f"lesson {lesson_name}: none of its units has an answer key, so there is nothing to "
                         "grade against (an imported dataset has no authored answers)")
    dims = sorted({d for _u, d in key}, key=lambda d: (DIMENSION_ORDER.index(d) if d in DIMENSION_ORDER
                                                       else len(DIMENSION_ORDER), d))
    keyed = {d: sum(1 for _u, kd in key if kd == d) for d in dims}
    answered: dict[str, dict[str, int]] = {}
    correct: dict[str, dict[str, int]] = {}
    for lb in labels:
        item = (lb.unit_id, lb.dimension)
        if item not in key or lb.annotator in NOT_STUDENTS:
            continue
        a = answered.setdefault(lb.annotator, {})
        a[lb.dimension] = a.get(lb.dimension, 0) + 1
        c = correct.setdefault(lb.annotator, {})
        c[lb.dimension] = c.get(lb.dimension, 0) + int(lb.value == key[item])
    return [StudentGrade(name, tuple(DimensionGrade(d, keyed[d], answered[name].get(d, 0),
                                                    correct[name].get(d, 0)) for d in dims))
            for name in sorted(answered, key=lambda s: (s.casefold(), s))]


def grade_columns(lesson_name: str, grades: Sequence[StudentGrade]) -> list[tuple[str, float]]:
    """The grade columns of both files, ``(header, points possible)``: overall, each dimension, answered.

    Headers are ``"LESSON overall"``, ``"LESSON DIMENSION"`` (percent, out of 100) and ``"LESSON answered"``
    (the count of the key's items the student answered, out of the key's size).
    """
    dims = [d.dimension for d in grades[0].dimensions] if grades else []
    keyed = grades[0].keyed if grades else 0
    return ([(f"{lesson_name} overall", 100.0)] + [(f"{lesson_name} {d}", 100.0) for d in dims]
            + [(f"{lesson_name} answered", float(keyed))])


def _values(grade: StudentGrade) -> list[str]:
    return ([score_text(grade.overall)] + [score_text(d.score) for d in grade.dimensions] + [str(grade.answered)])


def _write(rows: Iterable[Sequence[str]]) -> str:
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerows(rows)
    return out.getvalue()


def canvas_csv(lesson_name: str, grades: Sequence[StudentGrade], section: str = "") -> str:
    """A Canvas gradebook import CSV (text; write it as UTF-8).

    Header: Canvas's identity columns :data:`CANVAS_IDENTITY`, then one column per grade
    (:func:`grade_columns`; a column Canvas does not know becomes a new assignment).  Second row:
    ``Points Possible`` (as Canvas's own export writes it): 100 for the scores, the key's size for
    ``answered``.  Then one row per student: the annotator's name as ``Student`` and as ``SIS Login ID``
    (what Canvas matches a row on when ``ID`` is empty; under an LTI launch the annotator is the LMS
    login), ``section`` as ``Section``.
    """
    columns = grade_columns(lesson_name, grades)
    rows: list[list[str]] = [[*CANVAS_IDENTITY, *(h for h, _p in columns)],
                             ["Points Possible", "", "", "", "", *(score_text(p) for _h, p in columns)]]
    rows += [[g.annotator, "", "", g.annotator, section, *_values(g)] for g in grades]
    return _write(rows)


def moodle_csv(lesson_name: str, grades: Sequence[StudentGrade]) -> str:
    """A Moodle gradebook "Import grades from CSV" file (text; write it as UTF-8).

    Header: the identifier column, then one column per grade (:func:`grade_columns`); one row per
    student.  The identifier column is ``Email address`` when every annotator is an e-mail address (an
    LTI launch from Moodle names the student so), else ``Username``; on Moodle's import page map it to
    ``useremail`` or ``username``, and each grade column to a grade item or "new grade item".
    """
    columns = grade_columns(lesson_name, grades)
    ident = "Email address" if grades and all("@" in g.annotator for g in grades) else "Username"
    return _write([[ident, *(h for h, _p in columns)], *([g.annotator, *_values(g)] for g in grades)])


def grades_of_lesson(store: Any, name: str, root: Any = None) -> tuple[Any, list[StudentGrade]] | None:
    """``(lesson, grades)`` of the lesson ``name`` saved in ``store`` (None when there is none): the key of
    its units from its dataset, the current labels of those units (unsure included) from the store."""
    from .calibrate.room_grid import answer_key_values
    from .datasets import open_dataset
    from .lessons import lesson_catalog

    lesson = store.lesson(name)
    if lesson is None:
        return None
    od = open_dataset(lesson.dataset, store=store, root=root)
    units = lesson_catalog(lesson, od.catalog())
    key = answer_key_values(od, list(units.values()))
    labels = store.current_labels(units, include_unsure=True)
    return lesson, lesson_grades(lesson.name, key, labels)
