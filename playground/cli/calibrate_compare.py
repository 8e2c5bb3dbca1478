"""``playground calibrate ragtruth | golden | store | external``: an automatic scorer against human labels.

Each prints its tables (:mod:`playground.cli.calibrate_output`); ``--out DIR`` also writes them as CSV plus PNG
charts.  Registered by :mod:`playground.cli.calibrate`.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .calibrate_inputs import calibration_samples, guard, harness_run, root_catalog, with_dataset_links
from .calibrate_output import (
    boot_count,
    fmt_interval,
    fmt_value,
    open_label_store,
    print_ppi,
    print_report,
    print_table,
    write_outputs,
)
from .calibrate_real import err

__all__ = ["run_external", "run_golden", "run_ragtruth", "run_store"]


def _round4(x: float | None) -> float | None:
    return None if x is None else round(x, 4)



@guard
def run_ragtruth(args: argparse.Namespace) -> int:
    """The support scorer and a plain-coverage baseline against RAGTruth's human labels."""
    from ..calibrate import calibrate_ragtruth, default_ragtruth_path, write_tables

    path = args.file or default_ragtruth_path()
    if not Path(path).is_file():
        return err(f"no RAGTruth claim file at {path}: pass FILE (see shared/data/ragtruth/README.md)")
    rt = calibrate_ragtruth(path, folds=args.folds, seed=args.seed, n_boot=boot_count(args, 2000), floor=args.floor,
                            criterion=args.criterion)
    args.ragtruth_calibration = rt  # --save-floors (cli/calibrate_real.py) takes the floor from this one run
    print(f"RAGTruth: {rt.n} claims ({rt.hallucinated} hallucinated, {rt.hallucinated / rt.n:.1%}) in "
          f"{rt.responses} responses of {rt.sources} sources — {path}")
    print("positive class = supported (not hallucinated); F1, precision, recall are of the hallucinated class; "
          f"kappa intervals: in-sample asymptotic 95%, out-of-sample cluster bootstrap over sources "
          f"({rt.n_boot} resamples, seed {rt.seed})")
    print()
    print_table(rt.table(), ["scorer", "evaluation", "floor", "kappa", "kappa_low", "kappa_high", "balanced_accuracy",
                        "f1_hallucinated", "precision_hallucinated", "recall_hallucinated"])
    print()
    print_table(rt.by_task(), None, "out of sample, by task type (pooled held-out predictions; asymptotic intervals):")
    sup = rt.scorer("support scorer")
    print()
    if sup.cv is None:
        print(f"out-of-sample figures: not computed — cross-validation is undefined: {sup.cv_reason}")
        return 0
    print(f"support scorer: default floor {sup.default_floor:g}, best floor in-sample by "
          f"{args.criterion.replace('_', ' ')} {sup.best.threshold:g}, floors chosen per fold "
          f"{' '.join(f'{t:g}' for t in sup.cv.fold_thresholds)}; out-of-sample kappa "
          f"{fmt_value(sup.cv.kappa)}{fmt_interval(sup.cv.kappa_low, sup.cv.kappa_high)}, balanced accuracy "
          f"{fmt_value(sup.cv.balanced_accuracy)}"
          f"{fmt_interval(sup.cv.balanced_accuracy_low, sup.cv.balanced_accuracy_high)}")
    print("caveat: the shared sample is not random and is enriched for hallucinations (see its README): read "
          "agreement off it, not prevalence or per-model error rates.")
    if args.out is not None:
        from ..ui.calibration import write_ragtruth_charts

        written = write_tables(rt.tables(), args.out)
        charts = write_ragtruth_charts(rt, args.out)
        print(f"\nwrote {len(written)} table(s) and {len(charts)} chart(s) to {args.out}/")
    return 0


@guard
def run_golden(args: argparse.Namespace) -> int:
    """Harness labels against the golden answer key."""
    from ..calibrate import auto_from_run, calibrate, key_from_run, ppi_by_dimension

    run = harness_run(args)
    key = key_from_run(run)
    auto = auto_from_run(run)
    report = calibrate(key, auto, folds=args.folds, seed=args.seed, width=args.width, n_boot=boot_count(args, 1000))
    print_report(report, ppi_title="")
    share = args.ppi_share
    sample_seed = 0 if args.sample_seed is None else args.sample_seed
    # the key labels every unit, so its seeded subsample is exactly a calibration sample of that seed
    whatif = ppi_by_dimension(key.subsample(share, seed=sample_seed), auto, report.dimensions, width=args.width,
                              sample_seed=sample_seed)
    truth = {d: report.comparisons[d].human_rate.rate for d in report.dimensions}
    whatif.insert(len(whatif.columns) - 1, "key_rate", [_round4(truth[d]) for d in whatif["dimension"]])
    print()
    print_ppi(whatif, f"PPI what-if: only {share:.0%} of the key labelled (the calibration sample of seed "
               f"{sample_seed}); key_rate = the full key's rate:", ("key_rate",))
    write_outputs(report, args.out, {"ppi_whatif": whatif})
    return 0


@guard
def run_store(args: argparse.Namespace) -> int:
    """Store labels (one annotator or the consensus) against a harness run (or its judge)."""
    from ..calibrate import auto_from_run, calibrate, human_consensus, human_from_store, judge_from_run

    if getattr(args, "dataset", None) is not None:
        from ..datasets import DatasetNotFound, open_dataset
        from ..harness.config import load_config
        from ..harness.run_dataset import run_dataset

        try:
            with open_label_store(args.db, create=False, read_only=True) as store:
                opened = open_dataset(args.dataset, store, args.root)
                labels = store.current_labels(opened.catalog())  # its floors from them, as 'harness run --dataset'
        except DatasetNotFound as exc:
            return err(str(exc))
        if args.run is None:
            from ..harness.dataset_floors import floor_note

            args.run = Path(tempfile.mkdtemp(prefix="playground-calibrate-"))
            print(f"no --run given: scoring {args.dataset} with the default configuration in {args.run} ...",
                  file=sys.stderr)
            print(floor_note(run_dataset(load_config(None), opened, args.run, progress=False, labels=labels)),
                  file=sys.stderr)
        opened_catalog = opened.catalog()
    run = harness_run(args)
    auto = judge_from_run(run) if args.judge else auto_from_run(run)
    if auto is None:
        return err(f"the run {run} has no judge verdicts (enable the judge in its configuration)")
    catalog = opened_catalog if getattr(args, "dataset", None) is not None else root_catalog(args.root)
    with open_label_store(args.db, create=False, read_only=True) as store:
        if args.annotator is not None and args.annotator not in store.annotators():
            known = ", ".join(store.annotators()) or "-"
            return err(f"no annotator {args.annotator!r} in {store.url} (known: {known})")
        human = human_from_store(store, args.annotator, catalog) if args.annotator else human_consensus(store, catalog)
        samples = calibration_samples(store, getattr(args, "dataset", None))
    if len(human) == 0:
        return err("no current human labels to compare with (label some units in the playground first)")
    report = calibrate(human, auto, folds=args.folds, seed=args.seed, width=args.width, n_boot=boot_count(args, 1000),
                       sample_seed=args.sample_seed)
    with_dataset_links(report, getattr(args, "dataset", None))
    print_report(report, dataset=getattr(args, "dataset", None))
    if args.sample_seed is None and samples:
        print("the store holds calibration sample(s) drawn on the labelling page: "
              + ", ".join(f"{name} (seed {seed})" for name, seed in samples)
              + "; pass --sample-seed SEED to use one for PPI")
    write_outputs(report, args.out)
    return 0


def _external_samples(args: argparse.Namespace) -> int:
    from .calibrate_external import run_result_table

    return run_result_table(args)


@guard
def run_external(args: argparse.Namespace) -> int:
    """An external tool's per-unit scores against human labels."""
    if getattr(args, "dataset", None) is not None:
        return _external_samples(args)
    from .calibrate_external import DATASET_ONLY, check_inputs, refused

    problem = refused(args, DATASET_ONLY, "apply to a --dataset result table only")
    if problem is not None:
        return problem
    beyond = check_inputs(args)  # every file read: a regular file within the import bounds (issue 29.6)
    if beyond is not None:
        return err(beyond)
    args.human = args.human or "key"
    from ..calibrate import (
        auto_from_csv,
        calibrate,
        default_ragtruth_path,
        human_consensus,
        human_from_store,
        key_from_dataset,
        ragtruth_human,
    )

    if args.human == "ragtruth":
        from ..importers.ragtruth import claim_unit, load_ragtruth

        sample = load_ragtruth(args.ragtruth or default_ragtruth_path())
        human = ragtruth_human(sample)
        catalog = {u.unit_id: u for u in map(claim_unit, sample.records)}
    elif args.human == "key":
        from ..golden import load_dataset

        human = key_from_dataset(load_dataset(args.root))
        catalog = root_catalog(args.root)
    else:
        catalog = root_catalog(args.root)
        with open_label_store(args.db, create=False, read_only=True) as store:
            human = (human_from_store(store, args.annotator, catalog) if args.annotator
                     else human_consensus(store, catalog))
    auto = auto_from_csv(args.file, dimension=args.dimension, name=args.name, catalog=catalog, threshold=args.threshold)
    dims = [d for d in auto.dimensions() if d in human.dimensions()]
    if not dims:
        return err(f"the scores' dimension(s) {', '.join(auto.dimensions())} have no {args.human} labels")
    report = calibrate(human, auto, dims, folds=args.folds, seed=args.seed, width=args.width,
                       n_boot=boot_count(args, 1000), link_base=None if args.human == "ragtruth" else "",
                       sample_seed=args.sample_seed)
    if all(report.comparisons[d].n == 0 for d in dims):
        return err("no unit of the scores file has a human label: do the unit ids match "
                    f"({'playground import ragtruth' if args.human == 'ragtruth' else 'playground units'})?")
    print_report(report)
    write_outputs(report, args.out)
    return 0
