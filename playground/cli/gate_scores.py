"""``playground harness gate --scores FILE --record RECORD``: the calibrated gate.

See :mod:`playground.calibrate.score_gate` for the rules.

Exit 0 on PASS, 1 on FAIL (a regression), 2 on INCONCLUSIVE (nothing gated, or a metric of the record not
gated: each printed with what would decide it), 3 on bad input (the record, the scores, the options).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..files import write_atomic

__all__ = ["add_score_gate_options", "refused_without_scores", "run_score_gate"]

#: the calibrated gate's options and their defaults: given without --scores they would be ignored, so they are refused
SCORES_ONLY = {"record": None, "dataset": None, "threshold": None, "name": None, "scores_baseline": None,
               "write_baseline": None, "scale": 1.0, "sample_seed": None, "scorer_version": None,
               "scorer_config": None, "judge_model": None, "judge_prompt": None, "boot": 2000, "seed": 0,
               "paired_with": None, "paired_datasets": None}


def refused_without_scores(args: argparse.Namespace) -> str:
    """The options of the calibrated gate given without ``--scores`` ('' when none)."""
    given = [f"--{key.replace('_', '-')}" for key, default in SCORES_ONLY.items() if getattr(args, key) != default]
    return ", ".join(given)


def add_score_gate_options(p: argparse.ArgumentParser) -> None:
    """The options of the calibrated gate on ``harness gate``."""
    from .calibrate_external import add_identity_options

    p.add_argument("--scores", type=Path, default=None, metavar="FILE",
                   help="a new run's per-sample scores (RAGAS evaluate() / DeepEval result table) to gate on their "
                   "pass rate corrected for the scorer's measured error rates")
    p.add_argument("--record", type=Path, default=None, metavar="RECORD",
                   help="the calibration record ('calibrate external --dataset NAME --record RECORD')")
    p.add_argument("--dataset", default=None, metavar="NAME",
                   help="the dataset the run is of; a record of another dataset is refused")
    p.add_argument("--threshold", type=float, default=None,
                   help="the run's pass threshold (default: the record's; a different one makes the record stale)")
    p.add_argument("--name", default=None, help="scorer name prefix, as given to 'calibrate external --name'")
    p.add_argument("--scores-baseline", type=Path, default=None, metavar="FILE",
                   help="corrected rates of the baseline run (written by --write-baseline); none: pass with a notice")
    p.add_argument("--write-baseline", type=Path, default=None, metavar="FILE",
                   help="write this run's corrected rates as the next baseline")
    p.add_argument("--scale", type=float, default=1.0, choices=(1.0, 100.0),
                   help="scores are on 0–SCALE (default 1; 100 divides by 100)")
    p.add_argument("--boot", type=int, default=2000, metavar="N", help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    p.add_argument("--sample-seed", default=None, metavar="S",
                   help="with --dataset: the run's samples are in the label store and a random slice of them (the "
                   "labelled prefix of the ranking of seed S) is labelled: PPI++ on it instead of the correction")
    p.add_argument("--paired-with", type=Path, default=None, metavar="FILE",
                   help="the scores of the run before the fix, on the same samples: exact McNemar per metric on "
                   "the scorer's verdicts (Holm across metrics), printed beside the corrected rates")
    p.add_argument("--paired-datasets", nargs=2, default=None, metavar=("BEFORE", "AFTER"),
                   help="the datasets of the runs before and after the fix, each labelled in the store: exact "
                   "McNemar on the human-checked slice (the samples labelled in both)")
    from .options import add_db

    add_db(p)
    add_identity_options(p)


def run_score_gate(args: argparse.Namespace) -> int:
    from ..calibrate.record import load_record
    from ..calibrate.score_gate import BAD_INPUT, EXIT_CODES, gate_scores
    from ..harness.gate import DEFAULT_MAX_RELATIVE_DROP
    from ..store import StoreError
    from .calibrate_external import identity_of

    if args.record is None:
        print("error: --scores needs --record RECORD: a scorer with no calibration record is not gated "
              "(write one with 'playground calibrate external RESULT --dataset NAME --sample-seed S --record FILE')",
              file=sys.stderr)
        return BAD_INPUT
    try:
        record = load_record(args.record)
        baseline = _load(args.scores_baseline)
        identities = {e["column"]: identity_of(args, e["column"]).as_dict() for e in record["scorers"]}
        result = gate_scores(args.scores, record, identities=identities, threshold=args.threshold,
                             dataset=args.dataset, baseline=baseline, max_relative_drop=args.tolerance,
                             n_boot=args.boot, seed=args.seed, scale=args.scale, slice_of=_slice(args, record))
        result.lines.extend(_paired(args, record, result.rates))
    except DataError as exc:
        print(exc.report(), file=sys.stderr)
        return BAD_INPUT
    except (ValueError, OSError, StoreError) as exc:  # DatasetNotFound is a ValueError
        print(f"error: {exc}", file=sys.stderr)
        return BAD_INPUT
    print("\n".join(result.lines))
    for r in result.regressions:
        print(f"REGRESSION: {r}", file=sys.stderr)
    for column, why in result.advisory.items():
        print(f"ADVISORY: {column} is not gated: {why}", file=sys.stderr)
    if args.write_baseline is not None:
        rates = {c: round(r.estimate, 6) for c, r in result.rates.items()
                 if c not in result.advisory and r.estimate is not None}
        body = {"kind": "corrected-pass-rates", "metrics": rates, "record_fingerprint": record["fingerprint"],
                "max_relative_drop": DEFAULT_MAX_RELATIVE_DROP}
        Path(args.write_baseline).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(args.write_baseline, json.dumps(body, indent=2, sort_keys=True) + "\n")
        print(f"baseline of corrected rates written to {args.write_baseline} ({len(rates)} metric(s))")
    print(f"calibrated gate: {result.verdict}")
    return EXIT_CODES[result.verdict]


def _paired(args: argparse.Namespace, record: dict, rates: dict) -> list[str]:
    """The paired tests asked for (--paired-with: the scorer's verdicts; --paired-datasets: the human-checked slice)."""
    from ..calibrate.external_samples import RATE_OF_DIMENSION, read_result
    from ..calibrate.paired_runs import human_verdicts, paired_lines, paired_tests, scorer_verdicts

    metrics = [e["column"] for e in record["scorers"]]
    lines = []
    if args.paired_with is not None:
        only = {e["column"]: RATE_OF_DIMENSION[e["dimension"]] for e in record["scorers"]}
        cut = {e["column"]: args.threshold if args.threshold is not None else e["threshold"] for e in record["scorers"]}
        before, after = (scorer_verdicts(read_result(path, scale=args.scale, extra_metrics=only, only=tuple(only)),
                                         cut, str(path)) for path in (args.paired_with, args.scores))
        alone = len(set(before) ^ set(after))
        lines += paired_lines(paired_tests(before, after, metrics, "scorer's verdicts"), rates)
        lines += [f"  {alone} sample(s) in one run only: not paired"] if alone else []
    if args.paired_datasets is not None:
        dims = {e["column"]: e["dimension"] for e in record["scorers"]}
        cut_h = record["human"]["human_threshold"]
        before_h, after_h = (human_verdicts(_votes(args, name)[1], name, cut_h, dims)
                             for name in args.paired_datasets)
        lines += paired_lines(paired_tests(before_h, after_h, metrics, "human-checked slice"), rates)
    return lines


def _votes(args: argparse.Namespace, name: str) -> tuple[Any, dict]:
    """The opened dataset ``name`` and its human votes per (case, dimension) from the store."""
    from ..calibrate.external_report import sample_votes
    from ..datasets import open_dataset
    from ..importers.export import label_rows
    from ..store import open_store

    with open_store(args.db, create=False, read_only=True) as store:
        opened = open_dataset(name, store, getattr(args, "root", None))
        labels, _who, _ties = label_rows(store, opened.catalog(), None)
    return opened, sample_votes(opened, labels)


def _slice(args: argparse.Namespace, record: dict) -> tuple | None:
    """``(opened dataset, human pass by case id, seed)`` for PPI++ on the run's labelled slice, or None."""
    if args.sample_seed is None:
        return None
    if args.dataset is None:
        raise ValueError("--sample-seed needs --dataset NAME: the dataset whose labelled samples are the slice")
    opened, votes = _votes(args, args.dataset)
    cut = record["human"]["human_threshold"]
    dims = {e["dimension"] for e in record["scorers"]}
    if len(dims) != 1:
        raise ValueError("--sample-seed: the record's scorers judge several dimensions; gate them one at a time")
    (dim,) = dims
    return opened, {c: int(sum(v) / len(v) >= cut) for (c, d), v in votes.items() if d == dim and v}, args.sample_seed


def _load(path: Path | None) -> dict | None:
    if path is None:
        return None
    from ..errors import load_json_object

    return load_json_object(path, "a baseline of corrected rates", ("metrics",), summary="unreadable baseline")
