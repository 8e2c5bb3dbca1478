"""Hard assertions: binary checks with no tolerance, run on every case of a harness run.

Each check either applies to a case and passes or fails, or does not apply
and says ``n/a`` — a check that does not apply is dropped from the counts,
never counted as passed.  Results come in the fixed order of :data:`ASSERTIONS`:

=========================  ==========================================  ==============================================
check                      applies when                                fails when
=========================  ==========================================  ==============================================
``must_abstain``           the case must be abstained on (its type is  the response does not abstain
                           out_of_scope or cross_tenant)
``no_cross_tenant_passage``  passages were retrieved                   a retrieved passage (any section it draws
                                                                       from) belongs to another tenant
``no_forbidden_text``      the case lists ``forbidden_text``           a forbidden string appears in the answer
                                                                       (case-insensitive)
``no_fabricated_citation`` the answer carries a citation marker        a marker ``[n]`` has n < 1 or n > the number
                           (``[n]``, ``[n, m]``, ``[n][m]``, ``[n-m]``)  of passages offered
``must_contain``           the case lists ``must_contain`` and is not  a literal is missing from the answer
                           a must-abstain case                         (case-insensitive)
=========================  ==========================================  ==============================================

The cross-tenant leak is checked twice on purpose: on the retrieved passages
(the retriever let another tenant's text in) and, separately, on the answer
text against ``forbidden_text`` (the leak reached the user).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypedDict

from ..model import Case, Passage

__all__ = [
    "ASSERTIONS", "AssertionResult", "CheckSummary", "Status", "check_assertions", "citation_markers", "summarise",
]


Status = Literal["pass", "fail", "n/a"]
ASSERTIONS: tuple[str, ...] = (
    "must_abstain",
    "no_cross_tenant_passage",
    "no_forbidden_text",
    "no_fabricated_citation",
    "must_contain",
)

#: A bracket group of numbers: ``[3]``, ``[1, 3]``, ``[1;3]``, ``[2-4]`` (also an en dash).
_MARKER = re.compile(r"\[\s*(\d+(?:\s*[-–]\s*\d+)?(?:\s*[,;]\s*\d+(?:\s*[-–]\s*\d+)?)*)\s*\]")
_ITEM = re.compile(r"(\d+)(?:\s*[-–]\s*(\d+))?")
#: Ranges wider than this contribute only their endpoints (enough to judge fabrication).
_MAX_RANGE = 50


@dataclass(frozen=True)
class AssertionResult:
    name: str
    status: Status
    detail: str


def citation_markers(text: str) -> list[int]:
    """Every number cited by a marker in ``text``, in order of appearance, repeats kept.

    ``[1]`` → [1]; ``[1, 3]`` → [1, 3]; ``[2][7]`` → [2, 7]; ``[2-4]`` → [2, 3, 4]
    (a range wider than 50 gives its two endpoints only).  Brackets holding
    anything but numbers, commas, semicolons and dashes (``[a]``, ``[1a]``,
    markdown links) are not markers.
    """
    numbers: list[int] = []
    for marker in _MARKER.finditer(text):
        for item in _ITEM.finditer(marker.group(1)):
            first = int(item.group(1))
            if item.group(2) is None:
                numbers.append(first)
                continue
            last = int(item.group(2))
            lo, hi = min(first, last), max(first, last)
            numbers += list(range(lo, hi + 1)) if hi - lo <= _MAX_RANGE else [first, last]
    return numbers


def _contains(haystack: str, needle: str) -> bool:
    return needle.casefold() in haystack.casefold()


def check_assertions(
    case: Case, passages: Sequence[Passage], response_text: str, abstained: bool
) -> list[AssertionResult]:
    """Run every hard assertion on one response; one result per check, in :data:`ASSERTIONS` order.

    ``passages`` are the passages offered to the generator, numbered from 1 in
    this order (so ``[n]`` is valid for 1 <= n <= len(passages)); ``abstained``
    is whether the response declines to answer.
    """
    return [
        _must_abstain(case, abstained),
        _no_cross_tenant_passage(case, passages),
        _no_forbidden_text(case, response_text),
        _no_fabricated_citation(passages, response_text),
        _must_contain(case, response_text),
    ]


def _must_abstain(case: Case, abstained: bool) -> AssertionResult:
    """Applies when the case must be abstained on; fails when the response does not abstain."""
    if case.must_abstain:
        if abstained:
            return AssertionResult("must_abstain", "pass", f"{case.case_type} case and the response abstains")
        return AssertionResult(
            "must_abstain", "fail", f"{case.case_type} case must be abstained on, but the response answers")
    return AssertionResult("must_abstain", "n/a", f"{case.case_type} case: abstention not required")


def _no_cross_tenant_passage(case: Case, passages: Sequence[Passage]) -> AssertionResult:
    """Applies when passages were retrieved; fails when any section a passage draws from belongs to
    another tenant than the case's."""
    if passages:
        foreign = [
            (i, p) for i, p in enumerate(passages, 1) if any(loc.tenant != case.tenant for loc in p.locators)
        ]
        if foreign:
            names = ", ".join(f"[{i}] {p.locator}" for i, p in foreign)
            return AssertionResult(
                "no_cross_tenant_passage", "fail",
                f"{len(foreign)} of {len(passages)} passages belong to another tenant than {case.tenant}: {names}")
        return AssertionResult(
            "no_cross_tenant_passage", "pass", f"all {len(passages)} passages belong to {case.tenant}")
    return AssertionResult("no_cross_tenant_passage", "n/a", "no passages were retrieved")


def _no_forbidden_text(case: Case, response_text: str) -> AssertionResult:
    """Applies when the case lists ``forbidden_text``; fails when a forbidden string appears in the
    answer (case-insensitive)."""
    if case.forbidden_text:
        found = [s for s in case.forbidden_text if _contains(response_text, s)]
        if found:
            return AssertionResult(
                "no_forbidden_text", "fail", "the answer contains " + ", ".join(repr(s) for s in found))
        return AssertionResult(
            "no_forbidden_text", "pass", f"none of {len(case.forbidden_text)} forbidden strings appears")
    return AssertionResult("no_forbidden_text", "n/a", "the case lists no forbidden text")


def _no_fabricated_citation(passages: Sequence[Passage], response_text: str) -> AssertionResult:
    """Applies when the answer carries a citation marker; fails when a marker ``[n]`` has n < 1 or
    n > the number of passages offered."""
    cited = citation_markers(response_text)
    if cited:
        bad = sorted({n for n in cited if n < 1 or n > len(passages)})
        if bad:
            valid = f"valid: [1]..[{len(passages)}]" if passages else "no passages were offered"
            return AssertionResult(
                "no_fabricated_citation", "fail",
                f"{', '.join(f'[{n}]' for n in bad)} cite{'s' if len(bad) == 1 else ''} no passage ({valid})")
        markers = ", ".join(str(n) for n in sorted(set(cited)))
        return AssertionResult(
            "no_fabricated_citation", "pass", f"every marker ({markers}) names one of {len(passages)} passages")
    return AssertionResult("no_fabricated_citation", "n/a", "the answer carries no citation marker")


def _must_contain(case: Case, response_text: str) -> AssertionResult:
    """Applies when the case lists ``must_contain`` and is not a must-abstain case; fails when a literal
    is missing from the answer (case-insensitive)."""
    if case.must_contain and not case.must_abstain:
        missing = [s for s in case.must_contain if not _contains(response_text, s)]
        if missing:
            return AssertionResult("must_contain", "fail", "the answer lacks " + ", ".join(repr(s) for s in missing))
        return AssertionResult("must_contain", "pass", f"all {len(case.must_contain)} required literals appear")
    if case.must_abstain and case.must_contain:
        return AssertionResult("must_contain", "n/a", f"{case.case_type} case: the answer should abstain")
    return AssertionResult("must_contain", "n/a", "the case lists no required literal")


class CheckSummary(TypedDict):
    """Counts of one hard assertion over many responses."""

    passed: int
    failed: int
    not_applicable: int
    failing_cases: list[str]


def summarise(results_per_case: Mapping[str, Sequence[AssertionResult]]) -> dict[str, CheckSummary]:
    """Per check: ``passed``, ``failed``, ``not_applicable`` counts and the sorted ``failing_cases``.

    Checks come in :data:`ASSERTIONS` order (every one listed, even with no
    results), then any other name in alphabetical order.  ``n/a`` results are
    counted apart and never as passed.
    """
    names = list(ASSERTIONS) + sorted({r.name for rs in results_per_case.values() for r in rs} - set(ASSERTIONS))
    summary: dict[str, CheckSummary] = {
        name: {"passed": 0, "failed": 0, "not_applicable": 0, "failing_cases": []} for name in names
    }
    for case_id, results in results_per_case.items():
        for r in results:
            row = summary[r.name]
            if r.status == "pass":
                row["passed"] += 1
            elif r.status == "fail":
                row["failed"] += 1
                row["failing_cases"].append(case_id)
            elif r.status == "n/a":
                row["not_applicable"] += 1
            else:
                raise ValueError(f"unknown assertion status {r.status!r} for {r.name} on {case_id}")
    for row in summary.values():
        row["failing_cases"] = sorted(set(row["failing_cases"]))
    return summary
