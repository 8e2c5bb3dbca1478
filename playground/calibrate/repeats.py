"""How stable a non-deterministic scorer (an LLM judge) is: its verdicts on the same samples over K runs.

Given K result tables of the same scorer on the same samples (the first run and
K − 1 reruns), per metric column and per sample scored in every run, the
verdicts are ``score >= threshold``.  With ``m`` "pass" verdicts of ``K``:

* the sample's **stability** is the share of the majority verdict, ``max(m, K − m) / K``;
* its **flip probability** is the chance that two different runs disagree,
  ``2 m (K − m) / (K (K − 1))``; the column's **flip rate** is its mean over samples;
* **unstable** samples are those whose verdict is not the same in all K runs.

The runs come from files (``calibrate external --rerun FILE``: the scorer rerun
by its owner) or from the harness's Ollama judge run here K times
(``--judge MODEL --repeats K``, :func:`judge_runs`): on every sample of the
calibration units it judges the response's claims against the sample's
passages (:func:`playground.harness.judge.judge_response`), and the sample's
score is the share of claims it calls supported (the ``faithfulness`` rate, as
RAGAS defines it).  Run ``r`` (0-based) asks with ``repeat=r``: another seed and
its own cache entry, so the cache never makes a rerun a copy of the first run
(:meth:`playground.harness.llm.OllamaModels.chat`).

The calibration record carries ``{k, flip_rate, unstable_units, n_units, mean_stability}``
per column; the gate refuses above :data:`playground.calibrate.score_gate.MAX_FLIP_RATE`
and widens the run's interval below it (:mod:`playground.harness.corrected`).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["judge_column", "judge_runs", "stability", "unit_stability"]


def judge_column(judge_model: str) -> str:
    """The judge's column in the report and the record: ``judge:MODEL``."""
    return f"judge:{judge_model}"


def judge_runs(opened: Any, case_ids: Iterable[str], models: Any, judge_model: str,
               repeats: int = 1) -> list[dict[str, dict[str, float | None]]]:
    """``repeats`` runs of the harness's judge on the samples ``case_ids`` of ``opened`` (an
    :class:`~playground.datasets.OpenDataset`): per run, ``{case id: {judge_column: share of the response's
    claims judged supported}}`` (None for a response without claims).  Run ``r`` asks with ``repeat=r``."""
    from ..harness.judge import judge_response

    if repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {repeats}")
    column = judge_column(judge_model)
    data = opened.dataset
    tasks = []
    for case_id in sorted(set(case_ids)):
        for response in data.responses_for(case_id)[:1]:
            tasks.append((data.cases[case_id], list(opened.passages[case_id]), response,
                          data.claims(response.response_id)))
    runs: list[dict[str, dict[str, float | None]]] = []
    for r in range(repeats):
        run: dict[str, dict[str, float | None]] = {}
        for case, passages, response, claims in tasks:
            if not claims:
                run[case.case_id] = {column: None}
                continue
            result = judge_response(models, judge_model, None, case, passages, response, claims, repeat=r)
            run[case.case_id] = {column: sum(c.supported for c in result.claims) / len(result.claims)}
        runs.append(run)
    return runs


def stability(runs: Sequence[dict[str, dict[str, float | None]]], columns: Sequence[str],
              threshold: float) -> dict[str, dict[str, Any]]:
    """Per column the figures of the module docstring; ``runs``: per run, scores by case id and column."""
    k = len(runs)
    if k < 2:
        raise ValueError("stability needs at least two runs of the scorer")
    out: dict[str, dict[str, Any]] = {}
    for column in columns:
        cases = sorted(set.intersection(*(
            {c for c, scores in run.items() if scores.get(column) is not None} for run in runs)))
        flips, stable, unstable = [], [], 0
        for case in cases:
            m = sum(1 for run in runs if (run[case][column] or 0.0) >= threshold)
            flips.append(2 * m * (k - m) / (k * (k - 1)))
            stable.append(max(m, k - m) / k)
            unstable += 0 < m < k
        n = len(cases)
        out[column] = {"k": k, "n_units": n, "unstable_units": unstable,
                       "flip_rate": sum(flips) / n if n else None,
                       "mean_stability": sum(stable) / n if n else None}
    return out


def unit_stability(runs: Sequence[dict[str, dict[str, float | None]]], column: str,
                   threshold: float) -> dict[str, tuple[int, int]]:
    """Per sample scored in every run, ``(m, K)``: its "pass" verdicts (``score >= threshold``) of K runs."""
    cases = sorted(set.intersection(*({c for c, s in run.items() if s.get(column) is not None} for run in runs)))
    return {c: (sum(1 for run in runs if (run[c][column] or 0.0) >= threshold), len(runs)) for c in cases}
