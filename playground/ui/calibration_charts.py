"""The calibration page's charts, drawn with matplotlib's object API on the Agg canvas (no pyplot,
no display needed): :func:`sweep_figure`, :func:`reliability_figure`, :func:`ppi_figure`,
:func:`confusion_figure`, :func:`ragtruth_figure`; :func:`png` turns a figure into PNG bytes,
:func:`write_charts` / :func:`write_ragtruth_charts` save them for ``playground calibrate --out``.
"""
from __future__ import annotations

import io
import itertools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .. import calibrate as C

__all__ = [
    "DIM_TITLES",
    "confusion_figure",
    "png",
    "ppi_figure",
    "ragtruth_figure",
    "reliability_figure",
    "sweep_figure",
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
