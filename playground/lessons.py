"""Lessons: the instructor chooses what the class labels, and every student gets it in the same order.

A :class:`~playground.store.Lesson` names a dataset, its cases (in the
instructor's order) and optionally some of their responses; its units are
fixed when it is made (:func:`lesson_units`):

1. the cases in the order given;
2. per case its retrieved passages, in rank order;
3. then per chosen response (in the order given; without ``responses``
   every response of the case, by response id) its claims, then its facts.

That is the order of :meth:`playground.golden.Dataset.units` restricted to
the lesson, so a student walks the lesson exactly as the page lists a case.
Lessons live in the label store (schema 4, table ``lessons``); several can
live in one store.  The page, the room and ``labels export --lesson`` scope
themselves to :func:`lesson_catalog`.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .golden import passage_unit, response_units
from .model import Unit
from .store.types import Lesson

__all__ = ["LessonError", "latest_lesson", "lesson_catalog", "lesson_for_page", "lesson_units", "make_lesson",
           "parse_ids"]


class LessonError(ValueError):
    """A lesson that cannot be made or found (the message says which id and why)."""


def parse_ids(text: str | Iterable[str] | None) -> list[str]:
    """``"GC-0036, GC-0007"`` (or a list of such strings) as ``["GC-0036", "GC-0007"]``; blanks dropped."""
    if text is None:
        return []
    parts = [text] if isinstance(text, str) else list(text)
    return [p.strip() for part in parts for p in part.split(",") if p.strip()]


def _check(cases: Sequence[str], responses: Sequence[str], od: Any) -> None:
    ds = od.dataset
    problems = []
    if not cases:
        problems.append("name at least one case (--cases GC-0036,GC-0007)")
    for what, ids in (("case", cases), ("response", responses)):
        dupes = sorted({i for i in ids if list(ids).count(i) > 1})
        if dupes:
            problems.append(f"{what}(s) named twice: {', '.join(dupes)}")
    unknown = [c for c in cases if c not in ds.cases]
    if unknown:
        problems.append(f"no case {', '.join(unknown)} in the dataset {od.name} ({len(ds.cases)} cases, "
                        f"e.g. {', '.join(sorted(ds.cases)[:3])})")
    for rid in responses:
        response = ds.responses.get(rid)
        if response is None:
            problems.append(f"no response {rid} in the dataset {od.name}")
        elif response.case_id not in cases:
            problems.append(f"response {rid} belongs to case {response.case_id}, which is not in the lesson")
    cases_without = [c for c in cases if c in ds.cases and responses
                     and not any(ds.responses[r].case_id == c for r in responses if r in ds.responses)]
    if cases_without:
        problems.append(f"no response chosen for case(s) {', '.join(cases_without)} (choose one, or leave "
                        "--responses out to take every response)")
    if problems:
        raise LessonError("; ".join(problems))


def lesson_units(od: Any, cases: Sequence[str], responses: Sequence[str] = ()) -> list[Unit]:
    """The units of a lesson over the open dataset ``od`` (:class:`playground.datasets.OpenDataset`), in the
    order of the module docstring.  Raises :class:`LessonError` naming every unknown or misplaced id."""
    cases, responses = list(cases), list(responses)
    _check(cases, responses, od)
    ds = od.dataset
    units: list[Unit] = []
    for cid in cases:
        case = ds.cases[cid]
        units += [passage_unit(case, p) for p in od.passages.get(cid, ())]
        chosen = ([ds.responses[r] for r in responses if ds.responses[r].case_id == cid] if responses
                  else sorted(ds.responses_for(cid), key=lambda r: r.response_id))
        for response in chosen:
            units += response_units(case, response)
    return units


def make_lesson(name: str, od: Any, cases: Sequence[str], responses: Sequence[str] = ()) -> Lesson:
    """A :class:`~playground.store.Lesson` (not yet saved) over ``od``."""
    if not isinstance(name, str) or not name.strip():
        raise LessonError("give the lesson a name")
    units = lesson_units(od, cases, responses)
    return Lesson(name.strip(), od.name, tuple(cases), tuple(responses), tuple(u.unit_id for u in units))


def lesson_catalog(lesson: Lesson, catalog: Mapping[str, Unit]) -> dict[str, Unit]:
    """``catalog`` restricted to the lesson's units, in lesson order (units no longer in it are left out)."""
    return {u: catalog[u] for u in lesson.units if u in catalog}


def latest_lesson(lessons: Iterable[Lesson], dataset: str | None = None) -> Lesson | None:
    """The most recent lesson (of ``dataset`` when given): latest ``created_at``, ties by name; or None."""
    found = [x for x in lessons if dataset is None or x.dataset == dataset]
    return max(found, key=lambda x: (x.created_at, x.name)) if found else None


def lesson_for_page(store: Any, dataset: str, name: str | None = None) -> Lesson | None:
    """The lesson a student's page follows: the one named (``?lesson=NAME``), else the newest lesson of
    ``dataset`` (:func:`latest_lesson`), else None (the page follows an assignment queue or the case list).

    Raises :class:`LessonError` for a named lesson that does not exist or belongs to another dataset.
    """
    if name:
        lesson = store.lesson(name)
        if lesson is None or lesson.dataset != dataset:
            known = ", ".join(x.name for x in store.lessons() if x.dataset == dataset) or "none"
            raise LessonError(f"no lesson named {name!r} for the dataset {dataset} (known: {known})")
        return lesson
    return latest_lesson(store.lessons(), dataset)
