"""Calibration: can this automatic scorer be trusted, where, and at which threshold?

Data frames in, figures out; no widgets, no plotting (charts live in
:mod:`playground.ui.calibration`).  Every statistic comes from
:mod:`playground.stats`, :mod:`playground.metrics` and :mod:`playground.sweep`;
this module pairs labellings and arranges the figures.

Two kinds of labelling of the same units
========================================
:class:`HumanLabelling` — one 0/1 label per (unit, dimension), frame columns
:data:`HUMAN_COLUMNS`:

* one annotator's labels from the label store (:func:`human_from_store`);
* the consensus of the store's annotators, adjudicated labels first
  (:func:`human_consensus`);
* the golden set's authored answer key, a ready-made careful annotator
  (:func:`key_from_dataset` for claims and facts; :func:`key_from_run` adds
  passages, whose "key" is the gold *from an expected source*);
* RAGTruth's human hallucination labels (:func:`ragtruth_human`).

:class:`AutoLabelling` — per (unit, dimension) a continuous ``score`` and
the automatic ``label`` (0/1), frame columns :data:`AUTO_COLUMNS`, plus the
current default threshold of each dimension's score:

* a harness run folder's ``units.csv`` (:func:`auto_from_run`);
* the Ollama judge's per-claim verdicts in a run's ``cases.jsonl``
  (:func:`judge_from_run`);
* an external tool's per-unit scores from CSV — a RAGAS- or DeepEval-style
  scorer on the same units (:func:`auto_from_csv`);
* the deterministic support scorer or the plain-coverage baseline on
  RAGTruth claims (:func:`ragtruth_auto`).

Figures
=======
* :func:`compare` — on the units both labelled: human and automatic rates with
  Wilson intervals, percent agreement, Cohen's kappa with its interval, the
  base rate (accuracy of always predicting the human majority class), MCC,
  PABAK, F1 of the "no" class, balanced accuracy, the confusion matrix and the
  disagreeing units with a link to their case in the playground.
* :func:`threshold_sweep` — kappa and F1 against the score threshold, the
  default marked, the best (highest kappa) reported, with a small-set warning
  (:func:`small_set_warning`) and a grouped cross-validated figure.
* :func:`reliability` — score bins against the human "yes" rate per bin.
* :func:`ppi_by_dimension` — human-only, automatic-only and
  prediction-powered rates, and the human labels needed for a chosen width.
* :func:`annotator_agreement`, :func:`adjudication_queue`,
  :func:`adjudicate`, :func:`accuracy_against_key` — annotators versus each
  other and versus the answer key.
* :func:`calibrate_ragtruth` — the support scorer (and a plain-coverage
  baseline) against RAGTruth's human labels, in-sample and out of sample.

Conventions: labels are 0/1 with 1 = yes (relevant, supported, correct,
covered); the automatic label at threshold ``t`` is ``score >= t``; F1 is
for the "no" class (unsupported, irrelevant, incorrect, missing: what a gate
must catch) unless asked otherwise.  Every table is sorted with explicit
tie-breaks and its floats rounded to :data:`DECIMALS` places, so the same
input gives the same bytes.

Modules
=======
One job each; this package re-exports every name, so import from
``playground.calibrate``:

* :mod:`.tables` — rounding and ordering rules of every table, :func:`write_tables`;
* :mod:`.labellings` — :class:`HumanLabelling`, :class:`AutoLabelling`, their
  columns and :class:`CalibrationInputError`;
* :mod:`.store_labels` — an annotator's labels and the consensus from the label store;
* :mod:`.answer_key` — the golden set's answer key (from the dataset or a run folder);
* :mod:`.run_folder` — a harness run's ``units.csv`` and judge verdicts;
* :mod:`.external_csv` — an external tool's scores from CSV;
* :mod:`.comparison` — human versus automatic on one dimension;
* :mod:`.thresholds` — threshold sweeps, the small-set warning, reliability bins;
* :mod:`.ppi` — prediction-powered estimates by dimension;
* :mod:`.annotators` — annotator agreement, adjudication, accuracy against the key;
* :mod:`.ragtruth` — the RAGTruth labellings and calibration;
* :mod:`.report` — :func:`calibrate`, the whole report of one pair of labellings;
* :mod:`.judge_scorer`, :mod:`.outside_scores`, :mod:`.outside_report` — an LLM
  judge or a user's own per-claim scores beside ours on the real data sets' frozen parts;
* :mod:`.frozen_files` — the frozen and tuning-CV reports as files (``--out``): the table
  and one row per claim with every scorer's verdict, disagreements first.
"""
from __future__ import annotations

import sys
import types
from typing import Any

from .annotators import (
    AnnotatorAgreement,
    accuracy_against_key,
    adjudicate,
    adjudication_queue,
    annotator_agreement,
)
from .answer_key import key_from_dataset, key_from_run
from .comparison import Comparison, Rate, case_link, compare, paired
from .external_csv import auto_from_csv
from .frozen_files import WrittenFiles, report_files, write_report_files
from .judge_scorer import JudgeReplyInvalid, JudgeVerdicts, judge_claims
from .labellings import (
    AUTO_COLUMNS,
    BINARY_THRESHOLD,
    COARSE_GRID,
    CONSENSUS,
    HUMAN_COLUMNS,
    AutoLabelling,
    CalibrationInputError,
    HumanLabelling,
    auto_from_frame,
    human_from_labels,
)
from .outside_report import OutsideRun, OutsideScorers, outside_report, outside_run
from .outside_scores import ScoresError, read_scores, write_claims
from .ppi import PPI_COLUMNS, CalibrationSample, calibration_sample, ppi_by_dimension
from .ragtruth import (
    RagTruthCalibration,
    ScorerFigures,
    calibrate_ragtruth,
    default_ragtruth_path,
    plain_coverage,
    ragtruth_auto,
    ragtruth_human,
)
from .report import CalibrationReport, calibrate
from .run_folder import auto_from_run, judge_from_run
from .store_labels import human_consensus, human_from_store
from .tables import DECIMALS, write_tables
from .thresholds import (
    SMALL_MINORITY,
    SMALL_N,
    ThresholdCalibration,
    reliability,
    reliability_for,
    small_set_warning,
    threshold_sweep,
)

__all__ = [
    "AUTO_COLUMNS",
    "BINARY_THRESHOLD",
    "COARSE_GRID",
    "CONSENSUS",
    "DECIMALS",
    "HUMAN_COLUMNS",
    "PPI_COLUMNS",
    "SMALL_MINORITY",
    "SMALL_N",
    "AnnotatorAgreement",
    "AutoLabelling",
    "CalibrationInputError",
    "CalibrationReport",
    "CalibrationSample",
    "Comparison",
    "HumanLabelling",
    "JudgeReplyInvalid",
    "JudgeVerdicts",
    "OutsideRun",
    "OutsideScorers",
    "RagTruthCalibration",
    "Rate",
    "ScorerFigures",
    "ScoresError",
    "ThresholdCalibration",
    "WrittenFiles",
    "accuracy_against_key",
    "adjudicate",
    "adjudication_queue",
    "annotator_agreement",
    "auto_from_csv",
    "auto_from_frame",
    "auto_from_run",
    "calibrate",
    "calibrate_ragtruth",
    "calibration_sample",
    "case_link",
    "compare",
    "default_ragtruth_path",
    "human_consensus",
    "human_from_labels",
    "human_from_store",
    "judge_claims",
    "judge_from_run",
    "key_from_dataset",
    "key_from_run",
    "outside_report",
    "outside_run",
    "paired",
    "plain_coverage",
    "ppi_by_dimension",
    "ragtruth_auto",
    "ragtruth_human",
    "read_scores",
    "reliability",
    "reliability_for",
    "report_files",
    "small_set_warning",
    "threshold_sweep",
    "write_claims",
    "write_report_files",
    "write_tables",
]


class _CallablePackage(types.ModuleType):
    """``pg.calibrate(scores, human, ...)`` is :func:`playground.calibrate.plain.calibrate`.

    ``playground.calibrate`` is this package and ``pg.calibrate`` the one-call
    API of the same name; Python binds a subpackage to its parent's attribute
    whenever it is imported, so the two names cannot be two objects. Calling
    the package is calling the plain-data function; its modules stay where they are.
    """

    def __call__(self, scores: Any, human: Any, **options: Any) -> Any:
        from .plain import calibrate as calibrate_records

        return calibrate_records(scores, human, **options)


sys.modules[__name__].__class__ = _CallablePackage
