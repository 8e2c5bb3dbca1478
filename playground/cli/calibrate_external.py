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

Every file it reads is checked first with the import bounds (:func:`check_inputs`,
:mod:`playground.importers.limits`): a regular file (a FIFO is refused without
waiting for a writer) of at most ``MAX_FILE_BYTES``; one line names the option.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = [
    "DATASET_ONLY",
    "UNITS_ONLY",
    "add_identity_options",
    "add_record_options",
    "check_inputs",
    "finish_external",
    "identity_of",
    "input_files",
    "judge_scorer",
    "keep_stability",
    "metric_map",
    "ppi_needed_lines",
    "refused",
    "run_result_table",
]


#: options of `calibrate external` that belong to one of its two forms: used by it, refused by the other
DATASET_ONLY = {"scale": ("--scale", 1.0), "metric": ("--metric", []), "ignore": ("--ignore", []),
                 "human_threshold": ("--human-threshold", 0.5), "record": ("--record", None),
                 "rerun": ("--rerun", []), "run": ("--run", None), "scorer_version": ("--scorer-version", None),
                 "scorer_config": ("--scorer-config", None), "judge_model": ("--judge-model", None),
                 "judge_prompt": ("--judge-prompt", None), "judge": ("--judge", None), "repeats": ("--repeats", 1),
                 "ollama_host": ("--ollama-host", None), "judge_cache": ("--judge-cache", None)}
UNITS_ONLY = {"human": ("--human", None), "ragtruth": ("--ragtruth", None)}


def refused(args: argparse.Namespace, options: dict, why: str) -> int | None:
    """An error naming every option of ``options`` given a non-default value (they would be ignored)."""
    from .calibrate_real import err

    given = [flag for key, (flag, default) in options.items() if getattr(args, key, default) != default]
    return err(f"{', '.join(given)} {why}") if given else None


def input_files(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """``(option, path)`` of every file ``calibrate external`` reads: the scores file or result table, each
    ``--rerun``, ``--ragtruth`` (the human labels of ``--human ragtruth``), ``--scorer-config`` and
    ``--judge-prompt`` (hashed for the record), and the ``units.csv`` of ``--run``'s harness run folder.  (The
    other human sides are the label store and the shipped answer key.)"""
    files: list[tuple[str, Path]] = [("FILE", Path(args.file))]
    files += [("--rerun", Path(f)) for f in getattr(args, "rerun", None) or []]
    if getattr(args, "run", None) is not None:
        files.append(("--run", Path(args.run) / "units.csv"))
    for key, flag in (("ragtruth", "--ragtruth"), ("scorer_config", "--scorer-config"),
                      ("judge_prompt", "--judge-prompt")):
        if getattr(args, key, None) is not None:
            files.append((flag, Path(getattr(args, key))))
    return files


def check_inputs(args: argparse.Namespace) -> str | None:
    """The first input of :func:`input_files` beyond the import bounds, as one line (None when all are within).

    A missing file is left to the reader that opens it (its own message); a FIFO, a device, a folder or a file
    over ``MAX_FILE_BYTES`` is refused here, before anything is read.
    """
    from ..limits import LimitExceeded, check_file

    for flag, path in input_files(args):
        if not path.exists() and not path.is_symlink():
            continue
        try:
            check_file(path)
        except (LimitExceeded, OSError) as exc:
            what = "" if flag == "FILE" else f"{flag} "
            return f"{what}{path}: {exc}"
    return None


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
    from ..harness.llm import ModelError
    from ..importers.export import label_rows
    from .calibrate_output import boot_count, open_label_store
    from .calibrate_real import err

    problem = refused(args, UNITS_ONLY, "apply to a per-unit scores file, not to a --dataset result table "
                       "(the human side is the dataset's labels; each metric column names its dimension)")
    if problem is not None:
        return problem
    beyond = check_inputs(args)
    if beyond is not None:
        return err(beyond)
    try:
        table = read_result(args.file, scale=args.scale, extra_metrics=metric_map(args.metric),
                            ignore=tuple(args.ignore), dimension=args.dimension)
        with open_label_store(args.db, create=False, read_only=True) as store:
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
    extra = harness_scorers(args.run) if args.run is not None else []
    try:
        extra += judge_scorer(args, opened, labels, threshold)
    except (ModelError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        return err(str(exc))
    result = calibrate_result(table, opened, labels, who, threshold=threshold, human_threshold=args.human_threshold,
                              folds=args.folds, seed=args.seed, n_boot=boot_count(args, 1000), width=args.width,
                              sample_seed=args.sample_seed, name=args.name, extra=extra)
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
    p.add_argument("--judge", default=None, metavar="MODEL",
                   help="--dataset: also calibrate the harness's LLM judge through Ollama ($OLLAMA_HOST or "
                   "--ollama-host) on the labelled samples: the share of a response's claims it calls supported "
                   "(column judge:MODEL, rate faithfulness)")
    p.add_argument("--repeats", type=int, default=1, metavar="K",
                   help="--judge: run the judge K times (another seed each, each run cached apart): flip rate and "
                   "per-sample verdict stability, carried in the record (default 1)")
    p.add_argument("--ollama-host", default=None, metavar="HOST", help="--judge: the Ollama server")
    p.add_argument("--judge-cache", type=Path, default=None, metavar="DIR",
                   help="--judge: folder of the model-call cache, DIR/ollama.db (default .cache)")
    add_identity_options(p)


def judge_scorer(args: argparse.Namespace, opened: Any, labels: Any,
                 threshold: float) -> list[tuple[str, str, dict[str, float]]]:
    """``--judge MODEL [--repeats K]``: the judge as one more per-sample scorer, rate ``faithfulness`` (or the one
    ``--metric judge:MODEL=RATE`` gives), run on every sample with a human label of that rate's dimension (the
    calibration units); with K >= 2 its stability goes to ``args.repeats_figures`` (for the record) and
    ``args.repeat_units`` (per sample, for the report): :func:`keep_stability`."""
    from ..calibrate.external_samples import DIMENSION_OF_RATE
    from ..calibrate.repeats import judge_column, judge_runs
    from ..harness.llm import ModelCache, OllamaModels, resolve_host

    if args.judge is None:
        if args.repeats != 1:
            raise ValueError("--repeats reruns the LLM judge: add --judge MODEL "
                             "(another scorer's reruns: --rerun FILE)")
        return []
    if args.repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {args.repeats}")
    column = judge_column(args.judge)
    rate = metric_map(args.metric).get(column, "faithfulness")
    if rate not in DIMENSION_OF_RATE:
        raise ValueError(f"--metric {column}={rate}: unknown rate (rates: {', '.join(DIMENSION_OF_RATE)})")
    dim = DIMENSION_OF_RATE[rate]
    catalog = opened.catalog()
    cases = sorted({catalog[x.unit_id].case_id for x in labels if x.dimension == dim and x.unit_id in catalog})
    if not cases:
        raise ValueError(f"--judge: no sample has a human '{dim}' label to calibrate the judge on (another rate: "
                         f"--metric {column}=RATE)")
    folder = Path(args.judge_cache) if args.judge_cache is not None else Path(".cache")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--judge-cache {folder} is a file: name the folder that holds (or will hold) ollama.db")
    folder.mkdir(parents=True, exist_ok=True)
    with ModelCache(folder / "ollama.db") as cache:
        runs = judge_runs(opened, cases, OllamaModels(host=resolve_host(args.ollama_host), cache=cache), args.judge,
                          args.repeats)
    if args.repeats >= 2:
        keep_stability(args, runs, [column], threshold)
    return [(column, rate, {c: v for c, s in runs[0].items() if (v := s[column]) is not None})]


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

    judge = getattr(args, "judge", None)
    return Identity(
        name=f"{args.name}:{column}" if getattr(args, "name", None) else column,
        version=args.scorer_version,
        config_sha256=file_sha256(args.scorer_config) if args.scorer_config else None,
        model=args.judge_model or (judge if judge and column == f"judge:{judge}" else None),
        prompt_sha256=file_sha256(args.judge_prompt) if args.judge_prompt else None,
    )


def finish_external(result: Any, args: argparse.Namespace, revision: str = "", correlations: Any = ()) -> int:
    """Print the report of :func:`playground.calibrate.external_report.calibrate_result` (and ``correlations``,
    the :class:`~playground.calibrate.external_samples.RateComparison` of each column); write --out, --record."""
    from ..calibrate.external_report import side_by_side, slug
    from .calibrate_output import print_report, print_table, write_outputs

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
    print_table(table, ["scorer", "dimension", "n", "tpr", "tpr_low", "tpr_high", "tnr", "tnr_low", "tnr_high", "kappa",
                   "kappa_low", "kappa_high", "base_rate", "balanced_accuracy", "threshold", "best_threshold",
                   "cv_kappa", "cv_balanced_accuracy"],
           "every metric on the same samples (TPR, TNR: Wilson 95%; cv_: the best threshold chosen inside grouped "
           "cross-validation, out of sample):")
    for m in result.metrics:
        print()
        print(f"=== {m.column} -> {m.rate} ({m.dimension}; {m.missing} sample(s) without a score"
              + (f"; calibration sample {m.sample_size}, {m.outside_sample} labelled beyond it not used"
                 if result.sample_seed is not None else "") + ")")
        print_report(m.report)
        print(f"labels for a {args.width:g}-wide TPR and TNR interval: {_needed(m, result.sample_seed, args.width)}")
        for line in ppi_needed_lines(m.report.ppi, args.width):
            print(line)
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
    for column, units in (getattr(args, "repeat_units", None) or {}).items():
        _print_units(column, units)
    if args.out is not None:
        from ..calibrate import write_tables

        units = getattr(args, "repeat_units", None)
        write_tables({"scorers": table, **({"repeats": _units_table(units)} if units else {})}, args.out)
        for m in result.metrics:
            write_outputs(m.report, Path(args.out) / slug(m.column))
    if args.record is not None:
        _write_record(result, args, revision)
    return 0


def keep_stability(args: argparse.Namespace, runs: Any, columns: list[str], threshold: float) -> None:
    """The stability of ``columns`` over ``runs`` into ``args.repeats_figures`` (the record) and
    ``args.repeat_units`` (per sample, the report); ValueError when no sample was scored in every run."""
    from ..calibrate.repeats import stability, unit_stability

    figures = stability(runs, columns, threshold)
    empty = [c for c in columns if not figures[c]["n_units"]]
    if empty:
        raise ValueError(f"{', '.join(empty)}: no sample was scored in every one of the {len(runs)} runs, so there is "
                         "no flip rate")
    args.repeats_figures = {**(getattr(args, "repeats_figures", None) or {}), **figures}
    args.repeat_units = {**(getattr(args, "repeat_units", None) or {}),
                         **{c: unit_stability(runs, c, threshold) for c in columns}}


def _print_units(column: str, units: dict[str, tuple[int, int]]) -> None:
    """The samples whose verdict was not the same in every run: ``case (pass votes/runs)``."""
    shaky = [f"{case} ({m}/{k})" for case, (m, k) in units.items() if 0 < m < k]
    print(f"{column}: verdict per sample over the runs (pass/runs): {len(units) - len(shaky)} of {len(units)} the "
          "same every time" + (f"; not: {', '.join(shaky)}" if shaky else ""))


def _units_table(units: dict[str, dict[str, tuple[int, int]]]) -> Any:
    """``repeats.csv``: per scorer and sample, its pass votes, runs and stability (the majority verdict's share)."""
    import pandas as pd

    return pd.DataFrame([{"scorer": col, "case_id": c, "passes": m, "runs": k, "stability": max(m, k - m) / k}
                         for col, by_case in units.items() for c, (m, k) in by_case.items()],
                        columns=["scorer", "case_id", "passes", "runs", "stability"])


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
    """``--rerun``: read each rerun like the first run and keep the stability figures (:func:`keep_stability`)."""
    if not args.rerun:
        return
    from ..calibrate.external_samples import match_rows, read_result

    runs = [match_rows(table, opened)[0]]
    for path in args.rerun:
        rerun = read_result(path, scale=args.scale, extra_metrics=_mapped(args),
                            ignore=tuple(args.ignore), dimension=args.dimension)
        missing = sorted(set(table.rates) - set(rerun.rates))
        if missing:
            raise ValueError(f"--rerun {path}: no column(s) {', '.join(missing)} of the first run")
        runs.append(match_rows(rerun, opened)[0])
    keep_stability(args, runs, list(table.rates), threshold)


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


def ppi_needed_lines(ppi: Any, width: float) -> list[str]:
    """Beside the TPR/TNR line, the PPI table's ``more_labels`` in words, so the two never disagree in silence:
    for each dimension with an interval, how many more labels its rate's interval needs, and on a thin slice
    (the exact interval, ``note``) that the scorer's TPR and TNR need the larger figure above."""
    lines = []
    for _i, row in ppi.iterrows():
        if not row["valid"] or row["more_labels"] is None:
            continue
        more = int(row["more_labels"])
        need = "reached" if more == 0 else f"{more} more"
        thin = "Clopper-Pearson" in str(row["note"])
        lines.append(f"labels for a {width:g}-wide {row['dimension']} rate interval (the PPI table's more_labels): "
                     f"{need}" + ("; a thin slice, so that is the exact interval's need, not PPI's, and the "
                                  "scorer's TPR and TNR need what the line above says" if thin else ""))
    return lines
