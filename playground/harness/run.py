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

Which responses the hard-assertion gate covers: under ``responses.source:
generated`` every generated response; under ``authored`` the reference
variants (``grounded_correct``, ``proper_abstention``), which stand for a
correct system — the other authored variants are built to fail and are
reported as *caught* — and, for every case, the retrieval check
``no_cross_tenant_passage``.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from ..claims import split_claims
from ..files import write_atomic
from ..golden import Dataset, load_dataset, passage_key, passage_unit
from ..metrics import DIMENSION_ORDER, RETRIEVAL_METRICS, rates_from_labels
from ..model import Case, Label, Passage, Response
from . import score as S
from .assertions import AssertionResult, check_assertions, summarise
from .config import Config
from .decide import decide, flags
from .retrieve import Hit, Leg, build_retriever, case_query, retrieve_cases

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
    "score_passages",
    "score_response",
    "select_cases",
    "write_reports",
]

#: Authored variants that stand for a correct system; hard assertions on them gate CI.
REFERENCE_VARIANTS = frozenset({"grounded_correct", "proper_abstention"})
#: The retrieval-level assertion, gated for every case.
RETRIEVAL_ASSERTION = "no_cross_tenant_passage"
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


def score_response(case: Case, hits: Sequence[Hit], response: Response, config: Config,
                   passage_rows: list[dict[str, Any]], context: S.Context | None = None) -> dict[str, Any]:
    """Every automatic label and signal for one response, plus decision, flags and assertions.

    ``context``: the retrieved passages tokenised once (:class:`score.Context`); built here when None.
    """
    passages = [h.passage for h in hits]
    context = context if context is not None else S.Context([p.text for p in passages])
    floor = config["scoring.support_floor"]
    cfloor = config["scoring.correctness_floor"]
    kind = config["scoring.kind"]
    query = case_query(case, config["retrieval.use_history"])
    claims = split_claims(response.text, response.response_id)
    sentences = [c.text for c in claims]
    top_similarity = max((p["relevance"] for p in passage_rows), default=0.0)
    signals = S.response_signals(query, response.text, sentences, context, floor, kind=kind,
                                 top_retrieval_similarity=top_similarity)
    abstained = signals.abstained
    fact_texts = [f.statement for f in case.reference_facts]
    key = {k.text: k for k in response.key_claims}
    claim_rows: list[dict[str, Any]] = []
    for claim, sup in zip(claims, signals.sentence_support, strict=True):
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
    labels = [Label("harness", "passage", p["unit_id"], "relevant", p["relevant"]) for p in passage_rows]
    labels += [Label("harness", "claim", c["unit_id"], "supported", c["supported"]) for c in claim_rows]
    labels += [Label("harness", "claim", c["unit_id"], "correct", c["correct"]) for c in claim_rows]
    labels += [Label("harness", "fact", f["unit_id"], "covered", f["covered"]) for f in fact_rows]
    rates = rates_from_labels(labels)
    return {
        "response_id": response.response_id, "variant": response.variant, "origin": response.origin,
        "meta": dict(response.meta), "text": response.text, "abstained": abstained, "answer_correct": answer_ok,
        "signals": {
            "groundedness": _r(signals.groundedness), "attribution": _r(signals.attribution),
            "specificity": _r(signals.specificity), "hedging": _r(signals.hedging),
            "answer_relevance": _r(signals.answer_relevance), "context_quality": _r(signals.context_quality),
            "top_retrieval_similarity": _r(signals.top_retrieval_similarity), "disagreement": _r(signals.disagreement),
            "confidence": _r(signals.confidence),
        },
        "decision": {
            "verdict": decision.verdict, "failure_type": decision.failure_type, "reason": decision.reason,
            "next_action": decision.next_action, "confidence": _r(decision.confidence), "rule": decision.rule,
            "low_coverage_sentences": [[i, s, _r(v)] for i, s, v in decision.low_coverage_sentences],
        },
        "flags": {"hallucination": flag.hallucination, "grounded_but_wrong": flag.grounded_but_wrong,
                  "review_queue": flag.review_queue, "review_reasons": list(flag.review_reasons)},
        "assertions": [{"name": a.name, "status": a.status, "detail": a.detail} for a in results],
        "claims": claim_rows, "facts": fact_rows,
        "rates": {d: {"successes": r.successes, "n": r.n, "rate": _r(r.rate)} for d, r in rates.items()},
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


def run_harness(
    config: Config, out_dir: str | Path, *, root: str | Path | None = None, dataset: Dataset | None = None,
    sample: int | None = None, resume: bool = False, progress: bool = True, models: Any = None,
    cache_path: str | Path | None = None,
) -> dict[str, Any]:
    """Run the harness; return the report (also written to ``out_dir``; see the module docstring)."""
    out = Path(out_dir)
    dataset = dataset or load_dataset(root)  # all problems, unresolved locators included, before any work
    fingerprint = data_fingerprint(dataset.root)
    case_ids = select_cases(dataset.cases, sample)
    run_meta = {"config_fingerprint": config.fingerprint(), "data_fingerprint": fingerprint, "cases": case_ids}
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

    legs = None
    if config.uses_models:
        legs = ModelLegs(config, Path(cache_path) if cache_path else out / ".cache" / "ollama.db", models)
    retriever = build_retriever(dataset.corpus, config)
    todo = [c for c in case_ids if not (checkpoints / f"{c}.json").is_file()]
    bar = None
    if progress:
        from tqdm import tqdm

        # disable=None: tqdm draws only when stderr is a terminal (no \r-joined bars in CI logs).
        bar = tqdm(total=len(case_ids), initial=len(case_ids) - len(todo), desc=f"harness {config.name}", unit="case",
                   disable=None)
    for case_id in todo:
        case = dataset.cases[case_id]
        one = Dataset(dataset.root, dataset.corpus, {case_id: case}, {})
        hits = retrieve_cases(one, config, retriever, legs.legs() if legs else ())[case_id]
        if config["responses.source"] == "generated":
            assert legs is not None, "generated responses use models, so the legs were set up above"
            responses = [legs.generate(case, [h.passage for h in hits])]
        else:
            responses = dataset.responses_for(case_id)
        result = score_case(case, hits, responses, config)
        if legs:
            for scored, response in zip(
                result["responses"], sorted(responses, key=lambda r: r.response_id), strict=True
            ):
                scored["judge"] = legs.judge(case, [h.passage for h in hits], response, scored)
        _atomic_write(checkpoints / f"{case_id}.json", _dump(result))
        if bar:
            bar.update(1)
    if bar:
        bar.close()
    results = [json.loads((checkpoints / f"{c}.json").read_text(encoding="utf-8")) for c in case_ids]
    report = build_report(config, fingerprint, results, sample, legs.stats() if legs else None)
    write_reports(out, report, results)
    (out / INCOMPLETE).unlink(missing_ok=True)
    return report


# --- aggregation and report files -----------------------------------------------------------


def _mean(values: Sequence[float]) -> float | None:
    return _r(sum(values) / len(values)) if values else None


def _share(flags_: Sequence[bool]) -> float | None:
    return _mean([1.0 if f else 0.0 for f in flags_])


def _agreement(pairs: Sequence[tuple[int, int | None]]) -> float | None:
    judged = [(a, k) for a, k in pairs if k is not None]
    return _mean([1.0 if a == k else 0.0 for a, k in judged])


def aggregate(results: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Quality metrics over a set of case results (all in [0, 1], see README for each)."""
    responses = [r for c in results for r in c["responses"]]
    m: dict[str, float | None] = {}
    for metric in RETRIEVAL_METRICS:
        name = {"recall": "recall_at_k", "precision": "precision_at_k", "hit": "hit_at_k",
                "ndcg": "ndcg_at_k", "reciprocal_rank": "mrr"}[metric]
        # trec_eval's convention: a case with no relevant source (None) is left out of the mean
        m[name] = _mean([v for c in results if (v := c["retrieval"]["metrics"][metric]) is not None])
    passages = [p for c in results for p in c["passages"]]
    claims = [cl for r in responses for cl in r["claims"]]
    facts = [f for r in responses for f in r["facts"]]
    m["context_relevance"] = _mean([p["relevant"] for p in passages])
    m["faithfulness"] = _mean([c["supported"] for c in claims])
    m["correctness"] = _mean([c["correct"] for c in claims])
    m["coverage"] = _mean([f["covered"] for f in facts])
    m["answer_correct"] = _share([r["answer_correct"] for r in responses])
    m["groundedness"] = _mean([r["signals"]["groundedness"] for r in responses])
    m["hallucination_rate"] = _share([r["flags"]["hallucination"] for r in responses])
    m["grounded_but_wrong_rate"] = _share([r["flags"]["grounded_but_wrong"] for r in responses])
    m["review_queue_rate"] = _share([r["flags"]["review_queue"] for r in responses])
    m["key_agreement_supported"] = _agreement([(c["supported"], c["key_supported"]) for c in claims])
    m["key_agreement_correct"] = _agreement([(c["correct"], c["key_correct"]) for c in claims])
    m["key_agreement_covered"] = _agreement([(f["covered"], f["key_covered"]) for f in facts])
    m["key_agreement_relevant"] = _agreement([(p["relevant"], int(p["key_relevant"])) for p in passages])
    return m


def _gated(case: dict[str, Any], response: dict[str, Any]) -> bool:
    return response["origin"] != "authored" or response["variant"] in REFERENCE_VARIANTS


def build_report(
    config: Config, fingerprint: str, results: Sequence[dict[str, Any]], sample: int | None,
    model_stats: dict[str, Any] | None
) -> dict[str, Any]:
    from .. import __version__

    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in results:
        by_type[c["case_type"]].append(c)
    everything: dict[str, list[AssertionResult]] = {}
    gated: dict[str, list[AssertionResult]] = {}
    caught: dict[str, list[AssertionResult]] = {}
    for c in results:
        for r in c["responses"]:
            key = f"{c['case_id']}/{r['response_id']}"
            res = [AssertionResult(a["name"], a["status"], a["detail"]) for a in r["assertions"]]
            everything[key] = res
            if _gated(c, r):
                gated[key] = res
            else:
                gated[key] = [a for a in res if a.name == RETRIEVAL_ASSERTION]
                caught[key] = [a for a in res if a.name != RETRIEVAL_ASSERTION]
    gated_summary = summarise(gated)
    assertions = {
        "gated": {n: {"failing": s["failing_cases"], "passed": s["passed"], "failed": s["failed"],
                      "not_applicable": s["not_applicable"]} for n, s in gated_summary.items()},
        "gated_failures": sum(s["failed"] for s in gated_summary.values()),
        "all": {n: {"passed": s["passed"], "failed": s["failed"], "not_applicable": s["not_applicable"]}
                for n, s in summarise(everything).items()},
        "caught_in_failure_variants": {n: s["failed"] for n, s in summarise(caught).items()},
        "rule": "gated: generated responses and the reference variants (grounded_correct, proper_abstention), "
                "plus no_cross_tenant_passage for every response; other authored variants are built to fail",
    }
    responses = [r for c in results for r in c["responses"]]
    variants: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in responses:
        variants[r["variant"]].append(r)
    per_variant = {}
    for v, rs in sorted(variants.items()):
        claims = [cl for r in rs for cl in r["claims"]]
        facts = [f for r in rs for f in r["facts"]]
        per_variant[v] = {
            "responses": len(rs), "faithfulness": _mean([c["supported"] for c in claims]),
            "correctness": _mean([c["correct"] for c in claims]), "coverage": _mean([f["covered"] for f in facts]),
            "answer_correct": _share([r["answer_correct"] for r in rs]),
            "verdicts": dict(sorted(Counter(r["decision"]["verdict"] for r in rs).items())),
        }
    report = {
        "playground_version": __version__,
        "config": config.snapshot(),
        "config_fingerprint": config.fingerprint(),
        "data_fingerprint": fingerprint,
        "sample": sample,
        "counts": {
            "cases": len(results),
            "responses": len(responses),
            "passages": sum(len(c["passages"]) for c in results),
            "claims": sum(len(r["claims"]) for r in responses),
            "facts": sum(len(r["facts"]) for r in responses),
            "cases_without_relevant_source": sum(1 for c in results if not c["expected_sources"]),
        },
        "assertions": assertions,
        "metrics": {
            "overall": aggregate(results),
            "by_case_type": {t: aggregate(cs) for t, cs in sorted(by_type.items())},
        },
        "decisions": {
            "verdicts": dict(sorted(Counter(r["decision"]["verdict"] for r in responses).items())),
            "failure_types": dict(sorted(Counter(str(r["decision"]["failure_type"]) for r in responses).items())),
        },
        "by_variant": per_variant,
    }
    if model_stats is not None:
        from .judge import JudgeResult, generation_metrics

        judged = [JudgeResult.from_dict(r["judge"]) for c in results for r in c["responses"] if r.get("judge")]
        report["models"] = dict(sorted(model_stats.items()))
        report["judge"] = generation_metrics(judged, len(results))
    return report


def _csv(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


CASE_COLUMNS = (
    "case_id", "case_type", "tenant", "response_id", "variant", "origin", "verdict", "failure_type", "next_action",
    "confidence", "answer_correct", "abstained", "hallucination", "grounded_but_wrong", "review_queue",
    "context_relevance", "faithfulness", "correctness", "coverage", "groundedness", "attribution", "specificity",
    "recall_at_k", "mrr", "assertion_failures", "reason",
)
UNIT_COLUMNS = ("annotator", "unit_kind", "unit_id", "case_id", "response_id", "dimension", "value", "score", "key")


def write_reports(out: Path, report: dict[str, Any], results: Sequence[dict[str, Any]]) -> None:
    """Write report.json, cases.csv, units.csv and cases.jsonl (byte-stable)."""
    annotator = f"harness:{report['config']['name']}"
    case_rows, unit_rows = [], []
    for c in results:
        for p in c["passages"]:
            unit_rows.append(
                {
                    "annotator": annotator,
                    "unit_kind": "passage",
                    "unit_id": p["unit_id"],
                    "case_id": c["case_id"],
                    "response_id": "",
                    "dimension": "relevant",
                    "value": p["relevant"],
                    "score": p["relevance"],
                    "key": int(p["key_relevant"]),
                }
            )
        for r in c["responses"]:
            rates = r["rates"]
            case_rows.append(
                {
                    "case_id": c["case_id"],
                    "case_type": c["case_type"],
                    "tenant": c["tenant"],
                    "response_id": r["response_id"],
                    "variant": r["variant"],
                    "origin": r["origin"],
                    "verdict": r["decision"]["verdict"],
                    "failure_type": r["decision"]["failure_type"] or "",
                    "next_action": r["decision"]["next_action"],
                    "confidence": r["decision"]["confidence"],
                    "answer_correct": int(r["answer_correct"]),
                    "abstained": int(r["abstained"]),
                    "hallucination": int(r["flags"]["hallucination"]),
                    "grounded_but_wrong": int(r["flags"]["grounded_but_wrong"]),
                    "review_queue": int(r["flags"]["review_queue"]),
                    **{d: rates[d]["rate"] if rates[d]["rate"] is not None else "" for d in DIMENSION_ORDER},
                    "groundedness": r["signals"]["groundedness"],
                    "attribution": r["signals"]["attribution"],
                    "specificity": r["signals"]["specificity"],
                    "recall_at_k": c["retrieval"]["metrics"]["recall"],
                    "mrr": c["retrieval"]["metrics"]["reciprocal_rank"],
                    "assertion_failures": " ".join(a["name"] for a in r["assertions"] if a["status"] == "fail"),
                    "reason": r["decision"]["reason"],
                }
            )
            for cl in r["claims"]:
                for dim, value, score_key, key in (("supported", cl["supported"], "support", cl["key_supported"]),
                                                   ("correct", cl["correct"], "correctness", cl["key_correct"])):
                    unit_rows.append(
                        {
                            "annotator": annotator,
                            "unit_kind": "claim",
                            "unit_id": cl["unit_id"],
                            "case_id": c["case_id"],
                            "response_id": r["response_id"],
                            "dimension": dim,
                            "value": value,
                            "score": cl[score_key],
                            "key": "" if key is None else key,
                        }
                    )
            for f in r["facts"]:
                unit_rows.append(
                    {
                        "annotator": annotator,
                        "unit_kind": "fact",
                        "unit_id": f["unit_id"],
                        "case_id": c["case_id"],
                        "response_id": r["response_id"],
                        "dimension": "covered",
                        "value": f["covered"],
                        "score": float(f["covered"]),
                        "key": "" if f["key_covered"] is None else f["key_covered"],
                    }
                )
    _atomic_write(out / "report.json", _dump(report))
    _atomic_write(out / "cases.csv", _csv(case_rows, CASE_COLUMNS))
    _atomic_write(out / "units.csv", _csv(unit_rows, UNIT_COLUMNS))
    _atomic_write(
        out / "cases.jsonl", "".join(json.dumps(c, sort_keys=True, ensure_ascii=False) + "\n" for c in results)
    )
