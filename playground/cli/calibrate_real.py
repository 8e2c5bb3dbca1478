"""``playground calibrate ragtruth --frozen | begin | ablation``: the scorers on real data's frozen parts.

Registered from :mod:`playground.cli.calibrate` (``register_real``).  Floors are
chosen on the tuning part of each data set and reported on its frozen part only
(:mod:`playground.calibrate.splits`, :mod:`playground.calibrate.frozen`).
``--save-floors FILE`` writes the chosen support floor as a floor file a harness
configuration can name (``scoring: {floor_source: FILE}``).  ``--out DIR`` on
``ragtruth --frozen|--tuning-cv`` and ``begin [--tuning-cv]`` writes the table
and one row per claim with every scorer's verdict, disagreements with the human
label first (:mod:`playground.calibrate.frozen_files`).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..files import write_atomic
from .calibrate_output import boot_count

__all__ = ["BEGIN_CAVEAT", "err", "finish_report", "out_problem", "part_problem", "register_real", "run_ablation",
           "run_begin", "run_goals", "run_golden_key", "run_ragtruth_real", "save_floors", "write_out"]

_COLUMNS = ["scorer", "task_type", "n", "hallucinated", "sources", "floor", "kappa", "kappa_low", "kappa_high",
            "balanced_accuracy", "balanced_accuracy_low", "balanced_accuracy_high", "recall_hallucinated",
            "recall_hallucinated_low", "recall_hallucinated_high", "precision_hallucinated",
            "precision_hallucinated_low", "precision_hallucinated_high"]


def _opts(p: argparse.ArgumentParser, boot: int, tuning_cv: bool = False) -> None:
    p.add_argument("--criterion", choices=("balanced_accuracy", "kappa"), default="balanced_accuracy",
                   help="what the floor chosen on the tuning part maximises (default balanced_accuracy)")
    if not any(a.dest == "seed" for a in p._actions):
        p.add_argument("--seed", type=int, default=0, help="seed of the cluster bootstrap"
                       + (" and of the --tuning-cv folds" if tuning_cv else "") + " (default 0)")
    if not any(a.dest == "boot" for a in p._actions):
        p.add_argument("--boot", type=int, default=None, metavar="N",
                       help=f"cluster-bootstrap resamples for the intervals (default {boot}"
                       + ("; 1000 with --tuning-cv" if tuning_cv else "") + ")")


_OUT_HELP = ("write the table as DIR/<dataset>-frozen.csv (-tuning-cv.csv) and one row per claim of the reported "
             "part as DIR/<dataset>-<part>-claims.csv: human label, every scorer's score and pass at the floor used "
             "(with --judge its verdict and reason), claims where a scorer disagrees with the human label first")


def _save_opt(p: argparse.ArgumentParser) -> None:
    p.add_argument("--save-floors", type=Path, default=None, metavar="FILE",
                   help="write the support floor chosen on the tuning part as a floor file (JSON) that a harness "
                   "configuration can name as scoring.floor_source")


def register_real(sub: argparse._SubParsersAction) -> None:
    """Add ``--frozen`` and ``--save-floors`` to ``calibrate ragtruth``; add ``calibrate begin`` and
    ``calibrate ablation``."""
    rt = sub.choices["ragtruth"]
    rt.add_argument("--frozen", action="store_true",
                    help="report every scorer on the frozen part of claims.jsonl + validation-sample.jsonl only, "
                    "floors chosen on the tuning part (FILE is then ignored)")
    rt.add_argument("--tuning-cv", action="store_true",
                    help="cross-validate every scorer on the tuning part of claims.jsonl + validation-sample.jsonl "
                    "only, grouped by source (--folds, floor chosen inside each fold; FILE is then ignored; no "
                    "frozen claim is scored): the figure to tune rules on")
    _save_opt(rt)
    for action in rt._actions:
        if action.dest == "out":  # the plain report's --out (cli/calibrate.py); --frozen/--tuning-cv write others
            action.help = f"{action.help}; with --frozen or --tuning-cv: {_OUT_HELP}"
    rt.set_defaults(func=run_ragtruth_real, _plain_ragtruth=rt.get_default("func"))

    p = sub.add_parser(
        "begin", help="the scorers against BEGIN's human attribution labels (frozen part)",
        description="Score every BEGIN dialogue response against its knowledge snippet with the support scorer, "
        "plain token coverage and ROUGE-1 precision; choose each floor on the tuning part and report kappa, "
        "balanced accuracy and hallucination recall and precision on the frozen part only, per corpus, with "
        "cluster-bootstrap 95% intervals over sources.",
    )
    p.add_argument("file", type=Path, nargs="?", default=None, metavar="FILE",
                   help="BEGIN claims.jsonl (default: ../shared/data/begin/claims.jsonl beside the repository)")
    p.add_argument("--tuning-cv", action="store_true",
                   help="instead: cross-validate every scorer on the tuning part only, grouped by source (floor "
                   "chosen inside each fold; no frozen response is scored): the figure to tune rules on")
    p.add_argument("--folds", type=int, default=5, metavar="K", help="folds of --tuning-cv (default 5)")
    _opts(p, 2000, tuning_cv=True)
    _save_opt(p)
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help=_OUT_HELP)
    p.set_defaults(func=run_begin)

    p = sub.add_parser(
        "golden-key", help="correctness and relevance scorers against the golden answer key (frozen cases)",
        description="On the golden set's frozen cases: the harness's correctness scorer beside ROUGE-1 precision "
        "against the reference answer (key: the authored 'correct'), and the query-only relevance scorer beside "
        "the reference-aware one and ROUGE-1 recall of the reference answer (key: from an expected source; cases "
        "with a reference answer). Floors chosen on the tuning cases.",
    )
    p.add_argument("--run", type=Path, default=None, metavar="RUN_DIR",
                   help="harness run folder; default: run the default configuration now, in a temporary folder")
    _opts(p, 2000)
    p.add_argument("--save-floors", type=Path, default=None, metavar="FILE",
                   help="write the floors chosen on the tuning cases for the harness's own scorers (correctness, "
                   "query-only relevance) as a floor file (JSON) a harness configuration can name")
    p.set_defaults(func=run_golden_key)

    _register_ablation(sub)
    _register_goals(sub)


def _register_ablation(sub: argparse._SubParsersAction) -> None:
    """Add ``calibrate ablation``."""
    p = sub.add_parser(
        "ablation", help="each rule of the support scorer switched off in turn, on the frozen parts",
        description="For RAGTruth and BEGIN: the support scorer with all rules on and with each rule off in turn; "
        "floor chosen on the tuning part, figures on the frozen part; delta = rule off minus all rules on "
        "(a rule pays for itself when switching it off lowers balanced accuracy).",
    )
    p.add_argument("--dataset", choices=("ragtruth", "begin", "both"), default="both")
    p.add_argument("--tuning-cv", action="store_true",
                   help="instead: per kind of text (RAGTruth QA, RAGTruth Summary, BEGIN dialogue), on the tuning "
                   "parts only: each rule toggled for the kind, ROC AUC and 5-fold grouped cross-validated kappa "
                   "(no frozen claim is scored): the table that decides which rules a kind keeps")
    _opts(p, 1000)
    p.set_defaults(func=run_ablation)


def _register_goals(sub: argparse._SubParsersAction) -> None:
    """Add ``calibrate goals``."""
    p = sub.add_parser(
        "goals", help="the support scorer's threshold-free goals per kind of text (tuning part, or --frozen)",
        description="Per data set and kind of text: ROC AUC of the support scorer, plain token coverage and "
        "ROUGE-1 precision, and the support scorer's hallucination precision and recall at the shipped floor "
        "of the kind (playground.harness.score.DEFAULT_SUPPORT_FLOORS). The tuning part by default; --frozen "
        "reads the frozen part (to be read once, at the end).",
    )
    p.add_argument("--frozen", action="store_true", help="the frozen part instead of the tuning part")
    p.add_argument("--tuning-cv", action="store_true",
                   help="instead: the rules that choose a kind's floor for the precision goal, out of fold on the "
                   "RAGTruth tuning part (playground.calibrate.floor_rules)")
    p.set_defaults(func=run_goals)


def err(message: str) -> int:
    """Print ``error: MESSAGE`` on stderr; exit code 1."""
    print(f"error: {message}", file=sys.stderr)
    return 1


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "—"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def _print_table(frame: Any, columns: list[str]) -> None:
    cols = [c for c in columns if c in frame.columns]
    cells = [[_cell(v) for v in row] for row in frame[cols].itertuples(index=False)]
    heads = [c.replace("_hallucinated", "_h").replace("balanced_accuracy", "bal_acc") for c in cols]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(heads)]
    print("  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=False)))
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)))


def _print_frozen(rep: Any, no_class: str = "hallucinated") -> None:
    units = "claims" if no_class == "hallucinated" else "units"
    print(f"{rep.dataset}: floors chosen on the tuning part ({rep.n_tuning} {units}) by "
          f"{rep.criterion.replace('_', ' ')}; figures on the frozen part only: {rep.n} {units}, "
          f"{rep.hallucinated} {no_class} ({rep.hallucinated / max(rep.n, 1):.1%}), "
          f"{rep.sources} {'sources' if no_class == 'hallucinated' else 'cases'}")
    print(f"intervals: percentile cluster bootstrap over frozen {'sources' if no_class == 'hallucinated' else 'cases'}"
          f", {rep.n_boot} resamples, seed {rep.seed}; recall and precision (_h) are of the {no_class!r} class")
    for s in rep.scorers:
        if not s.rows:
            print(f"{s.name}: no figures ({s.reason})")
    if no_class == "hallucinated":
        _print_table(rep.table(), _COLUMNS)
    else:
        names = {"hallucinated": no_class, "sources": "cases"}
        _print_table(rep.table().rename(columns=names), [names.get(c, c) for c in _COLUMNS])


def _print_tuning_cv(cv: Any) -> None:
    units = "responses" if cv.dataset == "BEGIN" else "claims"
    print(f"{cv.dataset}, tuning part only ({cv.n} {units}, {cv.hallucinated} hallucinated "
          f"({cv.hallucinated / max(cv.n, 1):.1%}), {cv.sources} sources): {cv.folds}-fold cross-validation grouped "
          f"by source (fold = sampling.fold_of(source, {cv.folds}, seed {cv.seed})), floor chosen inside each fold "
          f"by {cv.criterion.replace('_', ' ')}; pooled held-out predictions; no frozen item was scored")
    print(f"intervals: percentile cluster bootstrap over sources of the pooled predictions, {cv.n_boot} resamples; "
          "recall and precision (_h) are of the 'hallucinated' class; floor = the floor of each fold")
    for s in cv.scorers:
        if s.reason:
            print(f"{s.name}: {s.reason}")
    _print_table(cv.table(), _COLUMNS)


def save_floors(path: Path, floor: float | dict[str, float | None] | None, *, source: str, criterion: str,
                data: str) -> bool:
    """Write the floor file of CONTRACTS.md: ``{"floors": {"faithfulness": floor}, "source", "criterion",
    "data"}`` (sorted keys, one trailing newline); ``floor`` may be a dict of floors by dimension
    (``faithfulness``, ``correctness``, ``context_relevance``; undefined ones left out).  False (nothing
    written) when no floor is defined."""
    floors = {k: v for k, v in (floor if isinstance(floor, dict) else {"faithfulness": floor}).items()
              if v is not None}
    if not floors:
        return False
    doc = {"floors": floors, "source": source, "criterion": criterion, "data": data}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return True


def _finish_floors(args: argparse.Namespace, rep: Any, command: str, data: str) -> int:
    if args.save_floors is None:
        return 0
    floor = rep.scorer("support").floor
    if not save_floors(args.save_floors, floor, source=command, criterion=args.criterion, data=data):
        return err(f"no floor to save: {rep.scorer('support').reason}")
    print(f"\nwrote {args.save_floors}: faithfulness floor {floor:g} (support scorer, chosen on the tuning part)")
    return 0


def out_problem(args: argparse.Namespace) -> str | None:
    """Why ``--out`` cannot be written to (checked before any figure is computed), or None."""
    out = getattr(args, "out", None)
    if out is not None and out.exists() and not out.is_dir():
        return f"--out {out} is a file: name a folder for the table and the claims file"
    return None


def write_out(args: argparse.Namespace, report: Any, records: Any = None, scorers: Any = None) -> int:
    """With ``--out DIR``: write the report's two files and print the one line that says so (exit code).

    ``records`` and ``scorers`` default to the reported part of ``report.dataset`` and our scorers (the
    report without outside scorers)."""
    if getattr(args, "out", None) is None:
        return 0
    from ..calibrate.frozen_files import write_report_files

    if records is None or scorers is None:
        from ..calibrate.outside_report import split_of
        from ..calibrate.ragtruth import real_scorers

        dataset = report.dataset.lower()
        tuning, frozen = split_of(dataset, getattr(args, "file", None) if dataset == "begin" else None)
        records = tuning if report.tuning_cv else frozen
        scorers = real_scorers()
    try:
        written = write_report_files(args.out, report, records, scorers)
    except OSError as exc:
        return err(f"cannot write {exc.filename or args.out}: {exc.strerror or exc}")
    print(f"\n{written.summary()}")
    return 0


def part_problem(args: argparse.Namespace) -> str | None:
    """Why ``--tuning-cv`` does not go with the other options of a frozen report, or None."""
    if not getattr(args, "tuning_cv", False):
        return None
    if getattr(args, "frozen", False):
        return "--tuning-cv and --frozen exclude each other (the one reads the tuning part only)"
    if args.save_floors is not None:
        return "--save-floors needs one floor: use it with the frozen report, not with --tuning-cv (one floor per fold)"
    return None


#: Printed under BEGIN's frozen report.
BEGIN_CAVEAT = ("caveat: BEGIN's 'not fully attributable' covers opinions, questions and chit-chat too, so its "
                "floors are its own (see shared/data/begin/README.md).")
#: Per data set: the command and the data named in a ``--save-floors`` file.
_FLOOR_SOURCES = {
    "RAGTruth": ("playground calibrate ragtruth --frozen",
                 "RAGTruth claims.jsonl + validation-sample.jsonl, tuning part"),
    "BEGIN": ("playground calibrate begin", "BEGIN dev claims.jsonl, tuning part"),
}


def finish_report(args: argparse.Namespace, report: Any, records: Any = None, scorers: Any = None) -> int:
    """What follows a printed RAGTruth or BEGIN report: BEGIN's caveat (frozen report), the ``--out`` files
    (:func:`write_out`), then ``--save-floors`` (frozen report); the exit code."""

    tuning = report.tuning_cv
    if report.dataset == "BEGIN" and not tuning:
        print(BEGIN_CAVEAT)
    if write_out(args, report, records, scorers):
        return 1
    if tuning:
        return 0
    command, data = _FLOOR_SOURCES[report.dataset]
    return _finish_floors(args, report, command, data)


def _guarded(fn: Any) -> Any:
    def wrapper(args: argparse.Namespace) -> int:
        from ..begin import BeginError
        from ..importers.ragtruth import RagTruthError

        try:
            return int(fn(args))
        except (BeginError, RagTruthError) as exc:
            print(str(exc), file=sys.stderr)
            return 1
        except FileNotFoundError as exc:
            return err(f"no such file: {exc.filename} (the shared data: set PLAYGROUND_SHARED_DATA or pass FILE)")

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


@_guarded
def run_ragtruth_real(args: argparse.Namespace) -> int:
    """``calibrate ragtruth``: the in-sample and cross-validated report, or with ``--frozen`` the frozen one."""
    if (args.tuning_cv or args.frozen) and (problem := out_problem(args) or part_problem(args)):
        return err(problem)
    if args.tuning_cv:
        from ..calibrate.ragtruth import tuning_cv_ragtruth

        cv = tuning_cv_ragtruth(folds=args.folds, criterion=args.criterion, n_boot=boot_count(args, 1000),
                                seed=args.seed)
        _print_tuning_cv(cv)
        return finish_report(args, cv)
    if not args.frozen:
        if args.save_floors is None:
            return int(args._plain_ragtruth(args))
        from ..calibrate import default_ragtruth_path

        rc = int(args._plain_ragtruth(args))  # keeps its calibration in args.ragtruth_calibration
        rt = getattr(args, "ragtruth_calibration", None)
        if rc == 0 and rt is not None:
            best = rt.scorer("support scorer").best.threshold
            save_floors(args.save_floors, best, source="playground calibrate ragtruth (in-sample best floor)",
                        criterion=args.criterion, data=str(args.file or default_ragtruth_path()))
            print(f"\nwrote {args.save_floors}: faithfulness floor {best:g} (support scorer, in-sample best)")
        return rc
    from ..calibrate.ragtruth import frozen_ragtruth

    rep = frozen_ragtruth(criterion=args.criterion, n_boot=boot_count(args, 2000), seed=args.seed)
    _print_frozen(rep)
    return finish_report(args, rep)


@_guarded
def run_begin(args: argparse.Namespace) -> int:
    """``calibrate begin``: the scorers on BEGIN's frozen part."""
    if problem := out_problem(args) or part_problem(args):
        return err(problem)
    if args.tuning_cv:
        from ..calibrate.begin import tuning_cv_begin

        cv = tuning_cv_begin(args.file, folds=args.folds, criterion=args.criterion, n_boot=boot_count(args, 1000),
                             seed=args.seed)
        _print_tuning_cv(cv)
        return finish_report(args, cv)
    from ..calibrate.begin import frozen_begin

    rep = frozen_begin(args.file, criterion=args.criterion, n_boot=boot_count(args, 2000), seed=args.seed)
    _print_frozen(rep)
    return finish_report(args, rep)


@_guarded
def run_golden_key(args: argparse.Namespace) -> int:
    """``calibrate golden-key``: correctness and relevance scorers on the frozen golden cases."""
    from ..calibrate.golden_key import golden_key_reports

    run = args.run
    if run is None:
        import tempfile

        from ..harness.config import load_config
        from ..harness.run import run_harness

        run = Path(tempfile.mkdtemp(prefix="playground-golden-key-"))
        print(f"no --run given: running the harness with the default configuration in {run} ...", file=sys.stderr)
        run_harness(load_config(None), run, progress=False)
    elif not (run / "units.csv").is_file():
        return err(f"no units.csv in {run}: is it a harness run folder? (playground harness run --out DIR)")
    reps = golden_key_reports(run, n_boot=boot_count(args, 2000), seed=args.seed, criterion=args.criterion)
    for rep in reps:
        _print_frozen(rep, no_class="no")
        print()
    print("caveat: the golden set is synthetic and set the harness defaults before the split; the passage key is "
          "'from an expected source', a proxy for relevance.")
    if args.save_floors is not None:
        floors = {"correctness": reps[0].scorer("correctness").floor,
                  "context_relevance": reps[1].scorer("query only").floor}
        if not save_floors(args.save_floors, floors, source="playground calibrate golden-key",
                           criterion=args.criterion, data="golden set, tuning cases"):
            return err("no floor to save: undefined on the tuning cases")
        print(f"\nwrote {args.save_floors}: " + ", ".join(f"{k} {v:g}" for k, v in floors.items() if v is not None))
    return 0


@_guarded
def run_goals(args: argparse.Namespace) -> int:
    """``calibrate goals [--frozen]``: ROC AUC per kind and precision / recall at the shipped floors."""
    from ..calibrate.tuning_kinds import floor_rule_table, goals_table

    if args.tuning_cv:
        if args.frozen:
            return err("--tuning-cv and --frozen exclude each other (the one reads the tuning part only)")
        print("floor rules for hallucination precision >= 0.30 at recall >= 0.55, RAGTruth tuning part only: the "
              "floor each rule chooses on the whole part, the floors it chooses out of fold (5 folds grouped by "
              "source, seed 0) and the pooled held-out flags on every claim and on the natural-rate claims")
        _print_table(floor_rule_table(), ["data", "rule", "floor", "fold floors", "all caught", "all flags",
                                          "all precision", "natural caught", "natural flags", "natural recall",
                                          "natural precision"])
        return 0
    part = "frozen" if args.frozen else "tuning"
    print(f"support scorer per kind of text, {part} part: ROC AUC (threshold-free) of support, plain token "
          "coverage and ROUGE-1 precision; hallucination precision and recall at the shipped floor of the kind")
    _print_table(goals_table(part), ["data", "part", "kind", "n", "hallucinated", "auc support",
                                     "auc plain coverage", "auc ROUGE-1 precision", "floor",
                                     "precision_hallucinated", "recall_hallucinated", "kappa", "balanced_accuracy"])
    return 0


def run_ablation(args: argparse.Namespace) -> int:
    """``calibrate ablation``: each support rule switched off in turn (``--tuning-cv``: per kind, tuning part)."""
    from ..calibrate.ablation import ablation, ablation_table

    if args.tuning_cv:
        from ..calibrate.tuning_kinds import kind_ablation

        print("support scorer per kind of text, tuning parts only: each rule toggled for the kind (without R: on "
              "for the kind, switched off; with R: off for the kind, switched on); ROC AUC, and kappa, balanced "
              f"accuracy, recall and precision pooled over 5 folds grouped by source (seed {args.seed}, floor chosen "
              "inside each fold); delta = toggled minus shipped rules")
        _print_table(kind_ablation(seed=args.seed, criterion=args.criterion),
                     ["data", "kind", "support", "auc", "delta_auc", "kappa", "delta_kappa", "balanced_accuracy",
                      "recall_hallucinated", "precision_hallucinated", "floors"])
        return 0

    names = ["ragtruth", "begin"] if args.dataset == "both" else [args.dataset]
    reps = [ablation(n, n_boot=boot_count(args, 1000), seed=args.seed, criterion=args.criterion) for n in names]
    print("support scorer, each rule off in turn: floor chosen on the tuning part, figures on the frozen part; "
          f"delta = rule off minus all rules on; intervals: cluster bootstrap over sources ({reps[0].n_boot} "
          f"resamples, seed {reps[0].seed})")
    _print_table(ablation_table(reps), ["dataset", "support", "floor", "kappa", "kappa_low", "kappa_high",
                                        "delta_kappa", "balanced_accuracy", "balanced_accuracy_low",
                                        "balanced_accuracy_high", "delta_balanced_accuracy",
                                        "recall_hallucinated", "precision_hallucinated"])
    return 0
