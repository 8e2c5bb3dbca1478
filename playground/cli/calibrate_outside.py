"""``--judge MODEL``, ``--scores CSV`` and ``--write-ids FILE`` on ``calibrate ragtruth`` and ``calibrate begin``.

Registered from :mod:`playground.cli.calibrate` (``register_outside``) after
:mod:`playground.cli.calibrate_real`: the options are added to the two
subcommands and their handler is wrapped, so that without these options
nothing changes.  With them, the table of ``--frozen`` / ``--tuning-cv`` /
``begin`` gets one more row per outside scorer
(:mod:`playground.calibrate.outside_report`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .calibrate_real import _guarded, _print_frozen, _print_tuning_cv, err, finish_report, out_problem, part_problem

__all__ = ["CACHE_FILE", "DEFAULT_CACHE_DIR", "register_outside", "run_outside"]

#: The cache file inside --judge-cache DIR, and DIR's default: the harness's ``.cache/ollama.db``.
CACHE_FILE = "ollama.db"
DEFAULT_CACHE_DIR = Path(".cache")


def register_outside(sub: argparse._SubParsersAction) -> None:
    """Add the outside-scorer options to ``calibrate ragtruth`` and ``calibrate begin``."""
    for name in ("ragtruth", "begin"):
        p = sub.choices[name]
        g = p.add_argument_group(
            "another scorer beside ours",
            "one more row in the same table, under the same protocol (floor from the tuning part only, "
            "cluster-bootstrap intervals over sources)" + (": with --frozen or --tuning-cv" if name == "ragtruth"
                                                           else ""))
        g.add_argument("--judge", default=None, metavar="MODEL",
                       help="an LLM judge through Ollama (e.g. llama3.1:8b): one call per claim of the part reported "
                       "(claim, its evidence as the passages), a yes/no verdict, no floor; refused when MODEL wrote "
                       "any of those claims; calls are cached, a rerun is served from the cache")
        g.add_argument("--ollama-host", default=None, metavar="HOST",
                       help="Ollama server for --judge: host, host:port or http(s)://host:port (default: $OLLAMA_HOST, "
                       "else 127.0.0.1:11434)")
        g.add_argument("--judge-cache", type=Path, default=None, metavar="DIR",
                       help=f"folder of the model-call cache, DIR/{CACHE_FILE} (default: {DEFAULT_CACHE_DIR} in the "
                       "current folder, as the harness keeps OUT/.cache/ollama.db; a run folder's .cache shares its "
                       "calls)")
        g.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                       help="seconds to wait for one judge answer (default: the harness's, 60)")
        g.add_argument("--judge-limit", type=int, default=None, metavar="N",
                       help="a quick look: judge only the first N sources of the part in stable-hash order; every row "
                       "of the table is then on that subset, and the report says so")
        g.add_argument("--scores", type=Path, default=None, metavar="CSV",
                       help="your own scorer's per-claim scores: a CSV with claim_id and score (0 to 1, higher = more "
                       "supported) for every claim of the tuning part and of the part reported (see --write-ids)")
        g.add_argument("--scores-name", default=None, metavar="NAME",
                       help="the --scores row's name in the table (default: the CSV's file stem)")
        g.add_argument("--write-ids", type=Path, default=None, metavar="FILE",
                       help="write every claim to score (claim_id, part, task_type, claim, context, question; no "
                       "label) as CSV, or JSON Lines when FILE ends in .jsonl, and exit")
        p.set_defaults(func=run_outside, _outside_next=p.get_default("func"), _outside_dataset=name)


def _problem(args: argparse.Namespace) -> str | None:
    """Why the options do not go together, or None."""
    judge_only = [(opt, v) for opt, v in (("--ollama-host", args.ollama_host), ("--judge-cache", args.judge_cache),
                                          ("--timeout", args.timeout), ("--judge-limit", args.judge_limit))
                  if v is not None]
    if judge_only and args.judge is None:
        return f"{judge_only[0][0]} is an option of --judge: add --judge MODEL"
    if args.scores_name is not None and args.scores is None:
        return "--scores-name names the --scores row: add --scores CSV"
    if args.write_ids is not None and (args.judge is not None or args.scores is not None):
        return "--write-ids writes the claims to score and exits: run it without --judge and --scores"
    if args.judge_limit is not None and args.judge_limit < 1:
        return f"--judge-limit must be at least 1, got {args.judge_limit}"
    if args.timeout is not None and args.timeout <= 0:
        return f"--timeout must be positive, got {args.timeout:g}"
    if args.write_ids is not None or (args.judge is None and args.scores is None):
        return None
    if args._outside_dataset == "ragtruth" and not (args.frozen or args.tuning_cv):
        return ("--judge and --scores report on one part: add --frozen (the frozen part) or --tuning-cv "
                "(the tuning part)")
    return out_problem(args) or part_problem(args)


def _write_ids(args: argparse.Namespace) -> int:
    from ..calibrate.outside_report import DATASETS, split_of
    from ..calibrate.outside_scores import write_claims

    ds = args._outside_dataset
    tuning, frozen = split_of(ds, args.file if ds == "begin" else None)
    n = write_claims(args.write_ids, tuning, frozen)
    print(f"wrote {args.write_ids}: {n} {DATASETS[ds]} claims to score ({len(tuning)} tuning, {len(frozen)} frozen); "
          "give their scores back with --scores CSV (columns claim_id, score)")
    return 0


@_guarded
def run_outside(args: argparse.Namespace) -> int:
    """``calibrate ragtruth|begin`` with ``--judge``, ``--scores`` or ``--write-ids``; otherwise the plain command."""
    problem = _problem(args)
    if problem:
        return err(problem)
    if args.write_ids is not None:
        return _write_ids(args)
    if args.judge is None and args.scores is None:
        return int(args._outside_next(args))
    from ..calibrate.judge_scorer import JudgeReplyInvalid
    from ..calibrate.outside_report import OutsideScorers, outside_run
    from ..calibrate.outside_scores import ScoresError
    from ..harness.llm import ModelError

    ds = args._outside_dataset
    folder = DEFAULT_CACHE_DIR if args.judge_cache is None else args.judge_cache
    if folder.exists() and not folder.is_dir():
        return err(f"--judge-cache {folder} is a file: name the folder that holds (or will hold) {CACHE_FILE}")
    spec = OutsideScorers(judge=args.judge, host=args.ollama_host, cache=folder / CACHE_FILE, timeout=args.timeout,
                          limit=args.judge_limit, scores=args.scores, scores_name=args.scores_name, progress=True)
    try:
        run = outside_run(ds, spec, tuning_cv=bool(args.tuning_cv), path=args.file if ds == "begin" else None,
                          folds=args.folds, criterion=args.criterion, n_boot=args.boot, seed=args.seed)
    except ScoresError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except (ModelError, JudgeReplyInvalid, ValueError) as exc:
        return err(str(exc))
    _print(run.report, spec)
    return finish_report(args, run.report, run.reported, run.scorers)


def _print(rep: Any, spec: Any) -> None:
    if rep.subset:
        print(f"NOTE: {rep.subset}")
    if spec.judge is not None:
        print(f"{spec.judge_name}: a yes/no verdict per claim from one judge call (claim, evidence passages"
              f"{', previous turn as the question' if rep.dataset == 'BEGIN' else ''}), no floor chosen")
    if spec.scores is not None:
        print(f"{spec.scores_row}: per-claim scores from {spec.scores}, floor chosen on the tuning part like ours")
    if not rep.tuning_cv:
        _print_frozen(rep)
    else:
        _print_tuning_cv(rep)
