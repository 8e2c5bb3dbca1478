"""``pg.calibrate(scores, human)``: one scorer against people from plain records, as a results object.

:func:`calibrate` turns per-unit score records and people's label records
(dicts or DataFrames, see :mod:`playground.records`) into the two labellings
and runs :func:`playground.calibrate.report.calibrate` on them;
:class:`Calibration` holds the report with ``summary()``, ``to_frame()``,
``tables()`` and ``plot()`` (which alone imports matplotlib), as statsmodels'
results do.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..records import TO_LABEL, label_dimension, records
from .labellings import BINARY_THRESHOLD, auto_from_frame, human_from_labels
from .report import CalibrationReport
from .report import calibrate as calibrate_labellings

__all__ = ["Calibration", "calibrate"]


class Calibration:
    """Every figure of one scorer against people, per label dimension (the report in ``.report``).

    ``summary()`` the headline per dimension, ``to_frame()`` the comparison
    table (rates, agreement, kappa with interval, confusion), ``tables()``
    every table, ``plot()`` kappa against the threshold.
    """

    def __init__(self, report: CalibrationReport) -> None:
        self.report = report

    @property
    def dimensions(self) -> tuple[str, ...]:
        return self.report.dimensions

    def to_frame(self) -> pd.DataFrame:
        """The comparison table: one row per dimension."""
        return self.report.comparison_table()

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by name (comparison, thresholds, disagreements, ppi, sweep_*, reliability_*)."""
        return self.report.tables()

    def summary(self) -> str:
        """Per dimension: units, human and automatic rate, agreement, kappa with its interval, best threshold."""
        lines = [f"{self.report.auto.name} against {self.report.human.name}"]
        for d in self.dimensions:
            c = self.report.comparisons[d].figures()
            s = self.report.sweeps[d].summary()
            kappa = "undefined" if c["kappa"] is None else (
                f"{c['kappa']:.3f} ({_num(c['kappa_low'])} to {_num(c['kappa_high'])})")
            best = "" if s["best_threshold"] is None else f", best threshold {s['best_threshold']:g}"
            lines.append(f"  {d:<9} n={c['n']:<4} human {_pct(c['human_rate'])}  auto {_pct(c['auto_rate'])}"
                         f"  agreement {_pct(c['agreement'])}  kappa {kappa}{best}")
        return "\n".join(lines)

    def plot(self) -> Any:
        """Kappa against the score threshold, one panel per dimension, the default dashed (imports matplotlib)."""
        import matplotlib.pyplot as plt

        dims = self.dimensions or ("",)
        fig, axes = plt.subplots(1, len(dims), figsize=(3.2 * len(dims), 2.6), squeeze=False)
        for ax, d in zip(axes[0], self.dimensions, strict=False):
            frame = self.report.sweeps[d].frame()
            ax.plot(frame["threshold"], frame["kappa"], marker=".")
            default = self.report.auto.threshold(d)
            if default is not None:
                ax.axvline(default, linestyle="--", color="grey")
            ax.set_title(d)
            ax.set_xlabel("threshold")
        axes[0][0].set_ylabel("Cohen's kappa")
        fig.tight_layout()
        return fig

    def __repr__(self) -> str:
        return self.summary()


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{x:5.1%}"


def _auto_rows(scores: Any, thresholds: Mapping[str, float]) -> list[dict[str, Any]]:
    rows = records(scores)
    for i, r in enumerate(rows, 1):
        r["dimension"] = label_dimension(r, f"score record {i}")
        if "score" not in r:
            raise ValueError(f"score record {i}: no 'score'")
        if "label" not in r or pd.isna(r["label"]):
            r["label"] = int(float(r["score"]) >= thresholds.get(r["dimension"], BINARY_THRESHOLD))
    return rows


def calibrate(scores: Any, human: Any, *, thresholds: Mapping[str, float] | None = None,
              dimensions: Sequence[str] | None = None, name: str = "scorer", human_name: str = "human",
              **options: Any) -> Calibration:
    """One scorer's per-unit ``scores`` against people's labels ``human`` (records or DataFrames).

    The automatic label is the record's ``label``, else ``score >=
    threshold`` (``thresholds`` per dimension; default: a DataFrame's
    ``attrs["thresholds"]``, as :func:`playground.api.score` sets them, else 0.5).  Runs
    :func:`playground.calibrate.report.calibrate` (comparison, threshold
    sweep with cross-validation, reliability bins, prediction-powered rates)
    on every dimension both sides have; ``options`` go to it (``folds``,
    ``seed``, ``bins``, ``width``, ``confidence``, ``sample_seed`` ...).
    """
    if thresholds is None:
        thresholds = getattr(scores, "attrs", {}).get("thresholds")
    th = {TO_LABEL.get(d, d): float(t) for d, t in (thresholds or {}).items()}
    frame = pd.DataFrame(_auto_rows(scores, th))
    if frame.empty:
        raise ValueError("no score records")
    auto = auto_from_frame(frame, name, {d: th.get(d, BINARY_THRESHOLD) for d in sorted(set(frame["dimension"]))})
    people = records(human)
    for i, r in enumerate(people, 1):
        r["dimension"] = label_dimension(r, f"human record {i}")
    dims = None if dimensions is None else [TO_LABEL.get(d, d) for d in dimensions]
    options.setdefault("link_base", None)
    return Calibration(calibrate_labellings(human_from_labels(people, human_name), auto, dims, **options))
