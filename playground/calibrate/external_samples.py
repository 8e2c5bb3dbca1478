"""Per-sample scores of an external tool (RAGAS ``evaluate()``, DeepEval) against the human labels of a dataset.

A result table has one row per sample: the sample's inputs (to match on)
and metric columns.  ``evaluate(...).to_pandas()`` written as CSV, JSONL or
Parquet, or a DeepEval results table flattened the same way, come in as they
are.  Metric columns map to the playground's rates (:data:`METRICS`; column
names are compared lower-cased with spaces and ``-`` as ``_``, so DeepEval's
"Contextual Relevancy" is ``contextual_relevancy``):

=========================  ==================  ===========================================================
metric                     rate                why
=========================  ==================  ===========================================================
faithfulness               faithfulness        share of the response's claims the contexts support
context_precision (+       context_relevance   share of retrieved contexts that are relevant, rank-weighted
variants), context_
relevance, context_
utilization, contextual_
precision, contextual_
relevancy
answer_correctness,        correctness         the response's claims against the reference
factual_correctness,
correctness
context_recall (+          coverage            reference statements found in the contexts: a proxy — the
variants), contextual_                         playground's coverage asks whether they are in the *answer*
recall
=========================  ==================  ===========================================================

``answer_relevancy``/``response_relevancy`` and the like have no human rate
here and are listed as ignored; any other column that is not a known input
column (RAGAS or DeepEval fields, ``id``, DeepEval's ``*_reason``,
``*_success``, ``*_threshold``) is an *unknown metric column*: the error names
it quoted (``''`` when empty), and ``--metric COLUMN=RATE`` maps it or
``--ignore COLUMN`` drops it.  A pandas index column (``to_csv(path)`` without
``index=False``: a first column named ``''`` holding 0, 1, …, n − 1) is
recognised and skipped (:mod:`playground.calibrate.index_column`).

Rows are matched to samples by their id (``id``/``sample_id`` column,
DeepEval's ``additional_metadata.id``) when the dataset's samples have ids,
else by (question, response) after trimming whitespace.  Unmatched rows and
samples are listed, never dropped silently.  A score outside [0, 1] is an
error (with its row) unless ``scale=100``, which divides by 100; the error
suggests ``--scale 100`` only when the column's values look like 0–100 (all
in [0, 100], the largest above 1.01).  A score within 1e-9 of [0, 1] is float noise
(RAGAS's BleuScore writes ``1.0000000000000004``): it is clamped into [0, 1]
and the count per column is reported.  An empty or NaN score (a metric that
failed on that sample) is missing, and counted.

Per rate, on the samples that have both a score and at least one human label
(``human rate = yes / labelled`` of the sample's units, from one annotator
or the consensus):

* Pearson's r with its Fisher-z interval (``scipy.stats.pearsonr``) and
  Spearman's rho (``scipy.stats.spearmanr``) with the same interval on the
  ranks; both need 4 samples;
* the mean absolute error ``mean |human rate - score|``;
* thresholded agreement: human pass = ``human rate >= human_threshold``
  (default 0.5), tool pass = ``score >= threshold`` (default 0.5); Cohen's
  kappa with its interval and the base rate (:func:`playground.stats.cohens_kappa`),
  and a sweep of the tool's threshold over 0.05 … 0.95 (the highest kappa;
  ties to the lower threshold);
* the prediction-powered estimate of the dataset's rate
  (:func:`playground.stats.ppi_mean`) at the unit level: every unit of the
  rate in a scored sample, with the sample's score as the prediction of each
  unit and the human label where there is one.  It assumes the labelled units
  are a random sample of the units (label a calibration sample for that).

Error analysis (issue 24.6): two more "rates" compare a per-sample pass/fail
judge with the people's response verdicts, like any other dimension:

* ``pass`` — the human side is each response's verdict (``pass``: 1 pass,
  0 fail; one annotator's, or the consensus; unsure never counts);
* ``tag:NAME`` — a per-failure-mode judge (score high = the failure is
  there) against the tag NAME: a response the people judged counts 1 when it
  is tagged NAME (resolved through the taxonomy's renames and merges), else 0;
  for one annotator their own verdict and tags, for the consensus the
  majority of the people who judged it (a tie is left out).

A column maps to them with ``--metric COLUMN=pass`` / ``COLUMN=tag:NAME``,
or ``dimension="pass"`` (``--dimension``) maps every column that is no known
metric and no input column (:func:`verdict_labels`, :func:`with_verdicts`).
"""
from __future__ import annotations

import itertools
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError, Problem
from ..model import DIMENSION_NAMES
from ..stats import KappaResult, PPIResult, cohens_kappa, ppi_mean
from .index_column import index_columns, quoted

__all__ = [
    "CLAMP_TOLERANCE",
    "IGNORED_METRICS",
    "INPUT_COLUMNS",
    "METRICS",
    "PERCENT_HINT_ABOVE",
    "VERDICT_RATE",
    "RateComparison",
    "ResultTable",
    "SampleCalibration",
    "calibrate_samples",
    "match_rows",
    "metric_key",
    "read_result",
    "verdict_labels",
    "verdict_rate_problem",
    "with_verdicts",
]

RATE_OF_DIMENSION = DIMENSION_NAMES
#: The "rate" (and dimension) of a per-sample pass/fail judge against the people's response verdicts.
VERDICT_RATE = "pass"
_TAG_PREFIX = "tag:"


class _RateDimensions(dict[str, str]):
    """rate -> dimension: the four rates, plus ``pass`` and every ``tag:NAME`` (their own dimension)."""

    def __missing__(self, rate: str) -> str:
        if verdict_rate_problem(rate) is None:
            return rate
        raise KeyError(rate)

    def __contains__(self, rate: object) -> bool:
        return super().__contains__(rate) or (isinstance(rate, str) and verdict_rate_problem(rate) is None)


def verdict_rate_problem(rate: str) -> str | None:
    """Why ``rate`` is neither ``pass`` nor ``tag:NAME`` with a good tag name (``None`` when it is one)."""
    if rate == VERDICT_RATE:
        return None
    if not rate.startswith(_TAG_PREFIX):
        return f"{rate!r} is not pass or tag:NAME"
    from ..store.tags import TAG_RULE, check_tag_name

    try:
        check_tag_name(rate[len(_TAG_PREFIX):])
    except ValueError:
        return f"{rate!r}: {TAG_RULE}"
    return None


DIMENSION_OF_RATE: dict[str, str] = _RateDimensions({v: k for k, v in DIMENSION_NAMES.items()})
METRICS: dict[str, str] = {
    "faithfulness": "faithfulness",
    "context_precision": "context_relevance", "llm_context_precision_with_reference": "context_relevance",
    "llm_context_precision_without_reference": "context_relevance",
    "non_llm_context_precision_with_reference": "context_relevance", "context_relevance": "context_relevance",
    "context_utilization": "context_relevance", "contextual_precision": "context_relevance",
    "contextual_relevancy": "context_relevance", "nv_context_relevance": "context_relevance",
    "answer_correctness": "correctness", "factual_correctness": "correctness", "correctness": "correctness",
    "context_recall": "coverage", "llm_context_recall": "coverage", "non_llm_context_recall": "coverage",
    "contextual_recall": "coverage",
}
IGNORED_METRICS = frozenset({
    "answer_relevancy", "response_relevancy", "answer_similarity", "semantic_similarity", "noise_sensitivity",
    "noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "context_entity_recall", "context_entities_recall",
    "bleu_score", "rouge_score", "exact_match", "string_present", "hallucination", "bias", "toxicity",
})
INPUT_COLUMNS = frozenset({
    "user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids",
    "response", "multi_responses", "reference", "rubrics", "persona_name", "query_style", "query_length",
    "input", "actual_output", "expected_output", "retrieval_context", "context", "name", "comments", "source_file",
    "additional_metadata", "tools_called", "expected_tools", "token_cost", "input_token_count",
    "output_token_count", "custom_column_key_values", "expectations", "id", "sample_id", "success",
    "reference_tool_calls", "reference_topics",
})
_SUFFIX_IGNORED = ("_reason", "_success", "_threshold", "_verbose_logs", "_evaluation_model", "_error")
SWEEP = tuple(round(0.05 * i, 2) for i in range(1, 20))


def metric_key(column: str) -> str:
    """``"Contextual Relevancy"`` → ``"contextual_relevancy"``; a trailing ``_score`` or ``(...)`` dropped."""
    key = re.sub(r"\(.*?\)|\[.*?\]", "", column).strip().lower()
    key = re.sub(r"[\s\-]+", "_", key)
    return key.removesuffix("_score")


@dataclass(frozen=True)
class ResultTable:
    """A result table read and checked: per row its place, its match keys and its scores per rate."""

    rows: list[tuple[str, str | None, tuple[str, str] | None, dict[str, float | None]]]
    rates: dict[str, str]  # column -> rate
    ignored: tuple[str, ...]
    #: per metric column, how many scores within :data:`CLAMP_TOLERANCE` of [0, 1] were clamped into it
    clamped: dict[str, int] = field(default_factory=dict)


#: How far outside [0, 1] (after scaling) a score may be and still count as float noise: clamped and counted.
CLAMP_TOLERANCE = 1e-9
#: A column whose scores are all in [0, 100] with the largest above this looks like 0–100 (``--scale 100`` hinted).
PERCENT_HINT_ABOVE = 1.01


def _number(value: Any) -> float | str | None:
    """The value as a float, None when missing (empty, None, NaN), or the text itself when it is not a number."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return str(value)
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    return None if math.isnan(x) else x


def _looks_like_percent(values: list[float]) -> bool:
    """True when a column's scores look like 0–100: all in [0, 100], the largest above :data:`PERCENT_HINT_ABOVE`."""
    return bool(values) and all(0.0 <= v <= 100.0 for v in values) and max(values) > PERCENT_HINT_ABOVE


def _scores_of(column: str, cells: list[tuple[Any, Any]], scale: float,
               problems: list[Problem]) -> tuple[list[float | None], int]:
    """One metric column's scores divided by ``scale``, and how many were clamped into [0, 1].

    A score within :data:`CLAMP_TOLERANCE` of [0, 1] (after scaling) is clamped
    (BleuScore writes 1.0000000000000004); further out, or infinite, or not a
    number, it is a problem with its row.  ``--scale 100`` is suggested only
    when the column's values look like 0–100 (:func:`_looks_like_percent`).
    """
    values = [(place, _number(v)) for place, v in cells]
    numbers = [v for _p, v in values if isinstance(v, float) and math.isfinite(v)]
    hint = " (scores on 0–100? pass --scale 100)" if scale == 1.0 and _looks_like_percent(numbers) else ""
    out: list[float | None] = []
    clamped = 0
    for place, x in values:
        if isinstance(x, str):
            problems.append(place.problem(f"score {x!r} is not a number", repr(column)))
            out.append(None)
            continue
        if x is None:
            out.append(None)
            continue
        y = x / scale
        if math.isinf(x) or not -CLAMP_TOLERANCE <= y <= 1.0 + CLAMP_TOLERANCE:
            shown = f"{x:g}" if float(f"{x:g}") == x else repr(x)  # 1.000000002, not "1"
            problems.append(place.problem(f"score {shown} is outside [0, {scale:g}]{hint}", repr(column)))
            out.append(None)
            continue
        if not 0.0 <= y <= 1.0:
            clamped += 1
            y = min(1.0, max(0.0, y))
        out.append(y)
    return out, clamped


def _row_id(data: dict[str, Any]) -> str | None:
    for key in ("id", "sample_id"):
        if data.get(key) not in (None, ""):
            return str(data[key])
    meta = data.get("additional_metadata")
    if isinstance(meta, str) and meta.strip().startswith("{"):
        import json

        try:
            meta = json.loads(meta)
        except ValueError:
            meta = None
    if isinstance(meta, dict) and meta.get("id") not in (None, ""):
        return str(meta["id"])
    return None


def read_result(path: str | Path, *, scale: float = 1.0, extra_metrics: dict[str, str] | None = None,
                ignore: tuple[str, ...] = (), only: tuple[str, ...] | None = None,
                dimension: str | None = None) -> ResultTable:
    """Read a per-sample result table (DataError naming every problem, unknown metric columns included).

    ``only``: read just these metric columns (each mapped by ``extra_metrics``), whatever else the table has.
    ``dimension`` (``pass`` or ``tag:NAME``): every column that is no known metric and no input column is a
    judge of it (instead of an unknown metric column).
    """
    from .tool_results import read_scored_rows

    path, problems = Path(path), list[Problem]()
    _fmt, rows = read_scored_rows(path, problems)
    if problems:
        raise DataError(problems, f"{path}: not a readable result table")
    columns = list(dict.fromkeys(itertools.chain.from_iterable(r.data for r in rows)))
    index = index_columns(columns, [r.data for r in rows])
    columns = [c for c in columns if c not in index]  # pandas index columns (index_column.py): not metrics
    if only is not None:
        columns = [c for c in columns if c in only]
    extra = dict(extra_metrics or {})
    bad_rates = sorted(r for r in extra.values() if r not in DIMENSION_OF_RATE)
    if bad_rates:
        raise ValueError(f"--metric: unknown rate(s) {', '.join(bad_rates)} (rates: {', '.join(DIMENSION_OF_RATE)}, "
                         "pass, tag:NAME)")
    if dimension is not None and (why := verdict_rate_problem(dimension)) is not None:
        raise ValueError(f"--dimension with a result table: {why} (the four rates map with --metric COLUMN=RATE)")
    rates: dict[str, str] = {}
    ignored, unknown = [], []
    for c in columns:
        key = metric_key(c)
        if c in extra:
            rates[c] = extra[c]
        elif c in ignore or c in INPUT_COLUMNS or key in INPUT_COLUMNS or key.endswith(_SUFFIX_IGNORED):
            continue
        elif key in METRICS:
            rates[c] = METRICS[key]
        elif key in IGNORED_METRICS:
            ignored.append(c)
        elif dimension is not None:
            rates[c] = dimension
        else:
            unknown.append(c)
    if unknown:
        problems.append(Problem(path.name, f"unknown metric column(s) {quoted(unknown)}: map with --metric "
                                f"COLUMN=RATE (rates: {', '.join(DIMENSION_OF_RATE)}) or drop with --ignore COLUMN"))
    if not rates and not unknown and only is None:
        problems.append(Problem(path.name, f"no metric column (known: {', '.join(sorted(METRICS))})"))
    by_column, clamped = {}, {}
    for c in rates:
        by_column[c], clamped[c] = _scores_of(c, [(r.place, r.data.get(c)) for r in rows], scale, problems)
    out = []
    for i, r in enumerate(rows):
        question = r.data.get("user_input", r.data.get("input"))
        answer = r.data.get("response", r.data.get("actual_output"))
        match = (question.strip(), answer.strip()) if isinstance(question, str) and isinstance(answer, str) else None
        out.append((str(r.place), _row_id(r.data), match, {c: by_column[c][i] for c in rates}))
    if problems:
        raise DataError(problems, f"{path}: not a usable result table; nothing was calibrated")
    return ResultTable(out, rates, tuple(ignored), {c: n for c, n in clamped.items() if n})


@dataclass(frozen=True)
class Correlation:
    r: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class RateComparison:
    """One rate: the tool's per-sample score against the human per-sample rate."""

    rate: str
    column: str
    n: int
    pearson: Correlation
    spearman: Correlation
    mae: float | None
    threshold: float
    kappa: KappaResult
    human_pass_rate: float | None
    sweep: tuple[tuple[float, float | None], ...]
    best_threshold: float | None
    ppi: PPIResult
    missing_scores: int = 0


@dataclass(frozen=True)
class SampleCalibration:
    """The whole comparison, with what could not be matched."""

    dataset: str
    who: str
    rows: int
    matched: int
    comparisons: tuple[RateComparison, ...]
    unmatched_rows: tuple[str, ...]
    unmatched_samples: tuple[str, ...]
    ignored: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def text(self) -> str:
        """A plain-text report."""
        lines = [f"dataset {self.dataset}: {self.matched} of {self.rows} result rows matched to samples; "
                 f"human side: {self.who}"]
        if self.ignored:
            lines.append(f"ignored (no human rate to compare): {', '.join(self.ignored)}")
        for c in self.comparisons:
            f = _fmt
            lines.append(f"  {c.column} -> {c.rate} (n={c.n} samples with a score and a human label"
                         + (f"; {c.missing_scores} missing scores" if c.missing_scores else "") + ")")
            if c.n == 0:
                lines.append("    no sample has both: label some units of the scored samples")
                continue
            lines.append(f"    Pearson {f(c.pearson.r)} [{f(c.pearson.low)}, {f(c.pearson.high)}]   "
                         f"Spearman {f(c.spearman.r)} [{f(c.spearman.low)}, {f(c.spearman.high)}]   MAE {f(c.mae)}")
            k = c.kappa
            lines.append(f"    pass at {c.threshold:g}: kappa {f(k.kappa)} [{f(k.low)}, {f(k.high)}], agreement "
                         f"{f(k.agreement)}, base rate {f(k.base_rate)}, human pass rate {f(c.human_pass_rate)}"
                         + (f" ({k.reason or k.note})" if (k.reason or k.note) else ""))
            best = "—" if c.best_threshold is None else f"{c.best_threshold:g}"
            lines.append(f"    threshold sweep: best kappa at {best}; "
                         + " ".join(f"{t:g}:{f(v)}" for t, v in c.sweep[1::2]))
            lines.append("    no PPI interval here: the labelled units need not be a random sample (the CLI's "
                         "--sample-seed gives one on a drawn calibration sample)")
        if self.unmatched_rows:
            lines.append(f"unmatched result rows ({len(self.unmatched_rows)}): {', '.join(self.unmatched_rows)}")
        if self.unmatched_samples:
            lines.append(f"samples without a result row ({len(self.unmatched_samples)}): "
                         + ", ".join(self.unmatched_samples))
        lines += list(self.notes)
        return "\n".join(lines)


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _correlations(human: list[float], tool: list[float]) -> tuple[Correlation, Correlation]:
    from scipy import stats

    none = Correlation(None, None, None)
    if len(human) < 4 or len(set(human)) < 2 or len(set(tool)) < 2:
        return none, none
    pr = stats.pearsonr(human, tool)
    pci = pr.confidence_interval()
    ranks_h, ranks_t = stats.rankdata(human), stats.rankdata(tool)
    sr = stats.pearsonr(ranks_h, ranks_t)
    sci = sr.confidence_interval()
    return (Correlation(float(pr.statistic), float(pci.low), float(pci.high)),
            Correlation(float(stats.spearmanr(human, tool).statistic), float(sci.low), float(sci.high)))


def _best(sweep: list[tuple[float, float | None]]) -> float | None:
    defined = [(k, t) for t, k in sweep if k is not None]
    if not defined:
        return None
    top = max(k for k, _ in defined)
    return min(t for k, t in defined if k == top)


def calibrate_samples(table: ResultTable, opened: Any, labels: list[Any], who: str, *, threshold: float = 0.5,
                      human_threshold: float = 0.5) -> SampleCalibration:
    """Compare ``table`` with ``labels`` (current human Labels of ``opened``'s units; see the module docstring)."""
    matched, unmatched_rows, unmatched_samples = match_rows(table, opened)
    units = opened.units()
    unit_case = {u.unit_id: u.case_id for u in units}
    votes: dict[tuple[str, str], list[int]] = defaultdict(list)
    unit_label: dict[tuple[str, str], int] = {}
    for lab in labels:
        if lab.unit_id in unit_case:
            votes[(unit_case[lab.unit_id], lab.dimension)].append(lab.value)
            unit_label[(lab.unit_id, lab.dimension)] = lab.value
    comparisons = []
    for column, rate in table.rates.items():
        dim = DIMENSION_OF_RATE[rate]
        human, tool, missing = [], [], 0
        for case, scores in sorted(matched.items()):
            score = scores[column]
            if score is None:
                missing += 1
                continue
            vs = votes.get((case, dim))
            if vs:
                human.append(sum(vs) / len(vs))
                tool.append(score)
        pearson, spearman = _correlations(human, tool)
        h_pass = [int(h >= human_threshold) for h in human]
        kappa = cohens_kappa(h_pass, [int(t >= threshold) for t in tool])
        sweep = [(t, cohens_kappa(h_pass, [int(x >= t) for x in tool]).kappa) for t in SWEEP]
        f_l, y, f_u = [], [], []
        for u in units:
            if dim not in u.dimensions or u.case_id not in matched or matched[u.case_id][column] is None:
                continue
            s = matched[u.case_id][column]
            if (u.unit_id, dim) in unit_label:
                f_l.append(s)
                y.append(unit_label[(u.unit_id, dim)])
            else:
                f_u.append(s)
        comparisons.append(RateComparison(
            rate, column, len(human), pearson, spearman,
            sum(abs(a - b) for a, b in zip(human, tool, strict=True)) / len(human) if human else None,
            threshold, kappa, sum(h_pass) / len(h_pass) if h_pass else None, tuple(sweep), _best(sweep),
            ppi_mean(f_u, f_l, y), missing))
    return SampleCalibration(opened.name, who, len(table.rows), len(matched), tuple(comparisons),
                             unmatched_rows, unmatched_samples, table.ignored)


def match_rows(table: ResultTable, opened: Any) -> tuple[dict[str, dict[str, float | None]], tuple[str, ...],
                                                          tuple[str, ...]]:
    """``(scores by case id, unmatched rows, samples without a row)``: rows matched by id, else (question, answer).

    A second row for an already matched sample is unmatched (and says so).
    """
    samples = opened.payload["samples"]
    by_id = {s["sample_id"]: s["case_id"] for s in samples if s["sample_id"] is not None}
    by_key: dict[tuple[str, str], str] = {}
    for s in samples:
        by_key.setdefault((s["query"].strip(), s["response"].strip()), s["case_id"])
    matched: dict[str, dict[str, float | None]] = {}
    unmatched_rows = []
    for place, rid, key, scores in table.rows:
        case = by_id.get(rid) if rid is not None and by_id else None
        if case is None and key is not None:
            case = by_key.get(key)
        if case is None or case in matched:
            unmatched_rows.append(place + (" (a second row for the same sample)" if case in matched else ""))
            continue
        matched[case] = scores
    unmatched_samples = tuple(s["sample_id"] or s["case_id"] for s in samples if s["case_id"] not in matched)
    return matched, tuple(unmatched_rows), unmatched_samples


class _WithVerdicts:
    """An opened dataset whose ``units()`` also hold each response's verdict unit (the rest is ``opened``'s)."""

    def __init__(self, opened: Any) -> None:
        from ..verdicts import response_units

        self._opened = opened
        self._units = [*opened.units(), *response_units(opened)]

    def units(self) -> list[Any]:
        return list(self._units)

    def catalog(self) -> dict[str, Any]:
        return {u.unit_id: u for u in self._units}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._opened, name)


def with_verdicts(opened: Any) -> Any:
    """``opened`` with the verdict unit of every response among its units (for the ``pass``/``tag:`` rates)."""
    return _WithVerdicts(opened)


def verdict_labels(store: Any, opened: Any, annotator: str | None, rates: Any) -> list[Any]:
    """The human labels of the ``pass`` and ``tag:NAME`` rates among ``rates`` (see the module docstring), as
    :class:`~playground.model.Label` on each response's verdict unit (dimension = the rate)."""
    from ..model import Label
    from ..store.core import RESERVED_ANNOTATORS, majority
    from ..verdicts import response_units

    wanted = {r for r in rates if r == VERDICT_RATE or r.startswith(_TAG_PREFIX)}
    if not wanted:
        return []
    units = {u.unit_id: u for u in response_units(opened)}
    who = annotator or "consensus"
    verdicts = [lb for lb in store.current_labels(units, annotator=annotator) if lb.dimension == VERDICT_RATE]
    out: list[Any] = []
    if VERDICT_RATE in wanted:
        from ..importers.export import label_rows

        out += [lab for lab in label_rows(store, units, annotator)[0] if lab.dimension == VERDICT_RATE]
    judges: dict[str, set[str]] = defaultdict(set)
    for lb in verdicts:
        if lb.annotator not in RESERVED_ANNOTATORS:
            judges[lb.unit_id].add(lb.annotator)
    tagged = {(t.unit_id, t.annotator): set(t.tags) for t in store.tags(unit_ids=units, annotator=annotator)
              if units[t.unit_id].text_hash == t.text_hash}
    for rate in sorted(wanted - {VERDICT_RATE}):
        tag = rate[len(_TAG_PREFIX):]
        for uid in sorted(judges):
            votes = [int(tag in tagged.get((uid, name), set())) for name in sorted(judges[uid])]
            value, _status = majority(votes.count(1), votes.count(0))
            if value is not None:
                out.append(Label(who, units[uid].unit_kind, uid, rate, value))
    return out
