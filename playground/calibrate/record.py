"""The calibration record: what a gate needs to trust a scorer, as a small JSON file the user commits.

``playground calibrate external RESULT --dataset NAME --record FILE`` writes
one record for the metric columns of a result table.  Layout (``version`` 1;
keys sorted, two-space indent, floats rounded to 6 places, so the same input
gives the same bytes)::

    kind         "playground-calibration-record"
    version      1
    dataset      {name, revision}            revision: SHA-256 of the stored dataset
    human        {who, human_threshold}      whose labels; a sample is "yes" when its human rate >= the threshold
    sample       {seed, uniform_random, unit, rule}
                 uniform_random is true only with a seed: the figures are then of the labelled prefix of
                 the seeded ranking of the samples (:mod:`.external_report`)
    scorers      [{column, dimension, identity, threshold, n, sample_size, outside_sample, confusion, tpr,
                   tnr, kappa, base_rate, balanced_accuracy, cv, repeats}]
                 identity: {name, version, config_sha256, model, prompt_sha256} (absent facets are null)
                 tpr / tnr: {rate, low, high, successes, n} (Wilson 95%); kappa: {kappa, low, high}
                 cv: the threshold selection's grouped cross-validation {best_threshold, kappa, kappa_low,
                 kappa_high, balanced_accuracy, folds, groups, fold_thresholds} or null
                 repeats: for a judge rerun K times, {k, flip_rate, unstable_units, n_units} or null
                 bias (added by ``calibrate bias``): {length: {measure, by_class, biased, reason}}
                 (:mod:`.bias`)
                 anchor (added by ``calibrate drift``): {checked_on, held, last_held, n, tpr, tnr, reason}
                 (:mod:`.drift`)
    fingerprint  SHA-256 of the canonical JSON of everything above

:func:`load_record` recomputes the fingerprint and refuses a record whose
bytes were edited (``fingerprint mismatch``).
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataError, Problem

__all__ = [
    "RECORD_KIND",
    "RECORD_VERSION",
    "Identity",
    "dumps_record",
    "file_sha256",
    "fingerprint",
    "load_record",
    "record_from_report",
]

RECORD_KIND = "playground-calibration-record"
RECORD_VERSION = 1
_PLACES = 6


@dataclass(frozen=True)
class Identity:
    """Who the scorer is: name, version, the SHA-256 of its config file, for a judge its model and prompt hash."""

    name: str
    version: str | None = None
    config_sha256: str | None = None
    model: str | None = None
    prompt_sha256: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "config_sha256": self.config_sha256,
                "model": self.model, "prompt_sha256": self.prompt_sha256}


def file_sha256(path: str | Path) -> str:
    """SHA-256 hex digest of a file's bytes; the file must be a regular file within the import bounds
    (:func:`playground.importers.limits.check_file`: a FIFO is refused, not waited on)."""
    from ..limits import check_file

    check_file(path)
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _round(x: Any) -> Any:
    if isinstance(x, float):
        if not math.isfinite(x):
            return None
        return round(x, _PLACES) + 0.0
    if isinstance(x, dict):
        return {k: _round(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_round(v) for v in x]
    return x


def _canonical(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def fingerprint(body: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces) of the record without its fingerprint."""
    return hashlib.sha256(_canonical({k: v for k, v in body.items() if k != "fingerprint"}).encode()).hexdigest()


def dumps_record(body: dict[str, Any]) -> str:
    """The record's bytes: rounded floats, the fingerprint added, sorted keys, two-space indent, final newline."""
    body = _round({k: v for k, v in body.items() if k != "fingerprint"})
    body["fingerprint"] = fingerprint(body)
    return json.dumps(body, sort_keys=True, indent=2, ensure_ascii=True) + "\n"


def _rate(r: Any) -> dict[str, Any]:
    return {"rate": r.rate, "low": r.low, "high": r.high, "successes": r.successes, "n": r.n}


def _scorer_entry(m: Any, identity: Identity, repeats: dict[str, Any] | None) -> dict[str, Any]:
    c = m.report.comparisons[m.dimension]
    t = m.report.sweeps[m.dimension]
    cv = t.cv
    (tn, fp), (fn, tp) = c.confusion
    return {
        "column": m.column, "dimension": m.dimension, "identity": identity.as_dict(), "threshold": c.threshold,
        "n": c.n, "sample_size": m.sample_size, "outside_sample": m.outside_sample,
        "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
        "tpr": _rate(c.tpr), "tnr": _rate(c.tnr),
        "kappa": {"kappa": c.kappa.kappa, "low": c.kappa.low, "high": c.kappa.high},
        "base_rate": c.base_rate, "balanced_accuracy": c.balanced_accuracy,
        "cv": None if cv is None else {
            "best_threshold": t.best.threshold if t.best else None, "kappa": cv.kappa, "kappa_low": cv.kappa_low,
            "kappa_high": cv.kappa_high, "balanced_accuracy": cv.balanced_accuracy, "folds": cv.folds,
            "groups": cv.n_groups, "fold_thresholds": list(cv.fold_thresholds)},
        "repeats": repeats,
    }


def record_from_report(result: Any, identities: dict[str, Identity],
                       repeats: dict[str, dict[str, Any]] | None = None, revision: str = "") -> dict[str, Any]:
    """The record body of an :class:`~.external_report.ExternalReport` (module docstring); ``identities`` by column."""
    seeded = result.sample_seed is not None
    return {
        "kind": RECORD_KIND, "version": RECORD_VERSION,
        "dataset": {"name": result.dataset, "revision": revision},
        "human": {"who": result.who, "human_threshold": result.human_threshold},
        "sample": {"seed": str(result.sample_seed) if seeded else None, "uniform_random": seeded,
                   "unit": "sample", "rule": "longest labelled prefix of playground.sampling.ranked(case ids, seed)"
                   if seeded else "every labelled sample (not a drawn sample)"},
        "scorers": [_scorer_entry(m, identities[m.column], (repeats or {}).get(m.column)) for m in result.metrics],
    }


def load_record(path: str | Path) -> dict[str, Any]:
    """A record read and checked: kind, version, and the fingerprint over its content (a DataError otherwise)."""
    path = Path(path)

    def fail(message: str) -> DataError:
        return DataError([Problem(str(path), message)], "not a usable calibration record")

    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise fail("no such file (write one with `playground calibrate external ... --record FILE`)") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise fail(f"cannot be read as JSON: {exc}") from None
    if not isinstance(body, dict) or body.get("kind") != RECORD_KIND:
        raise fail(f"not a calibration record (kind is not {RECORD_KIND!r})")
    if body.get("version") != RECORD_VERSION:
        raise fail(f"record version {body.get('version')!r}; this playground reads version {RECORD_VERSION}")
    if body.get("fingerprint") != fingerprint(body):
        raise fail("fingerprint mismatch: the record was edited after it was written; write it again with "
                   "`playground calibrate external ... --record FILE`")
    if not isinstance(body.get("scorers"), list) or not body["scorers"]:
        raise fail("the record has no scorers")
    return body
