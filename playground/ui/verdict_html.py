"""HTML of error analysis (issue 24.5, 24.6): failure-mode counts, a response's authored verdict, guidelines.

Pure functions from plain values to escaped HTML, shared by the page
(:mod:`playground.ui.verdict_panel`) and the room (:mod:`playground.ui.room_analysis`):

* :func:`failure_table_html` — per failure mode, the responses tagged with it
  of the responses judged (given a pass/fail/unsure verdict), the rate and its
  95% Wilson interval (:func:`playground.verdicts.failure_mode_table`), plus
  the pass rate the same way; pooled or for one annotator.
* :func:`failures_by_annotator_html` — the same rows, one line per annotator
  and failure mode, for a ``<details>`` under the pooled table.
* :func:`authored_html` — what the shipped set's author said of a response
  (verdict and failure tags), shown once the annotator has judged it.
* :func:`guidelines_html` — the dataset's own guidelines, markdown rendered and
  sanitised by :func:`playground.ui.fragments.markdown_html` (raw HTML off,
  then nh3: no script, no ``javascript:`` link), with their version.

Every name (tag, annotator) and every text goes through :func:`esc`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..store import UNSURE
from .formats import interval
from .html_tables import esc

__all__ = ["VERDICT_WORDS", "authored_html", "failure_table_html", "failures_by_annotator_html",
           "guidelines_html"]

#: A stored verdict value as a word (1 pass, 0 fail, the store's UNSURE unsure).
VERDICT_WORDS: dict[int, str] = {1: "pass", 0: "fail", UNSURE: "unsure"}


def _word(value: int | None) -> str:
    if value is None:
        return "no verdict"
    return VERDICT_WORDS.get(int(value), "unsure")


def _rate_cells(tagged: int, judged: int, rate: float | None, low: float | None, high: float | None) -> str:
    return (f"<td class='pg-num'>{tagged}/{judged}</td>"
            f"<td class='pg-num'>{interval(rate, low, high)}</td>")


def failure_table_html(rows: Sequence[Any], passed: Any = None, *, cls: str = "pg-failure-modes",
                       who: str = "pooled over every annotator") -> str:
    """The failure-mode table: ``rows`` of ``FailureModeRow(name, responses_tagged, responses_judged, rate, low,
    high)``; ``passed`` the ``(passed, judged, low, high)`` of :func:`playground.verdicts.pass_rate`."""
    head = (f"<table class='{esc(cls)}'><tr><th>failure mode</th><th>responses</th>"
            "<th>rate [95% Wilson]</th></tr>")
    body = []
    if passed is not None:
        k, n, low, high = passed
        body.append(f"<tr class='pg-pass-rate'><td><i>pass</i></td>"
                    f"{_rate_cells(k, n, k / n if n else None, low, high)}</tr>")
    for r in rows:
        body.append(f"<tr class='pg-fm-{esc(r.name)}'><td>{esc(r.name)}</td>"
                    f"{_rate_cells(r.responses_tagged, r.responses_judged, r.rate, r.low, r.high)}</tr>")
    if not rows and passed is None:
        return f"<div class='pg-muted {esc(cls)}'>No response judged yet.</div>"
    note = (f"<div class='pg-muted'>{esc(who)}: responses tagged with the mode of the responses given a verdict; "
            "a response counts once per mode.</div>")
    return head + "".join(body) + "</table>" + note


def failures_by_annotator_html(tables: Mapping[str, Sequence[Any]], cls: str = "pg-failure-by-annotator") -> str:
    """Per annotator (sorted by name) and failure mode: tagged / judged, rate [Wilson]; folded in ``<details>``."""
    lines = []
    for who in sorted(tables):
        for r in tables[who]:
            lines.append(f"<tr><td>{esc(who)}</td><td>{esc(r.name)}</td>"
                         f"{_rate_cells(r.responses_tagged, r.responses_judged, r.rate, r.low, r.high)}</tr>")
    if not lines:
        return ""
    return (f"<details class='{esc(cls)}'><summary>per annotator ({len(tables)})</summary><table><tr>"
            "<th>annotator</th><th>failure mode</th><th>responses</th><th>rate [95% Wilson]</th></tr>"
            + "".join(lines) + "</table></details>")


def authored_html(verdict: int | None, tags: Sequence[str], mine: int | None) -> str:
    """The author's verdict and tags of a shipped response, beside the annotator's own (``mine``)."""
    same = "" if mine is None or verdict is None else (
        " <span class='pg-agree'>= yours</span>" if int(mine) == int(verdict) else
        " <span class='pg-differ'>≠ yours</span>")
    chips = " ".join(f"<span class='pg-chip pg-chip-authored'>{esc(t)}</span>" for t in tags) or \
        "<span class='pg-muted'>no failure tag</span>"
    return (f"<div class='pg-verdict-authored'><b>Authored verdict:</b> "
            f"<span class='pg-verdict-{esc(_word(verdict))}'>{esc(_word(verdict))}</span>{same} · tags: {chips}</div>")


def guidelines_html(markdown: str | None, version: int | None, dataset: str, author: str = "") -> str:
    """The dataset's guidelines (sanitised markdown) with their version, or a line saying it has none."""
    if not markdown:
        return (f"<div class='pg-guidelines-none pg-muted'>The dataset {esc(dataset)} has no guidelines of its own "
                "(<code>playground guidelines set --dataset NAME FILE.md</code> adds them); the built-in guide "
                "beside this applies."
                "</div>")
    from .fragments import markdown_html  # the page's one markdown renderer and sanitiser

    by = f" by {esc(author)}" if author else ""
    return (f"<div class='pg-guidelines-version pg-muted'>Guidelines of {esc(dataset)}, version {esc(version)}{by}"
            " — each label records the version it was made under.</div>"
            f"<div class='pg-guidelines-body pg-md'>{markdown_html(markdown)}</div>")
