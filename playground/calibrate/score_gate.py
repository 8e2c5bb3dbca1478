"""The calibrated gate: ``playground harness gate --scores FILE --record RECORD [--baseline FILE]``.

FILE is a new, unlabelled run's per-sample result table (RAGAS ``evaluate()``,
DeepEval; the format ``calibrate external --dataset`` reads).  For every
scorer of the calibration record (:mod:`playground.calibrate.record`) whose
column the run has, the pass rate ``score >= threshold`` is corrected for the
record's TPR and TNR with its interval (:mod:`playground.harness.corrected`), then compared with
the baseline's corrected rate under the gate's tolerance rules
(:mod:`playground.harness.gate`: a drop of more than ``tol`` relative fails, exactly ``tol``
passes, improvements pass, no baseline passes with a notice).

A scorer is **advisory** — printed with the reason, never gated — when:

* its record is below the bar: not a uniform random sample (no
  ``--sample-seed``), ``n < MIN_N``, fewer than :data:`MIN_CLASS` human "yes" or
  human "no" samples, the lower Wilson bound of TPR or of TNR below
  :data:`MIN_LOWER` (exactly the bar passes), a judge's flip rate above
  :data:`MAX_FLIP_RATE`, a length bias recorded by ``calibrate bias``
  (:mod:`playground.calibrate.bias`), or a drift check on the anchor set that
  did not hold (:mod:`playground.calibrate.drift`);
* the record is stale: the scorer identity given to the gate differs from the
  record's (name, version, config hash, model, prompt hash — every facet,
  an absent one included), or ``--threshold`` differs from the record's;
* the run has missing scores (empty or NaN) in that column, or the
  corrected rate has no interval;
* it has no record at all: a metric column of the run that the record does
  not cover is listed as advisory, never gated.

**A labelled random slice of the run** (``--dataset NAME --sample-seed S``
with the run's samples in the label store): when the longest labelled prefix
of ``ranked(the run's scored sample ids, S)`` holds at least
:data:`MIN_SLICE` samples, the rate is the prediction-powered estimate
(PPI++, :func:`playground.stats.ppi_mean`: the scorer's verdicts on every
sample, the human verdicts on the slice) instead of the Rogan–Gladen
correction; it needs no assumption that the error rates carried over from
the calibration data.

A metric in the baseline that the run lacks fails (it cannot be checked).

**Three verdicts** (:attr:`ScoreGateResult.verdict`, exit codes :data:`EXIT_CODES`): **FAIL** (exit 1) on
any regression; else **INCONCLUSIVE** (exit 2) when nothing was gated, or when a metric the user asked to
gate — a scorer of the record — is advisory or missing from the run (and not in the baseline); else
**PASS** (exit 0).  A run's metric column with no record is listed as advisory but was not asked for, so it
alone does not make the gate inconclusive.  Each undecided metric is printed with why and what would decide
it (:func:`to_decide`: how many more labels of which class, from the same Wilson bar).  PASS is never the
verdict when nothing was gated.  Bad input exits :data:`BAD_INPUT` (3).
Refused outright (an error naming the file): a record that is not one, was
edited (fingerprint), or is of another dataset than ``--dataset``; scores that
are not numbers or infinite; a score outside [0, 1] beyond the 1e-9 clamp.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError, Problem
from ..harness.corrected import CorrectedRate, corrected_rate
from ..harness.gate import resolve_tolerance
from ..stats import ppi_mean
from .external_samples import (
    _SUFFIX_IGNORED,
    INPUT_COLUMNS,
    RATE_OF_DIMENSION,
    _scores_of,
    match_rows,
    metric_key,
    read_result,
)
from .index_column import index_columns
from .needed import LIFT_CAP, labels_to_lift
from .ppi import calibration_sample
from .tool_results import read_scored_rows

__all__ = [
    "BAD_INPUT",
    "EXIT_CODES",
    "MAX_FLIP_RATE",
    "MIN_CLASS",
    "MIN_LOWER",
    "MIN_N",
    "MIN_SLICE",
    "ScoreGateResult",
    "below_bar",
    "gate_scores",
    "read_run",
    "to_decide",
]

#: The bar a record must reach to gate: at least this many calibration samples ...
MIN_N = 50
#: ... at least this many of each human class ...
MIN_CLASS = 10
#: ... and the lower 95% Wilson bounds of TPR and of TNR at least this.
MIN_LOWER = 0.6
#: A judge whose verdicts flip on more than this share of reruns is not gated.
MAX_FLIP_RATE = 0.10
#: A labelled random slice of the run this big (or bigger) gives the PPI++ estimate.
MIN_SLICE = 30


#: The three verdicts and the exit code of each (``harness gate --scores``); bad input exits :data:`BAD_INPUT`.
EXIT_CODES = {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 2}
#: The exit code of bad input (the record, the scores, the options): not a verdict.
BAD_INPUT = 3


@dataclass
class ScoreGateResult:
    """The verdict, the printed lines, the regressions, the advisory metrics and each gated metric's rate.

    ``undecided``: each metric the user asked to gate (a scorer of the record) that is not gated, with why and
    what would decide it (:func:`to_decide`).  ``passed`` is False on a regression only.
    """

    passed: bool = True
    lines: list[str] = field(default_factory=list)
    regressions: list[str] = field(default_factory=list)
    advisory: dict[str, str] = field(default_factory=dict)
    rates: dict[str, CorrectedRate] = field(default_factory=dict)
    undecided: dict[str, str] = field(default_factory=dict)

    @property
    def gated(self) -> list[str]:
        """The metrics that were gated: a corrected rate with an interval, and no reason to be advisory."""
        return [c for c in self.rates if c not in self.advisory]

    @property
    def verdict(self) -> str:
        """FAIL on any regression; else INCONCLUSIVE when nothing was gated or an asked metric was not; else PASS."""
        if not self.passed:
            return "FAIL"
        return "INCONCLUSIVE" if self.undecided or not self.gated else "PASS"


def below_bar(entry: dict[str, Any], uniform_random: bool) -> str:
    """Why a record's scorer entry is below the bar (module docstring), '' when it reaches it."""
    why = []
    if not uniform_random:
        why.append("its labels are not a drawn random sample (calibrate with --sample-seed)")
    if entry["n"] < MIN_N:
        why.append(f"n = {entry['n']} < {MIN_N}")
    for rate in ("tpr", "tnr"):
        r = entry[rate]
        if r["n"] < MIN_CLASS:
            why.append(f"{rate.upper()} rests on {r['n']} samples < {MIN_CLASS}")
        elif r["low"] is None or r["low"] < MIN_LOWER:
            why.append(f"{rate.upper()} lower bound {r['low']} < {MIN_LOWER}")
    repeats = entry.get("repeats")
    flips = (repeats or {}).get("flip_rate")
    if repeats and flips is None:  # reruns recorded, but no sample was scored in every one of them
        why.append("flip rate unknown: no sample was scored in every rerun")
    elif flips is not None and flips > MAX_FLIP_RATE:
        why.append(f"flip rate {flips:g} > {MAX_FLIP_RATE} on reruns")
    for probe, name in (("length", "length bias"), ("position", "position bias"),
                        ("self_preference", "self-preference")):
        found = (entry.get("bias") or {}).get(probe) or {}
        if found.get("biased"):
            why.append(f"{name}: {found['reason']}")
    anchor = entry.get("anchor")
    if anchor and not anchor["held"]:
        why.append(f"drift on the anchor set (checked {anchor['checked_on']}, last held "
                   f"{anchor.get('last_held') or 'never'}): {anchor['reason']}")
    return "; ".join(why)


_CLASS = {"tpr": "human-'yes' (positive)", "tnr": "human-'no' (negative)"}


def to_decide(entry: dict[str, Any], uniform_random: bool) -> list[str]:
    """What would lift a record's scorer entry over the bar (module docstring), one phrase per shortfall.

    Labels: ``MIN_N - n`` more of either class when ``n < MIN_N``; for TPR (human-"yes" samples) and TNR
    (human-"no"), the more labels of that class :func:`playground.calibrate.needed.labels_to_lift` finds for
    its Wilson lower bound to reach :data:`MIN_LOWER` with at least :data:`MIN_CLASS` of the class.  The
    other shortfalls are not a matter of labels: a drawn random sample, a steadier judge.
    """
    out = []
    if not uniform_random:
        out.append("re-calibrate on a drawn random sample (calibrate external --sample-seed S)")
    if entry["n"] < MIN_N:
        out.append(f"{MIN_N - entry['n']} more label(s) of either class (n {entry['n']} → {MIN_N})")
    for rate in ("tpr", "tnr"):
        r = entry[rate]
        if r["n"] >= MIN_CLASS and r["low"] is not None and r["low"] >= MIN_LOWER:
            continue
        more = labels_to_lift(r["successes"], r["n"], MIN_LOWER, MIN_CLASS)
        name = rate.upper()
        if more is not None:
            out.append(f"{more} more {_CLASS[rate]} label(s) at today's {name} {r['successes']}/{r['n']} "
                       f"(Wilson lower bound → ≥ {MIN_LOWER})")
        elif r["n"] == 0:
            out.append(f"at least {MIN_CLASS} {_CLASS[rate]} labels ({name} has none yet)")
        elif r["successes"] / r["n"] <= MIN_LOWER:
            out.append(f"no number of labels: {name} {r['successes']}/{r['n']} is itself ≤ {MIN_LOWER}, more labels "
                       "only narrow its interval under the bar (a better scorer or threshold would)")
        else:
            out.append(f"more than {LIFT_CAP:,} {_CLASS[rate]} labels: {name} {r['successes']}/{r['n']} sits "
                       f"just over {MIN_LOWER}")
    flips = (entry.get("repeats") or {}).get("flip_rate")
    if entry.get("repeats") and (flips is None or flips > MAX_FLIP_RATE):
        out.append(f"a judge whose reruns flip at most {MAX_FLIP_RATE:g} of its verdicts")
    biased = [k for k, v in (entry.get("bias") or {}).items() if (v or {}).get("biased")]
    if "length" in biased:
        out.append("a scorer whose scores do not follow answer length among answers people judged alike "
                   "(probe it again with calibrate bias)")
    if "position" in biased or "self_preference" in biased:
        out.append("another judge model or prompt, probed again with calibrate bias --judge")
    if entry.get("anchor") and not entry["anchor"]["held"]:
        out.append("re-calibrate the scorer as it is now, or restore the one recorded (calibrate drift --anchor)")
    return out


def read_run(path: str | Path, record: dict[str, Any], scale: float = 1.0,
             keys: bool = False) -> tuple[dict[str, list[float | None]], int, Any, list[str]]:
    """The run's scores of the record's columns (None = missing), its row count, with ``keys`` (for matching
    rows to a dataset's samples) the result table, and the run's other metric columns (no record: advisory);
    a DataError for any bad score."""
    rates = {e["column"]: RATE_OF_DIMENSION[e["dimension"]] for e in record["scorers"]}
    if keys:
        table = read_result(path, scale=scale, extra_metrics=rates, only=tuple(rates))
        return {c: [r[3][c] for r in table.rows] for c in table.rates}, len(table.rows), table, []
    path = Path(path)
    problems: list[Problem] = []
    _fmt, rows = read_scored_rows(path, problems)
    if problems:
        raise DataError(problems, f"{path}: not a readable run of scores")
    columns = list(dict.fromkeys(itertools.chain.from_iterable(r.data for r in rows)))
    present = set(columns) - set(index_columns(columns, [r.data for r in rows]))
    out = {}
    for c in rates:
        if c in present:
            out[c], _clamped = _scores_of(c, [(r.place, r.data.get(c)) for r in rows], scale, problems)
    if problems:
        raise DataError(problems, f"{path}: bad scores; nothing was gated")
    return out, len(rows), None, [c for c in sorted(present - set(rates)) if _is_metric(c)]


def _is_metric(column: str) -> bool:
    """A column that is not one of the samples' own fields (question, contexts, ids, reasons): a metric."""
    key = metric_key(column)
    return not (column in INPUT_COLUMNS or key in INPUT_COLUMNS or key.endswith(_SUFFIX_IGNORED))


def _stale(entry: dict[str, Any], identity: dict[str, Any] | None, threshold: float | None) -> str:
    why = []
    if identity is not None and identity != entry["identity"]:
        diff = sorted(k for k in set(identity) | set(entry["identity"]) if identity.get(k) != entry["identity"].get(k))
        why.append("scorer identity differs from the record's (" + ", ".join(
            f"{k}: record {entry['identity'].get(k)!r}, run {identity.get(k)!r}" for k in diff) + ")")
    if threshold is not None and not math.isclose(threshold, entry["threshold"], abs_tol=1e-12):
        why.append(f"threshold {threshold:g} differs from the record's {entry['threshold']:g}")
    return "; ".join(why)


def gate_scores(scores: str | Path, record: dict[str, Any], *, identities: dict[str, dict[str, Any]] | None = None,
                threshold: float | None = None, dataset: str | None = None, baseline: dict[str, Any] | None = None,
                max_relative_drop: float | None = None, n_boot: int = 2000, seed: int | str = 0,
                scale: float = 1.0, slice_of: tuple[Any, dict[str, int], str] | None = None) -> ScoreGateResult:
    """Apply the calibrated gate (module docstring) to the run ``scores`` with the loaded ``record``.

    ``slice_of``: ``(opened dataset, human pass by case id, sample seed)`` of a labelled random slice of the run.
    """
    if dataset is not None and dataset != record["dataset"]["name"]:
        raise DataError([Problem(str(scores), f"the record was calibrated on dataset {record['dataset']['name']!r}, "
                                 f"not on {dataset!r}: calibrate on this dataset first")], "record of another dataset")
    tol, source = resolve_tolerance(baseline, max_relative_drop)
    entries = {e["column"]: e for e in record["scorers"]}
    values, rows, table, unrecorded = read_run(scores, record, scale, keys=slice_of is not None)
    result = ScoreGateResult()
    if dataset is None:
        result.lines.append(f"note: no --dataset given; the record (dataset {record['dataset']['name']!r}) is "
                            "taken to describe this run's samples")
    result.lines.append(f"run: {rows} sample(s) in {scores}; tolerance {tol:.0%} relative drop (from {source})")
    result.lines.append(f"{'metric':<28} {'raw':>6} {'corrected':>9} {'95% interval':>16} {'baseline':>9}  verdict")
    base_metrics = (baseline or {}).get("metrics", {})
    for column, entry in entries.items():
        if column not in values:
            if column in base_metrics:
                result.passed = False
                result.regressions.append(f"{column}: in the baseline but missing from the run")
            else:
                result.undecided[column] = "not in the run; to decide: a run that has this column"
            result.lines.append(f"{column:<28} not in the run" + (": FAIL (in the baseline)" if column in base_metrics
                                                                   else ": not gated"))
            continue
        ppi = _slice_rate(table, column, entry["threshold"], slice_of) if slice_of is not None else None
        _gate_one(result, column, entry, values[column], record, identities, threshold, base_metrics, tol,
                  n_boot, seed, ppi)
    for column in unrecorded:
        result.advisory[column] = "no calibration record: a scorer is gated only with one"
        result.lines.append(f"{column:<28} ADVISORY, not gated: no calibration record")
    if baseline is None:
        result.lines.append("no baseline: the gate passes on these figures (write one with --write-baseline)"
                            if result.gated else "no baseline (write one with --write-baseline)")
    if not result.gated:
        result.lines.append(f"no metric was gated ({len(result.advisory)} advisory): this gate checks nothing yet")
    for column, why in result.undecided.items():
        result.lines.append(f"undecided: {column}: {why}")
    return result


def _gate_one(result: ScoreGateResult, column: str, entry: dict[str, Any], scores: list[float | None],
              record: dict[str, Any], identities: dict[str, dict[str, Any]] | None, threshold: float | None,
              base_metrics: dict[str, Any], tol: float, n_boot: int, seed: int | str,
              ppi: CorrectedRate | None = None) -> None:
    t = entry["threshold"]
    scored = [s for s in scores if s is not None]
    passed = sum(1 for s in scored if s >= t)
    flips = (entry.get("repeats") or {}).get("flip_rate") or 0.0
    rate = ppi if ppi is not None else corrected_rate(
        passed, len(scored), (entry["tpr"]["successes"], entry["tpr"]["n"]),
        (entry["tnr"]["successes"], entry["tnr"]["n"]), n_boot=n_boot, seed=seed, flip_rate=flips)
    result.rates[column] = rate
    uniform = bool(record["sample"]["uniform_random"])
    bar, stale = below_bar(entry, uniform), _stale(entry, (identities or {}).get(column), threshold)
    missing = len(scores) - len(scored)
    why = [w for w in (bar, stale, f"{missing} missing score(s) (empty or NaN)" if missing else "",
                       rate.reason if rate.low is None else "") if w]
    decide = [*(to_decide(entry, uniform) if bar else []),
              *(["a record calibrated with this scorer and threshold (or the record's)"] if stale else []),
              *(["a score for every sample"] if missing else []),
              *(["a run whose corrected rate has an interval"] if rate.low is None else [])]
    base = base_metrics.get(column)
    shown = (f"{column + (' (PPI++)' if ppi is not None else ''):<28} {rate.raw:>6.3f} {_f(rate.estimate):>9} "
             f"{'[' + _f(rate.low) + ', ' + _f(rate.high) + ']':>16} {_f(base):>9}")
    if why:
        result.advisory[column] = "; ".join(why)
        result.undecided[column] = f"{result.advisory[column]}; to decide: {'; '.join(decide)}"
        result.lines.append(f"{shown}  ADVISORY, not gated: {result.advisory[column]}")
        return
    assert rate.estimate is not None
    if base is None:
        result.lines.append(f"{shown}  ok (not in the baseline)")
        return
    worse = rate.estimate < base * (1 - tol) - 1e-12  # exactly tol passes, as in the run gate
    verdict = "REGRESSED" if worse else ("improved" if rate.estimate > base else "ok")
    if worse:
        result.passed = False
        result.regressions.append(f"{column}: corrected pass rate {base:.4f} → {rate.estimate:.4f} "
                                  f"(tolerance {tol:.0%})")
    elif rate.low is not None and rate.low < base * (1 - tol):
        verdict += " (the interval reaches below the tolerance: a drop is not ruled out)"
    result.lines.append(f"{shown}  {verdict}")


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _slice_rate(table: Any, column: str, threshold: float,
                slice_of: tuple[Any, dict[str, int], str]) -> CorrectedRate | None:
    """PPI++ of the human pass rate from the run's labelled random slice; None below :data:`MIN_SLICE`."""
    opened, human_pass, sample_seed = slice_of
    matched, _rows, _samples = match_rows(table, opened)
    verdict = {c: float(v >= threshold) for c, s in matched.items() if (v := s[column]) is not None}
    cs = calibration_sample(list(verdict), [c for c in human_pass if c in verdict], sample_seed)
    if len(cs.sample) < MIN_SLICE:
        return None
    inside = set(cs.sample)
    res = ppi_mean([v for c, v in verdict.items() if c not in inside], [verdict[c] for c in cs.sample],
                   [human_pass[c] for c in cs.sample])
    raw = sum(verdict.values()) / len(verdict)
    return CorrectedRate(raw, len(verdict), res.estimate, res.low, res.high, 0, 0,
                         "" if res.low is not None else (res.reason or "PPI gives no interval"))
