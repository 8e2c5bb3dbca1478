"""One human labelling against one automatic labelling: every figure, per dimension.

:func:`calibrate` runs :func:`~.comparison.compare`,
:func:`~.thresholds.threshold_sweep`, :func:`~.thresholds.reliability_for`
and :func:`~.ppi.ppi_by_dimension` on every dimension both labellings have
(in the model's dimension order), and :class:`CalibrationReport` lays
the results out as tables by file stem (for :func:`~.tables.write_tables`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from .comparison import Comparison, compare
from .labellings import AutoLabelling, HumanLabelling
from .ppi import ppi_by_dimension
from .tables import _round_frame
from .thresholds import ThresholdCalibration, reliability_for, threshold_sweep

__all__ = ["CalibrationReport", "calibrate"]


@dataclass(frozen=True, eq=False)
class CalibrationReport:
    """Every figure of one human labelling against one automatic labelling, per dimension."""

    human: HumanLabelling
    auto: AutoLabelling
    dimensions: tuple[str, ...]
    comparisons: dict[str, Comparison]
    sweeps: dict[str, ThresholdCalibration]
    reliability: dict[str, pd.DataFrame]
    ppi: pd.DataFrame

    def comparison_table(self) -> pd.DataFrame:
        return pd.DataFrame([self.comparisons[d].figures() for d in self.dimensions])

    def threshold_table(self) -> pd.DataFrame:
        return pd.DataFrame([self.sweeps[d].summary() for d in self.dimensions])

    def disagreements(self) -> pd.DataFrame:
        frames = [self.comparisons[d].disagreements.assign(dimension=d) for d in self.dimensions]
        frames = [f for f in frames if len(f)]
        cols = ["dimension", "unit_id", "unit_kind", "case_id", "response_id", "human", "auto", "score", "link"]
        if not frames:
            return pd.DataFrame(columns=cols)
        return _round_frame(pd.concat(frames, ignore_index=True)[cols])

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by file stem (for ``--out``)."""
        out = {"comparison": self.comparison_table(), "thresholds": self.threshold_table(),
               "disagreements": self.disagreements(), "ppi": self.ppi}
        for d in self.dimensions:
            out[f"sweep_{d}"] = self.sweeps[d].frame()
            out[f"reliability_{d}"] = self.reliability[d]
        return out


def calibrate(human: HumanLabelling, auto: AutoLabelling, dimensions: Sequence[str] | None = None, *,
              folds: int = 5, seed: int = 0, bins: int = 10, width: float = 0.10, link_base: str | None = "",
              n_boot: int = 1000, confidence: float = 0.95,
              sample_seed: int | str | None = None, dataset: str | None = None) -> CalibrationReport:
    """:func:`compare`, :func:`threshold_sweep`, :func:`reliability` and :func:`ppi_by_dimension` for every
    dimension both labellings have (or ``dimensions``).

    ``sample_seed``: the seed the calibration sample was drawn with (see
    :mod:`playground.calibrate.ppi`); without it the PPI table says the
    labelled units are not a sample and gives no interval.  ``dataset``: the
    imported dataset's name, carried into the disagreements' links.
    """
    dims = tuple(dimensions) if dimensions is not None else tuple(
        d for d in auto.dimensions() if d in set(human.dimensions()))
    comps = {d: compare(human, auto, d, link_base=link_base, confidence=confidence, dataset=dataset) for d in dims}
    sweeps = {d: threshold_sweep(human, auto, d, folds=folds, seed=seed, n_boot=n_boot, confidence=confidence)
              for d in dims}
    rel = {d: reliability_for(human, auto, d, bins) for d in dims}
    ppi = ppi_by_dimension(human, auto, dims, width=width, confidence=confidence, sample_seed=sample_seed)
    return CalibrationReport(human, auto, dims, comps, sweeps, rel, ppi)
