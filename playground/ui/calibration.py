"""The calibration page (``notebooks/calibrate.ipynb``) and its charts.

Charts are drawn with matplotlib's object API on the Agg canvas (no pyplot,
no display needed): :func:`sweep_figure`, :func:`reliability_figure`,
:func:`ppi_figure`, :func:`confusion_figure`, :func:`ragtruth_figure`;
:func:`png` turns a figure into PNG bytes, :func:`write_charts` /
:func:`write_ragtruth_charts` save them for ``playground calibrate --out``.

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

import io
import itertools
import math
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .. import calibrate as C
from ..model import DIMENSIONS
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

BLUE, ORANGE, GREEN, RED, GREY = "#0072B2", "#E69F00", "#009E73", "#C0392B", "#777777"
DIM_TITLES = {"relevant": "context relevance (passage relevant)", "supported": "faithfulness (claim supported)",
              "correct": "correctness (claim correct)", "covered": "coverage (fact covered)"}


# --------------------------------------------------------------------------- charts


def _figure(width: float = 5.6, height: float = 3.3, dpi: int = 96) -> tuple[Figure, Any]:
    fig = Figure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    ax.tick_params(labelsize=8.5)
    ax.grid(color="#e5e5e5", linewidth=0.7)
    ax.set_axisbelow(True)
    return fig, ax


def png(fig: Figure) -> bytes:
    """The figure as PNG bytes (no timestamp metadata, so the same figure gives the same bytes)."""
    buf = io.BytesIO()
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)  # _figure's is Agg
    canvas.print_png(buf, metadata={"Software": None})
    return buf.getvalue()


def sweep_figure(tc: C.ThresholdCalibration, title: str = "") -> Figure:
    """Kappa and F1 (of the "no" class) against the threshold; the default and the best threshold marked."""
    fig, ax = _figure(5.8, 3.9)
    xs = [r.threshold for r in tc.rows]
    k = [math.nan if r.kappa is None else r.kappa for r in tc.rows]
    f = [math.nan if r.f1 is None else r.f1 for r in tc.rows]
    ax.plot(xs, k, color=BLUE, linewidth=1.8, label="Cohen's kappa")
    ax.plot(
        xs, f, color=ORANGE, linewidth=1.5, linestyle="--", label="F1 (" + ("yes" if tc.f1_class else "no") + " class)"
    )
    if tc.default is not None:
        ax.axvline(tc.default.threshold, color=GREY, linewidth=1, linestyle=":")
        ax.annotate(f"default {tc.default.threshold:g}", (tc.default.threshold, 0.02), fontsize=7.5, color=GREY,
                    xytext=(3, 0), textcoords="offset points")
    if tc.best is not None and tc.best.kappa is not None:
        ax.plot([tc.best.threshold], [tc.best.kappa], marker="o", color=RED, markersize=6, linestyle="none",
                label=f"best kappa {tc.best.kappa:.2f} at {tc.best.threshold:g}")
    if tc.cv is not None:
        ax.plot(list(tc.cv.fold_thresholds), [-0.04] * len(tc.cv.fold_thresholds), marker="|", color=GREEN,
                markersize=9, linestyle="none", label=f"fold choices (CV kappa {tc.cv.kappa:.2f})"
                if tc.cv.kappa is not None else "fold choices")
    ax.set_ylim(-0.1, 1.02)
    ax.set_xlabel("threshold (automatic yes when score ≥ threshold)", fontsize=8.5)
    ax.legend(fontsize=7.5, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    ax.set_title(title or f"threshold sweep: {tc.dimension} (n={tc.n})", fontsize=9.5)
    if tc.warning:
        fig.text(0.01, 0.005, "small labelled set: read the cross-validated figure", fontsize=7.5, color=RED)
    fig.tight_layout()
    return fig


def reliability_figure(frame, title: str = "") -> Figure:
    """Score bins (mean score) against the human yes-rate per bin with Wilson intervals; the diagonal."""
    fig, ax = _figure(4.6, 3.6)
    ax.plot([0, 1], [0, 1], color=GREY, linewidth=0.8, linestyle=":", label="perfect calibration")
    if len(frame):
        x = frame["mean_score"].astype(float).tolist()
        y = frame["yes_rate"].astype(float).tolist()
        lo = [a - b for a, b in zip(y, frame["low"].astype(float), strict=True)]
        hi = [b - a for a, b in zip(y, frame["high"].astype(float), strict=True)]
        ax.errorbar(x, y, yerr=[lo, hi], fmt="o", color=BLUE, markersize=4, capsize=2, linewidth=1,
                    label="human yes-rate, 95% Wilson")
        for xi, yi, n in zip(x, y, frame["n"], strict=True):
            ax.annotate(f"{n}", (xi, yi), fontsize=6.5, color=GREY, xytext=(4, -8), textcoords="offset points")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("automatic score (bin mean)", fontsize=8.5)
    ax.set_ylabel("human yes-rate", fontsize=8.5)
    ax.legend(fontsize=7.5, frameon=False, loc="lower right")
    ax.set_title(title or "reliability", fontsize=9.5)
    fig.tight_layout()
    return fig


def ppi_figure(frame, title: str = "", truth: Mapping[str, float | None] | None = None) -> Figure:
    """Per dimension: the human-only Wilson interval, the automatic-only rate and the PPI interval."""
    dims = list(frame["dimension"]) if len(frame) else []
    fig, ax = _figure(5.6, 0.8 + 0.75 * max(1, len(dims)))
    for i, (_, r) in enumerate(frame.iterrows()):
        y = len(dims) - 1 - i
        if r["human_low"] is not None and not _nan(r["human_low"]):
            ax.plot([r["human_low"], r["human_high"]], [y + 0.18] * 2, color=BLUE, linewidth=2.2,
                    label="human only (Wilson)" if i == 0 else None)
            ax.plot([r["human_rate"]], [y + 0.18], "o", color=BLUE, markersize=4)
        if r["auto_rate"] is not None and not _nan(r["auto_rate"]):
            ax.plot([r["auto_rate"]], [y], "D", color=ORANGE, markersize=5, label="automatic only" if i == 0 else None)
        if r["ppi_low"] is not None and not _nan(r["ppi_low"]):
            ax.plot([r["ppi_low"], r["ppi_high"]], [y - 0.18] * 2, color=GREEN, linewidth=2.2,
                    label="PPI++ (all automatic + calibration sample)" if i == 0 else None)
            ax.plot([r["ppi_rate"]], [y - 0.18], "o", color=GREEN, markersize=4)
        if truth and r["dimension"] in truth and truth[r["dimension"]] is not None:
            ax.plot([truth[r["dimension"]]] * 2, [y - 0.35, y + 0.35], color=RED, linewidth=1, linestyle=":",
                    label="full answer key" if i == 0 else None)
    ax.set_yticks(list(range(len(dims))), list(reversed(dims)))
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.6, max(1, len(dims)) - 0.4)
    ax.set_xlabel("rate", fontsize=8.5)
    ax.legend(fontsize=7, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.25 if len(dims) > 2 else -0.4),
              ncol=2)
    ax.set_title(title or "prediction-powered estimates (95%)", fontsize=9.5)
    fig.tight_layout()
    return fig


def _nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


def confusion_figure(comp: C.Comparison, title: str = "") -> Figure:
    """The 2x2 confusion matrix (rows human, columns automatic) with counts."""
    fig = Figure(figsize=(3.2, 2.9), dpi=96)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    m = [list(comp.confusion[0]), list(comp.confusion[1])]
    top = max(1, max(max(r) for r in m))
    ax.imshow(m, cmap="Blues", vmin=0, vmax=top * 1.25)
    for i in range(2):
        for j in range(2):
            ax.text(j, i, str(m[i][j]), ha="center", va="center", fontsize=12,
                    color="white" if m[i][j] > top * 0.6 else "#1f2328")
    ax.set_xticks([0, 1], ["auto no", "auto yes"], fontsize=8.5)
    ax.set_yticks([0, 1], ["human no", "human yes"], fontsize=8.5)
    k = comp.kappa.kappa
    ax.set_title(title or f"{comp.dimension}: kappa {'—' if k is None else f'{k:.2f}'} (n={comp.n})", fontsize=9)
    fig.tight_layout()
    return fig


def ragtruth_figure(rt: C.RagTruthCalibration) -> Figure:
    """Kappa against the support floor for every RAGTruth scorer; defaults and fold choices marked."""
    fig, ax = _figure(5.8, 3.4)
    colours = [ORANGE, BLUE, GREEN, RED]
    for s, colour in zip(rt.scorers, itertools.cycle(colours)):
        t = s.sweep
        cv = "n/a" if t.cv is None else f"{t.cv.kappa:.2f}"  # None only for an empty sweep
        ax.plot([r.threshold for r in t.rows], [math.nan if r.kappa is None else r.kappa for r in t.rows],
                color=colour, linewidth=1.8, label=f"{s.name}: CV kappa {cv}")
        if t.best is not None:
            ax.plot([t.best.threshold], [t.best.kappa], "o", color=colour, markersize=5)
    default = rt.scorers[-1].default_floor
    ax.axvline(default, color=GREY, linewidth=1, linestyle=":")
    ax.annotate(f"default floor {default:g}", (default, 0.0), fontsize=7.5, color=GREY, xytext=(3, 2),
                textcoords="offset points")
    ax.set_ylim(-0.05, 0.8)
    ax.set_xlabel("support floor (supported when score ≥ floor)", fontsize=8.5)
    ax.set_ylabel("kappa with RAGTruth humans", fontsize=8.5)
    ax.legend(fontsize=7.5, frameon=False, loc="upper right")
    ax.set_title(f"RAGTruth sample: {rt.n} claims, {rt.hallucinated} hallucinated, {rt.sources} sources",
                 fontsize=9.5)
    fig.tight_layout()
    return fig


def _save(fig: Figure, path: Path) -> Path:
    path.write_bytes(png(fig))
    return path


def write_charts(report: C.CalibrationReport, out_dir: str | Path) -> list[Path]:
    """PNG charts of a :class:`~playground.calibrate.CalibrationReport` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for d in report.dimensions:
        if not report.sweeps[d].binary and report.sweeps[d].rows:
            paths.append(_save(sweep_figure(report.sweeps[d]), out / f"sweep_{d}.png"))
        paths.append(
            _save(reliability_figure(report.reliability[d], f"reliability: {d}"), out / f"reliability_{d}.png")
        )
        paths.append(_save(confusion_figure(report.comparisons[d]), out / f"confusion_{d}.png"))
    if len(report.ppi):
        paths.append(_save(ppi_figure(report.ppi), out / "ppi.png"))
    return paths


def write_ragtruth_charts(rt: C.RagTruthCalibration, out_dir: str | Path) -> list[Path]:
    """The RAGTruth floor sweep, and per scorer its sweep and reliability, into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [_save(ragtruth_figure(rt), out / "ragtruth_floor.png")]
    for s, auto in zip(rt.scorers, rt.autos, strict=True):
        stem = s.name.replace(" ", "_")
        paths.append(_save(sweep_figure(s.sweep, f"RAGTruth: {s.name}"), out / f"sweep_{stem}.png"))
        rel = C.reliability_for(rt.human, auto, "supported")
        paths.append(_save(reliability_figure(rel, f"RAGTruth reliability: {s.name}"), out / f"reliability_{stem}.png"))
    return paths


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


# --------------------------------------------------------------------------- the page


def _env_flag(name: str) -> bool:
    return (os.environ.get(name) or "").strip().lower() in ("1", "true", "yes", "on")


class Sources:
    """The labellings the page offers, built lazily and cached (no widgets)."""

    def __init__(self, root: str | None = None, db: str | None = None, run: str | None = None,
                 ragtruth: str | None = None, read_only: bool | None = None):
        self.root = root if root is not None else (os.environ.get("PLAYGROUND_ROOT") or None)
        self.db = db if db is not None else (os.environ.get("PLAYGROUND_DB") or None)
        self.run = run if run is not None else (os.environ.get("PLAYGROUND_CALIBRATE_RUN") or None)
        self.ragtruth_path = Path(ragtruth or os.environ.get("PLAYGROUND_RAGTRUTH") or C.default_ragtruth_path())
        self.read_only = _env_flag("PLAYGROUND_READ_ONLY") if read_only is None else read_only
        self._cache: dict[str, Any] = {}
        self._tmp: tempfile.TemporaryDirectory | None = None
        self.external: dict[str, C.AutoLabelling] = {}
        self.messages: list[str] = []

    # --- RAGTruth
    def _require_ragtruth(self) -> C.RagTruthCalibration:
        rt = self.ragtruth()
        if rt is None:
            raise FileNotFoundError(f"no RAGTruth claim file at {self.ragtruth_path}")
        return rt

    def ragtruth(self) -> C.RagTruthCalibration | None:
        if "rt" not in self._cache:
            if not self.ragtruth_path.is_file():
                self.messages.append(f"no RAGTruth claim file at {self.ragtruth_path}")
                self._cache["rt"] = None
            else:
                self._cache["rt"] = C.calibrate_ragtruth(self.ragtruth_path, n_boot=1000)
        return self._cache["rt"]

    # --- golden set
    def run_dir(self) -> Path:
        if "run" not in self._cache:
            if self.run:
                self._cache["run"] = Path(self.run)
            else:
                from ..harness.config import load_config
                from ..harness.run import run_harness

                self._tmp = tempfile.TemporaryDirectory(prefix="playground-calibrate-")
                run_harness(load_config(None), self._tmp.name, root=self.root, progress=False)
                self._cache["run"] = Path(self._tmp.name)
        return self._cache["run"]

    def catalog(self):
        if "catalog" not in self._cache:
            from ..units import load_catalog

            self._cache["catalog"] = load_catalog(self.root)
        return self._cache["catalog"]

    def store(self):
        """The label store, or None when there is none yet (a fresh clone)."""
        if "store" not in self._cache:
            from ..store import StoreError, open_store

            try:
                self._cache["store"] = open_store(self.db, create=False, read_only=self.read_only)
            except (StoreError, OSError) as exc:
                self.messages.append(f"no label store ({exc})")
                self._cache["store"] = None
        return self._cache["store"]

    def annotators(self) -> list[str]:
        store = self.store()
        if store is None:
            return []
        return sorted({label.annotator for label in store.current_labels(self.catalog())} - {C.CONSENSUS})

    def human_options(self, dataset: str) -> list[tuple[str, str]]:
        if dataset == "ragtruth":
            return [("RAGTruth human labels", "ragtruth")]
        opts = [("golden answer key", "key")]
        names = self.annotators()
        if names:
            opts.append(("consensus of annotators (store)", "consensus"))
            opts += [(f"annotator: {n}", f"annotator:{n}") for n in names]
        return opts

    def auto_options(self, dataset: str) -> list[tuple[str, str]]:
        if dataset == "ragtruth":
            opts = [("support scorer (project)", "support"), ("plain coverage (baseline)", "plain")]
        else:
            opts = [("harness (default configuration)" if not self.run else f"harness run {self.run}", "harness")]
            if self.judge() is not None:
                opts.append(("Ollama judge (run)", "judge"))
        opts += [(f"external: {n}", f"external:{n}") for n in sorted(self.external)]
        return opts

    def judge(self):
        if "judge" not in self._cache:
            self._cache["judge"] = C.judge_from_run(self.run_dir()) if self.run else None
        return self._cache["judge"]

    def human(self, dataset: str, key: str) -> C.HumanLabelling:
        ck = f"human:{dataset}:{key}"
        if ck not in self._cache:
            if key == "ragtruth":
                self._cache[ck] = self._require_ragtruth().human
            elif key == "key":
                self._cache[ck] = C.key_from_run(self.run_dir())
            elif key == "consensus":
                self._cache[ck] = C.human_consensus(self.store(), self.catalog())
            else:
                self._cache[ck] = C.human_from_store(self.store(), key.split(":", 1)[1], self.catalog())
        return self._cache[ck]

    def auto(self, dataset: str, key: str) -> C.AutoLabelling:
        if key.startswith("external:"):
            return self.external[key.split(":", 1)[1]]
        ck = f"auto:{dataset}:{key}"
        if ck not in self._cache:
            if dataset == "ragtruth":
                rt = self._require_ragtruth()
                self._cache[ck] = rt.autos[0] if key == "plain" else rt.autos[1]
            elif key == "judge":
                self._cache[ck] = self.judge()
            else:
                self._cache[ck] = C.auto_from_run(self.run_dir())
        return self._cache[ck]

    def add_external(self, name: str, content: bytes, dataset: str) -> C.AutoLabelling:
        """Register an uploaded CSV of scores (validated; :class:`CalibrationInputError` lists bad rows)."""
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / (Path(name).name or "scores.csv")
            path.write_bytes(content)
            catalog = None if dataset == "ragtruth" else self.catalog()
            auto = C.auto_from_csv(path, catalog=catalog, dimension="supported" if dataset == "ragtruth" else None,
                                   name=f"external:{Path(name).stem}")
        self.external[Path(name).stem] = auto
        return auto

    def invalidate_store(self) -> None:
        for k in [k for k in self._cache if k.startswith(("human:golden:consensus", "human:golden:annotator"))]:
            del self._cache[k]


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
        # explorer controls
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
        self.dataset.observe(lambda ch: self._guard(self._on_dataset), names="value")
        for w in (self.human, self.auto, self.dimension):
            w.observe(lambda ch: self._guard(self.refresh), names="value")
        self.share.observe(lambda ch: self._guard(self._refresh_ppi), names="value")
        self.sample_seed.observe(lambda ch: self._guard(self._refresh_ppi), names="value")
        self.upload.observe(lambda ch: self._guard(self._on_upload), names="value")
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
