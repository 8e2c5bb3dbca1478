"""A harness run: retrieve, score every unit people label, decide, assert, report.

``run_harness(config, out_dir)`` goes case by case (a progress bar on stderr),
writes a checkpoint per finished case (``checkpoints/<case_id>.json``, written
to a temporary file and renamed, so a killed run never leaves half a case),
and at the end assembles the reports from the checkpoints in case order:

=================  ===========================================================
``config.yaml``    the configuration that produced the run (full, defaults filled)
``report.json``    hard assertions first, then metrics overall and per case type,
                   decisions, flags, per-variant dimension rates, model-call counts
``cases.csv``      one row per (case, response): decision, flags, rates, assertions
``units.csv``      the automatic label and score of every unit (passage, claim, fact)
``cases.jsonl``    everything per case (retrieval, signals, per-claim detail)
=================  ===========================================================

Reports hold no timestamps or paths and every float is rounded to 6 places,
so two runs of the same configuration on the same data are byte-identical.
``resume=True`` keeps the checkpoints of a run with the same configuration
and data and computes only the missing cases.
``jobs=N`` (``--jobs N``) scores the cases on N worker processes and
``executor=`` on any ``concurrent.futures.Executor`` (:mod:`.pool`); retrieval
stays here, results come back in case order, so the files are the same bytes.
The reports are built case by case (:mod:`.report_stream`), reading one
checkpoint at a time.

Which responses the hard-assertion gate covers: under ``responses.source:
generated`` every generated response; under ``authored`` the reference
variants (``grounded_correct``, ``proper_abstention``), which stand for a
correct system — the other authored variants are built to fail and are
reported as *caught* — and, for every case, the retrieval check
``no_cross_tenant_passage``.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import yaml

from ..claims import split_claims
from ..files import write_atomic
from ..golden import Dataset, load_dataset, passage_key, passage_unit
from ..metrics import RETRIEVAL_METRICS, rates_from_labels
from ..model import Case, Claim, Label, Passage, Response
from . import score as S
from .assertions import check_assertions
from .config import Config
from .decide import Decision, decide, flags
from .pool import CHUNK, chunked, open_executor, ordered_map, workers
from .report_stream import (
    CASE_COLUMNS,
    REFERENCE_VARIANTS,
    RETRIEVAL_ASSERTION,
    UNIT_COLUMNS,
    MetricTally,
    ReportTally,
    write_all,
)
from .retrieve import Hit, Leg, build_retriever, case_query, retrieve_cases
from .signals import Signals

__all__ = [
    "CASE_COLUMNS",
    "INCOMPLETE",
    "INCOMPLETE_TEXT",
    "REFERENCE_VARIANTS",
    "REPORT_FILES",
    "RETRIEVAL_ASSERTION",
    "UNIT_COLUMNS",
    "ModelLegs",
    "RunError",
    "aggregate",
    "build_report",
    "data_fingerprint",
    "run_harness",
    "score_case",
    "score_checkpoints",
    "score_passages",
    "score_response",
    "select_cases",
    "write_reports",
]

REPORT_FILES = ("config.yaml", "report.json", "cases.csv", "units.csv", "cases.jsonl")


#: Present in a run folder from the start of a run until its reports are written: a failed run
#: leaves its finished cases in checkpoints/ under this marker, for ``--resume``.
INCOMPLETE = "INCOMPLETE"
INCOMPLETE_TEXT = "This run has not finished; `playground harness run --resume` with the same --config continues it.\n"


class RunError(RuntimeError):
    """A run cannot start or continue (the message says why and what to do)."""


def _check_checkpoints(checkpoints: Path) -> None:
    """Refuse to resume over a checkpoint that is empty or not JSON (checkpoints are written whole or not at all)."""
    bad = []
    for path in sorted(checkpoints.glob("*.json")):
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError) as exc:
            bad.append(f"{path} ({'empty' if path.is_file() and path.stat().st_size == 0 else exc})")
    if bad:
        raise RunError(f"cannot resume: unreadable checkpoint {'; '.join(bad)} — delete it and rerun with --resume")


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def data_fingerprint(root: Path) -> str:
    """SHA-256 (16 hex) over the corpus and golden files' paths and bytes, in path order."""
    digest = hashlib.sha256()
    for path in sorted(
        [*root.glob("corpus/*/*.md"), *root.glob("golden/cases/*.yaml"), *root.glob("golden/responses/*.yaml")]
    ):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def select_cases(case_ids: Iterable[str], sample: int | None) -> list[str]:
    """All case ids sorted, or a deterministic sample of ``sample`` of them.

    The sample takes the ``sample`` ids with the smallest SHA-256 of the id —
    an arbitrary but fixed spread over case types — then sorts them.
    """
    ids = sorted(case_ids)
    if sample is None or sample >= len(ids):
        return ids
    if sample < 1:
        raise RunError(f"--sample must be >= 1, got {sample}")
    chosen = sorted(ids, key=lambda c: hashlib.sha256(c.encode()).hexdigest())[:sample]
    return sorted(chosen)


# --- scoring one case -------------------------------------------------------------------


def score_passages(case: Case, hits: Sequence[Hit], config: Config) -> list[dict[str, Any]]:
    """Automatic relevance of each retrieved passage, and separately the gold "from an expected locator"
    (retrieval metrics) and the answer key of relevance (:func:`playground.golden.passage_key`)."""
    query = case_query(case, config["retrieval.use_history"])
    threshold = config["scoring.relevance_threshold"]
    rows = []
    for hit in hits:
        rel = S.relevance(query, hit.passage.text)
        rows.append(
            {
                "unit_id": passage_unit(case, hit.passage).unit_id,
                "passage_id": hit.passage.passage_id,
                "locator": str(hit.passage.locator),
                "rank": hit.rank,
                "retrieval_score": _r(hit.score),
                "relevance": _r(rel),
                "relevant": int(rel >= threshold),
                "from_expected_source": any(
                    S.from_expected_source(loc, case.expected_sources) for loc in hit.passage.locators
                ),
                # the answer key of "relevant?": an expected source or an authored relevant section
                "key_relevant": passage_key(case, hit.passage),
            }
        )
    return rows


def _claim_rows(case: Case, response: Response, claims: Sequence[Claim], supports: Sequence[float],
                config: Config) -> list[dict[str, Any]]:
    """One row per claim: its support and correctness with their labels (``>=`` the floors), and its
    answer-key labels.  On a case that must abstain only an abstention is correct (1.0, else 0.0)."""
    floor, cfloor, kind = config["scoring.support_floor"], config["scoring.correctness_floor"], config["scoring.kind"]
    fact_texts = [f.statement for f in case.reference_facts]
    key = {k.text: k for k in response.key_claims}
    claim_rows: list[dict[str, Any]] = []
    for claim, sup in zip(claims, supports, strict=True):
        if case.must_abstain:
            # Only an abstention is correct on a case that must abstain.
            corr = 1.0 if S.is_abstention(claim.text) else 0.0
        else:
            corr = S.correctness(claim.text, case.reference_answer, fact_texts, kind=kind)
        k = key.get(claim.text)
        claim_rows.append({
            "unit_id": claim.claim_id, "index": claim.index, "text": claim.text,
            "support": _r(sup), "supported": int(sup >= floor),
            "correctness": _r(corr), "correct": int(corr >= cfloor),
            "key_supported": None if k is None else int(k.supported),
            "key_correct": None if k is None else int(k.correct),
        })
    return claim_rows


def _fact_rows(case: Case, response: Response) -> list[dict[str, Any]]:
    """One row per reference fact: covered by the response (:func:`score.fact_covered`) and its key."""
    key_facts = dict(response.key_facts)
    fact_rows: list[dict[str, Any]] = []
    for fact in case.reference_facts:
        covered = S.fact_covered(response.text, fact.accept)
        fact_rows.append(
            {
                "unit_id": f"{response.response_id}::{fact.fact_id}",
                "fact_id": fact.fact_id,
                "covered": int(covered),
                "key_covered": None if fact.fact_id not in key_facts else int(key_facts[fact.fact_id]),
            }
        )
    return fact_rows


def _unit_rates(passage_rows: Sequence[dict[str, Any]], claim_rows: Sequence[dict[str, Any]],
                fact_rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The four rates of the response's harness labels (relevant, supported, correct, covered)."""
    labels = [Label("harness", "passage", p["unit_id"], "relevant", p["relevant"]) for p in passage_rows]
    labels += [Label("harness", "claim", c["unit_id"], "supported", c["supported"]) for c in claim_rows]
    labels += [Label("harness", "claim", c["unit_id"], "correct", c["correct"]) for c in claim_rows]
    labels += [Label("harness", "fact", f["unit_id"], "covered", f["covered"]) for f in fact_rows]
    rates = rates_from_labels(labels)
    return {d: {"successes": r.successes, "n": r.n, "rate": _r(r.rate)} for d, r in rates.items()}


def _signal_fields(signals: Signals) -> dict[str, Any]:
    """The response-level signals as written in a checkpoint (rounded)."""
    return {
        "groundedness": _r(signals.groundedness), "attribution": _r(signals.attribution),
        "specificity": _r(signals.specificity), "hedging": _r(signals.hedging),
        "answer_relevance": _r(signals.answer_relevance), "context_quality": _r(signals.context_quality),
        "top_retrieval_similarity": _r(signals.top_retrieval_similarity), "disagreement": _r(signals.disagreement),
        "confidence": _r(signals.confidence),
    }


def _decision_fields(decision: Decision) -> dict[str, Any]:
    """The decision as written in a checkpoint."""
    return {
        "verdict": decision.verdict, "failure_type": decision.failure_type, "reason": decision.reason,
        "next_action": decision.next_action, "confidence": _r(decision.confidence), "rule": decision.rule,
        "low_coverage_sentences": [[i, s, _r(v)] for i, s, v in decision.low_coverage_sentences],
    }


def score_response(case: Case, hits: Sequence[Hit], response: Response, config: Config,
                   passage_rows: list[dict[str, Any]], context: S.Context | None = None) -> dict[str, Any]:
    """Every automatic label and signal for one response, plus decision, flags and assertions.

    ``context``: the retrieved passages tokenised once (:class:`score.Context`); built here when None.
    """
    passages = [h.passage for h in hits]
    context = context if context is not None else S.Context([p.text for p in passages])
    floor = config["scoring.support_floor"]
    query = case_query(case, config["retrieval.use_history"])
    claims = split_claims(response.text, response.response_id)
    sentences = [c.text for c in claims]
    top_similarity = max((p["relevance"] for p in passage_rows), default=0.0)
    signals = S.response_signals(query, response.text, sentences, context, floor, kind=config["scoring.kind"],
                                 top_retrieval_similarity=top_similarity)
    abstained = signals.abstained
    claim_rows = _claim_rows(case, response, claims, signals.sentence_support, config)
    fact_rows = _fact_rows(case, response)
    accepted = [a for f in case.reference_facts for a in f.accept] + list(case.must_contain)
    answer_ok = S.answer_correct(response.text, accepted, must_abstain=case.must_abstain)
    if abstained and not case.must_abstain:
        answer_ok = False
    decision = decide(signals, config["decision"], floor)
    flag = flags(
        signals, decision, claim_supported=[bool(c["supported"]) for c in claim_rows],
        claim_correct=[bool(c["correct"]) for c in claim_rows], answer_correct=answer_ok,
        support_floor=floor, thresholds=config["decision"],
    )
    results = check_assertions(case, passages, response.text, abstained)
    return {
        "response_id": response.response_id, "variant": response.variant, "origin": response.origin,
        "meta": dict(response.meta), "text": response.text, "abstained": abstained, "answer_correct": answer_ok,
        "signals": _signal_fields(signals),
        "decision": _decision_fields(decision),
        "flags": {"hallucination": flag.hallucination, "grounded_but_wrong": flag.grounded_but_wrong,
                  "review_queue": flag.review_queue, "review_reasons": list(flag.review_reasons)},
        "assertions": [{"name": a.name, "status": a.status, "detail": a.detail} for a in results],
        "claims": claim_rows, "facts": fact_rows,
        "rates": _unit_rates(passage_rows, claim_rows, fact_rows),
    }


def score_case(case: Case, hits: Sequence[Hit], responses: Sequence[Response], config: Config) -> dict[str, Any]:
    """The checkpoint of one case: retrieval with its metrics, passages, and every response scored."""
    from ..metrics import retrieval_scores

    k = config["retrieval.k"]
    expected = sorted(str(loc) for loc in case.expected_sources)
    # A retrieved passage stands for every section it draws from (fixed windows can span two).
    retrieved = []
    for hit in hits:
        match = [str(loc) for loc in hit.passage.locators if str(loc) in expected]
        retrieved.append(match[0] if match else str(hit.passage.locator))
    scores = retrieval_scores(case.case_id, case.case_type, retrieved, expected, k)
    passage_rows = score_passages(case, hits, config)
    context = S.Context([h.passage.text for h in hits])  # shared by every response of the case
    return {
        "case_id": case.case_id, "case_type": case.case_type, "tenant": case.tenant, "query": case.query,
        "expected_sources": expected,
        "retrieval": {"retrieved": retrieved, "metrics": {m: _r(getattr(scores, m)) for m in RETRIEVAL_METRICS}},
        "passages": passage_rows,
        "responses": [score_response(case, hits, r, config, passage_rows, context)
                      for r in sorted(responses, key=lambda r: r.response_id)],
    }


# --- model legs (only when the configuration asks for them) ----------------------------------


class ModelLegs:
    """The Ollama side of a run: generation, the embedding leg and the judge, all cached."""

    def __init__(self, config: Config, cache_path: Path, models: Any = None):
        from .judge import check_judge_model
        from .llm import ModelCache, OllamaModels

        self.config = config
        self.models = models or OllamaModels.from_config(config, cache=ModelCache(cache_path))
        generated = config["responses.source"] == "generated"
        if config["judge.enabled"]:
            check_judge_model(config["judge.model"], config["generation.model"] if generated else None,
                              force_same=config["judge.force_same"])
        needed = []
        if generated:
            needed.append(config["generation.model"])
        if config["judge.enabled"]:
            needed.append(config["judge.model"])
        if "embedding" in config["retrieval.legs"]:
            needed.append(config["embeddings.model"])
        self.models.preflight(needed)  # the one-line fix before any work

    def legs(self) -> list[Leg]:
        from .embed import EmbeddingIndex

        if "embedding" not in self.config["retrieval.legs"]:
            return []
        return [EmbeddingIndex(self.models, self.config["embeddings.model"])]

    def generate(self, case: Case, passages: Sequence[Passage]) -> Response:
        from .generate import generate_response

        return generate_response(
            self.models, case, passages, self.config["generation.model"], self.config["generation.options"]
        )

    def judge(
        self, case: Case, passages: Sequence[Passage], response: Response, scored: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Judge one response when the judge is on and (if windowed) its groundedness is uncertain."""
        from .judge import in_uncertainty_window, judge_response

        if not self.config["judge.enabled"]:
            return None
        low, high = self.config["judge.window"]
        if self.config["judge.use_window"] and not in_uncertainty_window(scored["signals"]["groundedness"], low, high):
            return None
        claims = split_claims(response.text, response.response_id)
        generator = self.config["generation.model"] if self.config["responses.source"] == "generated" else None
        result = judge_response(self.models, self.config["judge.model"], generator, case, passages, response, claims,
                                force_same=self.config["judge.force_same"])
        return result.to_dict()

    def stats(self) -> dict[str, int]:
        return self.models.stats()


# --- the run ---------------------------------------------------------------------------------


def _atomic_write(path: Path, text: str) -> None:
    """:func:`playground.files.write_atomic`: a checkpoint or report appears whole or not at all (mode 0666 - umask)."""
    write_atomic(path, text)


def _dump(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _prepare_run_folder(out: Path, run_meta: dict[str, Any], config: Config, resume: bool) -> Path:
    """Make ``out`` ready for a run and return its checkpoint folder: on ``resume``, refuse a folder of another
    configuration, data or case list (``run.json``) or with a broken checkpoint; otherwise clear an earlier
    run's checkpoints and reports and refuse a non-empty folder that is not a run folder.  Writes
    ``run.json``, the ``INCOMPLETE`` marker and ``config.yaml``."""
    checkpoints = out / "checkpoints"
    meta_path = out / "run.json"
    if resume and meta_path.is_file():
        previous = json.loads(meta_path.read_text(encoding="utf-8"))
        if previous != run_meta:
            what = [k for k in run_meta if previous.get(k) != run_meta[k]]
            raise RunError(
                f"cannot resume {out}: its {', '.join(what)} differ from this run's — use a new --out folder"
            )
    elif out.exists() and any(out.iterdir()) and not resume:
        if not meta_path.is_file():
            raise RunError(f"{out} exists and is not a harness run folder — choose an empty or new --out folder")
        for stale in [*checkpoints.glob("*.json"), *[out / f for f in REPORT_FILES]]:
            stale.unlink(missing_ok=True)
    if resume:
        _check_checkpoints(checkpoints)
    checkpoints.mkdir(parents=True, exist_ok=True)
    _atomic_write(meta_path, _dump(run_meta))
    _atomic_write(out / INCOMPLETE, INCOMPLETE_TEXT)  # removed once every report is written
    _atomic_write(out / "config.yaml", yaml.safe_dump(config.snapshot(), sort_keys=True, allow_unicode=True))
    return checkpoints


def run_harness(
    config: Config, out_dir: str | Path, *, root: str | Path | None = None, dataset: Dataset | None = None,
    sample: int | None = None, resume: bool = False, progress: bool = True, models: Any = None,
    cache_path: str | Path | None = None, jobs: int = 1, executor: Executor | None = None,
) -> dict[str, Any]:
    """Run the harness; return the report (also written to ``out_dir``; see the module docstring).

    ``jobs``: worker processes that score the cases (1: here, the default; 0: one per CPU); ``executor``:
    score on it instead (any ``concurrent.futures.Executor``; not shut down here).  Either way the files
    are the same bytes.  Runs that call models score here (their calls go through one cache).
    """
    out = Path(out_dir)
    try:
        if workers(jobs) > 1 and config.uses_models:
            raise RunError(f"--jobs {jobs}: a configuration that calls models runs with --jobs 1 "
                           "(its model calls share one cache)")
    except ValueError as exc:
        raise RunError(str(exc)) from None
    dataset = dataset or load_dataset(root)  # all problems, unresolved locators included, before any work
    fingerprint = data_fingerprint(dataset.root)
    case_ids = select_cases(dataset.cases, sample)
    run_meta = {"config_fingerprint": config.fingerprint(), "data_fingerprint": fingerprint, "cases": case_ids}
    checkpoints = _prepare_run_folder(out, run_meta, config, resume)
    legs = None
    if config.uses_models:
        legs = ModelLegs(config, Path(cache_path) if cache_path else out / ".cache" / "ollama.db", models)
    todo = [c for c in case_ids if not (checkpoints / f"{c}.json").is_file()]
    bar = None
    if progress:
        from tqdm import tqdm

        # disable=None: tqdm draws only when stderr is a terminal (no \r-joined bars in CI logs).
        bar = tqdm(total=len(case_ids), initial=len(case_ids) - len(todo), desc=f"harness {config.name}", unit="case",
                   disable=None)
    _score_todo(config, dataset, todo, checkpoints, legs, bar, jobs, executor)
    if bar:
        bar.close()
    tally = ReportTally()
    for c in _checkpoints(checkpoints, case_ids):
        tally.add(c)
    report = tally.report(config, fingerprint, sample, legs.stats() if legs else None)
    write_all(out, f"harness:{config.name}", _dump(report), _checkpoints(checkpoints, case_ids))
    (out / INCOMPLETE).unlink(missing_ok=True)
    return report


def _checkpoints(checkpoints: Path, case_ids: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Every case's checkpoint, read one at a time in case order."""
    for c in case_ids:
        yield json.loads((checkpoints / f"{c}.json").read_text(encoding="utf-8"))


def score_checkpoints(chunk: tuple[Config, list[tuple[Case, list[Hit], list[Response]]]]) -> list[tuple[str, str]]:
    """``(case_id, checkpoint text)`` of every case of a chunk (a top-level function: any executor runs it)."""
    config, items = chunk
    return [(case.case_id, _dump(score_case(case, hits, responses, config))) for case, hits, responses in items]


def _score_todo(config: Config, dataset: Dataset, todo: Sequence[str], checkpoints: Path, legs: ModelLegs | None,
                bar: Any, jobs: int, executor: Executor | None) -> None:
    """Retrieve and score every case of ``todo`` and write its checkpoint: here, or in chunks on a pool."""
    retriever = build_retriever(dataset.corpus, config)

    def prepared(case_id: str) -> tuple[Case, list[Hit], list[Response]]:
        case = dataset.cases[case_id]
        one = Dataset(dataset.root, dataset.corpus, {case_id: case}, {})
        hits = retrieve_cases(one, config, retriever, legs.legs() if legs else ())[case_id]
        if config["responses.source"] == "generated":
            assert legs is not None, "generated responses use models, so the legs were set up above"
            return case, hits, [legs.generate(case, [h.passage for h in hits])]
        return case, hits, list(dataset.responses_for(case_id))

    n = workers(jobs)
    if executor is None and n == 1:
        for case_id in todo:
            case, hits, responses = prepared(case_id)
            result = score_case(case, hits, responses, config)
            if legs:
                for scored, response in zip(
                    result["responses"], sorted(responses, key=lambda r: r.response_id), strict=True
                ):
                    scored["judge"] = legs.judge(case, [h.passage for h in hits], response, scored)
            _atomic_write(checkpoints / f"{case_id}.json", _dump(result))
            if bar:
                bar.update(1)
        return
    chunks = ((config, [prepared(c) for c in ids]) for ids in chunked(todo, CHUNK))
    with open_executor(1 if executor is not None else n) as pool:
        for done in ordered_map(score_checkpoints, chunks, executor or pool, 2 * n if executor is None else 16):
            for case_id, text in done:
                _atomic_write(checkpoints / f"{case_id}.json", text)
            if bar:
                bar.update(len(done))


# --- aggregation and report files (case by case: :mod:`.report_stream`) --------------------------------


def aggregate(results: Iterable[dict[str, Any]]) -> dict[str, float | None]:
    """Quality metrics over a set of case results (all in [0, 1], see README for each)."""
    tally = MetricTally()
    for c in results:
        tally.add(c)
    return tally.metrics()


def build_report(
    config: Config, fingerprint: str, results: Iterable[dict[str, Any]], sample: int | None,
    model_stats: dict[str, Any] | None
) -> dict[str, Any]:
    """The report of ``results`` (:class:`.report_stream.ReportTally` over them, in order)."""
    tally = ReportTally()
    for c in results:
        tally.add(c)
    return tally.report(config, fingerprint, sample, model_stats)


def write_reports(out: Path, report: dict[str, Any], results: Sequence[dict[str, Any]]) -> None:
    """Write report.json, cases.csv, units.csv and cases.jsonl (byte-stable)."""
    write_all(out, f"harness:{report['config']['name']}", _dump(report), results)
