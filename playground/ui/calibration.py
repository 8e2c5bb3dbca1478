"""The calibration page (``notebooks/calibrate.ipynb``) and its charts.

The charts are drawn in :mod:`.calibration_charts`, the labellings offered
are gathered in :mod:`.calibration_sources`; both are re-exported here.

:func:`launch` builds the page: first the RAGTruth calibration of the support
scorer (real human labels, ships with the project, needs nothing), then an
explorer (pick a human labelling, an automatic one and a dimension: the
comparison, the threshold sweep, the reliability plot, PPI, the disagreeing
units with links to the playground), then annotators versus each other with
an adjudication queue when the label store has labels, then an imported
dataset's result table (RAGAS, DeepEval) against its labels with how many
more random-sample labels would bring the intervals under a chosen width
(:mod:`.calibration_result`).  On a fresh clone the
explorer shows the golden answer key against a harness run of the default
configuration.  Settings come from the environment: ``PLAYGROUND_ROOT``,
``PLAYGROUND_DB``, ``PLAYGROUND_READ_ONLY``, ``PLAYGROUND_RAGTRUTH`` (claim
file), ``PLAYGROUND_CALIBRATE_RUN`` (a harness run folder to use instead of
running the default configuration), ``PLAYGROUND_LINK_BASE`` (the playground's
address, e.g. ``http://localhost:8866/``: disagreements then link ``<base>?case=<case_id>``; without it
they name their case only).

Element CSS classes for tests: ``pc-ragtruth``, ``pc-human``, ``pc-auto``,
``pc-dimension``, ``pc-share``, ``pc-upload``, ``pc-summary``, ``pc-sweep``,
``pc-reliability``, ``pc-ppi``, ``pc-disagreements``, ``pc-annotators``,
``pc-queue``, ``pc-status``.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .. import calibrate as C
from ..model import DIMENSIONS
from .calibration_charts import (
    DIM_TITLES,
    _nan,
    confusion_figure,
    png,
    ppi_figure,
    ragtruth_figure,
    reliability_figure,
    sweep_figure,
    write_charts,
    write_ragtruth_charts,
)
from .calibration_sources import Sources
from .html_tables import cell as _cell
from .html_tables import esc as _esc
from .html_tables import table_html

__all__ = [
    "CSS",
    "DIM_TITLES",
    "CalibrationApp",
    "Sources",
    "confusion_figure",
    "launch",
    "png",
    "ppi_figure",
    "ragtruth_figure",
    "reliability_figure",
    "sweep_figure",
    "table_html",
    "write_charts",
    "write_ragtruth_charts",
]

# --------------------------------------------------------------------------- HTML tables


CSS = """
<style>
.pc-app { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 14px; color: #1f2328; }
.pc-h { font-weight: 600; font-size: 17px; margin: 10px 0 4px 0; }
.pc-h2 { font-weight: 600; font-size: 14.5px; margin: 8px 0 2px 0; }
.pc-muted, .pc-muted * { color: #656d76; font-size: 12px; }
.pc-warn { background: #fff8c5; border: 1px solid #d4a72c; padding: 4px 8px; border-radius: 4px; }
.pc-err { color: #cf222e; font-weight: 600; }
.pc-table { border-collapse: collapse; font-size: 12.5px; margin: 2px 0 6px 0; }
.pc-table td, .pc-table th {
  padding: 2px 6px; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top;
}
.pc-table th { color: #656d76; font-weight: 500; }
.pc-big { font-size: 15px; }
</style>
"""


def _comparison_html(c: C.Comparison) -> str:
    k = c.kappa
    ci = "" if k.low is None else f" [{k.low:.3f}, {k.high:.3f}]"
    rows = [
        ("units compared", f"{c.n}" + (f" ({c.human_only} human-only, {c.auto_only} automatic-only not compared)"
                                       if c.human_only or c.auto_only else "")),
        ("human rate", str(c.human_rate)), ("automatic rate", str(c.auto_rate)),
        ("automatic − human (paired, Newcombe 95% CI)", _difference_text(c.difference)),
        ("automatic threshold", "—" if c.threshold is None else f"{c.threshold:g}"),
        ("percent agreement", "—" if c.agreement is None else f"{c.agreement:.1%}"),
        ("base rate (always the human majority)", "—" if c.base_rate is None else f"{c.base_rate:.1%}"),
        ("Cohen's kappa (95% CI)", ("—" if k.kappa is None else f"{k.kappa:.3f}{ci}") +
         (f" — {k.reason or k.note}" if (k.reason or k.note) else "")),
        ("Matthews correlation", _cell(c.mcc)), ("PABAK", _cell(c.pabak)),
        ("F1 of the 'no' class", _cell(c.f1_no)), ("balanced accuracy", _cell(c.balanced_accuracy)),
    ]
    body = "".join(f"<tr><th>{_esc(a)}</th><td>{_esc(b)}</td></tr>" for a, b in rows)
    return f"<table class='pc-table pc-big'>{body}</table>"


def _difference_text(d) -> str:
    """The paired difference of the two rates, read as the issue asks: overlap of two intervals is not the test."""
    if d is None or not d.defined:
        return "—"
    verdict = ("the rates differ" if d.excludes_zero else
               "no difference shown (the two rates are of the same units: read this, not the overlap above)")
    return (f"{d.difference:+.3f} [{d.low:+.3f}, {d.high:+.3f}] — {d.a_only} automatic-only yes, "
            f"{d.b_only} human-only yes: {verdict}")


def _sweep_html(t: C.ThresholdCalibration) -> str:
    s = t.summary()
    parts = []
    if t.warning:
        parts.append(f"<div class='pc-warn'>{_esc(t.warning)}</div>")
    if t.binary:
        parts.append("<div class='pc-muted'>The score is binary (0/1): there is no threshold to calibrate.</div>")
        return "".join(parts)
    dci = "" if s["default_kappa_low"] is None else f" [{s['default_kappa_low']:.3f}, {s['default_kappa_high']:.3f}]"
    bci = "" if s["best_kappa_low"] is None else f" [{s['best_kappa_low']:.3f}, {s['best_kappa_high']:.3f}]"
    parts.append(
        f"<div>default threshold <b>{_cell(s['default_threshold'])}</b>: kappa {_cell(s['default_kappa'])}{dci}, "
        f"F1 {_cell(s['default_f1'])} &nbsp;·&nbsp; best threshold <b>{_cell(s['best_threshold'])}</b>: kappa "
        f"{_cell(s['best_kappa'])}{bci}, F1 {_cell(s['best_f1'])} (in-sample)</div>"
    )
    if t.cv is not None:
        cv = t.cv
        parts.append(f"<div>out of sample ({cv.folds}-fold cross-validation grouped by {_esc(t.group_by)}, "
                     f"{cv.n_groups} groups): kappa <b>{_cell(cv.kappa)}</b> [{_cell(cv.kappa_low)}, "
                     f"{_cell(cv.kappa_high)}], balanced accuracy {_cell(cv.balanced_accuracy)}, F1 {_cell(cv.f1)}; "
                     f"thresholds chosen per fold: {_esc(s['cv_fold_thresholds'])}</div>")
    elif t.cv_reason:
        parts.append(f"<div class='pc-muted'>no cross-validation: {_esc(t.cv_reason)}</div>")
    return "".join(parts)


class CalibrationApp:
    """The calibration page: RAGTruth headline, an explorer, annotators (see the module docstring)."""

    def __init__(self, sources: Sources | None = None, *, link_base: str | None = None, width: float = 0.10,
                 share: float = 0.2):
        import ipywidgets as W

        self.W = W
        self.sources = sources or Sources()
        # Voila serves one notebook per server, so the playground's address is only known to whoever serves
        # both pages: without PLAYGROUND_LINK_BASE the disagreements name their case but do not link it.
        self.link_base = link_base if link_base is not None else (os.environ.get("PLAYGROUND_LINK_BASE") or None)
        self.width = width
        self.timings: dict[str, float] = {}
        self.report: C.CalibrationReport | None = None
        self.status = W.HTML("")
        self.status.add_class("pc-status")
        # RAGTruth headline
        self.ragtruth_box = W.VBox([])
        self.ragtruth_box.add_class("pc-ragtruth")
        self._make_controls(share)
        self._make_tabs()
        # annotators
        self.annotators_box = W.VBox([])
        self.annotators_box.add_class("pc-annotators")
        self.adjudicator = W.Text(description="adjudicator", placeholder="your name",
                                  layout=W.Layout(width="280px"))
        self.queue_box = W.VBox([])
        self.queue_box.add_class("pc-queue")
        self._busy = False
        from .calibration_result import ResultSection  # section 4: an imported dataset's result table

        self.result = ResultSection(self.sources.store(), self.sources.root, self.link_base, self._say, self._guard,
                                    width)
        self._lay_out()
        self._wire()
        self._first_view()

    def _make_controls(self, share: float) -> None:
        """The explorer's controls: data set, human and automatic labelling, dimension, PPI share and seed, upload."""
        W = self.W
        datasets = [("golden set", "golden")]
        if self.sources.ragtruth_path.is_file():
            datasets.append(("RAGTruth sample", "ragtruth"))
        self.dataset = W.ToggleButtons(options=datasets, value="golden", description="data")
        self.human = W.Dropdown(description="human", layout=W.Layout(width="360px"))
        self.human.add_class("pc-human")
        self.auto = W.Dropdown(description="automatic", layout=W.Layout(width="360px"))
        self.auto.add_class("pc-auto")
        self.dimension = W.Dropdown(description="dimension", layout=W.Layout(width="260px"))
        self.dimension.add_class("pc-dimension")
        self.share = W.FloatSlider(value=share, min=0.05, max=1.0, step=0.05, description="PPI: labelled share",
                                   readout_format=".0%", style={"description_width": "initial"},
                                   layout=W.Layout(width="360px"))
        self.share.add_class("pc-share")
        self.sample_seed = W.Text(value="", description="PPI: sample seed", placeholder="the seed it was drawn with",
                                  style={"description_width": "initial"}, layout=W.Layout(width="300px"))
        self.sample_seed.add_class("pc-sample-seed")
        self.upload = W.FileUpload(accept=".csv", multiple=False, description="scores CSV")
        self.upload.add_class("pc-upload")

    def _make_tabs(self) -> None:
        """The explorer's tabs: comparison, threshold sweep, reliability, PPI, disagreements."""
        W = self.W
        self.summary = W.HTML()
        self.summary.add_class("pc-summary")
        self.confusion_img = W.Image(format="png")
        self.sweep_html = W.HTML()
        self.sweep_img = W.Image(format="png")
        self.sweep_box = W.VBox([self.sweep_html, self.sweep_img])
        self.sweep_box.add_class("pc-sweep")
        self.rel_img = W.Image(format="png")
        self.rel_html = W.HTML()
        self.rel_box = W.VBox([self.rel_img, self.rel_html])
        self.rel_box.add_class("pc-reliability")
        self.ppi_html = W.HTML()
        self.ppi_img = W.Image(format="png")
        self.ppi_box = W.VBox([self.ppi_html, self.ppi_img])
        self.ppi_box.add_class("pc-ppi")
        self.dis_html = W.HTML()
        self.dis_html.add_class("pc-disagreements")
        self.tabs = W.Tab(children=[W.HBox([self.summary, self.confusion_img]), self.sweep_box, self.rel_box,
                                    self.ppi_box, self.dis_html])
        for i, t in enumerate(("comparison", "threshold", "reliability", "PPI", "disagreements")):
            self.tabs.set_title(i, t)

    def _lay_out(self) -> None:
        """The page: the four numbered sections under the title and the status line."""
        W = self.W
        controls = W.VBox(
            [
                self.dataset,
                W.HBox([self.human, self.auto]),
                W.HBox([self.dimension, self.share, self.sample_seed]),
                W.HBox(
                    [
                        self.upload,
                        W.HTML(
                            "<span class='pc-muted'>an external tool's scores: CSV with "
                            "unit_id, score, label[, dimension]</span>"
                        ),
                    ]
                ),
            ]
        )
        self.widget = W.VBox([
            W.HTML(CSS + "<div class='pc-h'>Calibration: can this automatic scorer be trusted, where, and at which "
                   "threshold?</div>"),
            self.status,
            W.HTML("<div class='pc-h'>1 · RAGTruth: the support scorer against real human labels</div>"),
            self.ragtruth_box,
            W.HTML("<div class='pc-h'>2 · Explore: human labels versus an automatic scorer</div>"),
            controls, self.tabs,
            W.HTML("<div class='pc-h'>3 · Annotators versus each other</div>"),
            self.annotators_box,
            W.HTML("<div class='pc-h'>4 · An imported dataset: a tool's result table against its labels</div>"),
            self.result.widget,
        ])
        self.widget.add_class("pc-app")

    def _wire(self) -> None:
        """Each control redraws what depends on it."""
        self.dataset.observe(lambda ch: self._guard(self._on_dataset), names="value")
        for w in (self.human, self.auto, self.dimension):
            w.observe(lambda ch: self._guard(self.refresh), names="value")
        self.share.observe(lambda ch: self._guard(self._refresh_ppi), names="value")
        self.sample_seed.observe(lambda ch: self._guard(self._refresh_ppi), names="value")
        self.upload.observe(lambda ch: self._guard(self._on_upload), names="value")

    def _first_view(self) -> None:
        """Build the three sections once, timing each (``timings``)."""
        t0 = time.perf_counter()
        self._guard(self._build_ragtruth)
        self.timings["ragtruth"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self._guard(self._on_dataset)
        self.timings["explorer"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self._guard(self._build_annotators)
        self.timings["annotators"] = time.perf_counter() - t0

    # --- plumbing
    def _guard(self, fn, *args):
        try:
            return fn(*args)
        except C.CalibrationInputError as exc:
            self._say(str(exc), error=True)
        except Exception as exc:  # shown on the page, never a dead widget
            import traceback

            traceback.print_exc(file=sys.stderr)
            self._say(f"{type(exc).__name__}: {exc}", error=True)
        return None

    def _say(self, text: str, error: bool = False) -> None:
        cls = "pc-err" if error else "pc-muted"
        self.status.value = f"<pre class='{cls}' style='white-space:pre-wrap'>{_esc(text)}</pre>" if text else ""

    # --- section 1
    def _build_ragtruth(self) -> None:
        W = self.W
        rt = self.sources.ragtruth()
        if rt is None:
            self.ragtruth_box.children = [W.HTML(f"<div class='pc-warn'>{_esc(self.sources.messages[-1])}: the "
                                                 "RAGTruth calibration needs the shared sample (see "
                                                 "shared/data/ragtruth/README.md).</div>")]
            return
        sup = rt.scorer("support scorer")
        cv = sup.cv
        if cv is None:
            self.ragtruth_box.children = [W.HTML(f"<div class='pc-warn'>Cross-validation is undefined on this "
                                                 f"sample: {_esc(sup.cv_reason)}.</div>")]
            return
        head = (f"<div>{rt.n} claims from {rt.responses} responses to {rt.sources} sources; {rt.hallucinated} marked "
                f"hallucinated by RAGTruth's annotators. Out of sample (5-fold cross-validation grouped by source), "
                f"the support scorer agrees with them at kappa <b>{cv.kappa:.3f}</b> [{cv.kappa_low:.3f}, "
                f"{cv.kappa_high:.3f}], balanced accuracy <b>{cv.balanced_accuracy:.3f}</b>; floors chosen per fold "
                f"for {cv.criterion.replace('_', ' ')}: {' '.join(f'{t:g}' for t in cv.fold_thresholds)} "
                f"(default {sup.default_floor:g}).</div>"
                "<div class='pc-muted'>F1, precision and recall are of the hallucinated class. The sample is "
                "enriched for hallucinations and not random: read agreement, not prevalence, off it.</div>")
        table = table_html(rt.table(), ["scorer", "evaluation", "floor", "kappa", "kappa_low", "kappa_high",
                                        "balanced_accuracy", "f1_hallucinated", "precision_hallucinated",
                                        "recall_hallucinated"])
        tasks = table_html(rt.by_task())
        self.ragtruth_box.children = [
            W.HTML(head), W.HTML(table),
            W.HBox([W.Image(value=png(ragtruth_figure(rt)), format="png"),
                    W.VBox([W.HTML("<div class='pc-h2'>out of sample, by task</div>" + tasks)])]),
        ]

    # --- section 2
    def _on_dataset(self) -> None:
        ds = self.dataset.value
        self._busy = True
        try:
            self.human.options = self.sources.human_options(ds)
            self.auto.options = self.sources.auto_options(ds)
            self.human.value = self.human.options[0][1]
            self.auto.value = self.auto.options[0][1]
            self._set_dimensions()
        finally:
            self._busy = False
        self.refresh()

    def _set_dimensions(self) -> None:
        h = self.sources.human(self.dataset.value, self.human.value)
        a = self.sources.auto(self.dataset.value, self.auto.value)
        dims = [d for d in a.dimensions() if d in h.dimensions()]
        options = [(DIM_TITLES.get(d, d), d) for d in dims]
        keep = self.dimension.value if self.dimension.value in dims else (
            "supported" if "supported" in dims else (dims[0] if dims else None))
        if list(self.dimension.options) != options:
            self.dimension.options = options
        self.dimension.value = keep

    def refresh(self) -> None:
        """Recompute and redraw the explorer for the current selection."""
        if self._busy:
            return
        self._busy = True
        try:
            self._set_dimensions()
        finally:
            self._busy = False
        ds, dim = self.dataset.value, self.dimension.value
        h = self.sources.human(ds, self.human.value)
        a = self.sources.auto(ds, self.auto.value)
        if dim is None:
            self.summary.value = "<div class='pc-warn'>these two labellings share no dimension</div>"
            self.report = None
            return
        t0 = time.perf_counter()
        link = None if ds == "ragtruth" else self.link_base
        self.report = report = C.calibrate(h, a, [dim], link_base=link, n_boot=500)
        comp, tc = report.comparisons[dim], report.sweeps[dim]
        self.summary.value = (
            f"<div class='pc-h2'>{_esc(h.name)} versus {_esc(a.name)} — {_esc(DIM_TITLES.get(dim, dim))}"
            f"</div><div class='pc-muted'>{_esc(h.note)}</div>" + _comparison_html(comp)
        )
        self.confusion_img.value = png(confusion_figure(comp))
        self.sweep_html.value = _sweep_html(tc)
        self.sweep_img.value = png(sweep_figure(tc)) if tc.rows and not tc.binary else b""
        self.rel_img.value = png(reliability_figure(report.reliability[dim], f"reliability: {dim}"))
        self.rel_html.value = table_html(report.reliability[dim])
        dis = comp.disagreements
        self.dis_html.value = (f"<div>{len(dis)} disagreeing unit(s)" +
                               ("" if link is None else " — 'open case' opens it in the playground") +
                               ("" if link is not None or ds == "ragtruth" else
                                " <span class='pc-muted'>(set PLAYGROUND_LINK_BASE to the playground's address to "
                                "link each case)</span>") + "</div>" +
                               table_html(dis, ["unit_id", "case_id", "human", "auto", "score", "link"]))
        self._refresh_ppi()
        self.timings["refresh"] = time.perf_counter() - t0
        self._say("")

    def _refresh_ppi(self) -> None:
        if self.report is None:
            return
        ds, dim = self.dataset.value, self.dimension.value
        h = self.sources.human(ds, self.human.value)
        a = self.sources.auto(ds, self.auto.value)
        full_cover = h.kind in ("key", "ragtruth")
        note = ""
        truth = None
        seed: str | None = self.sample_seed.value.strip() or None
        if full_cover:
            share = float(self.share.value)
            truth = {dim: self.report.comparisons[dim].human_rate.rate}
            seed = seed or "0"
            if share < 1:
                h = h.subsample(share, seed=seed)
            note = (f"<div class='pc-muted'>{_esc(self.report.human.name)} labels every unit, so PPI is shown as a "
                    f"what-if: only {share:.0%} of its labels count as human-labelled — the calibration sample of "
                    f"seed {_esc(seed)}, a uniform random sample; the dotted red line is the full labelling's "
                    "rate.</div>")
        elif seed is None:
            note = ("<div class='pc-warn'>No calibration sample: the labelled units were not drawn at random, so "
                    "no PPI interval is shown (it would not be valid). Draw a sample with <code>playground "
                    "calibrate sample --size N --seed S</code> (or the labelling page's calibration-sample mode), "
                    "label it in order, and enter S as the sample seed.</div>")
        ppi = C.ppi_by_dimension(h, a, [dim], width=self.width, sample_seed=seed)
        self.ppi_html.value = note + table_html(ppi, ["dimension", "n_labelled", "n_unlabelled", "human_rate",
                                                      "human_low", "human_high", "auto_rate", "ppi_rate", "ppi_low",
                                                      "ppi_high", "lam", "labels_needed", "more_labels",
                                                      "outside_sample", "note"])
        self.ppi_img.value = png(ppi_figure(ppi, truth=truth))

    def _on_upload(self) -> None:
        value = self.upload.value
        files = list(value.values()) if isinstance(value, dict) else list(value)
        if not files:
            return
        f = files[0]
        name = f.get("name") or f.get("metadata", {}).get("name", "scores.csv")
        content = bytes(f["content"])
        auto = self.sources.add_external(name, content, self.dataset.value)
        self._busy = True
        try:
            self.auto.options = self.sources.auto_options(self.dataset.value)
            self.auto.value = f"external:{Path(name).stem}"
        finally:
            self._busy = False
        self.refresh()
        self._say(f"loaded {len(auto)} scores from {name}")

    # --- section 3
    def _build_annotators(self) -> None:
        W = self.W
        store = self.sources.store()
        if store is None:
            self.annotators_box.children = [W.HTML(
                "<div class='pc-muted'>No label store yet: label units in the playground (several annotators) to "
                "see their agreement here.</div>")]
            return
        catalog = self.sources.catalog()
        labels = store.current_labels(catalog)
        people = sorted({label.annotator for label in labels} - {C.CONSENSUS})
        present = {label.dimension for label in labels}
        dims = [d for d in DIMENSIONS if d in present] + sorted(present - set(DIMENSIONS))
        results = [C.annotator_agreement(labels, d) for d in dims] + [C.annotator_agreement(labels)]
        import pandas as pd

        summary = pd.DataFrame([r.summary() for r in results])
        pairs = pd.concat([r.pairwise.assign(dimension=r.dimension or "all") for r in results], ignore_index=True)
        maj = pd.concat([r.vs_majority.assign(dimension=r.dimension or "all") for r in results], ignore_index=True)
        from ..golden import load_dataset

        key = self.sources._cache.get("key_dataset")
        if key is None:
            key = self.sources._cache["key_dataset"] = C.key_from_dataset(load_dataset(self.sources.root))
        acc = C.accuracy_against_key([label for label in labels if label.annotator != C.CONSENSUS], key)
        parts = [W.HTML(f"<div>{len(people)} annotator(s) with current labels: {_esc(', '.join(people) or '-')}</div>"
                        + table_html(summary)
                        + "<div class='pc-h2'>pairwise Cohen's kappa</div>"
                        + table_html(pairs, ["dimension", "annotator_a", "annotator_b", "n_shared", "agreement",
                                             "kappa", "kappa_low", "kappa_high", "pabak"])
                        + "<div class='pc-h2'>each annotator against the majority of the others</div>"
                        + table_html(maj, ["dimension", "annotator", "n", "agreement", "kappa", "kappa_low",
                                           "kappa_high"])
                        + "<div class='pc-h2'>accuracy against the golden answer key (teaching)</div>"
                        + table_html(acc)),
                 W.HTML("<div class='pc-h2'>adjudication: units where annotators disagree</div>"),
                 self.adjudicator, self.queue_box]
        self.annotators_box.children = parts
        self._build_queue()

    def _build_queue(self) -> None:
        W = self.W
        store = self.sources.store()
        catalog = self.sources.catalog()
        queue = C.adjudication_queue(store, catalog, link_base=self.link_base)
        rows = []
        for _, r in queue.head(50).iterrows():
            text = _esc(r["text"])[:220]
            adj = "" if r["adjudicated"] is None or _nan(r["adjudicated"]) else f" — consensus: {int(r['adjudicated'])}"
            link = f" <a href='{_esc(r['link'])}' target='_blank'>open case</a>" if r["link"] else ""
            label = W.HTML(f"<div><b>{_esc(r['dimension'])}</b> {_esc(r['unit_id'])} ({_esc(r['case_id'])}){link}<br>"
                           f"<span class='pc-muted'>{text}</span><br>votes: {_esc(r['votes'])} ({_esc(r['status'])})"
                           f"{adj}</div>", layout=W.Layout(width="640px"))
            buttons = []
            for value, caption in ((1, "yes"), (0, "no")):
                b = W.Button(description=f"consensus {caption}", layout=W.Layout(width="130px"),
                             disabled=self.sources.read_only)
                b.on_click(lambda _b, uid=r["unit_id"], dim=r["dimension"], v=value:
                           self._guard(self.settle, uid, dim, v))
                buttons.append(b)
            rows.append(W.HBox([label, *buttons]))
        if not rows:
            rows = [W.HTML("<div class='pc-muted'>no disagreements</div>")]
        elif self.sources.read_only:
            rows.insert(0, W.HTML("<div class='pc-warn'>read-only store: adjudication is disabled</div>"))
        self.queue_box.children = rows

    def settle(self, unit_id: str, dimension: str, value: int) -> None:
        """Write the consensus label of one unit (the adjudicator's name must be filled in)."""
        name = self.adjudicator.value.strip()
        if not name:
            self._say("type your name as adjudicator first", error=True)
            return
        unit = self.sources.catalog()[unit_id]
        C.adjudicate(self.sources.store(), unit, dimension, value, name)
        self.sources.invalidate_store()
        self._build_queue()
        self._say(f"{unit_id} {dimension}: consensus {value} (adjudicated by {name})")


def launch(root: str | None = None, db: str | None = None, *, run: str | None = None, ragtruth: str | None = None,
           display: bool = True) -> CalibrationApp:
    """Build the calibration page (and display it); settings as in the module docstring."""
    t0 = time.perf_counter()
    app = CalibrationApp(Sources(root, db, run, ragtruth))
    app.timings["launch"] = time.perf_counter() - t0
    print(f"calibrate: page {app.timings['launch']:.2f}s", file=sys.stderr)
    if display:
        from IPython.display import display as show

        show(app.widget)
    return app
