"""The CI gate and run comparison.

Gate rule (``playground harness gate RUN --baseline FILE``):

* every metric in :data:`GATED_METRICS` is compared with the committed
  baseline's value overall *and per case type* (the harness is deterministic,
  so a drop confined to one case type — multi-turn retrieval, say — is real,
  not noise); every gated metric is higher-is-better, and one regresses when
  ``new < base × (1 − tol)`` (exactly ``base × (1 − tol)`` passes).
  Improvements never fail.
* the tolerance ``tol`` is the explicit ``--tolerance`` when given, else the
  ``max_relative_drop`` stored in the baseline, else
  :data:`DEFAULT_MAX_RELATIVE_DROP` (5%).  It never comes from the run being
  judged: a run cannot loosen its own gate.  When the run's config asks for a
  different ``gate.max_relative_drop`` the gate output says so.
* any failing hard assertion in the run fails the gate (the run's own
  ``gated_failures`` count, see ``run.py`` for which responses it covers);
* a metric the baseline has but the run lacks fails (it cannot be checked);
  a case type the run has no case of (a ``--sample`` run) is reported, not checked;
  a metric the run has but the baseline lacks is reported, not gated;
* no baseline file is a pass with a notice.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError, Problem, load_json_object

__all__ = [
    "DEFAULT_MAX_RELATIVE_DROP",
    "GATED_METRICS",
    "NOT_A_RUN",
    "REPORT_KEYS",
    "GateResult",
    "baseline_from_report",
    "compare",
    "gate",
    "load_report",
    "resolve_tolerance",
]

#: The gated metrics; every one is a fraction where higher is better.
GATED_METRICS: tuple[str, ...] = (
    "recall_at_k",
    "precision_at_k",
    "hit_at_k",
    "mrr",
    "ndcg_at_k",
    "answer_correct",
    "key_agreement_supported",
    "key_agreement_correct",
    "key_agreement_covered",
    "key_agreement_relevant",
)
#: The keys every harness report has (what :func:`load_report` checks before anyone reads it).
REPORT_KEYS: tuple[str, ...] = ("config", "metrics", "assertions", "config_fingerprint")
#: The summary of every error about a folder that holds no finished run.
NOT_A_RUN = "not a finished harness run"
#: Relative drop allowed when neither ``--tolerance`` nor the baseline gives one.
DEFAULT_MAX_RELATIVE_DROP = 0.05


@dataclass
class GateResult:
    """The verdict, the table lines, every regression, and the tolerance used with where it came from."""

    passed: bool
    lines: list[str] = field(default_factory=list)
    regressions: list[str] = field(default_factory=list)
    notice: str = ""
    tolerance: float = DEFAULT_MAX_RELATIVE_DROP
    tolerance_source: str = "default"


def load_report(run_dir: str | Path) -> dict[str, Any]:
    """``RUN/report.json``, or a DataError saying in one line why it cannot be read.

    No folder, or no report in it (say whether the run did not finish); else the file's problem as
    :func:`~playground.errors.load_json_object` words it, with :data:`REPORT_KEYS` required.
    """
    run_dir = Path(run_dir)
    path = run_dir / "report.json"

    def fail(message: str) -> DataError:
        return DataError([Problem(str(path), message)], NOT_A_RUN)

    if not run_dir.is_dir():
        raise fail(f"{run_dir} is not a folder" if run_dir.exists() else f"no run folder {run_dir}")
    if not path.is_file():
        unfinished = (run_dir / "run.json").is_file()
        raise fail(
            "missing: the run did not finish — rerun it with --resume"
            if unfinished
            else "missing: is this a harness run folder (playground harness run --out)?"
        )
    return load_json_object(path, "a harness report", REPORT_KEYS, summary=NOT_A_RUN, hint="rerun the harness")


def _gated(metrics: dict[str, Any]) -> dict[str, Any]:
    return {m: metrics[m] for m in GATED_METRICS if metrics.get(m) is not None}


def baseline_from_report(report: dict[str, Any]) -> dict[str, Any]:
    """The part of a report a baseline keeps: gated metrics overall and per case type, and what produced them."""
    return {
        "config_name": report["config"]["name"],
        "config_fingerprint": report["config_fingerprint"],
        "data_fingerprint": report["data_fingerprint"],
        "max_relative_drop": report["config"]["gate"]["max_relative_drop"],
        "metrics": _gated(report["metrics"]["overall"]),
        "by_case_type": {t: _gated(m) for t, m in sorted(report["metrics"]["by_case_type"].items())},
    }


def resolve_tolerance(baseline: dict[str, Any] | None, max_relative_drop: float | None = None) -> tuple[float, str]:
    """``(tolerance, source)``: the explicit value, else the baseline's, else the default (module docstring).

    Raises ValueError unless the tolerance lies in [0, 1).
    """
    if max_relative_drop is not None:
        tol, source = max_relative_drop, "--tolerance"
    elif baseline is not None and baseline.get("max_relative_drop") is not None:
        tol, source = baseline["max_relative_drop"], "the baseline"
    else:
        tol, source = DEFAULT_MAX_RELATIVE_DROP, "the default"
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol < 1:
        raise ValueError(f"the gate tolerance (from {source}) must be a number in [0, 1), got {tol!r}")
    return float(tol), source


def gate(report: dict[str, Any], baseline: dict[str, Any] | None, max_relative_drop: float | None = None) -> GateResult:
    """Apply the gate rule (module docstring) to a run report against a baseline."""
    tol, source = resolve_tolerance(baseline, max_relative_drop)
    result = GateResult(passed=True, tolerance=tol, tolerance_source=source)
    failing = report["assertions"]["gated_failures"]
    if failing:
        result.passed = False
        for name, info in sorted(report["assertions"]["gated"].items()):
            for item in info["failing"]:
                result.regressions.append(f"hard assertion {name} failed: {item}")
    if baseline is None:
        result.notice = ("no baseline: the gate passes on hard assertions alone "
                         "(commit one with `playground harness baseline`)")
        result.lines.append(result.notice)
        return result
    result.lines.append(f"tolerance: {tol:.0%} relative drop (from {source})")
    asked = report.get("config", {}).get("gate", {}).get("max_relative_drop")
    if asked is not None and asked != tol:
        result.lines.append(f"note: the run's config asks for gate.max_relative_drop = {asked:g}; "
                            f"not used: the gate applies {tol:g} from {source}")
    result.lines.append(f"{'scope':<17} {'metric':<26} {'baseline':>9} {'run':>9} {'change':>8}  verdict")
    by_type = report["metrics"]["by_case_type"]
    _check_scope(result, "overall", baseline["metrics"], report["metrics"]["overall"])
    for scope, base_metrics in sorted(baseline.get("by_case_type", {}).items()):
        if scope not in by_type:
            result.lines.append(f"{scope:<17} (no case of this type in the run — a --sample run?): not checked")
            continue
        _check_scope(result, scope, base_metrics, by_type[scope])
    overall = report["metrics"]["overall"]
    for metric in sorted(set(GATED_METRICS) - set(baseline["metrics"])):
        if overall.get(metric) is not None:
            result.lines.append(f"{'overall':<17} {metric:<26} {'—':>9} {overall[metric]:>9.4f} {'':>8}  "
                                "not in baseline")
    if baseline.get("data_fingerprint") and baseline["data_fingerprint"] != report["data_fingerprint"]:
        result.lines.append("note: the golden data changed since the baseline was made")
    return result


def _check_scope(result: GateResult, scope: str, base_metrics: dict[str, Any], run_metrics: dict[str, Any]) -> None:
    """Compare one scope's metrics with the baseline's; record lines and regressions in ``result``."""
    tol = result.tolerance
    prefix = "" if scope == "overall" else f"[{scope}] "
    for metric, base in sorted(base_metrics.items()):
        new = run_metrics.get(metric)
        if new is None:
            result.passed = False
            result.regressions.append(f"{prefix}{metric}: in the baseline but missing from the run")
            result.lines.append(f"{scope:<17} {metric:<26} {base:>9.4f} {'—':>9} {'':>8}  MISSING")
            continue
        change = (new - base) / base if base else (0.0 if new == base else math.inf)
        # the 1e-12 absorbs float noise so that a drop of exactly tol passes
        worse = new < base * (1 - tol) - 1e-12
        verdict = "REGRESSED" if worse else ("improved" if new > base else "ok")
        if worse:
            result.passed = False
            result.regressions.append(
                f"{prefix}{metric}: {base:.4f} → {new:.4f} ({change:+.1%}, tolerance {tol:.0%})")
        change_text = f"{change:+.1%}" if change != math.inf else "new"
        result.lines.append(f"{scope:<17} {metric:<26} {base:>9.4f} {new:>9.4f} {change_text:>8}  {verdict}")


def compare(report_a: dict[str, Any], report_b: dict[str, Any]) -> list[dict[str, Any]]:
    """Before/after rows per metric and case type: ``{scope, metric, a, b, delta}``, sorted."""
    rows = []
    scopes = [("overall", report_a["metrics"]["overall"], report_b["metrics"]["overall"])]
    types = sorted(set(report_a["metrics"]["by_case_type"]) | set(report_b["metrics"]["by_case_type"]))
    scopes += [(t, report_a["metrics"]["by_case_type"].get(t, {}), report_b["metrics"]["by_case_type"].get(t, {}))
               for t in types]
    for scope, a, b in scopes:
        for metric in sorted(set(a) | set(b)):
            va, vb = a.get(metric), b.get(metric)
            delta = vb - va if isinstance(va, (int, float)) and isinstance(vb, (int, float)) else None
            rows.append({"scope": scope, "metric": metric, "a": va, "b": vb, "delta": delta})
    return rows
