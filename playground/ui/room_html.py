"""The room's HTML fragments (pure functions of the room's figures; no widgets): what the projector shows.

Split from :mod:`playground.ui.room` (the widgets and the timer), which
re-exports every name here.
"""
from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote

from ..calibrate.room import AnnotatorProgress, DimensionAgreement, TeachingMoment, UnitNote
from ..calibrate.room_grid import AgreementSummary, GridCell
from ..metrics import DIMENSION_LABELS
from ..model import DIMENSION_NAMES, DIMENSIONS, Unit
from ..store import UNSURE
from .formats import num, pct
from .html_tables import esc

__all__ = ["ANSWER", "CSS", "PERSONAL_LINKS_ENV", "accuracy_html", "agreement_html", "assignment_html", "case_html",
           "dim_name", "esc", "grid_html", "join_html", "join_url", "moment_html", "notes_html", "personal_links",
           "progress_html", "progress_summary_html", "qr_svg", "sample_html", "summary_html"]

ANSWER = {1: "yes", 0: "no", UNSURE: "unsure"}

CSS = """
<style>
.pr-room { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 15px; color: #1f2328;
           max-width: 1800px; overflow-wrap: break-word; }
.pr-room table { max-width: 100%; }
.pr-title { font-size: 19px; font-weight: 600; margin-right: 14px; }
.pr-h { font-weight: 600; font-size: 15px; margin: 10px 0 2px 0; }
.pr-muted, .pr-muted * { color: #656d76; font-size: 12px; }
.pr-room table { border-collapse: collapse; font-size: 13px; }
.pr-room td, .pr-room th { padding: 2px 8px; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top; }
.pr-bar { display: inline-block; height: 8px; background: #0969da; border-radius: 2px; }
.pr-barbg { display: inline-block; width: 120px; height: 8px; background: #eaeef2; border-radius: 2px; }
.pr-moment { border: 1px solid #d0d7de; border-radius: 6px; padding: 6px 10px; margin: 4px 0; }
.pr-text { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; border-left: 3px solid #d0d7de;
           padding: 3px 8px; }
.pr-split { font-weight: 600; }
.pr-tie { color: #bc4c00; }
.pr-settled { color: #1a7f37; font-weight: 600; }
.pr-err { color: #cf222e; font-weight: 600; }
.pr-ok { color: #1a7f37; }
.pr-head { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; justify-content: space-between; }
.pr-join { border: 2px solid #0969da; border-radius: 10px; padding: 8px 14px; display: flex; gap: 16px;
           align-items: center; background: #f6f8fa; }
.pr-join-link { font-size: 24px; font-weight: 700; font-family: ui-monospace, Menlo, Consolas, monospace;
                overflow-wrap: anywhere; max-width: 720px; }
.pr-join-label { font-size: 15px; font-weight: 600; color: #0969da; }
.pr-qr svg { display: block; }
.pr-grid td, .pr-grid th { padding: 1px 6px; font-size: 13px; line-height: 1.35; }
.pr-grid .pr-num { text-align: right; font-variant-numeric: tabular-nums; }
.pr-grid .pr-unit { max-width: 560px; }
.pr-divided td.pr-vote { background: #fff1e5; }
.pr-key { font-weight: 600; }
.pr-keybox { display: inline-block; border: 1px solid #1a7f37; border-radius: 4px; padding: 0 6px; margin-left: 8px;
             color: #1a7f37; font-weight: 600; }
.pr-room details > summary { cursor: pointer; color: #0969da; margin: 4px 0; }
.pr-summary td { font-size: 14px; }
</style>
"""


def dim_name(d: str) -> str:
    """The plain name of a label dimension ("supported" -> "faithfulness")."""
    return DIMENSION_LABELS.get(DIMENSION_NAMES.get(d, d), d)



# --------------------------------------------------------------------------- HTML fragments (pure)


def _unsure(p: AnnotatorProgress) -> str:
    if not p.unsure:
        return "0"
    dims = ", ".join(f"{dim_name(d)} {n}" for d, n in p.unsure_by_dimension)
    return f"{p.unsure} <span class='pr-muted'>({esc(dims)})</span>"


def progress_html(rows: list[AnnotatorProgress], assigned: dict[str, tuple[str, ...]] | None = None,
                  whole: str = "of all units") -> str:
    """The progress table; names with a queue but no answer are listed after it, never as a row of zeros."""
    if not rows:
        body = "<span class='pr-muted'>Nobody has labelled yet.</span>"
    else:
        lines = ["<table><tr><th>annotator</th><th>answers</th><th>unsure</th><th>units done</th><th></th></tr>"]
        for p in rows:
            of = "of their queue" if p.queued else whole
            bar = (f"<span class='pr-barbg'><span class='pr-bar' style='width:{round(120 * p.fraction)}px'>"
                   "</span></span>")
            lines.append(f"<tr class='pr-annotator'><td>{esc(p.annotator)}</td><td>{p.answered}</td>"
                         f"<td>{_unsure(p)}</td><td>{p.units_done} / {p.units_total} {of}</td><td>{bar}</td></tr>")
        body = "".join(lines) + "</table>"
    waiting = sorted(set(assigned or {}) - {p.annotator for p in rows})
    if waiting:
        body += f"<div class='pr-muted'>Assigned, no answer yet: {esc(', '.join(waiting))}</div>"
    return body


def agreement_html(agreement: dict[str, DimensionAgreement]) -> str:
    """Per dimension: annotators, shared units, Fleiss' kappa, Krippendorff's alpha; then every pair."""
    head = ["<table><tr><th>dimension</th><th>annotators</th><th>units with ≥2 labels</th>"
            "<th>Fleiss' κ</th><th>Krippendorff's α</th></tr>"]
    pairs = ["<table><tr><th>dimension</th><th>pair</th><th>shared units</th><th>agreement</th>"
             "<th>Cohen's κ [95%]</th></tr>"]
    any_pair = False
    for d in DIMENSIONS:
        ag = agreement.get(d)
        if ag is None or not ag.n_items:
            continue
        fleiss = num(ag.fleiss) if ag.fleiss is not None else f"<span class='pr-muted'>{esc(ag.fleiss_reason)}</span>"
        alpha = (num(ag.krippendorff) if ag.krippendorff is not None
                 else f"<span class='pr-muted'>{esc(ag.krippendorff_reason)}</span>")
        head.append(f"<tr class='pr-agree-{d}'><td>{esc(dim_name(d))}</td><td>{len(ag.annotators)}</td>"
                    f"<td>{ag.n_shared}</td><td>{fleiss}</td><td>{alpha}</td></tr>")
        for p in ag.pairs:
            any_pair = True
            k = num(p.kappa)
            if p.kappa is not None and p.low is not None and p.high is not None:
                k += f" [{num(p.low)}, {num(p.high)}]"
            note = f" <span class='pr-muted'>{esc(p.reason)}</span>" if p.reason else ""
            pairs.append(f"<tr class='pr-pair'><td>{esc(dim_name(d))}</td><td>{esc(p.annotator_a)} – "
                         f"{esc(p.annotator_b)}</td><td>{p.n_shared}</td><td>{pct(p.agreement)}</td>"
                         f"<td>{k}{note}</td></tr>")
    if len(head) == 1:
        return "<span class='pr-muted'>No labels yet.</span>"
    out = "".join(head) + "</table>"
    out += ("<div class='pr-h' style='font-size:13px'>Pairs on shared units</div>" + "".join(pairs) + "</table>"
            if any_pair else "<div class='pr-muted'>No two annotators have labelled the same unit yet.</div>")
    return out


def accuracy_html(rows: list[dict[str, Any]], has_key: bool) -> str:
    """Annotator × dimension: accuracy against the answer key (correct / n)."""
    if not has_key:
        return "<span class='pr-muted'>This dataset has no answer key.</span>"
    if not rows:
        return "<span class='pr-muted'>No label on a keyed unit yet.</span>"
    dims = [d for d in DIMENSIONS if any(r["dimension"] == d for r in rows)]
    cells = {(r["annotator"], r["dimension"]): r for r in rows}
    out = ["<table><tr><th>annotator</th>" + "".join(f"<th>{esc(dim_name(d))}</th>" for d in dims) + "</tr>"]
    for a in sorted({r["annotator"] for r in rows}):
        tds = []
        for d in dims:
            r = cells.get((a, d))
            tds.append("<td>–</td>" if r is None else
                       f"<td>{pct(r['accuracy'])} <span class='pr-muted'>({r['correct']}/{r['n']})</span></td>")
        out.append(f"<tr class='pr-acc'><td>{esc(a)}</td>{''.join(tds)}</tr>")
    return "".join(out) + "</table>"


def case_html(case_id: str, link_base: str | None) -> str:
    """The case id, a link to it in the playground when ``link_base`` (the playground's address) is known."""
    if not link_base:
        return f"<b>{esc(case_id)}</b>"
    return (f"<a href='{esc(link_base)}?case={quote(case_id, safe='')}' target='_blank' rel='noopener'>"
            f"<b>{esc(case_id)}</b></a>")


def notes_html(notes: list[UnitNote], link_base: str | None = None) -> str:
    """Units with unsure answers or comments: where, the text, unsure per dimension, every comment."""
    if not notes:
        return "<span class='pr-muted'>No unsure answer and no comment yet.</span>"
    rows = ["<table><tr><th>case</th><th>unit</th><th>unsure</th><th>comments</th></tr>"]
    for n in notes:
        unsure = ", ".join(f"{esc(dim_name(d))}: {c}" for d, c in n.unsure) or "–"
        comments = "".join(f"<div>💬 {esc(c.annotator)}: {esc(c.text)}</div>" for c in n.comments) or "–"
        rows.append(f"<tr class='pr-note'><td>{case_html(n.case_id, link_base)}</td><td>{esc(n.unit_kind)}: "
                    f"<span class='pr-text-inline'>{esc(n.text)}</span></td><td>{unsure}</td><td>{comments}</td></tr>")
    return "".join(rows) + "</table>"


def moment_html(m: TeachingMoment, link_base: str | None = None, key: int | None = None) -> str:
    """One teaching moment: where, the text, the split with the answer key beside it, who said what, unsure
    answers, comments, the consensus."""
    votes = ", ".join(f"{esc(a)}: {ANSWER.get(v, v)}" for a, v in m.votes)
    split_cls = "pr-split pr-tie" if m.yes == m.no else "pr-split"
    if m.adjudication is not None:
        who = f" by {esc(m.adjudication.adjudicator)}" if m.adjudication.adjudicator else ""
        consensus = (f"<span class='pr-consensus pr-settled'>consensus: {ANSWER[m.adjudication.value]} "
                     f"(adjudicated{who})</span>")
    elif m.consensus is None:
        consensus = "<span class='pr-consensus pr-tie'>consensus: none (tie) — settle it</span>"
    else:
        consensus = f"<span class='pr-consensus'>consensus: {ANSWER[m.consensus]} (majority)</span>"
    comments = "".join(f"<div class='pr-comment'>💬 {esc(c.annotator)}: {esc(c.text)}</div>" for c in m.comments)
    unsure = f" · <span class='pr-unsure'>{m.unsure} unsure</span>" if m.unsure else ""
    if len(m.votes) > 6:  # a class: who said what is folded away, the split and the key stay on screen
        votes, unsure = (f"<details class='pr-who'><summary>who said what ({len(m.votes)}){unsure}</summary>"
                         f"{votes}</details>"), ""
    keyed = ""
    if key is not None:
        match = m.yes if key == 1 else m.no
        keyed = (f"<span class='pr-keybox pr-moment-key'>answer key: {ANSWER[key]}</span> "
                 f"<span class='pr-muted'>{match} of {m.yes + m.no} match it</span>")
    return (f"<div>{case_html(m.case_id, link_base)} · {esc(m.unit_kind)} · {esc(dim_name(m.dimension))} · "
            f"<span class='{split_cls}'>{esc(m.split)}</span>{keyed}</div>"
            f"<div class='pr-text'>{esc(m.text)}</div>"
            f"<div class='pr-muted'>{votes}{unsure}</div>{comments}<div>{consensus}</div>")


def sample_html(sample: Any, labelled: int, prefix: int) -> str:
    """The current calibration sample: its size and how much of it is labelled, in ranked order."""
    if sample is None:
        return "<span class='pr-muted'>No calibration sample drawn.</span>"
    units = len(sample.queues.get("*", ()))
    return (f"Calibration sample <b>{esc(sample.name)}</b> (seed {esc(sample.seed)}): {units} units, "
            f"{labelled} labelled; the first {prefix} in sample order are all labelled "
            "<span class='pr-muted'>(prediction-powered estimates use that prefix)</span>")


def assignment_html(assignment: Any) -> str:
    queues = dict(assignment.queues)
    sizes = "".join(f"<tr><td>{esc(a)}</td><td>{len(q)}</td></tr>" for a, q in sorted(queues.items()))
    units = len({u for q in queues.values() for u in q})
    return (f"<div class='pr-ok'>Assignment {esc(assignment.name)} saved (overlap {assignment.overlap}, "
            f"seed {esc(assignment.seed)}): {units} units.</div>"
            f"<table><tr><th>annotator</th><th>queue</th></tr>{sizes}</table>")


# --------------------------------------------------------------------------- the projector (issue 23)


def join_url(link_base: str | None, lesson: str | None) -> str | None:
    """The students' link: the playground's address, with ``lesson=NAME`` when the room shows a lesson."""
    if not link_base:
        return None
    if not lesson:
        return link_base
    return f"{link_base}{'&' if '?' in link_base else '?'}lesson={quote(lesson, safe='')}"


def qr_svg(url: str) -> str:
    """``url`` as an inline SVG QR code (``segno``, error correction M, no XML declaration)."""
    import segno

    return str(segno.make(url, error="m", micro=False).svg_inline(scale=4, border=2))


#: The room's setting for a class with one link per student (``playground serve --read-only --roster FILE``):
#: the number of students on the roster.
PERSONAL_LINKS_ENV = "PLAYGROUND_PERSONAL_LINKS"


def personal_links(environ: dict[str, str] | None = None) -> int:
    """Students on the class's roster when the class uses personal links (:data:`PERSONAL_LINKS_ENV`), else 0."""
    value = (os.environ if environ is None else environ).get(PERSONAL_LINKS_ENV, "").strip()
    return int(value) if value.isdigit() else 0


def join_html(url: str | None, personal: int = 0) -> str:
    """What the projector tells students about joining (never a filesystem path, never a key of a roster class).

    * ``personal`` students on a roster (``--roster``): each opens the link sent to them; no class link and
      no QR code, since the class link with a typed name is refused on a roster server;
    * else the join link, big enough to read from the back of the room, and its QR code;
    * with neither, how the docs start the room so that it shows the link.
    """
    if personal:
        return ("<div class='pr-join pr-join-personal'><div><div class='pr-join-label'>Personal links</div>"
                "<div class='pr-join-link'>Open the link your instructor sent you.</div>"
                f"<div class='pr-muted'>This class has one link per student ({personal} on the roster), each "
                "carrying its student's name: open yours as it was sent. There is no class link to share and "
                "no name to type.</div></div></div>")
    if not url:
        return ("<div class='pr-join'><div><div class='pr-join-label'>Join link</div><div class='pr-muted'>"
                "To show the students' link and its QR code here, start the room with the join link the "
                "students' server printed: <code>PLAYGROUND_LINK_BASE='&lt;the join link&gt;' playground serve "
                "--read-only</code>; for a class with one link per student add <code>--roster "
                "names.txt</code> instead.</div></div></div>")
    return (f"<div class='pr-join'><div><div class='pr-join-label'>Join the lesson: open</div>"
            f"<div class='pr-join-link'>{esc(url)}</div><div class='pr-muted'>and type your name.</div></div>"
            f"<div class='pr-qr' title='{esc(url)}'>{qr_svg(url)}</div></div>")


def _short(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + " …"


def grid_html(grid: list[tuple[Unit, list[GridCell]]], link_base: str | None = None) -> str:
    """One compact row per (unit, dimension), units in lesson order: the class's votes (yes / no / unsure), the
    answer key and how many yes/no votes match it; a divided vote (yes and no) is shaded."""
    if not grid:
        return "<span class='pr-muted'>No unit to show.</span>"
    out = ["<table class='pr-grid'><tr><th>#</th><th>case</th><th>unit</th><th>question</th>"
           "<th class='pr-num'>yes</th><th class='pr-num'>no</th><th class='pr-num'>unsure</th>"
           "<th>answer key</th><th class='pr-num'>match</th></tr>"]
    for i, (unit, cells) in enumerate(grid, 1):
        for j, c in enumerate(cells):
            head = ""
            if j == 0:
                span = f" rowspan='{len(cells)}'" if len(cells) > 1 else ""
                head = (f"<td{span} class='pr-num'>{i}</td><td{span}>{case_html(unit.case_id, link_base)}</td>"
                        f"<td{span} class='pr-unit' title='{esc(unit.text)}'>{esc(unit.unit_kind)}: "
                        f"{esc(_short(unit.text))}</td>")
            key = "–" if c.key is None else ANSWER[c.key]
            acc = "–" if c.accuracy is None else f"{pct(c.accuracy)} ({c.matching}/{c.yes + c.no})"
            cls = "pr-cell pr-divided" if c.divided else "pr-cell"
            out.append(f"<tr class='{cls}'>{head}<td>{esc(dim_name(c.dimension))}</td>"
                       f"<td class='pr-num pr-vote'>{c.yes}</td><td class='pr-num pr-vote'>{c.no}</td>"
                       f"<td class='pr-num'>{c.unsure}</td><td class='pr-key'>{key}</td>"
                       f"<td class='pr-num'>{acc}</td></tr>")
    return "".join(out) + "</table>"


def _stat(value: float | None, reason: str) -> str:
    return num(value) if value is not None else f"<span class='pr-muted'>{esc(reason)}</span>"


def summary_html(summary: list[AgreementSummary]) -> str:
    """Agreement in one row per dimension (Fleiss' kappa, Krippendorff's alpha, the lowest pairs); every pair's
    Cohen's kappa (:func:`agreement_html`) is drawn by the page only when its fold is opened."""
    if not summary:
        return "<span class='pr-muted'>No labels yet.</span>"
    rows = ["<table class='pr-summary'><tr><th>dimension</th><th>students</th><th>Fleiss' κ</th>"
            "<th>Krippendorff's α</th><th>lowest pairs (Cohen's κ)</th></tr>"]
    for s in summary:
        low = ", ".join(f"{esc(p.annotator_a)} – {esc(p.annotator_b)} {num(p.kappa)}" for p in s.lowest) or "–"
        rows.append(f"<tr class='pr-agree-{s.dimension}'><td>{esc(dim_name(s.dimension))}</td><td>{s.annotators}</td>"
                    f"<td>{_stat(s.fleiss, s.fleiss_reason)}</td><td>{_stat(s.krippendorff, s.krippendorff_reason)}"
                    f"</td><td>{low}</td></tr>")
    return "".join(rows) + "</table>"


def progress_summary_html(rows: list[AnnotatorProgress], assigned: dict[str, tuple[str, ...]] | None = None,
                          extra: str = "", whole: str = "of all units") -> str:
    """One line (students, how many finished, the median share done), the per-student table folded below."""
    done = sum(1 for p in rows if p.units_total and p.units_done == p.units_total)
    shares = sorted(p.fraction for p in rows)
    median = (shares[len(shares) // 2] if len(shares) % 2 else (shares[len(shares) // 2 - 1]
                                                                + shares[len(shares) // 2]) / 2) if shares else None
    line = (f"<div class='pr-progress-line'><b>{len(rows)}</b> labelling · <b>{done}</b> finished · median "
            f"{pct(median)} done</div>")
    return (line + f"<details class='pr-progress-detail'><summary>every student</summary>"
            f"{progress_html(rows, assigned, whole)}{extra}</details>")
