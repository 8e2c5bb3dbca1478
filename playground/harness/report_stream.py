"""A run's reports built case by case: the totals of ``report.json`` and the rows of the report files.

A run of 100,000 samples cannot hold every case's result (about 15 KiB
each): :class:`ReportTally` keeps only running totals — a sum and a count
per mean, counters, the failing response keys of each hard assertion — and
:class:`ReportFiles` writes the rows of ``cases.csv``, ``units.csv`` and
``cases.jsonl`` as each case arrives, into temporary files renamed into place
once ``report.json`` is written.  Memory is bounded by the totals, not by
the number of cases.

Same numbers, same bytes as over a list: a mean is ``round(sum / n, 6)``
with the sum taken in case order, left to right, as Python's ``sum`` over
the list does (:func:`playground.harness.run.build_report` and
:func:`~playground.harness.run.write_reports` are this module over a list).
Which responses the gate covers is :func:`gated` (the rule in
:mod:`playground.harness.run`).
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from ..files import write_atomic
from ..metrics import DIMENSION_ORDER, RETRIEVAL_METRICS
from .assertions import ASSERTIONS, CheckSummary

__all__ = ["CASE_COLUMNS", "REFERENCE_VARIANTS", "RETRIEVAL_ASSERTION", "UNIT_COLUMNS", "CheckTally", "Mean",
           "MetricTally", "ReportFiles", "ReportTally", "case_rows", "csv_texts", "gated", "jsonl_line", "unit_rows",
           "write_all"]

#: Authored variants that stand for a correct system; hard assertions on them gate CI.
REFERENCE_VARIANTS = frozenset({"grounded_correct", "proper_abstention"})
#: The retrieval-level assertion, gated for every case.
RETRIEVAL_ASSERTION = "no_cross_tenant_passage"
#: Report metric name of each retrieval metric.
_RETRIEVAL_NAMES = {"recall": "recall_at_k", "precision": "precision_at_k", "hit": "hit_at_k",
                    "ndcg": "ndcg_at_k", "reciprocal_rank": "mrr"}
_OTHER_METRICS = ("context_relevance", "faithfulness", "correctness", "coverage", "answer_correct", "groundedness",
                  "hallucination_rate", "grounded_but_wrong_rate", "review_queue_rate", "key_agreement_supported",
                  "key_agreement_correct", "key_agreement_covered", "key_agreement_relevant")


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


class Mean:
    """A running mean: ``round(total / n, 6)``, None when nothing was added."""

    __slots__ = ("n", "total")

    def __init__(self) -> None:
        self.total: float = 0
        self.n = 0

    def add(self, value: float) -> None:
        self.total += value
        self.n += 1

    def share(self, flag: bool) -> None:
        """Add 1.0 for a true flag, 0.0 for a false one (a share of the flags)."""
        self.add(1.0 if flag else 0.0)

    def agree(self, auto: int, key: int | None) -> None:
        """Agreement with the answer key: 1.0 or 0.0, nothing when the key is None."""
        if key is not None:
            self.add(1.0 if auto == key else 0.0)

    def value(self) -> float | None:
        return _r(self.total / self.n) if self.n else None


class MetricTally:
    """The quality metrics of a set of cases (:func:`playground.harness.run.aggregate`), case by case."""

    def __init__(self) -> None:
        self.means = {name: Mean() for name in [*_RETRIEVAL_NAMES.values(), *_OTHER_METRICS]}

    def add(self, c: Mapping[str, Any]) -> None:
        m = self.means
        for metric in RETRIEVAL_METRICS:  # trec_eval: a case with no relevant source (None) is left out
            if (v := c["retrieval"]["metrics"][metric]) is not None:
                m[_RETRIEVAL_NAMES[metric]].add(v)
        for p in c["passages"]:
            m["context_relevance"].add(p["relevant"])
            m["key_agreement_relevant"].agree(p["relevant"], int(p["key_relevant"]))
        for r in c["responses"]:
            for cl in r["claims"]:
                m["faithfulness"].add(cl["supported"])
                m["correctness"].add(cl["correct"])
                m["key_agreement_supported"].agree(cl["supported"], cl["key_supported"])
                m["key_agreement_correct"].agree(cl["correct"], cl["key_correct"])
            for f in r["facts"]:
                m["coverage"].add(f["covered"])
                m["key_agreement_covered"].agree(f["covered"], f["key_covered"])
            m["answer_correct"].share(r["answer_correct"])
            m["groundedness"].add(r["signals"]["groundedness"])
            m["hallucination_rate"].share(r["flags"]["hallucination"])
            m["grounded_but_wrong_rate"].share(r["flags"]["grounded_but_wrong"])
            m["review_queue_rate"].share(r["flags"]["review_queue"])

    def metrics(self) -> dict[str, float | None]:
        return {name: mean.value() for name, mean in self.means.items()}


class CheckTally:
    """:func:`playground.harness.assertions.summarise`, one response's results at a time."""

    def __init__(self) -> None:
        self.rows: dict[str, list[Any]] = {}

    def add(self, key: str, results: Iterable[Mapping[str, Any]]) -> None:
        for a in results:
            row = self.rows.setdefault(a["name"], [0, 0, 0, set()])
            if a["status"] == "pass":
                row[0] += 1
            elif a["status"] == "fail":
                row[1] += 1
                row[3].add(key)
            elif a["status"] == "n/a":
                row[2] += 1
            else:
                raise ValueError(f"unknown assertion status {a['status']!r} for {a['name']} on {key}")

    def summary(self) -> dict[str, CheckSummary]:
        names = list(ASSERTIONS) + sorted(set(self.rows) - set(ASSERTIONS))
        out: dict[str, CheckSummary] = {}
        for name in names:
            passed, failed, na, failing = self.rows.get(name, [0, 0, 0, set()])
            out[name] = {"passed": passed, "failed": failed, "not_applicable": na, "failing_cases": sorted(failing)}
        return out


def gated(response: Mapping[str, Any]) -> bool:
    """Whether every hard assertion of ``response`` gates: a generated response or a reference variant."""
    return response["origin"] != "authored" or response["variant"] in REFERENCE_VARIANTS


class _VariantTally:
    def __init__(self) -> None:
        self.responses = 0
        self.supported, self.correct, self.covered, self.answer = Mean(), Mean(), Mean(), Mean()
        self.verdicts: Counter[str] = Counter()

    def add(self, r: Mapping[str, Any]) -> None:
        self.responses += 1
        for cl in r["claims"]:
            self.supported.add(cl["supported"])
            self.correct.add(cl["correct"])
        for f in r["facts"]:
            self.covered.add(f["covered"])
        self.answer.share(r["answer_correct"])
        self.verdicts[r["decision"]["verdict"]] += 1

    def record(self) -> dict[str, Any]:
        return {"responses": self.responses, "faithfulness": self.supported.value(),
                "correctness": self.correct.value(), "coverage": self.covered.value(),
                "answer_correct": self.answer.value(), "verdicts": dict(sorted(self.verdicts.items()))}


class ReportTally:
    """Everything ``report.json`` says about a run's cases, added one case result at a time."""

    def __init__(self) -> None:
        self.overall = MetricTally()
        self.by_type: dict[str, MetricTally] = defaultdict(MetricTally)
        self.everything, self.gated, self.caught = CheckTally(), CheckTally(), CheckTally()
        self.variants: dict[str, _VariantTally] = defaultdict(_VariantTally)
        self.counts = dict.fromkeys(("cases", "responses", "passages", "claims", "facts",
                                     "cases_without_relevant_source"), 0)
        self.verdicts: Counter[str] = Counter()
        self.failure_types: Counter[str] = Counter()
        self.judged: list[dict[str, Any]] = []

    def add(self, c: Mapping[str, Any]) -> None:
        self.overall.add(c)
        self.by_type[c["case_type"]].add(c)
        counts = self.counts
        counts["cases"] += 1
        counts["passages"] += len(c["passages"])
        counts["cases_without_relevant_source"] += not c["expected_sources"]
        for r in c["responses"]:
            key = f"{c['case_id']}/{r['response_id']}"
            self.everything.add(key, r["assertions"])
            if gated(r):
                self.gated.add(key, r["assertions"])
            else:
                self.gated.add(key, [a for a in r["assertions"] if a["name"] == RETRIEVAL_ASSERTION])
                self.caught.add(key, [a for a in r["assertions"] if a["name"] != RETRIEVAL_ASSERTION])
            self.variants[r["variant"]].add(r)
            counts["responses"] += 1
            counts["claims"] += len(r["claims"])
            counts["facts"] += len(r["facts"])
            self.verdicts[r["decision"]["verdict"]] += 1
            self.failure_types[str(r["decision"]["failure_type"])] += 1
            if r.get("judge"):
                self.judged.append(r["judge"])

    def assertions(self) -> dict[str, Any]:
        gated_summary = self.gated.summary()
        return {
            "gated": {n: {"failing": s["failing_cases"], "passed": s["passed"], "failed": s["failed"],
                          "not_applicable": s["not_applicable"]} for n, s in gated_summary.items()},
            "gated_failures": sum(s["failed"] for s in gated_summary.values()),
            "all": {n: {"passed": s["passed"], "failed": s["failed"], "not_applicable": s["not_applicable"]}
                    for n, s in self.everything.summary().items()},
            "caught_in_failure_variants": {n: s["failed"] for n, s in self.caught.summary().items()},
            "rule": "gated: generated responses and the reference variants (grounded_correct, proper_abstention), "
                    "plus no_cross_tenant_passage for every response; other authored variants are built to fail",
        }

    def report(self, config: Any, fingerprint: str, sample: int | None,
               model_stats: Mapping[str, Any] | None) -> dict[str, Any]:
        """The report of the cases added so far (:func:`playground.harness.run.build_report`)."""
        from ..installed import __version__

        report: dict[str, Any] = {
            "playground_version": __version__, "config": config.snapshot(), "config_fingerprint": config.fingerprint(),
            "data_fingerprint": fingerprint, "sample": sample, "counts": dict(self.counts),
            "assertions": self.assertions(),
            "metrics": {"overall": self.overall.metrics(),
                        "by_case_type": {t: m.metrics() for t, m in sorted(self.by_type.items())}},
            "decisions": {"verdicts": dict(sorted(self.verdicts.items())),
                          "failure_types": dict(sorted(self.failure_types.items()))},
            "by_variant": {v: t.record() for v, t in sorted(self.variants.items())},
        }
        if model_stats is not None:
            from .judge import JudgeResult, generation_metrics

            report["models"] = dict(sorted(model_stats.items()))
            report["judge"] = generation_metrics([JudgeResult.from_dict(j) for j in self.judged],
                                                 self.counts["cases"])
        return report


CASE_COLUMNS = (
    "case_id", "case_type", "tenant", "response_id", "variant", "origin", "verdict", "failure_type", "next_action",
    "confidence", "answer_correct", "abstained", "hallucination", "grounded_but_wrong", "review_queue",
    "context_relevance", "faithfulness", "correctness", "coverage", "groundedness", "attribution", "specificity",
    "recall_at_k", "mrr", "assertion_failures", "reason",
)
UNIT_COLUMNS = ("annotator", "unit_kind", "unit_id", "case_id", "response_id", "dimension", "value", "score", "key")


def case_rows(c: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``cases.csv`` rows of one case result: one per response."""
    rows = []
    for r in c["responses"]:
        rates, decision, flags, signals = r["rates"], r["decision"], r["flags"], r["signals"]
        rows.append({
            "case_id": c["case_id"], "case_type": c["case_type"], "tenant": c["tenant"],
            "response_id": r["response_id"], "variant": r["variant"], "origin": r["origin"],
            "verdict": decision["verdict"], "failure_type": decision["failure_type"] or "",
            "next_action": decision["next_action"], "confidence": decision["confidence"],
            "answer_correct": int(r["answer_correct"]), "abstained": int(r["abstained"]),
            "hallucination": int(flags["hallucination"]), "grounded_but_wrong": int(flags["grounded_but_wrong"]),
            "review_queue": int(flags["review_queue"]),
            **{d: rates[d]["rate"] if rates[d]["rate"] is not None else "" for d in DIMENSION_ORDER},
            "groundedness": signals["groundedness"], "attribution": signals["attribution"],
            "specificity": signals["specificity"], "recall_at_k": c["retrieval"]["metrics"]["recall"],
            "mrr": c["retrieval"]["metrics"]["reciprocal_rank"],
            "assertion_failures": " ".join(a["name"] for a in r["assertions"] if a["status"] == "fail"),
            "reason": decision["reason"],
        })
    return rows


def unit_rows(annotator: str, c: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``units.csv`` rows of one case result: passages, then per response its claims and facts."""
    def row(kind: str, unit_id: str, response_id: str, dim: str, value: Any, score: Any, key: Any) -> dict[str, Any]:
        return {"annotator": annotator, "unit_kind": kind, "unit_id": unit_id, "case_id": c["case_id"],
                "response_id": response_id, "dimension": dim, "value": value, "score": score, "key": key}

    rows = [row("passage", p["unit_id"], "", "relevant", p["relevant"], p["relevance"], int(p["key_relevant"]))
            for p in c["passages"]]
    for r in c["responses"]:
        rid = r["response_id"]
        for cl in r["claims"]:
            rows.append(row("claim", cl["unit_id"], rid, "supported", cl["supported"], cl["support"],
                            "" if cl["key_supported"] is None else cl["key_supported"]))
            rows.append(row("claim", cl["unit_id"], rid, "correct", cl["correct"], cl["correctness"],
                            "" if cl["key_correct"] is None else cl["key_correct"]))
        for f in r["facts"]:
            rows.append(row("fact", f["unit_id"], rid, "covered", f["covered"], float(f["covered"]),
                            "" if f["key_covered"] is None else f["key_covered"]))
    return rows


def csv_texts(annotator: str, c: Mapping[str, Any]) -> tuple[str, str]:
    """The ``cases.csv`` and ``units.csv`` lines of one case result, as text (what :class:`ReportFiles` writes
    for it): made where the case is scored, so the process writing the files only copies them."""
    texts = []
    for columns, rows in ((CASE_COLUMNS, case_rows(c)), (UNIT_COLUMNS, unit_rows(annotator, c))):
        buf = io.StringIO()
        csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore").writerows(rows)
        texts.append(buf.getvalue())
    return texts[0], texts[1]


class ReportFiles:
    """``cases.csv``, ``units.csv`` and ``cases.jsonl`` written case by case, ``report.json`` at the end.

    Each file grows in a temporary file beside it (``.NAME.<pid>.stream.tmp``)
    and is fsynced and renamed into place by :meth:`finish`, after
    ``report.json``: a reader never sees half a file.  :meth:`abort` (or
    leaving the ``with`` block on an error) removes the temporary files.
    """

    NAMES = ("cases.csv", "units.csv", "cases.jsonl")

    def __init__(self, out: Path, annotator: str) -> None:
        self.out, self.annotator = out, annotator
        self.temps = {name: out / f".{name}.{os.getpid()}.stream.tmp" for name in self.NAMES}
        self.handles: dict[str, IO[str]] = {}
        try:
            for name, tmp in self.temps.items():
                tmp.unlink(missing_ok=True)  # a stale one of a killed run with this pid
                self.handles[name] = tmp.open("x", encoding="utf-8", newline="")
        except BaseException:
            self.abort()
            raise
        self.cases = csv.DictWriter(self.handles["cases.csv"], fieldnames=list(CASE_COLUMNS), lineterminator="\n",
                                    extrasaction="ignore")
        self.units = csv.DictWriter(self.handles["units.csv"], fieldnames=list(UNIT_COLUMNS), lineterminator="\n",
                                    extrasaction="ignore")
        self.cases.writeheader()
        self.units.writeheader()

    def __enter__(self) -> ReportFiles:
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        if kind is not None:
            self.abort()

    def add(self, c: Mapping[str, Any], line: str | None = None, texts: tuple[str, str] | None = None) -> None:
        """Write the rows of case result ``c``; ``line`` is its ``cases.jsonl`` line and ``texts`` its
        :func:`csv_texts` when already made (then ``c`` is not read)."""
        if texts is None:
            self.cases.writerows(case_rows(c))
            self.units.writerows(unit_rows(self.annotator, c))
        else:
            self.handles["cases.csv"].write(texts[0])
            self.handles["units.csv"].write(texts[1])
        self.handles["cases.jsonl"].write(line if line is not None else jsonl_line(c))

    def finish(self, report_text: str) -> None:
        """Write ``report.json`` (atomically), then put the three files in place."""
        for fh in self.handles.values():
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
        write_atomic(self.out / "report.json", report_text)
        for name, tmp in self.temps.items():
            os.replace(tmp, self.out / name)
        self.handles = {}

    def abort(self) -> None:
        for fh in self.handles.values():
            with contextlib.suppress(OSError):
                fh.close()
        for tmp in self.temps.values():
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
        self.handles = {}


def jsonl_line(c: Mapping[str, Any]) -> str:
    """A case result's line of ``cases.jsonl``: keys sorted, UTF-8 as is."""
    return json.dumps(c, sort_keys=True, ensure_ascii=False) + "\n"


def write_all(out: Path, annotator: str, report_text: str, results: Iterable[Mapping[str, Any]]) -> None:
    """Every report file of ``results`` at once (:func:`playground.harness.run.write_reports`)."""
    with ReportFiles(out, annotator) as files:
        for c in results:
            files.add(c)
        files.finish(report_text)
