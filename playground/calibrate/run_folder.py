"""Automatic labellings from a harness run folder (``playground harness run --out DIR``).

* ``units.csv`` (:func:`auto_from_run`): the harness's score and label per
  (unit, dimension).  Default thresholds: the run's ``config.yaml``
  ``scoring.support_floor`` (supported), ``correctness_floor`` (correct),
  ``relevance_threshold`` (relevant), falling back to the scorer defaults; a
  fact's score is its 0/1 coverage, threshold :data:`~.labellings.BINARY_THRESHOLD`.
  Sweep candidates of supported, correct and relevant:
  :data:`~.labellings.COARSE_GRID`.
* ``cases.jsonl`` (:func:`judge_from_run`): the Ollama judge's yes/no per
  claim on ``supported``; score = label (0/1), threshold 0.5.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from ..jsonl import json_lines
from .labellings import BINARY_THRESHOLD, COARSE_GRID, AutoLabelling, CalibrationInputError, _auto_frame

__all__ = ["auto_from_run", "judge_from_run"]

_RUN_COLUMNS = ("annotator", "unit_kind", "unit_id", "case_id", "response_id", "dimension", "value", "score", "key")


def _read_units_csv(run_dir: str | Path) -> list[dict[str, str]]:
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
    from ..harness import score as S

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
    grids = dict.fromkeys(("supported", "correct", "relevant"), COARSE_GRID)
    return AutoLabelling(name, frame, _run_thresholds(run_dir), str(run_dir), grids)


def judge_from_run(run_dir: str | Path) -> AutoLabelling | None:
    """The Ollama judge's per-claim ``supported`` verdicts from a run's ``cases.jsonl`` (None if it never ran).

    The judge gives a yes/no per claim, so the score is the 0/1 label.
    """
    path = Path(run_dir) / "cases.jsonl"
    if not path.is_file():
        return None
    rows, model = [], ""
    problems: list[tuple[int, str]] = []
    cases: list[dict[str, Any]] = []
    for ln, value in json_lines(path.read_text(encoding="utf-8").splitlines(), problems):
        if isinstance(value, dict):
            cases.append(value)
        else:
            problems.append((ln, f"expected a JSON object (one case), got {type(value).__name__}"))
    problems = [(ln, why) for ln, why in problems if why != "empty line"]
    if problems:
        raise CalibrationInputError(problems, str(path))
    for case in cases:
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
