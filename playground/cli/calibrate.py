"""``playground calibrate ragtruth | golden | store | external | annotators | adjudicate | sample``.

Each subcommand prints its tables; ``--out DIR`` also writes them as CSV plus
PNG charts (threshold sweep, reliability, PPI intervals, confusion matrix).
All figures are rounded and deterministic (the cross-validation's cluster
bootstrap is seeded, ``--seed``).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .calibrate_output import _boot, _ci, _fmt, _open_store, _print_ppi, _print_report, _table, _write
from .calibrate_real import err
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


# --- output helpers ---------------------------------------------------------------------------------


def _guard(fn):
    def wrapper(args: argparse.Namespace) -> int:
        from ..calibrate import CalibrationInputError
        from ..datasets import DatasetNotFound
        from ..ragtruth import RagTruthError
        from ..store import LabelImportError, StoreError

        out = getattr(args, "out", None)
        if out is not None and Path(out).exists() and not Path(out).is_dir():
            return err(f"--out {out} is a file: name a folder for the tables and charts")
        try:
            return fn(args)
        except (CalibrationInputError, RagTruthError, LabelImportError) as exc:
            print(str(exc), file=sys.stderr)
            return 1
        except (StoreError, DatasetNotFound) as exc:
            return err(str(exc))
        except FileNotFoundError as exc:
            return err(f"no such file: {exc.filename}")
        except OSError as exc:  # a folder that cannot be written (permissions, disk full)
            return err(f"cannot write {exc.filename or out}: {exc.strerror or exc}")

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _round4(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _harness_run(args) -> Path:
    """The run folder: ``--run``, or a fresh run of the default configuration in a temporary folder."""
    if args.run is not None:
        if not (args.run / "units.csv").is_file():
            raise FileNotFoundError(2, "no units.csv", str(args.run / "units.csv"))
        return args.run
    from ..harness.config import load_config
    from ..harness.run import run_harness

    tmp = Path(tempfile.mkdtemp(prefix="playground-calibrate-"))
    print(f"no --run given: running the harness with the default configuration in {tmp} ...", file=sys.stderr)
    run_harness(load_config(None), tmp, root=args.root, progress=False)
    return tmp


def _calibration_samples(store, dataset: str | None = None) -> list[tuple[str, object]]:
    """``(name, seed)`` of the store's calibration samples of ``dataset`` (None: the shipped set)."""
    from ..datasets import SHIPPED

    lister = getattr(store, "assignments", None)
    if lister is None:
        return []
    return [(a.name, a.seed) for a in lister() if getattr(a, "kind", "") == "calibration_sample"
            and getattr(a, "dataset", SHIPPED) == (dataset or SHIPPED)]


# --- handlers ----------------------------------------------------------------------------------------


@_guard
def run_ragtruth(args: argparse.Namespace) -> int:
    """The support scorer and a plain-coverage baseline against RAGTruth's human labels."""
    from ..calibrate import calibrate_ragtruth, default_ragtruth_path, write_tables

    path = args.file or default_ragtruth_path()
    if not Path(path).is_file():
        return err(f"no RAGTruth claim file at {path}: pass FILE (see shared/data/ragtruth/README.md)")
    rt = calibrate_ragtruth(path, folds=args.folds, seed=args.seed, n_boot=_boot(args, 2000), floor=args.floor,
                            criterion=args.criterion)
    args.ragtruth_calibration = rt  # --save-floors (cli/calibrate_real.py) takes the floor from this one run
    print(f"RAGTruth: {rt.n} claims ({rt.hallucinated} hallucinated, {rt.hallucinated / rt.n:.1%}) in "
          f"{rt.responses} responses of {rt.sources} sources — {path}")
    print("positive class = supported (not hallucinated); F1, precision, recall are of the hallucinated class; "
          f"kappa intervals: in-sample asymptotic 95%, out-of-sample cluster bootstrap over sources "
          f"({rt.n_boot} resamples, seed {rt.seed})")
    print()
    _table(rt.table(), ["scorer", "evaluation", "floor", "kappa", "kappa_low", "kappa_high", "balanced_accuracy",
                        "f1_hallucinated", "precision_hallucinated", "recall_hallucinated"])
    print()
    _table(rt.by_task(), None, "out of sample, by task type (pooled held-out predictions; asymptotic intervals):")
    sup = rt.scorer("support scorer")
    print()
    if sup.cv is None:
        print(f"out-of-sample figures: not computed — cross-validation is undefined: {sup.cv_reason}")
        return 0
    print(f"support scorer: default floor {sup.default_floor:g}, best floor in-sample by "
          f"{args.criterion.replace('_', ' ')} {sup.best.threshold:g}, floors chosen per fold "
          f"{' '.join(f'{t:g}' for t in sup.cv.fold_thresholds)}; out-of-sample kappa "
          f"{_fmt(sup.cv.kappa)}{_ci(sup.cv.kappa_low, sup.cv.kappa_high)}, balanced accuracy "
          f"{_fmt(sup.cv.balanced_accuracy)}{_ci(sup.cv.balanced_accuracy_low, sup.cv.balanced_accuracy_high)}")
    print("caveat: the shared sample is not random and is enriched for hallucinations (see its README): read "
          "agreement off it, not prevalence or per-model error rates.")
    if args.out is not None:
        from ..ui.calibration import write_ragtruth_charts

        written = write_tables(rt.tables(), args.out)
        charts = write_ragtruth_charts(rt, args.out)
        print(f"\nwrote {len(written)} table(s) and {len(charts)} chart(s) to {args.out}/")
    return 0


@_guard
def run_golden(args: argparse.Namespace) -> int:
    """Harness labels against the golden answer key."""
    from ..calibrate import auto_from_run, calibrate, key_from_run, ppi_by_dimension

    run = _harness_run(args)
    key = key_from_run(run)
    auto = auto_from_run(run)
    report = calibrate(key, auto, folds=args.folds, seed=args.seed, width=args.width, n_boot=_boot(args, 1000))
    _print_report(report, ppi_title="")
    share = args.ppi_share
    sample_seed = 0 if args.sample_seed is None else args.sample_seed
    # the key labels every unit, so its seeded subsample is exactly a calibration sample of that seed
    whatif = ppi_by_dimension(key.subsample(share, seed=sample_seed), auto, report.dimensions, width=args.width,
                              sample_seed=sample_seed)
    truth = {d: report.comparisons[d].human_rate.rate for d in report.dimensions}
    whatif.insert(len(whatif.columns) - 1, "key_rate", [_round4(truth[d]) for d in whatif["dimension"]])
    print()
    _print_ppi(whatif, f"PPI what-if: only {share:.0%} of the key labelled (the calibration sample of seed "
               f"{sample_seed}); key_rate = the full key's rate:", ("key_rate",))
    _write(report, args.out, {"ppi_whatif": whatif})
    return 0


def _catalog(root):
    from ..units import load_catalog

    return load_catalog(root)


def _dataset_catalog(args: argparse.Namespace, *, any_dataset: bool = False) -> dict:
    """unit_id -> Unit of --dataset: the shipped set when absent (every dataset's units with ``any_dataset``)."""
    from ..datasets import SHIPPED, open_dataset

    name = getattr(args, "dataset", None)
    if name in (None, SHIPPED) and not (any_dataset and name is None):
        return _catalog(args.root)
    from ..units import load_catalog

    with _open_store(args.db, create=False, read_only=True) as store:
        if name is None:
            return load_catalog(args.root, None, store)
        return open_dataset(name, store, args.root).catalog()


def _with_dataset_links(report, dataset: str | None) -> None:
    """Point the report's disagreement links at ``dataset`` and its PPI advice at ``calibrate sample --dataset``."""
    from ..datasets import SHIPPED, dataset_link, with_dataset

    if dataset in (None, SHIPPED):
        return
    for comp in report.comparisons.values():
        if len(comp.disagreements):
            comp.disagreements["link"] = [dataset_link(c, dataset) for c in comp.disagreements["case_id"]]
    if "note" in report.ppi.columns:
        advice = with_dataset("playground calibrate sample", dataset)
        report.ppi["note"] = [n.replace("playground calibrate sample", advice) if isinstance(n, str) else n
                              for n in report.ppi["note"]]


@_guard
def run_store(args: argparse.Namespace) -> int:
    """Store labels (one annotator or the consensus) against a harness run (or its judge)."""
    from ..calibrate import auto_from_run, calibrate, human_consensus, human_from_store, judge_from_run

    if getattr(args, "dataset", None) is not None:
        from ..datasets import DatasetNotFound, open_dataset
        from ..harness.config import load_config
        from ..harness.run_dataset import run_dataset

        try:
            with _open_store(args.db, create=False, read_only=True) as store:
                opened = open_dataset(args.dataset, store, args.root)
        except DatasetNotFound as exc:
            return err(str(exc))
        if args.run is None:
            args.run = Path(tempfile.mkdtemp(prefix="playground-calibrate-"))
            print(f"no --run given: scoring {args.dataset} with the default configuration in {args.run} ...",
                  file=sys.stderr)
            run_dataset(load_config(None), opened, args.run, progress=False)
        dataset_catalog = opened.catalog()
    run = _harness_run(args)
    auto = judge_from_run(run) if args.judge else auto_from_run(run)
    if auto is None:
        return err(f"the run {run} has no judge verdicts (enable the judge in its configuration)")
    catalog = dataset_catalog if getattr(args, "dataset", None) is not None else _catalog(args.root)
    with _open_store(args.db, create=False, read_only=True) as store:
        if args.annotator is not None and args.annotator not in store.annotators():
            known = ", ".join(store.annotators()) or "-"
            return err(f"no annotator {args.annotator!r} in {store.url} (known: {known})")
        human = human_from_store(store, args.annotator, catalog) if args.annotator else human_consensus(store, catalog)
        samples = _calibration_samples(store, getattr(args, "dataset", None))
    if len(human) == 0:
        return err("no current human labels to compare with (label some units in the playground first)")
    report = calibrate(human, auto, folds=args.folds, seed=args.seed, width=args.width, n_boot=_boot(args, 1000),
                       sample_seed=args.sample_seed)
    _with_dataset_links(report, getattr(args, "dataset", None))
    _print_report(report, dataset=getattr(args, "dataset", None))
    if args.sample_seed is None and samples:
        print("the store holds calibration sample(s) drawn on the labelling page: "
              + ", ".join(f"{name} (seed {seed})" for name, seed in samples)
              + "; pass --sample-seed SEED to use one for PPI")
    _write(report, args.out)
    return 0


def _external_samples(args: argparse.Namespace) -> int:
    from .calibrate_external import run_result_table

    return run_result_table(args)


@_guard
def run_external(args: argparse.Namespace) -> int:
    """An external tool's per-unit scores against human labels."""
    if getattr(args, "dataset", None) is not None:
        return _external_samples(args)
    from .calibrate_external import DATASET_ONLY, refused

    problem = refused(args, DATASET_ONLY, "apply to a --dataset result table only")
    if problem is not None:
        return problem
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
        from ..importers.ragtruth import claim_unit
        from ..ragtruth import load_ragtruth

        sample = load_ragtruth(args.ragtruth or default_ragtruth_path())
        human = ragtruth_human(sample)
        catalog = {u.unit_id: u for u in map(claim_unit, sample.records)}
    elif args.human == "key":
        from ..golden import load_dataset

        human = key_from_dataset(load_dataset(args.root))
        catalog = _catalog(args.root)
    else:
        catalog = _catalog(args.root)
        with _open_store(args.db, create=False, read_only=True) as store:
            human = (human_from_store(store, args.annotator, catalog) if args.annotator
                     else human_consensus(store, catalog))
    auto = auto_from_csv(args.file, dimension=args.dimension, name=args.name, catalog=catalog, threshold=args.threshold)
    dims = [d for d in auto.dimensions() if d in human.dimensions()]
    if not dims:
        return err(f"the scores' dimension(s) {', '.join(auto.dimensions())} have no {args.human} labels")
    report = calibrate(human, auto, dims, folds=args.folds, seed=args.seed, width=args.width,
                       n_boot=_boot(args, 1000), link_base=None if args.human == "ragtruth" else "",
                       sample_seed=args.sample_seed)
    if all(report.comparisons[d].n == 0 for d in dims):
        return err("no unit of the scores file has a human label: do the unit ids match "
                    f"({'playground import ragtruth' if args.human == 'ragtruth' else 'playground units'})?")
    _print_report(report)
    _write(report, args.out)
    return 0


def _key_accuracy(args: argparse.Namespace, labels: list) -> dict:
    """Accuracy against the golden answer key (the shipped set only), printed; its tables for --out."""
    from ..calibrate import CONSENSUS, accuracy_against_key, key_from_dataset
    from ..datasets import SHIPPED
    from ..golden import load_dataset

    print()
    if args.dataset not in (None, SHIPPED):
        print(f"accuracy against an answer key: dataset {args.dataset} has none (the golden set's only)")
        return {}
    key = key_from_dataset(load_dataset(args.root))
    people_labels = [lab for lab in labels if lab.annotator != CONSENSUS]
    acc = accuracy_against_key(people_labels, key)
    _table(acc, None, "accuracy against the golden answer key (teaching; per authored variant with --out):")
    return {"accuracy_against_key": acc,
            "accuracy_by_variant": accuracy_against_key(people_labels, key, by="variant")}


def _elsewhere(args: argparse.Namespace, people: list[str]) -> None:
    """Without --dataset and with no annotator here: say which imported datasets have labels (then pass --dataset)."""
    if args.dataset is not None or people:
        return
    from ..datasets import dataset_names, open_dataset

    with _open_store(args.db, create=False, read_only=True) as store:
        names = [n for n in dataset_names(store)[1:]
                 if store.labels(unit_ids=open_dataset(n, store, args.root).catalog())]
    if names:
        print(f"  (the imported dataset(s) {', '.join(names)} have labels: pass --dataset NAME)")


@_guard
def run_annotators(args: argparse.Namespace) -> int:
    """Annotators versus each other, the adjudication queue and accuracy against the key."""
    import pandas as pd

    from ..calibrate import CONSENSUS, adjudication_queue, annotator_agreement, write_tables
    from ..datasets import with_dataset

    catalog = _dataset_catalog(args)
    with _open_store(args.db, create=False, read_only=True) as store:
        labels = store.current_labels(catalog)
        queue = adjudication_queue(store, catalog, dataset=args.dataset)
    people = sorted({lab.annotator for lab in labels if lab.annotator != CONSENSUS})
    where = f" of dataset {args.dataset}" if args.dataset else ""
    print(f"annotators with current labels{where}: {len(people)} ({', '.join(people) or '-'})")
    _elsewhere(args, people)
    if len(people) < 2:
        print("agreement between annotators needs at least two of them on shared units")
    dims = sorted({lab.dimension for lab in labels})
    results = [annotator_agreement(labels, d) for d in dims] + [annotator_agreement(labels)]
    summary = pd.DataFrame([r.summary() for r in results])
    print()
    _table(summary, None, "agreement over shared units (items = unit and dimension):")
    pairs = pd.concat([r.pairwise.assign(dimension=r.dimension or "all") for r in results], ignore_index=True)
    majority = pd.concat([r.vs_majority.assign(dimension=r.dimension or "all") for r in results], ignore_index=True)
    print()
    _table(pairs, ["dimension", "annotator_a", "annotator_b", "n_shared", "agreement", "kappa", "kappa_low",
                   "kappa_high", "pabak"], "pairwise Cohen's kappa:")
    print()
    _table(majority, ["dimension", "annotator", "n", "agreement", "kappa", "kappa_low", "kappa_high"],
           "each annotator against the majority of the others:")
    print()
    open_q = queue[queue["adjudicated"].isna()] if len(queue) else queue
    print(f"adjudication queue: {len(queue)} disagreement(s), {len(open_q)} not yet adjudicated (settle with: "
          f"{with_dataset('playground calibrate adjudicate', args.dataset)} UNIT_ID DIMENSION 1|0 --adjudicator NAME)")
    if len(queue):
        _table(queue.head(args.limit), ["unit_id", "dimension", "status", "votes", "adjudicated", "link"])
    accuracy = _key_accuracy(args, labels)
    if args.out is not None:
        written = write_tables({"annotators": summary, "pairwise": pairs, "vs_majority": majority,
                                "adjudication_queue": queue, **accuracy}, args.out)
        print(f"\nwrote {len(written)} table(s) to {args.out}/")
    return 0


@_guard
def run_adjudicate(args: argparse.Namespace) -> int:
    """Write one consensus label."""
    from ..calibrate import adjudicate
    from ..datasets import with_dataset

    catalog = _dataset_catalog(args, any_dataset=True)
    unit = catalog.get(args.unit_id)
    if unit is None:
        where = f"dataset {args.dataset}" if args.dataset else "the shipped set or any imported dataset"
        hint = with_dataset("playground units", args.dataset) if args.dataset else "playground units --dataset NAME"
        return err(f"unknown unit {args.unit_id!r}: not in {where} (see '{hint}')")
    value = None if args.value == "clear" else int(args.value)
    try:
        with _open_store(args.db) as store:
            event = adjudicate(store, unit, args.dimension, value, args.adjudicator)
    except ValueError as exc:
        return err(str(exc))
    if event is None:
        print(f"{args.unit_id} {args.dimension}: consensus already {args.value}; nothing changed")
    else:
        print(f"{args.unit_id} {args.dimension}: consensus {'cleared' if value is None else value} "
              f"(adjudicated by {args.adjudicator})")
    return 0


@_guard
def run_sample(args: argparse.Namespace) -> int:
    """The first --size units of the seeded ranking: the units to label for a calibration sample."""
    from ..datasets import with_dataset
    from ..sampling import draw_sample

    if args.size < 1:
        return err(f"--size must be at least 1, got {args.size}")
    catalog = _dataset_catalog(args)
    units = [u for u in catalog.values() if args.kind is None or u.unit_kind == args.kind]
    chosen = draw_sample([u.unit_id for u in units], args.size, args.seed)
    print(f"calibration sample: the first {len(chosen)} of {len(units)} units ranked with seed {args.seed} "
          f"(label them in this order; then pass --sample-seed to "
          f"'{with_dataset('playground calibrate store', args.dataset)}')")
    print("rank\tunit_id\tkind\tcase_id")
    for i, unit_id in enumerate(chosen, 1):
        print(f"{i}\t{unit_id}\t{catalog[unit_id].unit_kind}\t{catalog[unit_id].case_id}")
    return 0
