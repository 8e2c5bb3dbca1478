"""A harness run over an imported dataset: the contexts as given, no retrieval.

``run_dataset(config, opened, out_dir)`` scores every unit of an
:class:`playground.datasets.OpenDataset` with the deterministic scorers of a
shipped run (:func:`playground.harness.run.score_case`: relevance per
passage, support and correctness per claim, decision, flags, assertions) and
writes the same files (``report.json``, ``cases.csv``, ``units.csv``,
``cases.jsonl``, ``config.yaml``), so ``playground calibrate store --run``
works on it.  What differs from a shipped run:

* the passages are the sample's contexts, ranked in the order given (score 0);
* the retrieval metrics are ``None`` — an imported sample names no expected
  source, and the 1.0 that an empty expectation scores by convention would
  say nothing;
* a reference fact is covered when its content tokens are in the response:
  ``correctness(fact, response) >= scoring.correctness_floor`` (the same
  token coverage, with the same exact-number rule, that judges a claim
  against the reference), since an imported fact has no hand-written
  ``accept`` strings; ``answer_correct`` is "every reference fact covered"
  (False without a reference);
* there is no answer key: ``key_agreement_*`` are ``None``.

Each case's ``score_case`` result (before the fact coverage above) is also
what the labelling page shows for it: a run on the default configuration
keeps it in the page's per-case harness cache
(:class:`playground.harness.case_cache.CaseHarness`, keyed by the dataset's
revision), so pages on the dataset, and its verdict filter, read instead of
scoring.

Same input and configuration, same bytes.  Models (generation, judge,
embeddings) are not used: a dataset brings its own responses.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from ..metrics import RETRIEVAL_METRICS, rates_from_labels
from ..model import Label
from . import score as S
from .config import Config
from .retrieve import Hit
from .run import REPORT_FILES, RunError, _atomic_write, _dump, _r, build_report, score_case, write_reports

__all__ = ["run_dataset"]

#: Report metrics that need expected sources or an answer key, which an imported dataset has not.
_NOT_APPLICABLE = ("recall_at_k", "precision_at_k", "hit_at_k", "ndcg_at_k", "mrr", "key_agreement_relevant",
                   "key_agreement_supported", "key_agreement_correct", "key_agreement_covered")


def _cover_facts(result: dict[str, Any], case: Any, config: Config) -> None:
    """Replace each response's fact rows by token coverage and recompute its rates."""
    floor = config["scoring.correctness_floor"]
    for r in result["responses"]:
        for row, fact in zip(r["facts"], case.reference_facts, strict=True):
            row["coverage"] = _r(S.correctness(fact.statement, r["text"]))
            row["covered"] = int(row["coverage"] >= floor)
        labels = [Label("harness", "passage", p["unit_id"], "relevant", p["relevant"]) for p in result["passages"]]
        labels += [Label("harness", "claim", c["unit_id"], d, c[d])
                   for c in r["claims"] for d in ("supported", "correct")]
        labels += [Label("harness", "fact", f["unit_id"], "covered", f["covered"]) for f in r["facts"]]
        r["rates"] = {d: {"successes": x.successes, "n": x.n, "rate": _r(x.rate)}
                      for d, x in rates_from_labels(labels).items()}
        r["answer_correct"] = bool(r["facts"]) and all(f["covered"] for f in r["facts"]) and not r["abstained"]


def _page_cache(opened: Any, config: Config) -> Any:
    """The page's per-case harness cache of a stored dataset (None for golden or another configuration)."""
    if not getattr(opened, "revision", ""):
        return None
    from .case_cache import CaseHarness, dataset_fingerprint
    from .config import load_config

    if config.data != load_config().data:  # the page runs the default configuration
        return None
    return CaseHarness(opened.dataset, opened.passages, config,
                       dataset_fingerprint(opened.name, opened.revision, config))


def run_dataset(config: Config, opened: Any, out_dir: str | Path, *, progress: bool = True) -> dict[str, Any]:
    """Score ``opened`` (an OpenDataset) under ``config``; write and return the report."""
    if config.uses_models:
        raise RunError("a dataset run uses the deterministic scorers only: choose a configuration without models")
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()) and not (out / "report.json").is_file():
        raise RunError(f"{out} exists and is not a harness run folder — choose an empty or new --out folder")
    out.mkdir(parents=True, exist_ok=True)
    dataset = opened.dataset
    results = []
    ids = sorted(dataset.cases)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(ids), desc=f"harness {config.name} on {opened.name}", unit="case")
    page = _page_cache(opened, config)
    for case_id in ids:
        case = dataset.cases[case_id]
        hits = [Hit(p, 0.0, rank) for rank, p in enumerate(opened.passages.get(case_id, []), 1)]
        result = score_case(case, hits, dataset.responses_for(case_id), config)
        if page is not None:
            page.keep(case_id, result)
        _cover_facts(result, case, config)
        results.append(result)
        if bar:
            bar.update(1)
    if bar:
        bar.close()
    digest = hashlib.sha256(json.dumps(opened.payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]
    report = build_report(config, digest, results, None, None)
    for scope in [report["metrics"]["overall"], *report["metrics"]["by_case_type"].values()]:
        for name in _NOT_APPLICABLE:
            scope[name] = None
    for c in results:
        c["retrieval"]["metrics"] = dict.fromkeys(RETRIEVAL_METRICS)
    report["dataset"] = {"name": opened.name, "kind": opened.kind, "payload_sha256_16": digest,
                         "retrieval": "none: the contexts as given; retrieval metrics not applicable"}
    for stale in [out / f for f in REPORT_FILES]:
        stale.unlink(missing_ok=True)
    _atomic_write(out / "config.yaml", yaml.safe_dump(config.snapshot(), sort_keys=True, allow_unicode=True))
    write_reports(out, report, results)
    _atomic_write(out / "run.json", _dump({"dataset": opened.name, "data_fingerprint": digest, "cases": ids}))
    return report
