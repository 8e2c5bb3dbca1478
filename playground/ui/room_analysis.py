"""Two sections of the instructor's room: failure modes, and how many labels before stopping.

* **Failure modes** (issue 24.6): per failure mode of the dataset's taxonomy,
  how many of the responses judged (pass / fail / unsure) were tagged with it,
  the rate and its 95% Wilson interval — pooled over the class, and per
  student folded underneath (:func:`playground.verdicts.failure_mode_table`),
  scoped to the room's lesson like everything else (the lesson's responses,
  or every response of the dataset without a lesson).
* **How many labels, and when to stop** (issue 25.6): per dimension and per
  scorer (the harness), how many more labels of the calibration sample bring
  the TPR and TNR intervals under the width set here, or that it is reached
  (:mod:`playground.calibrate.room_needed` over
  :mod:`playground.calibrate.needed`, what the calibrate page shows).  The
  harness's labels of the sample's cases are computed once per sample (the
  shipped set: the kept harness run; an imported dataset: per case, kept on disk).

CSS classes for tests: ``pr-failures`` (``pg-failure-modes``, ``pg-failure-by-annotator``),
``pr-needed-width``, ``pr-needed`` (rows ``pr-needed-<scorer>-<dimension>``, ``pr-needed-reached``).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W

from ..calibrate.room_needed import NeededRow, harness_labels, needed_rows, sample_consensus
from ..store import RESERVED_ANNOTATORS
from .html_tables import esc
from .room_html import dim_name
from .verdict_html import failure_table_html, failures_by_annotator_html

__all__ = ["DEFAULT_WIDTH", "RoomAnalysis", "needed_html", "scoped_response_ids"]

#: The TPR/TNR interval width the room aims at until the instructor sets another.
DEFAULT_WIDTH = 0.2


def scoped_response_ids(od: Any, lesson: Any) -> list[str]:
    """The responses the room counts: the lesson's (its chosen responses, else every response of its cases),
    or every response of the dataset without a lesson."""
    ds = od.dataset
    if lesson is None:
        return sorted(ds.responses)
    if lesson.responses:
        return list(lesson.responses)
    return [r.response_id for cid in lesson.cases for r in sorted(ds.responses_for(cid), key=lambda r: r.response_id)]


def needed_html(rows: Sequence[NeededRow], sample_name: str | None, sample_size: int, width: float) -> str:
    """The section's text: one line per scorer and dimension, or why there is no figure yet."""
    if sample_name is None:
        return ("<div class='pr-muted pr-needed-none'>No calibration sample yet: draw one under “Assign work” "
                "(a seeded uniform random sample). Labels people chose to give say nothing about how many more a "
                "scorer needs.</div>")
    lines = []
    for r in rows:
        reached = r.need is not None and r.need.reached
        cls = f"pr-needed-{esc(r.scorer)}-{esc(r.dimension)}" + (" pr-needed-reached" if reached else "")
        mark = "✔ " if reached else ""
        lines.append(f"<li class='{cls}'><b>{esc(r.scorer)} · {esc(dim_name(r.dimension))}</b> "
                     f"<span class='pr-muted'>(n={r.n}: {r.positives} yes, {r.negatives} no by the class)</span>: "
                     f"{mark}{esc(r.text)}</li>")
    return (f"<div class='pr-muted'>Calibration sample {esc(sample_name)} ({sample_size} units); the truth is the "
            f"class's consensus on it; target width {width:g} for both TPR and TNR.</div><ul>{''.join(lines)}</ul>")


class RoomAnalysis:
    """The two sections (module docstring) over a :class:`playground.calibrate.room.Room`."""

    def __init__(self, room: Any, guard: Callable[..., Any], width: float = DEFAULT_WIDTH):
        self.room = room
        self.width = W.BoundedFloatText(value=width, min=0.02, max=0.98, step=0.01, description="Target width",
                                        layout=W.Layout(width="200px"))
        self.width.add_class("pr-needed-width")
        self.width.observe(lambda _c: guard(self.render_needed), "value")
        self.needed = W.HTML()
        self.needed.add_class("pr-needed")
        self.failures = W.HTML()
        self.failures.add_class("pr-failures")
        self._auto: tuple[str, dict[tuple[str, str], int]] | None = None
        self._counted = -1  # RoomState.verdict_events when the failure modes were last counted

    # --- failure modes ---------------------------------------------------------------------------------
    def render_failures(self) -> None:
        """Count again only when a verdict, note or tag event arrived since the last count (a label of the four
        dimensions does not change these counts, and counting reads every verdict in the store)."""
        od = self.room.open_dataset
        if od is None:
            self.failures.value = ""
            return
        if self._counted == self.room.state.verdict_events:
            return
        self._counted = self.room.state.verdict_events
        from ..verdicts import failure_mode_table, pass_rate, response_units

        wanted = set(scoped_response_ids(od, self.room.lesson))
        units = [u for u in response_units(od.dataset) if u.unit_id in wanted]
        store = self.room.source.store
        judged = {lab.annotator for lab in store.labels(unit_ids=[u.unit_id for u in units])
                  if lab.dimension == "pass" and lab.annotator not in RESERVED_ANNOTATORS}
        per = {who: failure_mode_table(store, units, who) for who in sorted(judged)}
        self.failures.value = (failure_table_html(failure_mode_table(store, units), pass_rate(store, units))
                               + failures_by_annotator_html(per))

    # --- labels needed ---------------------------------------------------------------------------------
    def _harness(self, sample_name: str, case_ids: Sequence[str]) -> dict[tuple[str, str], int]:
        if self._auto is None or self._auto[0] != sample_name:
            self._auto = (sample_name, harness_labels(harness_results(self.room.open_dataset, case_ids)))
        return self._auto[1]

    def render_needed(self) -> None:
        room = self.room
        width = float(self.width.value)
        sample = room.sample()
        if sample is None or room.open_dataset is None:
            self.needed.value = needed_html([], None, 0, width)
            return
        catalog = room.source.catalog
        units = [u for u in sample.queues.get("*", ()) if u in catalog]
        state = room.state
        consensus = sample_consensus(state.votes, {k: a.value for k, a in state.adjudications.items()}, units)
        cases = sorted({catalog[u].case_id for u in units})
        rows = needed_rows(consensus, {"harness": self._harness(sample.name, cases)}, width)
        self.needed.value = needed_html(rows, sample.name, len(units), width)

    def render(self) -> None:
        self.render_failures()
        self.render_needed()


def harness_results(od: Any, case_ids: Sequence[str]) -> list[dict]:
    """The harness's per-case results (``score_case`` dicts) of ``case_ids``: the shipped set's kept run, or an
    imported dataset's per-case results (computed once and kept on disk, as the page keeps them)."""
    from ..harness.config import load_config
    from .harness_cache import CaseHarness, cached_harness, dataset_fingerprint

    if od.name == "golden":
        _hits, results, _how = cached_harness(od.dataset)
        return [results[c] for c in case_ids if c in results]
    config = load_config()
    harness = CaseHarness(od.dataset, od.passages, config, dataset_fingerprint(od.name, od.revision or "", config))
    return [harness.result(c) for c in case_ids]
