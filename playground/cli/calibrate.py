"""``playground calibrate ragtruth | golden | store | external | annotators | adjudicate | sample``.

Each subcommand prints its tables; ``--out DIR`` also writes them as CSV plus
PNG charts (threshold sweep, reliability, PPI intervals, confusion matrix).
All figures are rounded and deterministic (the cross-validation's cluster
bootstrap is seeded, ``--seed``).  This module registers the subcommands; the handlers are in
:mod:`playground.cli.calibrate_compare` (a scorer against people) and :mod:`playground.cli.calibrate_people`
(people against each other), and re-exported here.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from .calibrate_compare import run_external, run_golden, run_ragtruth, run_store
from .calibrate_people import run_adjudicate, run_annotators, run_sample
from .options import add_dataset, add_db, add_root

__all__ = [
    "register",
    "run_adjudicate",
    "run_annotators",
    "run_external",
    "run_golden",
    "run_ragtruth",
    "run_sample",
    "run_store",
]


def _common(p: argparse.ArgumentParser, folds: bool = True) -> None:
    if folds:
        p.add_argument("--folds", type=int, default=5, metavar="K", help="cross-validation folds (default 5)")
        p.add_argument("--seed", type=int, default=0,
                       help="seed of the fold assignment (stable hash of the group id) and of the bootstrap "
                       "(default 0)")
        p.add_argument("--boot", type=int, default=None, metavar="N",
                       help="bootstrap resamples for the cross-validated intervals; each one reruns the whole floor "
                       "selection")
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help="also write CSV tables and PNG charts here")


def _run_opts(p: argparse.ArgumentParser, required: bool = False) -> None:
    p.add_argument("--run", type=Path, required=required, default=None, metavar="RUN_DIR",
                   help="harness run folder (playground harness run --out RUN_DIR)"
                   + ("" if required else "; default: run the default configuration now, in a temporary folder"))
    add_root(p)


def _ppi_opts(p: argparse.ArgumentParser, seed_help: str = "") -> None:
    p.add_argument("--width", type=float, default=0.10,
                   help="target width of the PPI interval for 'labels needed' (default 0.10)")
    p.add_argument("--sample-seed", default=None, metavar="S",
                   help=seed_help or "seed the calibration sample was drawn with ('playground calibrate sample "
                   "--seed S'); PPI uses the labelled prefix of that ranking. Without it the labelled units are not "
                   "a random sample and PPI gives no interval")


def register(subparsers: argparse._SubParsersAction) -> None:
    cal = subparsers.add_parser(
        "calibrate", help="human labels versus automatic scorers; annotators versus each other",
        description="Can this automatic scorer be trusted, where, and at which threshold? Compare automatic labels "
        "(harness, judge, an external tool's CSV) with human ones (label store, consensus, the golden answer key, "
        "RAGTruth) per dimension: rates with Wilson intervals, agreement, Cohen's kappa with interval, base rate, "
        "MCC, PABAK, confusion matrix, disagreements; threshold sweeps with grouped cross-validation; reliability "
        "bins; prediction-powered estimates (PPI++, on a seeded calibration sample only: see 'calibrate sample'); "
        "the paired difference of human and automatic rates on the same units.",
    )
    cal.set_defaults(func=lambda args: cal.print_help() or 2)
    sub = cal.add_subparsers(dest="calibrate_command", metavar="SUBCOMMAND")

    _add_ragtruth(sub)
    _add_golden(sub)
    _add_store(sub)
    _add_external(sub)
    _add_sample(sub)
    _add_annotators(sub)
    _add_adjudicate(sub)
    from .calibrate_bias import register_bias  # bias probes into a calibration record

    register_bias(sub)
    from .calibrate_modes import register_modes  # a gate per failure mode

    register_modes(sub)
    from .calibrate_real import register_real  # ragtruth --frozen, begin, ablation (the `scorers` work)
    register_real(sub)
    from .calibrate_outside import register_outside  # --judge, --scores, --write-ids on ragtruth and begin
    register_outside(sub)


def _add_ragtruth(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ragtruth", help="the support scorer against RAGTruth's human hallucination labels",
        description="Score every claim of a RAGTruth claim file against its evidence with the project's support "
        "scorer and with a plain word-coverage baseline; report in-sample figures at the default floor and at the "
        "best floor, and out-of-sample figures from cross-validation grouped by source (kappa with a cluster "
        "bootstrap 95% interval, balanced accuracy, F1 of the hallucinated class, the floors chosen per fold).",
    )
    p.add_argument("file", type=Path, nargs="?", default=None, metavar="FILE",
                   help="claims.jsonl (default: ../shared/data/ragtruth/claims.jsonl beside the repository)")
    p.add_argument("--floor", type=float, default=None, help="default floor to report (default: the scorer's)")
    p.add_argument("--criterion", choices=("balanced_accuracy", "kappa"), default="balanced_accuracy",
                   help="what the chosen floor maximises (default balanced_accuracy: spotting hallucinated claims); "
                   "the other criterion is reported beside it")
    _common(p)
    p.set_defaults(func=run_ragtruth)


def _add_golden(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "golden", help="harness labels against the golden set's answer key, per dimension",
        description="Compare a harness run's automatic labels with the authored answer key (claims: supported, "
        "correct; facts: covered; passages: from an expected source) — calibration with no human labels yet. "
        "The PPI table is a what-if: only a deterministic --ppi-share of the key counts as labelled.",
    )
    _run_opts(p)
    _ppi_opts(p, "seed of the PPI what-if's subsample of the key (a calibration sample of that seed; default 0)")
    p.add_argument("--ppi-share", type=float, default=0.2, metavar="F",
                   help="share of the key treated as human-labelled in the PPI what-if (default 0.2)")
    _common(p)
    p.set_defaults(func=run_golden)


def _add_store(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "store", help="human labels from the label store against a harness run",
        description="Compare one annotator's labels (--annotator) or the consensus (default: majority of "
        "annotators, adjudicated labels first, ties left out) with a harness run's automatic labels. Stale labels "
        "(unit text changed) are left out. PPI uses every automatic label plus the human subset.",
    )
    _run_opts(p)
    p.add_argument("--annotator", default=None, metavar="NAME", help="one annotator (default: the consensus)")
    add_db(p)
    p.add_argument("--judge", action="store_true", help="use the run's judge verdicts instead of the harness")
    p.add_argument("--dataset", default=None, metavar="NAME",
                   help="an imported dataset's units (without --run: a harness run on it in a temporary folder)")
    _ppi_opts(p)
    _common(p)
    p.set_defaults(func=run_store)


def _add_external(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "external", help="an external tool's per-unit scores (CSV) against human labels",
        description="Calibrate any scorer (RAGAS- or DeepEval-style) on the playground's units: FILE is a CSV with "
        "unit_id and score and/or label (1/0), optionally dimension. Human side: --human key (the golden answer key), "
        "ragtruth (RAGTruth claims; unit ids as 'playground import ragtruth' writes them) or store (--annotator or "
        "the consensus). Every bad row is listed with its row number and nothing is computed.",
    )
    p.add_argument("file", type=Path, metavar="FILE", help="CSV: unit_id, score, label[, dimension]")
    p.add_argument("--dimension", default=None, metavar="DIMENSION",
                   help="dimension of every row (when the file has no dimension column: relevant, supported, correct "
                   "or covered); with --dataset: pass (a per-sample pass/fail judge against the response verdicts) "
                   "or tag:NAME (a per-failure-mode judge against the tag NAME) for every column that is no known "
                   "metric")
    p.add_argument("--threshold", type=float, default=None,
                   help="the tool's own threshold (default: implied by its labels, else 0.5)")
    p.add_argument("--human", choices=("key", "ragtruth", "store"), default=None,
                   help="human side (default key; not with --dataset)")
    p.add_argument("--ragtruth", type=Path, default=None, metavar="FILE",
                   help="RAGTruth claims file for --human ragtruth")
    p.add_argument("--annotator", default=None, metavar="NAME", help="--human store: one annotator (default consensus)")
    add_db(p)
    add_root(p)
    p.add_argument("--name", default=None, help="name of the scorer in the tables (default: external:<file stem>)")
    p.add_argument("--dataset", default=None, metavar="NAME",
                   help="FILE is a per-sample result table (RAGAS evaluate(), DeepEval) of the imported dataset NAME: "
                   "metric columns against the human per-sample rates (see playground/calibrate/external_samples.py)")
    p.add_argument("--scale", type=float, default=1.0, choices=(1.0, 100.0),
                   help="--dataset: scores are on 0–SCALE (default 1; 100 divides by 100)")
    p.add_argument("--metric", action="append", default=[], metavar="COLUMN=RATE",
                   help="--dataset: map a metric column to context_relevance|faithfulness|correctness|coverage "
                   "(split at the last '=', so 'rouge_score(mode=fmeasure)=correctness' works)")
    p.add_argument("--ignore", action="append", default=[], metavar="COLUMN", help="--dataset: drop a column")
    p.add_argument("--human-threshold", type=float, default=0.5, metavar="T",
                   help="--dataset: a sample passes for people when its human rate >= T (default 0.5)")
    _ppi_opts(p)
    _common(p)
    from .calibrate_external import add_record_options

    add_record_options(p)
    p.set_defaults(func=run_external)


def _add_sample(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sample", help="which units to label for a uniform random calibration sample (for PPI)",
        description="Print the first --size units of the seeded ranking (playground.sampling.ranked): a uniform "
        "random sample of the units. Label them in this order; 'playground calibrate store --sample-seed S' then "
        "uses the longest labelled prefix of the ranking for prediction-powered inference, which is valid only on "
        "such a sample.",
    )
    p.add_argument("--size", type=int, required=True, metavar="N", help="how many units")
    p.add_argument("--seed", required=True, metavar="S", help="the seed (write it down: PPI needs it)")
    p.add_argument("--kind", choices=("passage", "claim", "fact"), default=None,
                   help="only units of this kind (default: every unit)")
    add_dataset(p, "the units of the dataset NAME ('golden', the default, or one imported into the label store)")
    add_db(p)
    add_root(p)
    p.set_defaults(func=run_sample)


def _add_annotators(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "annotators", help="annotators versus each other, the adjudication queue, accuracy against the key",
        description="Pairwise Cohen's kappa, Fleiss' kappa and Krippendorff's alpha over shared units (per dimension "
        "and over all), each annotator's agreement with the majority of the others, the units where annotators "
        "disagree (settle them with 'playground calibrate adjudicate'), and each annotator's accuracy against the "
        "golden answer key (teaching).",
    )
    add_db(p)
    add_root(p)
    add_dataset(p, "the labels of the dataset NAME ('golden', the default, or one imported into the label store); "
                "accuracy against the answer key is the golden set's only")
    p.add_argument("--limit", type=int, default=20, help="rows of the adjudication queue to print (default 20)")
    _common(p, folds=False)
    p.set_defaults(func=run_annotators)


def _add_adjudicate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "adjudicate", help="settle a disagreement: write the consensus label of one unit",
        description="Write VALUE (1 or 0; 'clear' withdraws) as the 'consensus' label of UNIT_ID on DIMENSION. "
        "Consensus labels never vote; 'playground calibrate store' uses them before the majority.",
    )
    p.add_argument("unit_id", metavar="UNIT_ID")
    p.add_argument("dimension", choices=("relevant", "supported", "correct", "covered"))
    p.add_argument("value", choices=("1", "0", "clear"))
    p.add_argument("--adjudicator", required=True, metavar="NAME", help="who settles it")
    add_dataset(p, "the dataset UNIT_ID belongs to (default: any, the shipped set's and every imported one's)")
    add_db(p)
    add_root(p)
    p.set_defaults(func=run_adjudicate)
