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
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence
from urllib.parse import quote

import numpy as np
import pandas as pd

from .metrics import agreement, multi_rater
from .model import DIMENSIONS
from .stats import (
    AgreementStat,
    KappaResult,
    balanced_accuracy,
    cohens_kappa,
    f1_score,
    ppi_labels_needed,
    ppi_mean,
    wilson_interval,
)
from .sweep import DEFAULT_GRID, CVResult, SweepRow, best_row, grouped_cv, sweep

__all__ = [
    "DECIMALS", "HUMAN_COLUMNS", "AUTO_COLUMNS", "CONSENSUS", "SMALL_N", "SMALL_MINORITY",
    "CalibrationInputError", "HumanLabelling", "AutoLabelling", "Rate", "Comparison",
    "ThresholdCalibration", "AnnotatorAgreement", "ScorerFigures", "RagTruthCalibration",
    "CalibrationReport",
    "human_from_labels", "human_from_store", "human_consensus", "key_from_dataset", "key_from_run",
    "auto_from_run", "judge_from_run", "auto_from_csv", "auto_from_frame",
    "ragtruth_human", "ragtruth_auto", "plain_coverage",
    "case_link", "paired", "compare", "small_set_warning", "threshold_sweep", "reliability",
    "reliability_for", "ppi_by_dimension", "annotator_agreement", "adjudication_queue", "adjudicate",
    "accuracy_against_key", "calibrate", "calibrate_ragtruth", "default_ragtruth_path", "write_tables",
]

#: Decimal places of every float in a table.
DECIMALS = 4
HUMAN_COLUMNS: tuple[str, ...] = ("unit_id", "unit_kind", "case_id", "response_id", "dimension", "value")
AUTO_COLUMNS: tuple[str, ...] = ("unit_id", "unit_kind", "case_id", "response_id", "dimension", "score", "label")
#: Annotator name of adjudicated labels (the store's reserved consensus name; they never vote).
CONSENSUS = "consensus"
#: A labelled set is "small" below this many units ...
SMALL_N = 100
#: ... or with fewer than this many units of the minority human class.
SMALL_MINORITY = 20
#: Candidate thresholds for the deterministic harness scores: 0.05 .. 0.95 step 0.05.
COARSE_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(1, 20))
#: Default threshold of a binary (0/1) score.
BINARY_THRESHOLD = 0.5
_ORDER = {d: i for i, d in enumerate(DIMENSIONS)}


def _r(x: Any, decimals: int = DECIMALS) -> Any:
    """Round a float (None and NaN stay None); other values pass through."""
    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return None if math.isnan(x) else round(x, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
    return x


def _round_frame(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype.kind == "f":
            out[col] = out[col].round(DECIMALS) + 0.0
        elif out[col].dtype == object:
            out[col] = [(_r(v) if isinstance(v, (float, np.floating)) else v) for v in out[col]]
    return out


def _dim_key(d: str) -> tuple:
    return (_ORDER.get(d, len(_ORDER)), d)


class CalibrationInputError(ValueError):
    """Bad calibration input; ``problems`` lists every ``(row_or_line, message)`` (0 = the file)."""

    def __init__(self, problems: list[tuple[int, str]], source: str = ""):
        self.problems = sorted(problems)
        self.source = source
        head = f"{source or 'input'}: {len(self.problems)} problem(s)"
        super().__init__(head + "".join(f"\n  row {n}: {m}" if n else f"\n  {m}" for n, m in self.problems))


# --------------------------------------------------------------------------- labellings


@dataclass(frozen=True, eq=False)
class HumanLabelling:
    """One 0/1 label per (unit, dimension): columns :data:`HUMAN_COLUMNS` (+ optional ``group``, ``variant``).

    ``kind``: ``annotator``, ``consensus``, ``key`` or ``ragtruth``.
    ``group`` (when present) is what cross-validation groups by (RAGTruth:
    the source id); otherwise ``case_id``.
    """

    name: str
    frame: pd.DataFrame
    kind: str = "annotator"
    note: str = ""

    def __post_init__(self):
        missing = [c for c in HUMAN_COLUMNS if c not in self.frame.columns]
        if missing:
            raise ValueError(f"human labelling {self.name!r} lacks column(s) {missing}")
        dup = self.frame.duplicated(["unit_id", "dimension"])
        if dup.any():
            first = self.frame[dup].iloc[0]
            raise ValueError(f"human labelling {self.name!r} has two labels of {first.unit_id} {first.dimension}")

    def __len__(self) -> int:
        return len(self.frame)

    def dimensions(self) -> list[str]:
        return sorted(set(self.frame["dimension"]), key=_dim_key)

    def labels(self, dimension: str) -> dict[str, int]:
        f = self.frame[self.frame["dimension"] == dimension]
        return dict(zip(f["unit_id"], f["value"].astype(int)))

    def subsample(self, share: float, seed: int = 0) -> "HumanLabelling":
        """A deterministic ``share`` of the labelled units ("what if only this many were labelled?").

        Units are ordered by SHA-256 of ``seed:unit_id`` and the first
        ``round(share * units)`` kept (all dimensions of a kept unit), so the
        same share and seed always keep the same units and a larger share keeps
        a superset.  No random number generator is involved.
        """
        if not 0 < share <= 1:
            raise ValueError(f"share must be in (0, 1], got {share!r}")
        units = sorted(set(self.frame["unit_id"]), key=lambda u: hashlib.sha256(f"{seed}:{u}".encode()).hexdigest())
        keep = set(units[:max(1, round(share * len(units)))])
        frame = self.frame[self.frame["unit_id"].isin(keep)].reset_index(drop=True)
        return HumanLabelling(f"{self.name} ({share:.0%} subsample)", frame, self.kind,
                              f"deterministic {share:.0%} subsample of {len(units)} units (seed {seed})")


@dataclass(frozen=True, eq=False)
class AutoLabelling:
    """Per (unit, dimension) a ``score`` and the automatic ``label``: columns :data:`AUTO_COLUMNS`.

    ``thresholds``: the current default threshold of each dimension's score
    (the label is ``score >= threshold`` for the deterministic scorers; an
    external tool or a judge may label otherwise).  ``grids``: candidate
    thresholds per dimension for the sweep (default: see
    :func:`threshold_sweep`).
    """

    name: str
    frame: pd.DataFrame
    thresholds: dict[str, float] = field(default_factory=dict)
    source: str = ""
    grids: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def __post_init__(self):
        missing = [c for c in AUTO_COLUMNS if c not in self.frame.columns]
        if missing:
            raise ValueError(f"automatic labelling {self.name!r} lacks column(s) {missing}")
        dup = self.frame.duplicated(["unit_id", "dimension"])
        if dup.any():
            first = self.frame[dup].iloc[0]
            raise ValueError(f"automatic labelling {self.name!r} has two rows for {first.unit_id} {first.dimension}")

    def __len__(self) -> int:
        return len(self.frame)

    def dimensions(self) -> list[str]:
        return sorted(set(self.frame["dimension"]), key=_dim_key)

    def threshold(self, dimension: str) -> float | None:
        return self.thresholds.get(dimension)


def _human_frame(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    cols = list(HUMAN_COLUMNS) + [c for c in extra]
    frame = rows[cols].copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows), columns=cols)
    frame["value"] = frame["value"].astype(int)
    for c in ("unit_id", "unit_kind", "case_id", "response_id", "dimension"):
        frame[c] = frame[c].fillna("").astype(str)
    frame = frame.sort_values(["unit_id", "dimension"], key=None, kind="mergesort").reset_index(drop=True)
    return frame


def _auto_frame(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    cols = list(AUTO_COLUMNS) + [c for c in extra]
    frame = rows[cols].copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows), columns=cols)
    frame["score"] = frame["score"].astype(float)
    frame["label"] = frame["label"].astype(int)
    for c in ("unit_id", "unit_kind", "case_id", "response_id", "dimension"):
        frame[c] = frame[c].fillna("").astype(str)
    return frame.sort_values(["unit_id", "dimension"], kind="mergesort").reset_index(drop=True)


def human_from_labels(labels: Iterable[Any], name: str, kind: str = "annotator", note: str = "") -> HumanLabelling:
    """A labelling from label objects (``StoredLabel``, ``model.Label`` or dicts) of ONE annotator."""
    rows = []
    for l in labels:
        get = l.get if isinstance(l, Mapping) else (lambda k, _l=l: getattr(_l, k, ""))
        rows.append({"unit_id": get("unit_id"), "unit_kind": get("unit_kind"), "case_id": get("case_id") or "",
                     "response_id": get("response_id") or "", "dimension": get("dimension"), "value": int(get("value"))})
    return HumanLabelling(name, _human_frame(rows), kind, note)


def _current(store: Any, catalog: Mapping[str, Any] | None, annotator: str | None = None) -> list:
    if catalog is None:
        return store.labels(annotator=annotator)
    return store.current_labels(catalog, annotator)


def human_from_store(store: Any, annotator: str, catalog: Mapping[str, Any] | None = None) -> HumanLabelling:
    """``annotator``'s current labels from the label store (with a ``catalog``, stale labels are left out)."""
    labels = _current(store, catalog, annotator)
    return human_from_labels(_with_response(labels, catalog), annotator, "annotator",
                             "" if catalog is not None else "stale labels not checked (no catalog)")


def _with_response(labels: Iterable[Any], catalog: Mapping[str, Any] | None) -> list[dict]:
    out = []
    for l in labels:
        unit = catalog.get(l.unit_id) if catalog is not None else None
        out.append({"unit_id": l.unit_id, "unit_kind": l.unit_kind, "case_id": l.case_id,
                    "response_id": getattr(unit, "response_id", "") if unit is not None else "",
                    "dimension": l.dimension, "value": int(l.value)})
    return out


def human_consensus(store: Any, catalog: Mapping[str, Any] | None = None) -> HumanLabelling:
    """The store's consensus: an adjudicated label (annotator ``consensus``) where there is one, else the
    majority of the annotators' current labels; ties without adjudication are left out."""
    adjudicated = {(l.unit_id, l.dimension): l for l in _current(store, catalog, CONSENSUS)}
    rows: dict[tuple[str, str], dict] = {}
    for c in store.consensus(catalog=catalog):
        if c.value is not None:
            rows[(c.unit_id, c.dimension)] = {"unit_id": c.unit_id, "unit_kind": c.unit_kind, "case_id": c.case_id,
                                              "response_id": "", "dimension": c.dimension, "value": int(c.value)}
    for key, l in adjudicated.items():
        rows[key] = {"unit_id": l.unit_id, "unit_kind": l.unit_kind, "case_id": l.case_id, "response_id": "",
                     "dimension": l.dimension, "value": int(l.value)}
    if catalog is not None:
        for r in rows.values():
            unit = catalog.get(r["unit_id"])
            r["response_id"] = getattr(unit, "response_id", "") if unit is not None else ""
    return HumanLabelling(CONSENSUS, _human_frame(rows.values()), "consensus",
                          f"majority of annotators; {len(adjudicated)} adjudicated; ties left out")


def key_from_dataset(dataset: Any) -> HumanLabelling:
    """The golden set's authored answer key for claims (supported, correct) and facts (covered).

    Claim units come from :func:`playground.golden.response_units`, matched to
    ``Response.key_claims`` by text (the loader guarantees the splitter cuts
    each response into exactly the keyed claims).  Column ``variant`` holds the
    response's authored variant (for :func:`accuracy_against_key`).
    """
    from .golden import response_units

    rows = []
    for rid in sorted(dataset.responses):
        response = dataset.responses[rid]
        case = dataset.cases.get(response.case_id)
        if case is None or not (response.key_claims or response.key_facts):
            continue
        keys = list(response.key_claims)
        facts = dict(response.key_facts)
        units = response_units(case, response)
        claim_units = [u for u in units if u.unit_kind == "claim"]
        for unit, key in zip(claim_units, keys):
            if key.text != unit.text:  # pragma: no cover - the golden loader rejects such responses
                continue
            for dim, value in (("supported", key.supported), ("correct", key.correct)):
                rows.append({"unit_id": unit.unit_id, "unit_kind": "claim", "case_id": case.case_id,
                             "response_id": rid, "dimension": dim, "value": int(value), "variant": response.variant})
        for unit, fact in zip([u for u in units if u.unit_kind == "fact"], case.reference_facts):
            if fact.fact_id in facts:
                rows.append({"unit_id": unit.unit_id, "unit_kind": "fact", "case_id": case.case_id,
                             "response_id": rid, "dimension": "covered", "value": int(facts[fact.fact_id]),
                             "variant": response.variant})
    return HumanLabelling("answer key", _human_frame(rows, ("variant",)), "key",
                          "authored answer key of the golden set (claims and facts)")


# --- run folders ---------------------------------------------------------------------------------

_RUN_COLUMNS = ("annotator", "unit_kind", "unit_id", "case_id", "response_id", "dimension", "value", "score", "key")


def _read_units_csv(run_dir: str | Path) -> list[dict]:
    path = Path(run_dir) / "units.csv"
    if not path.is_file():
        raise CalibrationInputError([(0, f"no units.csv in {run_dir}: is it a harness run folder? "
                                         "(playground harness run --out DIR)")], str(path))
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in _RUN_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise CalibrationInputError([(0, f"missing column(s) {', '.join(missing)}")], str(path))
        return list(reader)


def _run_thresholds(run_dir: Path) -> dict[str, float]:
    """Default thresholds of a run: its config.yaml's scoring section (fallback: the scorer defaults)."""
    from .harness import score as S

    out = {"supported": S.DEFAULT_SUPPORT_FLOOR, "correct": S.DEFAULT_SUPPORT_FLOOR,
           "relevant": S.DEFAULT_RELEVANCE_THRESHOLD, "covered": BINARY_THRESHOLD}
    cfg = run_dir / "config.yaml"
    if cfg.is_file():
        import yaml

        scoring = (yaml.safe_load(cfg.read_text(encoding="utf-8")) or {}).get("scoring", {}) or {}
        for dim, key in (("supported", "support_floor"), ("correct", "correctness_floor"),
                         ("relevant", "relevance_threshold")):
            if isinstance(scoring.get(key), (int, float)):
                out[dim] = float(scoring[key])
    return out


def auto_from_run(run_dir: str | Path) -> AutoLabelling:
    """The harness's automatic labels and scores from a run folder's ``units.csv``.

    Default thresholds come from the run's ``config.yaml`` (``scoring.support_floor``,
    ``correctness_floor``, ``relevance_threshold``); a fact's score is its 0/1
    coverage (threshold 0.5).
    """
    run_dir = Path(run_dir)
    rows = _read_units_csv(run_dir)
    name = rows[0]["annotator"] if rows else "harness"
    frame = _auto_frame({"unit_id": r["unit_id"], "unit_kind": r["unit_kind"], "case_id": r["case_id"],
                         "response_id": r["response_id"], "dimension": r["dimension"],
                         "score": float(r["score"]), "label": int(r["value"])} for r in rows)
    grids = {d: COARSE_GRID for d in ("supported", "correct", "relevant")}
    return AutoLabelling(name, frame, _run_thresholds(run_dir), str(run_dir), grids)


def key_from_run(run_dir: str | Path) -> HumanLabelling:
    """The answer key as recorded in a run's ``units.csv`` (``key`` column): claims' and facts' authored
    key, and for passages the gold "from an expected source" (a proxy for relevance, not a judgement)."""
    rows = [r for r in _read_units_csv(run_dir) if r["key"] not in ("", None)]
    frame = _human_frame({"unit_id": r["unit_id"], "unit_kind": r["unit_kind"], "case_id": r["case_id"],
                          "response_id": r["response_id"], "dimension": r["dimension"], "value": int(r["key"])}
                         for r in rows)
    return HumanLabelling("answer key", frame, "key",
                          "authored key (claims, facts); passages: from an expected source")


def judge_from_run(run_dir: str | Path) -> AutoLabelling | None:
    """The Ollama judge's per-claim ``supported`` verdicts from a run's ``cases.jsonl`` (None if it never ran).

    The judge gives a yes/no per claim, so the score is the 0/1 label.
    """
    path = Path(run_dir) / "cases.jsonl"
    if not path.is_file():
        return None
    rows, model = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        for r in case.get("responses", []):
            j = r.get("judge")
            if not j:
                continue
            model = j.get("judge_model", model)
            for c in j.get("claims", []):
                rows.append({"unit_id": c["claim_id"], "unit_kind": "claim", "case_id": case["case_id"],
                             "response_id": r["response_id"], "dimension": "supported",
                             "score": float(c["supported"]), "label": int(c["supported"])})
    if not rows:
        return None
    return AutoLabelling(f"judge:{model}", _auto_frame(rows), {"supported": BINARY_THRESHOLD}, str(path))


def auto_from_frame(frame: pd.DataFrame, name: str, thresholds: Mapping[str, float] | None = None,
                    grids: Mapping[str, Sequence[float]] | None = None, source: str = "") -> AutoLabelling:
    """An automatic labelling from a frame with at least ``unit_id``, ``dimension``, ``score``, ``label``."""
    f = frame.copy()
    for c in ("unit_kind", "case_id", "response_id"):
        if c not in f.columns:
            f[c] = ""
    return AutoLabelling(name, _auto_frame(f), dict(thresholds or {}),
                         source, {k: tuple(v) for k, v in (grids or {}).items()})


def _implied_threshold(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """The threshold the labels imply, if ``label == (score >= t)`` for some t: the lowest "yes" score."""
    yes = [s for s, l in zip(scores, labels) if l == 1]
    no = [s for s, l in zip(scores, labels) if l == 0]
    if yes and (not no or max(no) < min(yes)):
        return float(min(yes))
    return None


def auto_from_csv(path: str | Path, *, dimension: str | None = None, name: str | None = None,
                  catalog: Mapping[str, Any] | None = None, threshold: float | None = None) -> AutoLabelling:
    """An external tool's per-unit scores: CSV with ``unit_id`` and ``score`` and/or ``label``.

    Optional columns: ``dimension`` (else ``dimension=`` applies to every row),
    ``unit_kind``, ``case_id``, ``response_id``.  ``score``: a finite number;
    ``label``: 1/0 (also true/false, yes/no).  A row may leave one of them
    empty: a missing label is ``score >= threshold``, a missing score is the
    label.  ``threshold`` (the tool's own cut-off) defaults to the one the
    labels imply when they are exactly ``score >= t``, else 0.5.  With a
    ``catalog`` (``unit_id -> Unit``) unknown unit ids and dimensions a unit
    does not take are errors, and unit kind, case and response are filled in.
    Every bad row is reported (data rows numbered from 1, header = row 0); a
    file with any problem is rejected whole.
    """
    source = str(path)
    problems: list[tuple[int, str]] = []
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationInputError([(0, f"cannot read the file: {exc}")], source) from None
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    reader.fieldnames = header
    if "unit_id" not in header:
        problems.append((0, "missing column 'unit_id' (expected unit_id, score, label[, dimension])"))
    if "score" not in header and "label" not in header:
        problems.append((0, "needs a 'score' or a 'label' column (or both)"))
    if "dimension" not in header and dimension is None:
        problems.append((0, "no 'dimension' column: say which dimension the scores are for"))
    if dimension is not None and dimension not in DIMENSIONS:
        problems.append((0, f"unknown dimension {dimension!r} (known: {', '.join(DIMENSIONS)})"))
    if problems:
        raise CalibrationInputError(problems, source)
    rows, seen = [], {}
    for n, rec in enumerate(reader, start=1):
        if None in rec:
            problems.append((n, f"more fields than the header has columns ({len(header)})"))
            continue
        rec = {k: (v or "").strip() for k, v in rec.items()}
        why = []
        uid = rec.get("unit_id", "")
        dim = rec.get("dimension") or dimension or ""
        if not uid:
            why.append("empty unit_id")
        if dim not in DIMENSIONS:
            why.append(f"unknown dimension {dim!r}")
        score = label = None
        if rec.get("score"):
            try:
                score = float(rec["score"])
                if not math.isfinite(score):
                    why.append(f"score must be finite, got {rec['score']!r}")
            except ValueError:
                why.append(f"score must be a number, got {rec['score']!r}")
        if rec.get("label"):
            label = {"1": 1, "0": 0, "true": 1, "false": 0, "yes": 1, "no": 0}.get(rec["label"].lower())
            if label is None:
                why.append(f"label must be 1 or 0, got {rec['label']!r}")
        elif not rec.get("score"):
            why.append("neither a score nor a label")
        unit = None
        if catalog is not None and uid:
            unit = catalog.get(uid)
            if unit is None:
                why.append(f"unknown unit {uid!r}")
            elif dim in DIMENSIONS and dim not in unit.dimensions:
                why.append(f"unit {uid} ({unit.unit_kind}) does not take dimension {dim!r}")
        if uid and dim:
            if (uid, dim) in seen:
                why.append(f"duplicate of row {seen[(uid, dim)]} (same unit and dimension)")
            else:
                seen[(uid, dim)] = n
        if why:
            problems.append((n, "; ".join(why)))
            continue
        rows.append({"unit_id": uid, "dimension": dim, "score": score, "label": label,
                     "unit_kind": unit.unit_kind if unit is not None else rec.get("unit_kind", ""),
                     "case_id": unit.case_id if unit is not None else rec.get("case_id", ""),
                     "response_id": unit.response_id if unit is not None else rec.get("response_id", "")})
    if not rows and not problems:
        problems.append((0, "no data rows"))
    if problems:
        raise CalibrationInputError(problems, source)
    thresholds: dict[str, float] = {}
    for dim in sorted({r["dimension"] for r in rows}):
        mine = [r for r in rows if r["dimension"] == dim]
        both = [r for r in mine if r["score"] is not None and r["label"] is not None]
        t = threshold if threshold is not None else _implied_threshold([r["score"] for r in both],
                                                                       [r["label"] for r in both])
        thresholds[dim] = BINARY_THRESHOLD if t is None else float(t)
        for r in mine:
            if r["label"] is None:
                r["label"] = int(r["score"] >= thresholds[dim])
            if r["score"] is None:
                r["score"] = float(r["label"])
    return AutoLabelling(name or f"external:{Path(path).stem}", _auto_frame(rows), thresholds, source)


# --- RAGTruth ------------------------------------------------------------------------------------------

_WORD_RE = re.compile(r"[a-z0-9]+")


def plain_coverage(claim: str, context: Sequence[str] | str) -> float:
    """Baseline support score: share of the claim's distinct lower-cased words (letters/digits, minus the
    scorer's stopword list) that occur as words in the context; 1.0 when the claim has none.

    No claim cleaning, no stemming, no rule for numbers or names: what the
    project's :func:`playground.harness.score.support` is measured against.
    """
    from .harness.tokens import STOPWORDS

    words = [w for w in dict.fromkeys(_WORD_RE.findall(claim.lower())) if w not in STOPWORDS]
    if not words:
        return 1.0
    texts = [context] if isinstance(context, str) else list(context)
    ctx = set(_WORD_RE.findall("\n".join(texts).lower()))
    return sum(1 for w in words if w in ctx) / len(words)


def default_ragtruth_path() -> Path:
    """``<repo>/../shared/data/ragtruth/claims.jsonl`` (the shared RAGTruth sample)."""
    from . import REPO_ROOT

    return REPO_ROOT.parent / "shared" / "data" / "ragtruth" / "claims.jsonl"


def _records(sample_or_path: Any) -> list:
    from .ragtruth import RagTruthSample, load_ragtruth

    if isinstance(sample_or_path, (str, Path)):
        return list(load_ragtruth(sample_or_path).records)
    if isinstance(sample_or_path, RagTruthSample):
        return list(sample_or_path.records)
    return list(sample_or_path)


def ragtruth_human(sample_or_path: Any) -> HumanLabelling:
    """RAGTruth's human labels: ``supported = not hallucinated`` per claim unit (ids as the importer's).

    Extra columns: ``group`` (the source id: claims of one source share the
    question or article, so cross-validation must keep them together),
    ``task_type``.
    """
    from .importers.ragtruth import HUMAN_ANNOTATOR, claim_unit

    rows = []
    for r in _records(sample_or_path):
        u = claim_unit(r)
        rows.append({"unit_id": u.unit_id, "unit_kind": "claim", "case_id": u.case_id, "response_id": u.response_id,
                     "dimension": "supported", "value": int(r.supported), "group": r.source_id,
                     "task_type": r.task_type})
    return HumanLabelling(HUMAN_ANNOTATOR, _human_frame(rows, ("group", "task_type")), "ragtruth",
                          "RAGTruth human span annotations mapped to claims (supported = not hallucinated)")


def ragtruth_auto(sample_or_path: Any, scorer: str | Callable[[str, Sequence[str]], float] = "support",
                  floor: float | None = None, name: str | None = None) -> AutoLabelling:
    """Score every RAGTruth claim against its non-empty evidence.

    ``scorer``: ``"support"`` (:func:`playground.harness.score.support`),
    ``"plain"`` (:func:`plain_coverage`) or a callable ``(claim, context) ->
    score``.  ``floor`` defaults to ``DEFAULT_SUPPORT_FLOOR``; candidate
    floors are ``SUPPORT_FLOOR_GRID``.
    """
    from .harness import score as S
    from .importers.ragtruth import claim_unit

    fn = {"support": S.support, "plain": plain_coverage}.get(scorer, scorer) if isinstance(scorer, str) else scorer
    if isinstance(fn, str):
        raise ValueError(f"unknown scorer {scorer!r} (known: support, plain)")
    label = name or {"support": "support scorer", "plain": "plain coverage"}.get(scorer if isinstance(scorer, str) else "",
                                                                                getattr(fn, "__name__", "scorer"))
    floor = S.DEFAULT_SUPPORT_FLOOR if floor is None else float(floor)
    rows = []
    for r in _records(sample_or_path):
        u = claim_unit(r)
        s = float(fn(r.claim, r.context))
        rows.append({"unit_id": u.unit_id, "unit_kind": "claim", "case_id": u.case_id, "response_id": u.response_id,
                     "dimension": "supported", "score": round(s, 6), "label": int(round(s, 6) >= floor)})
    return AutoLabelling(label, _auto_frame(rows), {"supported": floor}, "ragtruth",
                         {"supported": tuple(S.SUPPORT_FLOOR_GRID)})


# --------------------------------------------------------------------------- pairing, comparing


def case_link(case_id: str, base: str = "") -> str:
    """Link to a case in the playground: ``{base}?case=<case_id>`` (URL-quoted)."""
    return f"{base}?case={quote(str(case_id), safe='')}"


def paired(human: HumanLabelling, auto: AutoLabelling, dimension: str) -> pd.DataFrame:
    """The units of ``dimension`` both labellings have, sorted by unit id.

    Columns: ``unit_id, unit_kind, case_id, response_id, group, human, label, score``
    (``group``: the human labelling's ``group`` column if present, else the case id).
    """
    h = human.frame[human.frame["dimension"] == dimension]
    a = auto.frame[auto.frame["dimension"] == dimension]
    hcols = ["unit_id", "unit_kind", "case_id", "response_id", "value"] + (["group"] if "group" in h.columns else [])
    m = h[hcols].merge(a[["unit_id", "case_id", "response_id", "score", "label"]], on="unit_id", how="inner",
                       suffixes=("", "_auto"))
    for c in ("case_id", "response_id"):
        m[c] = [x or y for x, y in zip(m[c], m[c + "_auto"])]
    if "group" not in m.columns:
        m["group"] = m["case_id"]
    m = m.rename(columns={"value": "human"})
    cols = ["unit_id", "unit_kind", "case_id", "response_id", "group", "human", "label", "score"]
    return m[cols].sort_values("unit_id", kind="mergesort").reset_index(drop=True)


@dataclass(frozen=True)
class Rate:
    """A proportion with its Wilson interval (``rate``/``low``/``high`` None when ``n == 0``)."""

    successes: int
    n: int
    rate: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, values: Sequence[int], confidence: float = 0.95) -> "Rate":
        k, n = int(sum(values)), len(values)
        ci = wilson_interval(k, n, confidence)
        return cls(k, n, k / n if n else None, ci[0] if ci else None, ci[1] if ci else None)

    def __str__(self) -> str:
        if self.rate is None:
            return "no data"
        return f"{self.rate:.1%} [{self.low:.1%}, {self.high:.1%}] ({self.successes}/{self.n})"


@dataclass(frozen=True, eq=False)
class Comparison:
    """Human versus automatic labels of one dimension on the units both labelled.

    Confusion rows are the human label, columns the automatic one:
    ``((h0a0, h0a1), (h1a0, h1a1))``.  ``base_rate`` is the accuracy of always
    predicting the human majority class; ``f1_no`` the F1 of the "no" class
    (automatic "no" against human "no").  ``disagreements``: one row per
    disagreeing unit (unit_id, unit_kind, case_id, response_id, human, auto,
    score, link).
    """

    dimension: str
    human_name: str
    auto_name: str
    n: int
    human_only: int
    auto_only: int
    human_rate: Rate
    auto_rate: Rate
    agreement: float | None
    kappa: KappaResult
    base_rate: float | None
    mcc: float | None
    pabak: float | None
    f1_no: float | None
    balanced_accuracy: float | None
    confusion: tuple[tuple[int, int], tuple[int, int]]
    threshold: float | None
    disagreements: pd.DataFrame

    def figures(self) -> dict[str, Any]:
        """The figures as one flat, rounded row."""
        k = self.kappa
        return {
            "dimension": self.dimension, "human": self.human_name, "automatic": self.auto_name, "n": self.n,
            "human_rate": _r(self.human_rate.rate), "human_low": _r(self.human_rate.low),
            "human_high": _r(self.human_rate.high), "auto_rate": _r(self.auto_rate.rate),
            "auto_low": _r(self.auto_rate.low), "auto_high": _r(self.auto_rate.high),
            "agreement": _r(self.agreement), "kappa": _r(k.kappa), "kappa_low": _r(k.low), "kappa_high": _r(k.high),
            "base_rate": _r(self.base_rate), "mcc": _r(self.mcc), "pabak": _r(self.pabak), "f1_no": _r(self.f1_no),
            "balanced_accuracy": _r(self.balanced_accuracy), "threshold": _r(self.threshold),
            "h0a0": self.confusion[0][0], "h0a1": self.confusion[0][1],
            "h1a0": self.confusion[1][0], "h1a1": self.confusion[1][1],
            "human_only": self.human_only, "auto_only": self.auto_only,
            "kappa_note": k.reason or k.note,
        }

    def confusion_frame(self) -> pd.DataFrame:
        (a, b), (c, d) = self.confusion
        return pd.DataFrame([[a, b], [c, d]], index=["human no", "human yes"], columns=["auto no", "auto yes"])


def compare(human: HumanLabelling, auto: AutoLabelling, dimension: str, *, link_base: str | None = "",
            confidence: float = 0.95) -> Comparison:
    """Human versus automatic labels of ``dimension`` (see :class:`Comparison`).

    Only units both labelled are compared; ``human_only``/``auto_only`` count
    the others.  Kappa, its interval, PABAK, MCC and the confusion matrix come
    from :func:`playground.metrics.agreement` (human = reference).
    ``link_base``: prefix of the playground links (None: no links).
    """
    p = paired(human, auto, dimension)
    h_ids = set(human.frame.loc[human.frame["dimension"] == dimension, "unit_id"])
    a_ids = set(auto.frame.loc[auto.frame["dimension"] == dimension, "unit_id"])
    hv = p["human"].astype(int).tolist()
    av = p["label"].astype(int).tolist()
    ag = agreement(dict(zip(p["unit_id"], hv)), dict(zip(p["unit_id"], av)), confidence)
    dis = p[p["human"] != p["label"]].copy()
    dis = dis.rename(columns={"label": "auto"})[["unit_id", "unit_kind", "case_id", "response_id", "human", "auto",
                                                 "score"]]
    dis["link"] = ["" if link_base is None else case_link(c, link_base) for c in dis["case_id"]]
    dis = dis.reset_index(drop=True)
    n = len(p)
    return Comparison(
        dimension=dimension, human_name=human.name, auto_name=auto.name, n=n,
        human_only=len(h_ids - a_ids), auto_only=len(a_ids - h_ids),
        human_rate=Rate.of(hv, confidence), auto_rate=Rate.of(av, confidence),
        agreement=ag.percent, kappa=ag.kappa, base_rate=ag.kappa.base_rate, mcc=ag.mcc, pabak=ag.pabak,
        f1_no=f1_score(hv, av, positive=0) if n else None,
        balanced_accuracy=balanced_accuracy(hv, av) if n else None,
        confusion=ag.confusion, threshold=auto.threshold(dimension), disagreements=dis,
    )


# --------------------------------------------------------------------------- thresholds


def small_set_warning(n: int, minority: int) -> str:
    """A warning when the labelled set is too small to trust an in-sample best threshold ('' otherwise).

    Small means fewer than :data:`SMALL_N` units or fewer than
    :data:`SMALL_MINORITY` units of the minority human class.
    """
    why = []
    if n < SMALL_N:
        why.append(f"{n} labelled units (< {SMALL_N})")
    if minority < SMALL_MINORITY:
        why.append(f"{minority} of the minority class (< {SMALL_MINORITY})")
    if not why:
        return ""
    return ("small labelled set: " + " and ".join(why) + ". The in-sample best threshold is optimistic and may "
            "not hold on new data; read the cross-validated figure and label more units.")


@dataclass(frozen=True, eq=False)
class ThresholdCalibration:
    """A threshold sweep of one dimension's score against the human labels.

    ``rows``: one :class:`playground.sweep.SweepRow` per candidate threshold
    (F1, precision and recall of the "no" class unless ``f1_class`` is True);
    ``default``/``best``: the rows of the current default threshold and of the
    highest kappa (ties: closest to the default, then lower);
    ``default_kappa_ci``/``best_kappa_ci``: Cohen's kappa intervals of those
    two rows; ``cv``: grouped cross-validation (None with fewer than two
    groups or one human class, ``cv_reason`` says why); ``warning``: see
    :func:`small_set_warning`; ``binary``: the score takes two values at most,
    so there is nothing to sweep.
    """

    dimension: str
    n: int
    minority: int
    thresholds: tuple[float, ...]
    rows: tuple[SweepRow, ...]
    default_threshold: float | None
    default: SweepRow | None
    best: SweepRow | None
    default_kappa_ci: tuple[float | None, float | None]
    best_kappa_ci: tuple[float | None, float | None]
    cv: CVResult | None
    cv_reason: str
    warning: str
    group_by: str
    binary: bool = False
    f1_class: bool = False

    def frame(self) -> pd.DataFrame:
        """The sweep as a rounded table (one row per threshold)."""
        cols = ["threshold", "kappa", "f1", "precision", "recall", "balanced_accuracy", "agreement",
                "predicted_positive_rate", "tp", "fp", "fn", "tn"]
        return _round_frame(pd.DataFrame([{c: getattr(r, c) for c in cols} for r in self.rows], columns=cols))

    def summary(self) -> dict[str, Any]:
        """The headline figures as one flat, rounded row."""
        d, b, cv = self.default, self.best, self.cv
        return {
            "dimension": self.dimension, "n": self.n, "minority": self.minority,
            "default_threshold": _r(self.default_threshold),
            "default_kappa": _r(d.kappa) if d else None,
            "default_kappa_low": _r(self.default_kappa_ci[0]), "default_kappa_high": _r(self.default_kappa_ci[1]),
            "default_f1": _r(d.f1) if d else None,
            "best_threshold": _r(b.threshold) if b else None, "best_kappa": _r(b.kappa) if b else None,
            "best_kappa_low": _r(self.best_kappa_ci[0]), "best_kappa_high": _r(self.best_kappa_ci[1]),
            "best_f1": _r(b.f1) if b else None,
            "cv_kappa": _r(cv.kappa) if cv else None, "cv_kappa_low": _r(cv.kappa_low) if cv else None,
            "cv_kappa_high": _r(cv.kappa_high) if cv else None,
            "cv_balanced_accuracy": _r(cv.balanced_accuracy) if cv else None,
            "cv_f1": _r(cv.f1) if cv else None,
            "cv_fold_thresholds": " ".join(f"{t:g}" for t in cv.fold_thresholds) if cv else "",
            "cv_folds": cv.folds if cv else None, "cv_groups": cv.n_groups if cv else None,
            "group_by": self.group_by, "warning": self.warning, "note": self.cv_reason,
        }


def _grid_for(auto: AutoLabelling, dimension: str, scores: np.ndarray, default: float | None) -> tuple[float, ...]:
    if dimension in auto.grids:
        grid = list(auto.grids[dimension])
    elif scores.size == 0 or (scores.min() >= 0 and scores.max() <= 1):
        grid = list(DEFAULT_GRID)
    else:  # scores outside [0, 1]: their own distinct values (at most 101 quantiles)
        uniq = np.unique(scores)
        if uniq.size > 101:
            uniq = np.unique(np.quantile(uniq, np.linspace(0, 1, 101), method="lower"))
        grid = [float(x) for x in uniq]
    if default is not None and all(abs(t - default) > 1e-12 for t in grid):
        grid.append(float(default))
    return tuple(sorted(round(float(t), 6) for t in grid))


def _kappa_ci(human: Sequence[int], scores: np.ndarray, t: float | None, confidence: float):
    if t is None or len(human) == 0:
        return (None, None)
    k = cohens_kappa(list(human), (scores >= t).astype(int).tolist(), confidence)
    return (k.low, k.high)


def threshold_sweep(human: HumanLabelling, auto: AutoLabelling, dimension: str, *,
                    thresholds: Sequence[float] | None = None, default: float | None = None, folds: int = 5,
                    seed: int = 0, f1_class: bool = False, n_boot: int = 1000,
                    confidence: float = 0.95) -> ThresholdCalibration:
    """Sweep the threshold of ``dimension``'s score against the human labels (see :class:`ThresholdCalibration`).

    Candidates: ``thresholds``, else the labelling's grid for the dimension,
    else 0.00..1.00 step 0.01 (scores outside [0, 1]: their distinct values);
    the default threshold is always added.  The best threshold is the highest
    kappa (:func:`playground.sweep.best_row`).  The cross-validated figure is
    :func:`playground.sweep.grouped_cv` grouped by the human labelling's
    ``group`` column (RAGTruth: source id), else by case id: the threshold is
    chosen on the other folds and applied to each held-out fold.
    """
    p = paired(human, auto, dimension)
    scores = p["score"].to_numpy(dtype=float)
    hv = p["human"].astype(int).to_numpy()
    default = auto.threshold(dimension) if default is None else float(default)
    grid = tuple(thresholds) if thresholds is not None else _grid_for(auto, dimension, scores, default)
    n = len(p)
    minority = int(min(hv.sum(), n - hv.sum())) if n else 0
    group_by = ("source_id" if human.kind == "ragtruth" else "group") if "group" in human.frame.columns else "case_id"
    binary = dimension not in auto.grids and thresholds is None and set(np.unique(scores)) <= {0.0, 1.0}
    if n == 0:
        return ThresholdCalibration(dimension, 0, 0, grid, (), default, None, None, (None, None), (None, None),
                                    None, "no units labelled by both", small_set_warning(0, 0), group_by, binary,
                                    f1_class)
    rows = tuple(sweep(scores, hv.astype(bool), grid, f1_class=f1_class))
    ref = default if default is not None else BINARY_THRESHOLD
    best = best_row(rows, ref)
    drow = next((r for r in rows if default is not None and abs(r.threshold - default) < 1e-9), None)
    cv, reason = None, ""
    n_groups = p["group"].nunique()
    if n_groups < 2:
        reason = "cross-validation needs units from at least 2 groups"
    elif minority == 0:
        reason = "the human labels use one class only: kappa is not defined"
    else:
        cv = grouped_cv(scores, hv.astype(bool), p["group"].astype(str).tolist(), folds=folds, thresholds=grid,
                        default=ref, seed=seed, f1_class=f1_class, n_boot=n_boot, confidence=confidence)
    if binary:
        reason = (reason + "; " if reason else "") + "the score is binary (0/1): every threshold in (0, 1] is the same"
    return ThresholdCalibration(
        dimension, n, minority, grid, rows, default, drow, best,
        _kappa_ci(hv.tolist(), scores, default, confidence), _kappa_ci(hv.tolist(), scores, best.threshold, confidence),
        cv, reason, small_set_warning(n, minority), group_by, bool(binary), f1_class,
    )


# --------------------------------------------------------------------------- reliability


def reliability(scores: Sequence[float], human: Sequence[int], bins: int = 10, *,
                confidence: float = 0.95, low: float | None = None, high: float | None = None) -> pd.DataFrame:
    """Automatic score in equal-width bins against the human "yes" rate per bin, with Wilson intervals.

    Bins span [0, 1] when every score is in it (else [min, max], or ``low``/
    ``high``); bin i is ``[low + i w, low + (i+1) w)``, the last one closed.
    Columns: ``bin, bin_low, bin_high, n, mean_score, yes, yes_rate, low, high``;
    empty bins are left out.  A well-calibrated score has ``yes_rate`` close
    to ``mean_score`` in every bin.
    """
    if bins < 1:
        raise ValueError("bins must be >= 1")
    s = np.asarray(list(scores), dtype=float)
    h = np.asarray([int(v) for v in human], dtype=int)
    if s.shape != h.shape:
        raise ValueError("scores and human labels must have the same length")
    cols = ["bin", "bin_low", "bin_high", "n", "mean_score", "yes", "yes_rate", "low", "high"]
    if s.size == 0:
        return pd.DataFrame(columns=cols)
    lo = low if low is not None else (0.0 if s.min() >= 0 and s.max() <= 1 else float(s.min()))
    hi = high if high is not None else (1.0 if s.min() >= 0 and s.max() <= 1 else float(s.max()))
    width = (hi - lo) / bins if hi > lo else 1.0
    idx = np.floor(np.round((s - lo) / width, 9)).astype(int).clip(0, bins - 1)
    rows = []
    for i in range(bins):
        m = idx == i
        n = int(m.sum())
        if not n:
            continue
        yes = int(h[m].sum())
        ci = wilson_interval(yes, n, confidence)
        rows.append({"bin": i, "bin_low": _r(lo + i * width), "bin_high": _r(lo + (i + 1) * width), "n": n,
                     "mean_score": _r(float(s[m].mean())), "yes": yes, "yes_rate": _r(yes / n),
                     "low": _r(ci[0]), "high": _r(ci[1])})
    return pd.DataFrame(rows, columns=cols)


def reliability_for(human: HumanLabelling, auto: AutoLabelling, dimension: str, bins: int = 10) -> pd.DataFrame:
    """:func:`reliability` on the units of ``dimension`` both labellings have."""
    p = paired(human, auto, dimension)
    return reliability(p["score"].tolist(), p["human"].tolist(), bins)


# --------------------------------------------------------------------------- PPI


def ppi_by_dimension(human: HumanLabelling, auto: AutoLabelling, dimensions: Sequence[str] | None = None, *,
                     width: float = 0.10, confidence: float = 0.95) -> pd.DataFrame:
    """Per dimension: the human-only interval, the automatic-only rate and the PPI interval.

    PPI (:func:`playground.stats.ppi_mean`) uses the automatic labels of every
    unit plus the human labels of the units people labelled: ``n_labelled``
    units have both, ``n_unlabelled`` only the automatic label.  Human labels
    of units the scorer never saw are not used (``human_unscored`` counts
    them).  ``labels_needed``: the total human labels for a PPI interval
    ``width`` wide (:func:`playground.stats.ppi_labels_needed`), ``more_labels``
    how many beyond the current ones; None when more human labels alone
    cannot reach that width.
    """
    dims = list(dimensions) if dimensions is not None else [d for d in auto.dimensions() if d in human.dimensions()]
    rows = []
    for dim in dims:
        h = human.frame.loc[human.frame["dimension"] == dim, ["unit_id", "value"]]
        a = auto.frame.loc[auto.frame["dimension"] == dim, ["unit_id", "label"]]
        m = a.merge(h, on="unit_id", how="left")
        has = m["value"].notna().to_numpy()
        y = m["value"].to_numpy()[has].astype(int)
        f_l = m["label"].to_numpy()[has].astype(float)
        f_u = m["label"].to_numpy()[~has].astype(float)
        res = ppi_mean(f_u, f_l, y, confidence)
        needed = ppi_labels_needed(f_u, f_l, y, width, confidence) if len(y) >= 2 and len(f_u) >= 2 else None
        rows.append({
            "dimension": dim, "n_labelled": res.n_labelled, "n_unlabelled": res.n_unlabelled,
            "human_unscored": int(len(h) - has.sum()),
            "human_rate": _r(res.human_mean), "human_low": _r(res.human_only[0]) if res.human_only else None,
            "human_high": _r(res.human_only[1]) if res.human_only else None,
            "human_width": _r(res.human_only_width), "auto_rate": _r(res.auto_only),
            "ppi_rate": _r(res.estimate), "ppi_low": _r(res.low), "ppi_high": _r(res.high), "ppi_width": _r(res.width),
            "rectifier": _r(res.rectifier), "target_width": _r(width), "labels_needed": needed,
            "more_labels": None if needed is None else max(0, needed - res.n_labelled),
            "note": "; ".join(x for x in (res.reason, res.note, _unreachable(needed, res, width)) if x),
        })
    cols = ["dimension", "n_labelled", "n_unlabelled", "human_unscored", "human_rate", "human_low", "human_high",
            "human_width", "auto_rate", "ppi_rate", "ppi_low", "ppi_high", "ppi_width", "rectifier", "target_width",
            "labels_needed", "more_labels", "note"]
    return pd.DataFrame(rows, columns=cols)


def _unreachable(needed: int | None, res: Any, width: float) -> str:
    if needed is None and res.n_labelled >= 2 and res.n_unlabelled >= 2:
        return (f"a {width:g}-wide interval is out of reach with more human labels alone: the automatic labels' "
                "own term is already wider (more unlabelled units would help)")
    return ""


# --------------------------------------------------------------------------- annotators


def _by_annotator(labels: Any, dimension: str | None) -> dict[str, dict[tuple[str, str], int]]:
    """``{annotator: {(unit_id, dimension): value}}`` from label objects or such a mapping
    (``consensus`` left out)."""
    out: dict[str, dict[tuple[str, str], int]] = {}
    if isinstance(labels, Mapping):
        for ann, items in labels.items():
            if ann == CONSENSUS:
                continue
            for key, v in items.items():
                uid, dim = key if isinstance(key, tuple) else (key, dimension or "")
                if dimension is None or dim == dimension:
                    out.setdefault(ann, {})[(uid, dim)] = int(v)
        return out
    for l in labels:
        if l.annotator == CONSENSUS or (dimension is not None and l.dimension != dimension):
            continue
        out.setdefault(l.annotator, {})[(l.unit_id, l.dimension)] = int(l.value)
    return out


@dataclass(frozen=True, eq=False)
class AnnotatorAgreement:
    """Annotators versus each other on shared units.

    ``pairwise``: one row per pair (n shared, agreement, kappa with interval,
    PABAK); ``fleiss``/``krippendorff``: over units with at least two labels;
    ``vs_majority``: each annotator against the majority of the *other*
    annotators on units where that majority exists (no tie), so nobody agrees
    with themselves.
    """

    dimension: str | None
    annotators: list[str]
    n_items: int
    n_shared: int
    pairwise: pd.DataFrame
    fleiss: AgreementStat
    krippendorff: AgreementStat
    vs_majority: pd.DataFrame

    def summary(self) -> dict[str, Any]:
        return {"dimension": self.dimension or "all", "annotators": len(self.annotators), "items": self.n_items,
                "shared_items": self.n_shared, "fleiss_kappa": _r(self.fleiss.value),
                "krippendorff_alpha": _r(self.krippendorff.value),
                "note": "; ".join(x for x in (self.fleiss.reason, self.krippendorff.reason, self.fleiss.note) if x)}


def annotator_agreement(labels: Any, dimension: str | None = None, confidence: float = 0.95) -> AnnotatorAgreement:
    """Pairwise Cohen's kappa, Fleiss' kappa, Krippendorff's alpha and agreement with the majority.

    ``labels``: label objects with ``annotator, unit_id, dimension, value``
    (e.g. ``store.labels()``) or ``{annotator: {(unit_id, dimension): 0/1}}``.
    An item is a (unit, dimension) pair; ``dimension`` restricts to one.
    Labels under ``consensus`` are left out (they are derived, not a person's).
    """
    by = _by_annotator(labels, dimension)
    mr = multi_rater(by, confidence)
    pair_rows = []
    for pa in mr.pairwise:
        ag = pa.agreement
        k = ag.kappa
        pair_rows.append({"annotator_a": pa.annotator_a, "annotator_b": pa.annotator_b, "n_shared": ag.n_shared,
                          "agreement": _r(ag.percent), "kappa": _r(k.kappa), "kappa_low": _r(k.low),
                          "kappa_high": _r(k.high), "pabak": _r(ag.pabak), "disagreements": len(ag.disagreements),
                          "note": k.reason or k.note})
    pcols = ["annotator_a", "annotator_b", "n_shared", "agreement", "kappa", "kappa_low", "kappa_high", "pabak",
             "disagreements", "note"]
    maj_rows = []
    for ann in mr.annotators:
        mine, ref = [], []
        for item, v in sorted(by[ann].items()):
            others = [by[o][item] for o in mr.annotators if o != ann and item in by[o]]
            yes = sum(others)
            if not others or 2 * yes == len(others):
                continue
            mine.append(v)
            ref.append(int(2 * yes > len(others)))
        k = cohens_kappa(ref, mine, confidence)
        maj_rows.append({"annotator": ann, "n": len(mine), "agreement": _r(k.agreement), "kappa": _r(k.kappa),
                         "kappa_low": _r(k.low), "kappa_high": _r(k.high), "note": k.reason or k.note})
    mcols = ["annotator", "n", "agreement", "kappa", "kappa_low", "kappa_high", "note"]
    counts: dict[tuple, int] = {}
    for items in by.values():
        for item in items:
            counts[item] = counts.get(item, 0) + 1
    return AnnotatorAgreement(dimension, list(mr.annotators), len(counts), sum(1 for c in counts.values() if c >= 2),
                              pd.DataFrame(pair_rows, columns=pcols), mr.fleiss, mr.krippendorff,
                              pd.DataFrame(maj_rows, columns=mcols))


def adjudication_queue(store: Any, catalog: Mapping[str, Any] | None = None, dimension: str | None = None, *,
                       link_base: str | None = "", include_adjudicated: bool = True) -> pd.DataFrame:
    """Units on which annotators disagree (at least one yes and one no), for a person to settle.

    Columns: ``unit_id, unit_kind, case_id, dimension, yes, no, status`` (``tie``
    or ``majority``), ``majority`` (value or None), ``votes`` ("name=1, ..."),
    ``adjudicated`` (the ``consensus`` label if set, else None), ``text``
    (from the catalog), ``link``.  Ties first, then by unit id and dimension.
    With a ``catalog`` stale labels do not count.
    """
    labels = _current(store, catalog)
    votes: dict[tuple[str, str], list] = {}
    adjudicated: dict[tuple[str, str], int] = {}
    for l in labels:
        if dimension is not None and l.dimension != dimension:
            continue
        if l.annotator == CONSENSUS:
            adjudicated[(l.unit_id, l.dimension)] = int(l.value)
            continue
        votes.setdefault((l.unit_id, l.dimension), [l.unit_kind, l.case_id, []])[2].append((l.annotator, int(l.value)))
    rows = []
    for (uid, dim), (kind, case_id, vs) in votes.items():
        yes = sum(v for _, v in vs)
        no = len(vs) - yes
        if not yes or not no:
            continue
        adj = adjudicated.get((uid, dim))
        if adj is not None and not include_adjudicated:
            continue
        unit = catalog.get(uid) if catalog is not None else None
        rows.append({"unit_id": uid, "unit_kind": kind, "case_id": case_id, "dimension": dim, "yes": yes, "no": no,
                     "status": "tie" if yes == no else "majority",
                     "majority": None if yes == no else int(yes > no),
                     "votes": ", ".join(f"{a}={v}" for a, v in sorted(vs)), "adjudicated": adj,
                     "text": getattr(unit, "text", "") if unit is not None else "",
                     "link": "" if link_base is None else case_link(case_id, link_base)})
    cols = ["unit_id", "unit_kind", "case_id", "dimension", "yes", "no", "status", "majority", "votes", "adjudicated",
            "text", "link"]
    rows.sort(key=lambda r: (r["adjudicated"] is not None, r["status"] != "tie", r["unit_id"], _dim_key(r["dimension"])))
    frame = pd.DataFrame(rows, columns=cols)
    for c in ("majority", "adjudicated"):
        frame[c] = frame[c].astype(object)
    return frame


def adjudicate(store: Any, unit: Any, dimension: str, value: int | None, adjudicator: str):
    """Settle a disagreement: write ``value`` as the ``consensus`` label of ``unit`` on ``dimension``.

    ``adjudicator`` must be a non-empty name other than ``consensus``.  The
    label is stored under the store's reserved name ``consensus`` (which
    never votes), in one transaction; ``value=None`` withdraws an
    adjudication.  Returns the store's event (None when nothing changed).
    The adjudicator's name is recorded in the event's note
    (``adjudicated by NAME``), so the history shows who settled it.
    """
    if not isinstance(adjudicator, str) or not adjudicator.strip():
        raise ValueError("an adjudication needs the adjudicator's name")
    if adjudicator.strip() == CONSENSUS:
        raise ValueError(f"'{CONSENSUS}' is the reserved name of adjudicated labels; adjudicate under your own name")
    return store.set_label(CONSENSUS, unit, dimension, value, note=f"adjudicated by {adjudicator.strip()}")


def accuracy_against_key(labels: Any, key: HumanLabelling, *, by: str | None = None,
                         confidence: float = 0.95) -> pd.DataFrame:
    """For teaching: each annotator's labels against the answer key (the authored variants' intended labels).

    ``labels``: label objects (``annotator, unit_id, dimension, value``), a
    list of :class:`HumanLabelling`, or ``{annotator: {(unit_id, dimension): 0/1}}``.
    One row per annotator and dimension (and per ``by`` value, e.g.
    ``"variant"``, a column of the key): ``n`` compared, ``correct``,
    ``accuracy`` with its Wilson interval, kappa with the key.
    """
    if isinstance(labels, (list, tuple)) and labels and isinstance(labels[0], HumanLabelling):
        by_ann = {hl.name: {(u, d): int(v) for u, d, v in zip(hl.frame["unit_id"], hl.frame["dimension"],
                                                               hl.frame["value"])} for hl in labels}
    else:
        by_ann = _by_annotator(labels, None)
    kf = key.frame
    keyed = {(u, d): int(v) for u, d, v in zip(kf["unit_id"], kf["dimension"], kf["value"])}
    extra = {(u, d): g for u, d, g in zip(kf["unit_id"], kf["dimension"], kf[by])} if by else {}
    groups: dict[tuple, list[tuple[int, int]]] = {}
    for ann in sorted(by_ann):
        for item, v in sorted(by_ann[ann].items()):
            if item not in keyed:
                continue
            g = (ann, item[1]) + ((extra[item],) if by else ())
            groups.setdefault(g, []).append((keyed[item], v))
    rows = []
    for g in sorted(groups, key=lambda g: (g[0], _dim_key(g[1])) + tuple(g[2:])):
        pairs = groups[g]
        ref = [a for a, _ in pairs]
        mine = [b for _, b in pairs]
        correct = sum(a == b for a, b in pairs)
        ci = wilson_interval(correct, len(pairs), confidence)
        k = cohens_kappa(ref, mine, confidence)
        row = {"annotator": g[0], "dimension": g[1]}
        if by:
            row[by] = g[2]
        row.update({"n": len(pairs), "correct": correct, "accuracy": _r(correct / len(pairs)),
                    "low": _r(ci[0]), "high": _r(ci[1]), "kappa": _r(k.kappa), "note": k.reason or k.note})
        rows.append(row)
    cols = ["annotator", "dimension"] + ([by] if by else []) + ["n", "correct", "accuracy", "low", "high", "kappa", "note"]
    return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------- whole reports


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
              n_boot: int = 1000, confidence: float = 0.95) -> CalibrationReport:
    """:func:`compare`, :func:`threshold_sweep`, :func:`reliability` and :func:`ppi_by_dimension` for every
    dimension both labellings have (or ``dimensions``)."""
    dims = tuple(dimensions) if dimensions is not None else tuple(
        d for d in auto.dimensions() if d in set(human.dimensions()))
    comps = {d: compare(human, auto, d, link_base=link_base, confidence=confidence) for d in dims}
    sweeps = {d: threshold_sweep(human, auto, d, folds=folds, seed=seed, n_boot=n_boot, confidence=confidence)
              for d in dims}
    rel = {d: reliability_for(human, auto, d, bins) for d in dims}
    ppi = ppi_by_dimension(human, auto, dims, width=width, confidence=confidence)
    return CalibrationReport(human, auto, dims, comps, sweeps, rel, ppi)


# --------------------------------------------------------------------------- RAGTruth


@dataclass(frozen=True, eq=False)
class ScorerFigures:
    """One scorer on RAGTruth: in-sample at the default floor and at the best floor, and out of sample.

    ``sweep``: the :class:`ThresholdCalibration` over ``SUPPORT_FLOOR_GRID``
    (F1, precision, recall of the *hallucinated* class), whose ``cv`` is the
    cross-validation grouped by source id; ``by_task``: out-of-sample figures
    per task type (the pooled held-out predictions restricted to it).
    """

    name: str
    scores: tuple[float, ...]
    sweep: ThresholdCalibration
    by_task: pd.DataFrame

    @property
    def default_floor(self) -> float:
        return self.sweep.default_threshold

    @property
    def default(self) -> SweepRow:
        return self.sweep.default

    @property
    def best(self) -> SweepRow:
        return self.sweep.best

    @property
    def cv(self) -> CVResult:
        return self.sweep.cv

    def rows(self) -> list[dict[str, Any]]:
        """Three rounded rows: in-sample at the default floor, in-sample at the best floor, out of sample."""
        t = self.sweep
        d, b, cv = t.default, t.best, t.cv
        base = {"scorer": self.name}
        return [
            {**base, "evaluation": "in-sample, default floor", "floor": f"{d.threshold:g}", "kappa": _r(d.kappa),
             "kappa_low": _r(t.default_kappa_ci[0]), "kappa_high": _r(t.default_kappa_ci[1]),
             "balanced_accuracy": _r(d.balanced_accuracy), "f1_hallucinated": _r(d.f1),
             "precision_hallucinated": _r(d.precision), "recall_hallucinated": _r(d.recall)},
            {**base, "evaluation": "in-sample, best floor", "floor": f"{b.threshold:g}", "kappa": _r(b.kappa),
             "kappa_low": _r(t.best_kappa_ci[0]), "kappa_high": _r(t.best_kappa_ci[1]),
             "balanced_accuracy": _r(b.balanced_accuracy), "f1_hallucinated": _r(b.f1),
             "precision_hallucinated": _r(b.precision), "recall_hallucinated": _r(b.recall)},
            {**base, "evaluation": f"out-of-sample, {cv.folds}-fold CV by source",
             "floor": " ".join(f"{x:g}" for x in cv.fold_thresholds), "kappa": _r(cv.kappa),
             "kappa_low": _r(cv.kappa_low), "kappa_high": _r(cv.kappa_high),
             "balanced_accuracy": _r(cv.balanced_accuracy), "f1_hallucinated": _r(cv.f1),
             "precision_hallucinated": _r(cv.precision), "recall_hallucinated": _r(cv.recall)},
        ]


@dataclass(frozen=True, eq=False)
class RagTruthCalibration:
    """The support scorer and a plain-coverage baseline against RAGTruth's human labels."""

    path: str
    n: int
    hallucinated: int
    sources: int
    responses: int
    folds: int
    seed: int
    n_boot: int
    scorers: tuple[ScorerFigures, ...]
    human: HumanLabelling
    autos: tuple[AutoLabelling, ...]

    def table(self) -> pd.DataFrame:
        """One row per scorer and evaluation (see :meth:`ScorerFigures.rows`)."""
        return pd.DataFrame([r for s in self.scorers for r in s.rows()])

    def by_task(self) -> pd.DataFrame:
        return pd.concat([s.by_task for s in self.scorers], ignore_index=True)

    def scorer(self, name: str) -> ScorerFigures:
        return next(s for s in self.scorers if s.name == name)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by file stem (for ``--out``)."""
        out = {"ragtruth": self.table(), "ragtruth_by_task": self.by_task()}
        for s in self.scorers:
            out[f"sweep_{s.name.replace(' ', '_')}"] = s.sweep.frame()
        return out


def _figures(human: HumanLabelling, auto: AutoLabelling, folds: int, seed: int, n_boot: int,
             confidence: float) -> ScorerFigures:
    t = threshold_sweep(human, auto, "supported", folds=folds, seed=seed, n_boot=n_boot, confidence=confidence)
    p = paired(human, auto, "supported")
    hv = p["human"].astype(int).to_numpy()
    task = dict(zip(human.frame["unit_id"], human.frame["task_type"]))
    tasks = np.array([task[u] for u in p["unit_id"]])
    trows = []
    for name in sorted(set(tasks)):
        m = tasks == name
        h, pr = hv[m].tolist(), t.cv.predicted[m].astype(int).tolist()
        k = cohens_kappa(h, pr, confidence)
        trows.append({"scorer": auto.name, "task_type": name, "n": int(m.sum()), "hallucinated": h.count(0),
                      "cv_kappa": _r(k.kappa), "cv_kappa_low": _r(k.low), "cv_kappa_high": _r(k.high),
                      "cv_balanced_accuracy": _r(balanced_accuracy(h, pr)),
                      "cv_f1_hallucinated": _r(f1_score(h, pr, positive=0))})
    return ScorerFigures(auto.name, tuple(float(x) for x in p["score"]), t, pd.DataFrame(trows))


def calibrate_ragtruth(sample_or_path: Any = None, *, folds: int = 5, seed: int = 0, n_boot: int = 2000,
                       floor: float | None = None, confidence: float = 0.95) -> RagTruthCalibration:
    """The deterministic support scorer against RAGTruth's human labels, beside a plain-coverage baseline.

    For each scorer: in-sample kappa (with its interval), balanced accuracy and
    F1 of the hallucinated class at the default floor (``floor``, default
    ``DEFAULT_SUPPORT_FLOOR``) and at the best floor of ``SUPPORT_FLOOR_GRID``;
    then out of sample: ``folds``-fold cross-validation grouped by source id
    (claims of one source share the question or article), the floor chosen on
    the training folds, pooled held-out predictions, kappa with a cluster
    bootstrap interval (``n_boot`` resamples of sources, ``seed``).
    """
    path = default_ragtruth_path() if sample_or_path is None else sample_or_path
    records = _records(path)
    human = ragtruth_human(records)
    autos = (ragtruth_auto(records, "plain", floor), ragtruth_auto(records, "support", floor))
    figs = tuple(_figures(human, a, folds, seed, n_boot, confidence) for a in autos)
    return RagTruthCalibration(
        str(path) if isinstance(path, (str, Path)) else "", len(records), sum(r.label for r in records),
        len({r.source_id for r in records}), len({r.response_id for r in records}), folds, seed, n_boot, figs,
        human, autos,
    )


# --------------------------------------------------------------------------- files


def write_tables(tables: Mapping[str, pd.DataFrame], out_dir: str | Path) -> list[Path]:
    """Write each table as ``out_dir/<stem>.csv`` (rounded, ``\n`` line ends, no index); return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem in sorted(tables):
        path = out / f"{stem}.csv"
        _round_frame(tables[stem]).to_csv(path, index=False, lineterminator="\n")
        paths.append(path)
    return paths
