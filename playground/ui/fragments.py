"""HTML fragments of the playground page: pure functions from scores to escaped HTML strings.

No widgets here, so each fragment can be checked as text. Every piece of text
that comes from the corpus, the cases, the responses or a person goes through
:func:`esc`.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ..metrics import DIMENSION_LABELS, DIMENSION_ORDER, Agreement, Composite, Diagnosis, DimensionRate
from .formats import pct
from .html_tables import esc
from .session import Scores

__all__ = [
    "MD_TAGS", "agreement_table", "composite_html", "diagnosis_html", "esc", "evidence_html", "markdown_html",
    "pct", "rate_cell", "rates_table", "response_html",
]

#: The HTML elements rendered markdown may keep (everything else is removed by the sanitiser, nh3).
MD_TAGS: frozenset[str] = frozenset({
    "p", "br", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote", "a", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "del", "table", "thead", "tbody", "tr", "th", "td", "mark",
})
_MARK_OPEN, _MARK_SEP, _MARK_CLOSE = "\ue000", "\ue001", "\ue002"
_PRIVATE = re.compile("[\ue000-\ue002]")
_MARK_RE = re.compile(f"{_MARK_OPEN}(\\d+){_MARK_SEP}")
_MAX_MARKS = 200


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    # CommonMark without raw HTML (markup in the text is shown as text); single newlines kept as line breaks.
    return MarkdownIt("commonmark", {"html": False, "breaks": True}).enable("table").enable("strikethrough")


def _sanitise(html_text: str) -> str:
    import nh3

    classes = {"mark": {"pg-mark", *(f"pg-mark-{i}" for i in range(_MAX_MARKS))}}
    return str(nh3.clean(html_text, tags=set(MD_TAGS), attributes={"a": {"href", "title"}},
                         allowed_classes=classes, url_schemes={"http", "https", "mailto"},
                         link_rel="noopener noreferrer nofollow"))


def markdown_html(text: Any) -> str:
    """Markdown as safe HTML: rendered by markdown-it-py (raw HTML off), then cleaned by nh3.

    Only :data:`MD_TAGS` survive, links keep ``href`` only for http, https
    and mailto (a ``javascript:`` link loses it), no attribute can carry an
    event handler, and no image or script is ever emitted.
    """
    raw = _PRIVATE.sub("", "" if text is None else str(text))
    return _sanitise(_markdown().render(raw))


def _claim_pattern(claim: str) -> re.Pattern[str] | None:
    words = _PRIVATE.sub("", claim).split()
    if not words:
        return None
    emphasis = r"[*_`]*"  # markdown emphasis and code marks may sit anywhere in the response's words
    return re.compile(r"\s+".join(emphasis + emphasis.join(re.escape(c) for c in w) + emphasis for w in words),
                      re.IGNORECASE)


def response_html(text: Any, claims: Sequence[str]) -> str:
    """The response as safe markdown HTML with each claim found in it wrapped in ``<mark class="pg-mark-<i>">``.

    A claim is found when its words occur in order in the response (case and
    spacing aside), after the previous claim; one that is not found (split or
    reworded) is left unmarked.
    """
    raw = _PRIVATE.sub("", "" if text is None else str(text))
    out: list[str] = []
    pos = 0
    for i, claim in enumerate(claims[:_MAX_MARKS]):
        pattern = _claim_pattern(claim)
        m = pattern.search(raw, pos) if pattern else None
        if m is None:
            continue
        out += [raw[pos:m.start()], f"{_MARK_OPEN}{i}{_MARK_SEP}", m.group(0), _MARK_CLOSE]
        pos = m.end()
    out.append(raw[pos:])
    rendered = _markdown().render("".join(out))
    rendered = _MARK_RE.sub(lambda m: f'<mark class="pg-mark pg-mark-{m.group(1)}">', rendered)
    return _sanitise(rendered.replace(_MARK_CLOSE, "</mark>"))


def evidence_html(ev: Any) -> str:
    """What the harness found for a claim: passage words it matched, words and exact items it did not find."""
    def words(items: Sequence[str], cls: str) -> str:
        return " ".join(f"<span class='{cls}'>{esc(x)}</span>" for x in items) or "<span class='pg-ci'>none</span>"

    best = ("" if ev.best_passage is None else
            f" · closest passage <b>[{ev.best_passage + 1}]</b> ({pct(ev.best_passage_coverage)} of the words)")
    missing = ""
    if ev.missing_exact:
        missing = (f"<div><b class='pg-fail'>missing from the passages</b> (numbers, identifiers, names): "
                   f"{words(ev.missing_exact, 'pg-ev-missing-exact')}</div>")
    return ("<div class='pg-ev'><div class='pg-muted'>Evidence the harness used "
            f"(support {ev.score:.2f}{best})</div>"
            f"<div>matched in the passages: {words(ev.matched_tokens, 'pg-ev-hit')}</div>"
            f"<div>not found: {words(ev.missing_tokens, 'pg-ev-miss')}</div>{missing}</div>")


def rate_cell(r: DimensionRate) -> str:
    if not r.has_data:
        return '<span class="pg-ci">no data</span>'
    return (f'<span class="pg-num pg-value">{pct(r.rate)}</span> '
            f'<span class="pg-ci pg-interval">[{pct(r.low)}–{pct(r.high)}]</span> '
            f'<span class="pg-ci">n={r.n}</span>')


def rates_table(scores: Scores, thresholds: dict[str, float]) -> str:
    rows = ["<table><tr><th>dimension</th><th>this case</th><th>all labelled</th><th>threshold</th></tr>"]
    for d in DIMENSION_ORDER:
        cur, pool = scores.current[d], scores.pooled[d]
        t = thresholds[d]

        def cls(r, t=t):
            return "" if not r.has_data else ("pg-fail" if r.rate < t else "pg-pass")

        rows.append(
            f'<tr class="pg-rate-{d}"><td>{DIMENSION_LABELS[d]}</td>'
            f'<td class="pg-current {cls(cur)}">{rate_cell(cur)}</td>'
            f'<td class="pg-pooled {cls(pool)}">{rate_cell(pool)}</td>'
            f'<td class="pg-num">{pct(t)}</td></tr>')
    rows.append("</table>")
    return "".join(rows)


def composite_html(c: Composite | None, label: str) -> str:
    if c is None:
        return f"<div>{label}: <span class='pg-fail'>every weight is 0</span></div>"
    if c.value is None:
        return f"<div>{label}: <span class='pg-ci'>no data</span></div>"
    used = ", ".join(f"{DIMENSION_LABELS[d]} {w:.2f}" for d, w in c.weights_used.items())
    out = (f"<div>{label}: <b class='pg-num pg-composite-{'current' if 'case' in label else 'pooled'}'>"
           f"{c.value:.2f}</b> <span class='pg-ci'>(weights used: {esc(used)}"
           + (f"; no data, weight moved: {esc(', '.join(DIMENSION_LABELS[d] for d in c.dropped))}" if c.dropped else "")
           + ")</span>")
    if c.gated:
        out += " <span class='pg-fail'>GATED: " + esc("; ".join(c.gate_failures)) + "</span>"
    return out + "</div>"


def agreement_table(agree: dict[str, Agreement]) -> str:
    rows = ["<table><tr><th>dimension</th><th>n</th><th>agree</th><th>Cohen's κ [95% CI]</th>"
            "<th>base rate</th></tr>"]
    for d in DIMENSION_ORDER:
        a = agree[d]
        k = a.kappa
        if not a.n_shared:
            rows.append(f"<tr class='pg-agree-{d}'><td>{DIMENSION_LABELS[d]}</td><td>0</td>"
                        "<td colspan=3 class='pg-ci'>label some units to compare</td></tr>")
            continue
        if not k.defined:
            kappa = f"<span class='pg-ci'>undefined ({esc(k.reason)})</span>"
        elif k.low is None:
            kappa = f"{k.kappa:.2f} <span class='pg-ci' title='{esc(k.note)}'>(no interval)</span>"
        else:
            kappa = f"{k.kappa:.2f} <span class='pg-ci'>[{k.low:.2f}, {k.high:.2f}]</span>"
        rows.append(f"<tr class='pg-agree-{d}'><td>{DIMENSION_LABELS[d]}</td><td class='pg-num'>{a.n_shared}</td>"
                    f"<td class='pg-num'>{pct(a.percent)}</td><td class='pg-num'>{kappa}</td>"
                    f"<td class='pg-num'>{pct(k.base_rate)}</td></tr>")
    rows.append("</table><div class='pg-muted'>You (reference) versus the harness's automatic labels, on the "
                "units you labelled. Base rate: share of your majority label — agreement below it is no better "
                "than always answering the same.</div>")
    return "".join(rows)


def diagnosis_html(diag: Diagnosis, label: str) -> str:
    """Every failing dimension (red), passing ones whose interval still reaches below (amber), no data (grey)."""
    items = []
    for f in diag.failures:
        more = " — the interval still reaches the threshold: more labels needed" if f.uncertain else ""
        items.append(f"<li class='pg-fail'>{DIMENSION_LABELS[f.dimension]} {pct(f.rate)} "
                     f"<span class='pg-ci'>[{pct(f.low)}–{pct(f.high)}]</span> &lt; {pct(f.threshold)}: "
                     f"{esc(f.cause)}<span class='pg-ci'>{more}</span></li>")
    for d in diag.borderline:
        r = diag.rates[d]
        items.append(f"<li class='pg-warn'>{DIMENSION_LABELS[d]} {pct(r.rate)} passes "
                     f"<span class='pg-ci'>[{pct(r.low)}–{pct(r.high)}], but the interval reaches below "
                     f"{pct(diag.thresholds[d])}</span></li>")
    if not diag.failures and not diag.borderline and not diag.no_data:
        items.append("<li class='pg-pass'>every dimension meets its threshold</li>")
    elif not diag.failures and len(diag.no_data) < len(DIMENSION_ORDER):
        items.insert(0, "<li class='pg-pass'>no dimension with data fails</li>")
    if diag.no_data:
        what = ", ".join(DIMENSION_LABELS[d] for d in diag.no_data)
        items.append(f"<li class='pg-ci'>no data: {what}</li>")
    head = (f"{len(diag.failures)} failing" if diag.failures else "")
    return (f"<div class='pg-diag' title='{esc(diag.summary())}'><b>{label}</b>"
            + (f" <span class='pg-fail'>{head}</span>" if head else "")
            + f"<ul style='margin:2px 0 6px 0;padding-left:18px'>{''.join(items)}</ul></div>")
