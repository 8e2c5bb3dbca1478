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
keeps it in the page's harness cache (:class:`playground.harness.case_cache.CaseHarness`:
one SQLite file per dataset revision, written in batches of
:data:`CACHE_BATCH` cases per transaction), so pages on the dataset, and its
verdict filter, read instead of scoring.

Streaming and in parallel: cases go in chunks to :func:`score_chunk` — here,
on a process pool (``jobs``: ``playground harness run --jobs N``) or on any
``concurrent.futures.Executor`` (``executor``, e.g. Dask's) — and come back
in case order (:func:`playground.harness.pool.ordered_map`); each result is
written to the report files and added to the report's totals as it arrives
(:mod:`playground.harness.report_stream`) and then dropped, so memory does not
grow with the number of cases, and the files are the same bytes whatever the
number of workers.  The floors (below) need only the scores of the units people
labelled; when they differ from the configuration's, the cases are scored a
second time with them (what a run did before, too).

Same input and configuration, same bytes.  Models (generation, judge,
embeddings) are not used: a dataset brings its own responses.
"""
from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import yaml

from ..metrics import RETRIEVAL_METRICS, rates_from_labels
from ..model import Label
from . import score as S
from .config import FLOOR_KEYS, Config
from .dataset_floors import SCORED, FloorSource, calibrate_floor, human_labels
from .pool import CHUNK, chunked, open_executor, ordered_map, workers
from .report_stream import ReportFiles, ReportTally
from .retrieve import Hit
from .run import REPORT_FILES, RunError, _atomic_write, _dump, _r, score_case

__all__ = ["CACHE_BATCH", "current_labels", "run_dataset", "score_chunk", "text_kind", "with_text_kind"]

#: Configuration key of a floor -> its dimension in a floor file.
FLOOR_DIMENSIONS: dict[str, str] = {key: dim for dim, key in FLOOR_KEYS.items()}
#: Cases written to the page's harness cache per transaction.
CACHE_BATCH = 1000

#: Report metrics that need expected sources or an answer key, which an imported dataset has not.
_NOT_APPLICABLE = ("recall_at_k", "precision_at_k", "hit_at_k", "ndcg_at_k", "mrr", "key_agreement_relevant",
                   "key_agreement_supported", "key_agreement_correct", "key_agreement_covered")
#: The claim score each floor is compared with.
_SCORE_OF = {"support_floor": "support", "correctness_floor": "correctness"}


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


#: One chunk of work: the configuration, whether to return the page's kept text, and (case, passages, responses).
Chunk = tuple[Config, bool, list[tuple[Any, list[Any], list[Any]]]]


def score_chunk(chunk: Chunk) -> list[tuple[str, str | None, str, tuple[str, str]]]:
    """Score a chunk of cases: ``(case_id, the page's kept text or None, the cases.jsonl line, its csv lines)``.

    The line is the case's final result: ``score_case`` on the passages as given
    (rank in order, score 0), facts covered by token coverage, retrieval metrics
    None; the csv lines are its rows of ``cases.csv`` and ``units.csv``
    (:func:`~playground.harness.report_stream.csv_texts`).  A top-level function
    of plain data, so any executor can run it.
    """
    from .case_cache import case_text
    from .report_stream import csv_texts, jsonl_line

    config, page, items = chunk
    out = []
    for case, passages, responses in items:
        hits = [Hit(p, 0.0, rank) for rank, p in enumerate(passages, 1)]
        result = score_case(case, hits, responses, config)
        kept = case_text(case.case_id, result) if page else None
        _cover_facts(result, case, config)
        result["retrieval"]["metrics"] = dict.fromkeys(RETRIEVAL_METRICS)
        out.append((case.case_id, kept, jsonl_line(result), csv_texts(f"harness:{config.name}", result)))
    return out


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


class _FloorInputs:
    """The scores the floors need: of the claims people labelled (unit -> score, unit -> case), nothing else."""

    def __init__(self, labels: Sequence[Any] | None) -> None:
        self.labels = {key: human_labels(labels or (), dim) for key, dim in SCORED.items()}
        self.wanted = set().union(*self.labels.values())
        self.scores: dict[str, dict[str, float]] = {key: {} for key in SCORED}
        self.cases: dict[str, str] = {}

    def add(self, c: Mapping[str, Any]) -> None:
        if not self.wanted:
            return
        for resp in c["responses"]:
            for claim in resp["claims"]:
                if claim["unit_id"] in self.wanted:
                    self.cases[claim["unit_id"]] = c["case_id"]
                    for key, score in _SCORE_OF.items():
                        self.scores[key][claim["unit_id"]] = claim[score]


def _floor_sources(config: Config, kind: str, inputs: _FloorInputs) -> dict[str, FloorSource]:
    """Where each scorer's floor comes from (:mod:`playground.harness.dataset_floors`)."""
    defaults = {"support_floor": (S.DEFAULT_SUPPORT_FLOOR, S.DEFAULT_SUPPORT_FLOORS[kind]),
                "correctness_floor": (S.DEFAULT_CORRECTNESS_FLOOR, S.DEFAULT_CORRECTNESS_FLOOR)}
    from_file = (config.data.get("floors_from") or {}).get("floors", {})
    out: dict[str, FloorSource] = {}
    for key in SCORED:
        value = config[f"scoring.{key}"]
        shipped, kind_default = defaults[key]
        if FLOOR_DIMENSIONS[key] in from_file:
            out[key] = FloorSource(key, value, "file", f"{key} {value:g} from the floor file "
                                   f"{config.data['floors_from'].get('path')} (scoring.floor_source)", kind)
            continue
        if value != shipped:
            out[key] = FloorSource(key, value, "configuration", f"{key} {value:g} set by the configuration", kind)
            continue
        out[key] = calibrate_floor(key, inputs.scores[key], inputs.cases, inputs.labels[key], kind=kind,
                                   default=kind_default)
    return out


def _chunks(config: Config, opened: Any, ids: Sequence[str], page: bool) -> Iterator[Chunk]:
    """The work of a run in chunks of :data:`~playground.harness.pool.CHUNK` cases, made as they are sent."""
    dataset, passages = opened.dataset, opened.passages
    made = getattr(passages, "_made", None)  # StoredPassages keeps what it made: a run reads each case once
    for ids_ in chunked(ids, CHUNK):
        items = [(dataset.cases[c], list(passages.get(c, [])), list(dataset.responses_for(c))) for c in ids_]
        if isinstance(made, dict):
            for c in ids_:
                made.pop(c, None)
        yield config, page, items


def _score_pass(config: Config, opened: Any, ids: Sequence[str], out: Path, executor: Executor | None,
                window: int, page: Any, bar: Any, floors: _FloorInputs | None) -> tuple[ReportTally, ReportFiles]:
    """Score every case into the report files and a tally (and the page's cache, and the floors' inputs)."""
    tally = ReportTally()
    files = ReportFiles(out, f"harness:{config.name}")
    batch: list[tuple[str, str]] = []
    try:
        for results in ordered_map(score_chunk, _chunks(config, opened, ids, page is not None), executor, window):
            for case_id, kept, line, texts in results:
                c = json.loads(line)
                tally.add(c)
                files.add(c, line, texts)
                if floors is not None:
                    floors.add(c)
                if kept is not None:
                    batch.append((case_id, kept))
            if len(batch) >= CACHE_BATCH:
                page.keep_texts(batch)
                batch = []
            if bar:
                bar.update(len(results))
        if batch:
            page.keep_texts(batch)
    except BaseException:
        files.abort()
        raise
    return tally, files


def current_labels(opened: Any, store: Any) -> list[Any]:
    """The store's current labels of ``opened`` (``store.current_labels(opened.catalog())``), building the units
    of only the cases that hold a label: the catalog of 100,000 samples is a million units."""
    if opened.kind == "ragtruth" or not opened.dataset.cases:
        return list(store.current_labels(opened.catalog()))
    from ..golden import passage_unit, response_units

    dataset = opened.dataset
    units = []
    for cid in sorted({lb.case_id for lb in store.labels()} & set(dataset.cases)):
        case = dataset.cases[cid]
        units += [passage_unit(case, p) for p in opened.passages.get(cid, [])]
        for response in sorted(dataset.responses_for(cid), key=lambda r: r.response_id):
            units += response_units(case, response)
    return list(store.current_labels({u.unit_id: u for u in units}))


def _payload_digest(payload: Any) -> str:
    """SHA-256 (16 hex) of the payload's canonical JSON (``sort_keys``), encoded piece by piece."""
    h = hashlib.sha256()
    for piece in json.JSONEncoder(sort_keys=True).iterencode(payload):
        h.update(piece.encode("utf-8"))
    return h.hexdigest()[:16]


def _dataset_report(tally: ReportTally, scoring: Config, opened: Any, kind: str, digest: str,
                    sources: Mapping[str, FloorSource]) -> dict[str, Any]:
    """The report of a dataset run: the tally's, with the retrieval metrics set to None (no retrieval: the
    contexts are given), the dataset's name, kinds and payload digest, and where each floor came from."""
    report: dict[str, Any] = tally.report(scoring, digest, None, None)
    for scope in [report["metrics"]["overall"], *report["metrics"]["by_case_type"].values()]:
        for name in _NOT_APPLICABLE:
            scope[name] = None
    report["dataset"] = {"name": opened.name, "kind": opened.kind, "text_kind": kind,
                         "support_rules": list(S.rules_on(kind)),  # issue 36.4: the rules applied
                         "payload_sha256_16": digest,
                         "retrieval": "none: the contexts as given; retrieval metrics not applicable"}
    report["floor_source"] = {k: fs.record() for k, fs in sources.items()}
    return report


def run_dataset(config: Config, opened: Any, out_dir: str | Path, *, progress: bool = True,
                labels: Sequence[Any] | None = None, jobs: int = 1, executor: Executor | None = None
                ) -> dict[str, Any]:
    """Score ``opened`` (an OpenDataset) under ``config``; write and return the report.

    The dataset's kind of text (:func:`text_kind`) sets ``scoring.kind``; its floors come from
    :mod:`playground.harness.dataset_floors` (``labels``: the label store's labels of the dataset,
    people's and adjudicated; the harness's own are ignored), recorded as ``report["floor_source"]``.
    ``jobs``: worker processes (1: here; 0: one per CPU); ``executor``: score on it instead (not shut down).
    """
    if config.uses_models:
        raise RunError("a dataset run uses the deterministic scorers only: choose a configuration without models")
    try:
        n = workers(jobs)
    except ValueError as exc:
        raise RunError(str(exc)) from None
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

        bar = tqdm(total=len(ids), desc=f"harness {config.name} on {opened.name}", unit="case", disable=None)
    # scores do not depend on floors: score once, choose the floors, score again with them if they differ;
    # the pass whose configuration is the page's (its kind, the kind's default floors) fills the page's cache
    page = _page_cache(opened, scoring)
    inputs = _FloorInputs(labels)
    with open_executor(1 if executor is not None else n) as pool:
        run_on = executor if executor is not None else pool
        window = 2 * n if executor is None else 16
        tally, files = _score_pass(scoring, opened, ids, out, run_on, window, page, bar, inputs)
        sources = _floor_sources(scoring, kind, inputs)
        floors = {k: fs.floor for k, fs in sources.items() if fs.floor != scoring[f"scoring.{k}"]}
        if floors:
            files.abort()
            scoring = _with(scoring, floors)
            if page is None:
                page = _page_cache(opened, scoring)
                tally, files = _score_pass(scoring, opened, ids, out, run_on, window, page, None, None)
            else:
                tally, files = _score_pass(scoring, opened, ids, out, run_on, window, None, None, None)
    if page is not None:
        page.cases.close()
    if bar:
        bar.close()
    with files:
        digest = _payload_digest(opened.payload)
        report = _dataset_report(tally, scoring, opened, kind, digest, sources)
        for stale in [out / f for f in REPORT_FILES]:
            stale.unlink(missing_ok=True)
        _atomic_write(out / "config.yaml", yaml.safe_dump(scoring.snapshot(), sort_keys=True, allow_unicode=True))
        files.finish(_dump(report))
    _atomic_write(out / "run.json", _dump({"dataset": opened.name, "data_fingerprint": digest, "cases": ids}))
    return report
