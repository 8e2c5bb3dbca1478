"""``playground calibrate external RESULT --dataset NAME``: a result table's report, ``--out`` and ``--record``.

Options belong to one of the two forms of ``calibrate external`` (a per-unit
scores file, or a ``--dataset`` result table); one given to the other form
would be ignored, so it is refused (:data:`DATASET_ONLY`, :data:`UNITS_ONLY`).

Printed: what matched, clamped and ignored; every metric side by side (TPR,
TNR, kappa with intervals, base rate, balanced accuracy, the given and best
thresholds, the cross-validated figures); then each metric's full report as
``calibrate store`` prints it.  ``--out DIR`` writes ``scorers.csv`` and, per
metric, the tables and charts of ``calibrate store`` in ``DIR/<metric>/``.
``--record FILE`` writes the calibration record (:mod:`playground.calibrate.record`).
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["DATASET_ONLY", "UNITS_ONLY", "add_identity_options", "add_record_options", "finish_external",
           "identity_of", "metric_map", "refused", "run_result_table"]


#: options of `calibrate external` that belong to one of its two forms: used by it, refused by the other
DATASET_ONLY = {"scale": ("--scale", 1.0), "metric": ("--metric", []), "ignore": ("--ignore", []),
                 "human_threshold": ("--human-threshold", 0.5), "record": ("--record", None),
                 "rerun": ("--rerun", []), "run": ("--run", None), "scorer_version": ("--scorer-version", None),
                 "scorer_config": ("--scorer-config", None), "judge_model": ("--judge-model", None),
                 "judge_prompt": ("--judge-prompt", None)}
UNITS_ONLY = {"human": ("--human", None), "ragtruth": ("--ragtruth", None)}


def refused(args: argparse.Namespace, options: dict, why: str) -> int | None:
    """An error naming every option of ``options`` given a non-default value (they would be ignored)."""
    from .calibrate_real import err

    given = [flag for key, (flag, default) in options.items() if getattr(args, key, default) != default]
    return err(f"{', '.join(given)} {why}") if given else None


def metric_map(items: list[str]) -> dict[str, str]:
    """``--metric COLUMN=RATE`` items; split at the LAST '=' so a column may hold '=' (rouge_score(mode=fmeasure))."""
    extra = {}
    for item in items:
        column, sep, rate = item.rpartition("=")
        if not sep or not column:
            raise ValueError(f"--metric {item!r}: expected COLUMN=RATE")
        extra[column] = rate
    return extra


def run_result_table(args: argparse.Namespace) -> int:
    """``calibrate external RESULT --dataset NAME`` (see the module docstring)."""
    from ..calibrate.external_report import calibrate_result, harness_scorers
    from ..calibrate.external_samples import calibrate_samples, read_result, verdict_labels, with_verdicts
    from ..datasets import DatasetNotFound, open_dataset
    from ..errors import DataError
    from ..importers.export import label_rows
    from .calibrate_output import _boot, _open_store
    from .calibrate_real import err

    problem = refused(args, UNITS_ONLY, "apply to a per-unit scores file, not to a --dataset result table "
                       "(the human side is the dataset's labels; each metric column names its dimension)")
    if problem is not None:
        return problem
    try:
        table = read_result(args.file, scale=args.scale, extra_metrics=metric_map(args.metric),
                            ignore=tuple(args.ignore), dimension=args.dimension)
        with _open_store(args.db, create=False, read_only=True) as store:
            opened = with_verdicts(open_dataset(args.dataset, store, args.root))  # + response verdict units (24.6)
            labels, who, _ties = label_rows(store, opened.catalog(), args.annotator)
            labels = [*labels, *verdict_labels(store, opened, args.annotator, table.rates.values())]
    except (DatasetNotFound, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        return err(str(exc))
    threshold = 0.5 if args.threshold is None else args.threshold
    try:
        rerun_stability(table, opened, args, threshold)
    except ValueError as exc:
        if isinstance(exc, DataError):
            raise
        return err(str(exc))
    result = calibrate_result(table, opened, labels, who, threshold=threshold, human_threshold=args.human_threshold,
                              folds=args.folds, seed=args.seed, n_boot=_boot(args, 1000), width=args.width,
                              sample_seed=args.sample_seed, name=args.name,
                              extra=harness_scorers(args.run) if args.run is not None else ())
    scored = calibrate_samples(table, opened, labels, who, threshold=threshold, human_threshold=args.human_threshold)
    return finish_external(result, args, getattr(opened, "revision", ""), scored.comparisons)


def add_record_options(p: argparse.ArgumentParser) -> None:
    """``--record`` and the scorer's identity options of ``calibrate external``."""
    p.add_argument("--record", type=Path, default=None, metavar="FILE",
                   help="--dataset: write the calibration record (JSON to commit; what 'harness gate --record' reads)")
    p.add_argument("--rerun", action="append", default=[], type=Path, metavar="FILE",
                   help="--dataset: the same scorer's result table from another run on the same samples (repeat for "
                   "K runs): flip rate and per-sample stability, carried in the record")
    p.add_argument("--run", type=Path, default=None, metavar="RUN_DIR",
                   help="--dataset: also put the harness (a 'harness run --dataset NAME' folder) beside the metrics, "
                   "per sample: the share of its units the harness says yes to")
    add_identity_options(p)


def add_identity_options(p: argparse.ArgumentParser) -> None:
    """The scorer identity options: what a record keeps and what the gate checks it against."""
    p.add_argument("--scorer-version", default=None, metavar="V",
                   help="the scorer's version for the record (e.g. 'ragas 0.4.3')")
    p.add_argument("--scorer-config", type=Path, default=None, metavar="FILE",
                   help="the scorer's configuration file; the record keeps its SHA-256")
    p.add_argument("--judge-model", default=None, metavar="MODEL", help="an LLM judge's model, for the record")
    p.add_argument("--judge-prompt", type=Path, default=None, metavar="FILE",
                   help="an LLM judge's prompt file; the record keeps its SHA-256")


def identity_of(args: argparse.Namespace, column: str) -> Any:
    """The scorer identity a record (or a gate) gives the metric ``column``."""
    from ..calibrate.record import Identity, file_sha256

    return Identity(
        name=f"{args.name}:{column}" if getattr(args, "name", None) else column,
        version=args.scorer_version,
        config_sha256=file_sha256(args.scorer_config) if args.scorer_config else None,
        model=args.judge_model,
        prompt_sha256=file_sha256(args.judge_prompt) if args.judge_prompt else None,
    )


def finish_external(result: Any, args: argparse.Namespace, revision: str = "", correlations: Any = ()) -> int:
    """Print the report of :func:`playground.calibrate.external_report.calibrate_result` (and ``correlations``,
    the :class:`~playground.calibrate.external_samples.RateComparison` of each column); write --out, --record."""
    from ..calibrate.external_report import side_by_side, slug
    from .calibrate_output import _print_report, _table, _write

    print(f"dataset {result.dataset}: {result.matched} of {result.rows} result rows matched to samples; "
          f"human side: {result.who} (a sample passes for people when its human rate >= {result.human_threshold:g}; "
          f"for the tool when its score >= {result.threshold:g})")
    if result.sample_seed is None:
        print("no --sample-seed: every labelled sample is compared; they are not a drawn sample, so no PPI interval "
              "and no record a gate will trust")
    if result.ignored:
        print(f"ignored (no human rate to compare): {', '.join(result.ignored)}")
    for m in result.metrics:
        if m.clamped:
            print(f"{m.column}: {m.clamped} score(s) within 1e-9 of [0, 1] clamped into it")
    for c in correlations:
        if c.n:
            print(f"{c.column}: against the human per-sample rate (n={c.n}): Pearson {_f(c.pearson.r)} "
                  f"[{_f(c.pearson.low)}, {_f(c.pearson.high)}], Spearman {_f(c.spearman.r)} [{_f(c.spearman.low)}, "
                  f"{_f(c.spearman.high)}], mean absolute error {_f(c.mae)}")
    print()
    table = side_by_side(result.metrics)
    _table(table, ["scorer", "dimension", "n", "tpr", "tpr_low", "tpr_high", "tnr", "tnr_low", "tnr_high", "kappa",
                   "kappa_low", "kappa_high", "base_rate", "balanced_accuracy", "threshold", "best_threshold",
                   "cv_kappa", "cv_balanced_accuracy"],
           "every metric on the same samples (TPR, TNR: Wilson 95%; cv_: the best threshold chosen inside grouped "
           "cross-validation, out of sample):")
    for m in result.metrics:
        print()
        print(f"=== {m.column} -> {m.rate} ({m.dimension}; {m.missing} sample(s) without a score"
              + (f"; calibration sample {m.sample_size}, {m.outside_sample} labelled beyond it not used"
                 if result.sample_seed is not None else "") + ")")
        _print_report(m.report)
        print(f"labels for a {args.width:g}-wide TPR and TNR interval: {_needed(m, result.sample_seed, args.width)}")
    if result.unmatched_rows:
        print(f"\nunmatched result rows ({len(result.unmatched_rows)}): {', '.join(result.unmatched_rows)}")
    if result.unmatched_samples:
        print(f"samples without a result row ({len(result.unmatched_samples)}): "
              + ", ".join(result.unmatched_samples))
    repeats = getattr(args, "repeats_figures", None)
    for column, r in (repeats or {}).items():
        print(f"{column}: {r['k']} runs on {r['n_units']} samples: flip rate {_f(r['flip_rate'])} (chance two runs "
              f"disagree), {r['unstable_units']} sample(s) not the same in every run, mean stability "
              f"{_f(r['mean_stability'])}")
    if args.out is not None:
        from ..calibrate import write_tables

        write_tables({"scorers": table}, args.out)
        for m in result.metrics:
            _write(m.report, Path(args.out) / slug(m.column))
    if args.record is not None:
        _write_record(result, args, revision)
    return 0


def _write_record(result: Any, args: argparse.Namespace, revision: str) -> None:
    from ..calibrate.record import dumps_record, record_from_report
    from ..files import write_atomic

    identities = {m.column: identity_of(args, m.column) for m in result.metrics}
    repeats = getattr(args, "repeats_figures", None)
    body = record_from_report(result, identities, repeats, revision)
    Path(args.record).parent.mkdir(parents=True, exist_ok=True)  # e.g. gate/, the folder the record is committed in
    write_atomic(args.record, dumps_record(body))
    print(f"\ncalibration record written to {args.record} ({len(result.metrics)} scorer(s); commit it, then "
          "'playground harness gate --scores FILE --record' reads it)")


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def rerun_stability(table: Any, opened: Any, args: argparse.Namespace, threshold: float) -> None:
    """``--rerun``: read each rerun like the first run and keep the stability figures in ``args.repeats_figures``."""
    if not args.rerun:
        return
    from ..calibrate.external_samples import match_rows, read_result
    from ..calibrate.repeats import stability

    runs = [match_rows(table, opened)[0]]
    for path in args.rerun:
        rerun = read_result(path, scale=args.scale, extra_metrics=_mapped(args),
                            ignore=tuple(args.ignore), dimension=args.dimension)
        missing = sorted(set(table.rates) - set(rerun.rates))
        if missing:
            raise ValueError(f"--rerun {path}: no column(s) {', '.join(missing)} of the first run")
        runs.append(match_rows(rerun, opened)[0])
    args.repeats_figures = stability(runs, list(table.rates), threshold)


def _mapped(args: argparse.Namespace) -> dict[str, str]:
    return metric_map(args.metric)


def _needed(m: Any, sample_seed: Any, width: float) -> str:
    """The 'how many more labels' sentence of one metric (:mod:`playground.calibrate.needed`)."""
    from ..calibrate.needed import needed_for_rates, needed_text

    if sample_seed is None:
        return ("draw a random sample first (--sample-seed): labels people chose say nothing about how many more "
                "to label")
    c = m.report.comparisons[m.dimension]
    return needed_text(needed_for_rates(c.tpr.successes, c.tpr.n, c.tnr.successes, c.tnr.n, width))
