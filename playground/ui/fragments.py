"""HTML fragments of the playground page: pure functions from scores to escaped HTML strings.

No widgets here, so each fragment can be checked as text. Every piece of text
that comes from the corpus, the cases, the responses or a person goes through
:func:`esc`.
"""
from __future__ import annotations

import html
from typing import Any

from ..metrics import DIMENSION_LABELS, DIMENSION_ORDER, Agreement, Composite, Diagnosis, DimensionRate
from .session import Scores


def esc(text: Any) -> str:
    """Text as HTML text: markup shown literally, never interpreted."""
    return html.escape("" if text is None else str(text), quote=True)


def pct(x: float | None, digits: int = 0) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}%"


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

        def cls(r):
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
