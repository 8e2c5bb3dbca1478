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
* there is no answer key: ``key_agreement_*`` are ``None``;
* the dataset's kind of text (:func:`text_kind`: qa, summary or dialogue, recorded
  at import) sets ``scoring.kind``, and each floor comes from a floor file, the
  configuration, the dataset's own labels (grouped cross-validation) or the kind's
  shipped default (:mod:`playground.harness.dataset_floors`), recorded in the
  report as ``floor_source``.

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

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from ..metrics import RETRIEVAL_METRICS, rates_from_labels
from ..model import Label
from . import score as S
from .config import FLOOR_KEYS, Config
from .dataset_floors import SCORED, FloorSource, calibrate_floor, human_labels
from .retrieve import Hit
from .run import REPORT_FILES, RunError, _atomic_write, _dump, _r, build_report, score_case, write_reports

__all__ = ["run_dataset", "text_kind", "with_text_kind"]

#: Configuration key of a floor -> its dimension in a floor file.
FLOOR_DIMENSIONS: dict[str, str] = {key: dim for dim, key in FLOOR_KEYS.items()}

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

    if config.data != with_text_kind(load_config(), opened.payload).data:  # what the page scores with
        return None
    return CaseHarness(opened.dataset, opened.passages, config,
                       dataset_fingerprint(opened.name, opened.revision, config))


def with_text_kind(config: Config, payload: Mapping[str, Any]) -> Config:
    """``config`` scoring with the dataset's kind of text (:func:`text_kind`) and, when ``config`` keeps the
    shipped support floor, the kind's shipped floor (:data:`playground.harness.score.DEFAULT_SUPPORT_FLOORS`):
    what the labelling page scores an imported dataset with."""
    kind = text_kind(payload)
    changes: dict[str, Any] = {"kind": kind}
    if config["scoring.support_floor"] == S.DEFAULT_SUPPORT_FLOOR:
        changes["support_floor"] = S.DEFAULT_SUPPORT_FLOORS[kind]
    return _with(config, changes)


def text_kind(payload: Mapping[str, Any]) -> str:
    """The kind of text of an imported dataset (:data:`playground.harness.score.KINDS`): the payload's
    ``text_kind``, recorded at import (``playground import ... --text-kind``); ``qa`` when absent."""
    kind = payload.get("text_kind") or S.DEFAULT_KIND
    if kind not in S.KINDS:
        raise RunError(f"dataset payload: unknown text_kind {kind!r} (known: {', '.join(S.KINDS)})")
    return str(kind)


def _with(config: Config, changes: Mapping[str, Any]) -> Config:
    """``config`` with the ``scoring`` keys ``changes`` set (values already valid)."""
    data = copy.deepcopy(config.data)
    data["scoring"].update(changes)
    return Config(data)


def _floor_sources(config: Config, kind: str, results: Sequence[dict[str, Any]],
                   labels: Sequence[Any] | None) -> dict[str, FloorSource]:
    """Where each scorer's floor comes from (:mod:`playground.harness.dataset_floors`)."""
    score_of = {"support_floor": "support", "correctness_floor": "correctness"}
    defaults = {"support_floor": (S.DEFAULT_SUPPORT_FLOOR, S.DEFAULT_SUPPORT_FLOORS[kind]),
                "correctness_floor": (S.DEFAULT_CORRECTNESS_FLOOR, S.DEFAULT_CORRECTNESS_FLOOR)}
    from_file = (config.data.get("floors_from") or {}).get("floors", {})
    out: dict[str, FloorSource] = {}
    for key, dim in SCORED.items():
        value = config[f"scoring.{key}"]
        shipped, kind_default = defaults[key]
        if FLOOR_DIMENSIONS[key] in from_file:
            out[key] = FloorSource(key, value, "file", f"{key} {value:g} from the floor file "
                                   f"{config.data['floors_from'].get('path')} (scoring.floor_source)", kind)
            continue
        if value != shipped:
            out[key] = FloorSource(key, value, "configuration", f"{key} {value:g} set by the configuration", kind)
            continue
        scores = {c["unit_id"]: c[score_of[key]] for r in results for resp in r["responses"] for c in resp["claims"]}
        cases = {c["unit_id"]: r["case_id"] for r in results for resp in r["responses"] for c in resp["claims"]}
        out[key] = calibrate_floor(key, scores, cases, human_labels(labels or (), dim), kind=kind,
                                   default=kind_default)
    return out


def _score_all(config: Config, opened: Any, ids: Sequence[str], bar: Any) -> list[dict[str, Any]]:
    dataset = opened.dataset
    results = []
    for case_id in ids:
        case = dataset.cases[case_id]
        hits = [Hit(p, 0.0, rank) for rank, p in enumerate(opened.passages.get(case_id, []), 1)]
        results.append(score_case(case, hits, dataset.responses_for(case_id), config))
        if bar:
            bar.update(1)
    return results


def run_dataset(config: Config, opened: Any, out_dir: str | Path, *, progress: bool = True,
                labels: Sequence[Any] | None = None) -> dict[str, Any]:
    """Score ``opened`` (an OpenDataset) under ``config``; write and return the report.

    The dataset's kind of text (:func:`text_kind`) sets ``scoring.kind``; its floors come from
    :mod:`playground.harness.dataset_floors` (``labels``: the label store's labels of the dataset,
    people's and adjudicated; the harness's own are ignored), recorded as ``report["floor_source"]``.
    """
    if config.uses_models:
        raise RunError("a dataset run uses the deterministic scorers only: choose a configuration without models")
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()) and not (out / "report.json").is_file():
        raise RunError(f"{out} exists and is not a harness run folder — choose an empty or new --out folder")
    out.mkdir(parents=True, exist_ok=True)
    kind = text_kind(opened.payload)
    scoring = _with(config, {"kind": kind})
    ids = sorted(opened.dataset.cases)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(ids), desc=f"harness {config.name} on {opened.name}", unit="case")
    # scores do not depend on floors: score once, choose the floors, relabel with them if they differ
    results = _score_all(scoring, opened, ids, bar)
    sources = _floor_sources(scoring, kind, results, labels)
    floors = {k: fs.floor for k, fs in sources.items() if fs.floor != scoring[f"scoring.{k}"]}
    if floors:
        scoring = _with(scoring, floors)
        results = _score_all(scoring, opened, ids, None)
    page = _page_cache(opened, scoring)  # kept when the page would score the same: its kind, default floors
    if page is not None:
        for r in results:
            page.keep(r["case_id"], r)
    if bar:
        bar.close()
    config = scoring
    for r in results:
        _cover_facts(r, opened.dataset.cases[r["case_id"]], config)
    digest = hashlib.sha256(json.dumps(opened.payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]
    report = build_report(config, digest, results, None, None)
    for scope in [report["metrics"]["overall"], *report["metrics"]["by_case_type"].values()]:
        for name in _NOT_APPLICABLE:
            scope[name] = None
    for c in results:
        c["retrieval"]["metrics"] = dict.fromkeys(RETRIEVAL_METRICS)
    report["dataset"] = {"name": opened.name, "kind": opened.kind, "text_kind": kind, "payload_sha256_16": digest,
                         "retrieval": "none: the contexts as given; retrieval metrics not applicable"}
    report["floor_source"] = {k: fs.record() for k, fs in sources.items()}
    for stale in [out / f for f in REPORT_FILES]:
        stale.unlink(missing_ok=True)
    _atomic_write(out / "config.yaml", yaml.safe_dump(config.snapshot(), sort_keys=True, allow_unicode=True))
    write_reports(out, report, results)
    _atomic_write(out / "run.json", _dump({"dataset": opened.name, "data_fingerprint": digest, "cases": ids}))
    return report
