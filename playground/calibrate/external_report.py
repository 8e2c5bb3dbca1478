"""The full calibration report of a per-sample result table (RAGAS ``evaluate()``, DeepEval): the same figures as
``calibrate store``, per metric column.

A result table scores *samples*; people label *units* (passages, claims,
facts).  Per metric column (rate → dimension, :data:`.external_samples.METRICS`):

* the **human label of a sample** is ``yes / labelled >= human_threshold``
  over its labelled units of the dimension (one annotator, or the consensus);
* the **automatic label** is ``score >= threshold``; the score is the column's;
* :func:`playground.calibrate.calibrate` then gives, on the samples with both,
  the confusion matrix, TPR and TNR with Wilson intervals, kappa with its
  interval and base rate, balanced accuracy, the threshold sweep (best =
  highest kappa; ties to the threshold closest to ``threshold``, then the
  lower one) with grouped cross-validation (folds by sample) and its
  out-of-sample figures, reliability bins and the disagreements with links
  ``?dataset=NAME&case=...``;
* with ``sample_seed`` the human side is the **calibration sample of
  samples**: the longest prefix of ``playground.sampling.ranked(sample case
  ids, seed)`` whose samples all have a human label of the dimension (the
  rule of :mod:`.ppi`, applied to samples, the unit a per-sample score
  judges); labelled samples beyond the prefix are counted and left out.
  Only then are the figures those of a uniform random sample, and only then
  is there a prediction-powered estimate (PPI++) of the dataset's human pass
  rate, with "labels needed" for an interval ``width`` wide.  Without a seed
  every labelled sample is compared and there is no PPI interval: the
  labelled samples are not a drawn sample.

:func:`side_by_side` puts every metric's headline figures in one table on the
same samples, beside any other scorer of them — the harness's per-sample rates
(:func:`harness_scorers`: of a sample's units of a dimension, the share the
harness says "yes" to).
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .external_samples import DIMENSION_OF_RATE, RATE_OF_DIMENSION, ResultTable, match_rows
from .labellings import AutoLabelling, HumanLabelling, _auto_frame, _human_frame
from .ppi import calibration_sample
from .report import CalibrationReport, calibrate
from .tables import _r

__all__ = ["ExternalReport", "MetricReport", "calibrate_result", "harness_scorers", "sample_votes", "side_by_side",
           "slug"]

#: unit kind of a whole sample in the per-sample labellings
SAMPLE_KIND = "sample"


def slug(column: str) -> str:
    """A file-name-safe stem of a metric column: ``rouge_score(mode=fmeasure)`` → ``rouge_score_mode_fmeasure``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", column).strip("_").lower() or "metric"


@dataclass(frozen=True, eq=False)
class MetricReport:
    """One metric column: its rate, dimension, the full report, and scores missing / clamped."""

    column: str
    rate: str
    dimension: str
    report: CalibrationReport
    missing: int
    clamped: int
    #: samples in the calibration sample (0 without a seed) and labelled samples beyond its prefix (not used)
    sample_size: int = 0
    outside_sample: int = 0


@dataclass(frozen=True, eq=False)
class ExternalReport:
    """Every metric column's report, with what could not be matched."""

    dataset: str
    who: str
    rows: int
    matched: int
    metrics: tuple[MetricReport, ...]
    unmatched_rows: tuple[str, ...]
    unmatched_samples: tuple[str, ...]
    ignored: tuple[str, ...]
    sample_seed: int | str | None
    threshold: float
    human_threshold: float


def sample_votes(opened: Any, labels: Sequence[Any]) -> dict[tuple[str, str], list[int]]:
    """Per (case, dimension) the human votes of its units."""
    case_of = {u.unit_id: u.case_id for u in opened.units()}
    votes: dict[tuple[str, str], list[int]] = defaultdict(list)
    for lab in labels:
        if lab.unit_id in case_of:
            votes[(case_of[lab.unit_id], lab.dimension)].append(int(lab.value))
    return votes


def _sample_human(votes: dict[tuple[str, str], list[int]], cases: set[str], human_threshold: float,
                  who: str) -> HumanLabelling:
    rows = [{"unit_id": case, "unit_kind": SAMPLE_KIND, "case_id": case, "response_id": "", "dimension": dim,
             "value": int(sum(v) / len(v) >= human_threshold)}
            for (case, dim), v in sorted(votes.items()) if case in cases and v]
    return HumanLabelling(who, _human_frame(rows), "consensus" if who == "consensus" else "annotator",
                          f"per sample: human rate >= {human_threshold:g}")


def _sample_auto(name: str, scores: dict[str, float], dim: str, threshold: float) -> AutoLabelling:
    rows = [{"unit_id": case, "unit_kind": SAMPLE_KIND, "case_id": case, "response_id": "", "dimension": dim,
             "score": s, "label": int(s >= threshold)} for case, s in sorted(scores.items())]
    return AutoLabelling(name, _auto_frame(rows), {dim: threshold})


def _in_sample(human: HumanLabelling, dim: str, scored: list[str], sample_seed: int | str | None
               ) -> tuple[HumanLabelling, int, int]:
    """``(human labels of dim on the calibration sample, its size, labelled samples outside it)``.

    Without a seed every labelled sample is kept (size 0: no drawn sample).
    """
    f = human.frame[human.frame["dimension"] == dim]
    if sample_seed is None:
        return HumanLabelling(human.name, f.reset_index(drop=True), human.kind, human.note), 0, 0
    cs = calibration_sample(scored, f["case_id"].tolist(), sample_seed)
    keep = f[f["case_id"].isin(set(cs.sample))].reset_index(drop=True)
    note = f"{human.note}; the calibration sample of seed {sample_seed}: {len(cs.sample)} samples"
    return HumanLabelling(human.name, keep, human.kind, note), len(cs.sample), len(cs.outside)


def calibrate_result(table: ResultTable, opened: Any, labels: Sequence[Any], who: str, *, threshold: float = 0.5,
                     human_threshold: float = 0.5, folds: int = 5, seed: int = 0, n_boot: int = 1000,
                     width: float = 0.10, sample_seed: int | str | None = None, name: str | None = None,
                     link_base: str | None = "",
                     extra: Sequence[tuple[str, str, dict[str, float]]] = ()) -> ExternalReport:
    """Every metric column of ``table`` against the human labels of ``opened`` (module docstring).

    ``extra``: more scorers on the same samples, ``(name, rate, score by case id)`` — the harness's
    per-sample rates (:func:`harness_scorers`), a judge's — reported beside the columns.
    """
    matched, unmatched_rows, unmatched_samples = match_rows(table, opened)
    votes = sample_votes(opened, labels)
    human = _sample_human(votes, set(matched), human_threshold, who)
    metrics = []
    scorers = [(f"{name}:{column}" if name else column, column, rate,
                {case: v for case, s in sorted(matched.items()) if (v := s[column]) is not None})
               for column, rate in table.rates.items()]
    scorers += [(label, label, rate, {c: v for c, v in sorted(by_case.items()) if c in matched})
                for label, rate, by_case in extra]
    for label, column, rate, scores in scorers:
        dim = DIMENSION_OF_RATE[rate]
        auto = _sample_auto(label, scores, dim, threshold)
        mine, size, outside = _in_sample(human, dim, list(scores), sample_seed)
        report = calibrate(mine, auto, [dim], folds=folds, seed=seed, width=width, n_boot=n_boot,
                           link_base=link_base, dataset=opened.name, sample_seed=sample_seed)
        metrics.append(MetricReport(column, rate, dim, report, len(matched) - len(scores),
                                    table.clamped.get(column, 0), size, outside))
    return ExternalReport(opened.name, who, len(table.rows), len(matched), tuple(metrics), unmatched_rows,
                          unmatched_samples, table.ignored, sample_seed, threshold, human_threshold)


def side_by_side(reports: Sequence[MetricReport]) -> pd.DataFrame:
    """One row per metric: n, TPR and TNR with intervals, kappa with interval, base rate, balanced accuracy,
    the given and the best threshold, and the best threshold's cross-validated kappa and balanced accuracy."""
    rows = []
    for m in reports:
        c = m.report.comparisons[m.dimension]
        t = m.report.sweeps[m.dimension]
        cv = t.cv
        rows.append({
            "scorer": m.report.auto.name, "dimension": m.dimension, "n": c.n,
            "tpr": _r(c.tpr.rate), "tpr_low": _r(c.tpr.low), "tpr_high": _r(c.tpr.high),
            "tnr": _r(c.tnr.rate), "tnr_low": _r(c.tnr.low), "tnr_high": _r(c.tnr.high),
            "kappa": _r(c.kappa.kappa), "kappa_low": _r(c.kappa.low), "kappa_high": _r(c.kappa.high),
            "base_rate": _r(c.base_rate), "balanced_accuracy": _r(c.balanced_accuracy),
            "threshold": _r(c.threshold), "best_threshold": _r(t.best.threshold) if t.best else None,
            "cv_kappa": _r(cv.kappa) if cv else None, "cv_kappa_low": _r(cv.kappa_low) if cv else None,
            "cv_kappa_high": _r(cv.kappa_high) if cv else None,
            "cv_balanced_accuracy": _r(cv.balanced_accuracy) if cv else None,
            "missing": m.missing, "clamped": m.clamped,
        })
    return pd.DataFrame(rows)


def harness_scorers(run_dir: str | Path) -> list[tuple[str, str, dict[str, float]]]:
    """The harness run on the dataset (``harness run --dataset``) as per-sample scorers, one per dimension:
    the share of a sample's units of that dimension the harness says "yes" to (``harness:<dimension>``)."""
    from .run_folder import auto_from_run

    auto = auto_from_run(run_dir)
    out = []
    for dim in auto.dimensions():
        f = auto.frame[auto.frame["dimension"] == dim]
        means = f.groupby("case_id", sort=True)["label"].mean()
        out.append((f"harness:{dim}", RATE_OF_DIMENSION[dim], {str(c): float(v) for c, v in means.items()}))
    return out
