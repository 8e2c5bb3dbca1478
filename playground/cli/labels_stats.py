"""The lines ``playground labels stats`` prints: per annotator, progress, verdicts, per dataset.

* :func:`annotator_lines` — labels per dimension, unsure answers and comments per annotator;
* :func:`progress_lines` — labelled units and unit-dimension pairs overall and per case with labels, stale
  labels, the consensus by status;
* :func:`verdict_lines` — the response verdicts' pass rate and the most frequent failure modes;
* :func:`per_dataset_lines` — one line per dataset.

Text from the store is printed through :func:`playground.cli.terminal.terminal_safe`.
"""
from __future__ import annotations

from typing import Any

from .terminal import terminal_safe

__all__ = ["annotator_lines", "per_dataset_lines", "progress_lines", "verdict_lines"]


def annotator_lines(store: Any, labels: list, catalog: Any, cases: set[str] | None = None) -> list[str]:
    """The per-annotator table: labels per dimension, unsure answers, comments (of ``cases`` only, when given)."""
    from collections import Counter

    from ..store import RESERVED_ANNOTATORS

    def mine(case_id: str) -> bool:
        return cases is None or case_id in cases

    people = [lb for lb in labels if lb.annotator not in RESERVED_ANNOTATORS and mine(lb.case_id)]
    by = Counter((lb.annotator, lb.dimension) for lb in people)
    unsure: Counter[str] = Counter()
    for (name, _dim), n in store.unsure_counts(catalog).items():
        unsure[name] += n
    said = Counter(c.annotator for c in store.comments() if mine(c.case_id))
    if cases is None:
        names = store.annotators()
    else:
        names = sorted({lb.annotator for lb in people} | set(said) | {n for n, k in unsure.items() if k})
    lines = [f"annotators: {len(names)}; current labels (1/0): {len(people)}; unsure answers: {sum(unsure.values())}; "
             f"comments: {sum(said.values())}"]
    dims = sorted({d for _, d in by})
    if names:
        shown = {n: terminal_safe(n) for n in names}
        width = max(len(v) for v in [*shown.values(), "annotator"])
        lines.append(f"  {'annotator':<{width}}  " + "  ".join(f"{d:>9}" for d in dims)
                     + "      total     unsure   comments")
        for n in names:
            lines.append(f"  {shown[n]:<{width}}  " + "  ".join(f"{by[(n, d)]:>9}" for d in dims)
                         + f"  {sum(by[(n, d)] for d in dims):>9}  {unsure[n]:>9}  {said[n]:>9}")
    return lines


def progress_lines(store: Any, catalog: Any, annotator: str | None, cases: set[str] | None,
                    responses: Any = None) -> list[str]:
    """Progress overall and per case with labels; stale labels (verdicts on ``responses`` are not orphans);
    consensus by status."""
    from collections import Counter

    progress = store.progress(catalog, annotator=annotator)
    o = progress.overall
    who = f"annotator {terminal_safe(annotator)}" if annotator else "any annotator"
    lines = [f"progress ({who}): {o.labelled_units}/{o.total_units} units fully labelled "
             f"({100 * o.unit_fraction:.0f}%), {o.labelled_pairs}/{o.total_pairs} unit-dimension pairs "
             f"({100 * o.pair_fraction:.0f}%), {o.stale_pairs} pair(s) with only stale labels"]
    quiet = 0
    for cid, c in progress.cases.items():
        if not c.labelled_pairs and not c.stale_pairs:
            quiet += 1
            continue
        stale_note = f", {c.stale_pairs} stale" if c.stale_pairs else ""
        lines.append(f"  {terminal_safe(cid)}: {c.labelled_units}/{c.total_units} units, "
                     f"{c.labelled_pairs}/{c.total_pairs} pairs{stale_note}")
    if quiet:
        lines.append(f"  ({quiet} other case(s) without labels)")
    stale = [s for s in store.stale({**catalog, **(responses or {})}, annotator=annotator)
             if cases is None or s.case_id in cases]
    reasons = Counter(s.reason for s in stale)
    lines.append(f"stale labels: {len(stale)} (text changed: {reasons['changed']}, unit gone: {reasons['orphaned']})")
    statuses = Counter(c.status for c in store.consensus(catalog=catalog, unit_ids=catalog if cases else None))
    order = ("unanimous", "majority", "single", "adjudicated", "tie")
    lines.append(f"consensus: {sum(statuses.values())} item(s) — " + ", ".join(f"{k} {statuses[k]}" for k in order))
    lines.append(f"consensus ties: {statuses['tie']}")
    return lines


def per_dataset_lines(store: Any, catalog: Any, root: Any) -> list[str]:
    """One line per dataset: its units, how many are fully labelled, its current labels and annotators."""
    from ..datasets import SHIPPED, case_ids, dataset_names, open_dataset

    owner: dict[str, str] = {}
    for name in dataset_names(store):
        if name != SHIPPED:
            owner.update(dict.fromkeys(case_ids(open_dataset(name, store, root)), name))
    units: dict[str, int] = {}
    for u in catalog.values():
        units[owner.get(u.case_id, SHIPPED)] = units.get(owner.get(u.case_id, SHIPPED), 0) + 1
    labels: dict[str, list[Any]] = {}
    for lb in store.current_labels(catalog, include_unsure=True):
        labels.setdefault(owner.get(lb.case_id, SHIPPED), []).append(lb)
    lines = ["per dataset (`playground labels stats --dataset NAME` for one):"]
    for name in dataset_names(store):
        mine = labels.get(name, [])
        people = sorted({lb.annotator for lb in mine if lb.annotator != "consensus"})
        lines.append(f"  {terminal_safe(name)}: {units.get(name, 0)} units, {len(mine)} current label(s) "
                     f"(unsure answers and adjudications included), {len(people)} annotator(s)")
    return lines


def verdict_lines(store: Any, responses: Any, annotator: str | None, dataset: str | None) -> list[str]:
    """Error analysis (issue 24.6): judged responses, the pass rate and the most frequent failure modes."""
    from ..verdicts import failure_mode_table, pass_rate

    units = list(responses.values())
    passed = pass_rate(store, units, annotator)
    modes = [r for r in failure_mode_table(store, units, annotator) if r.responses_tagged]
    if not passed.judged and not modes:
        return []

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{100 * x:.1f}%"

    rate = passed.passed / passed.judged if passed.judged else None
    top = ", ".join(f"{terminal_safe(r.name)} {r.responses_tagged}/{r.responses_judged}" for r in modes[:5])
    where = terminal_safe(dataset) if dataset is not None else "NAME"
    return [f"verdicts: {passed.passed} of {passed.judged} judged response(s) pass ({pct(rate)} "
            f"[{pct(passed.low)}, {pct(passed.high)}]); failure modes: {top or 'none tagged'} "
            f"(all of them: `playground tags list --dataset {where}`)"]
