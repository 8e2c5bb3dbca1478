"""``playground harness run | compare | gate | baseline``."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import DataError, Problem, json_type, load_json_object
from ..files import write_atomic
from .options import add_db, add_root

__all__ = ["register", "summary"]


def register(subparsers: argparse._SubParsersAction) -> None:
    harness = subparsers.add_parser(
        "harness", help="score every unit automatically; compare runs; gate CI on a baseline"
    )
    sub = harness.add_subparsers(dest="harness_command", metavar="SUBCOMMAND")
    harness.set_defaults(func=lambda args: harness.print_help() or 2)
    _add_run(sub)
    _add_compare(sub)
    _add_gate(sub)
    _add_baseline(sub)


def _add_run(sub: argparse._SubParsersAction) -> None:
    """``harness run``: score every unit of the shipped set or of an imported dataset."""
    run = sub.add_parser(
        "run",
        help="run the harness with a configuration",
        description="Retrieve for every case, score every passage, claim and fact with the deterministic scorers "
        "(and, if the configuration asks, local models through Ollama), decide ACCEPT/REVIEW/REJECT, check the hard "
        "assertions, and write report.json, cases.csv, units.csv and cases.jsonl to --out. Two runs of the same "
        "configuration on the same data give byte-identical files.",
    )
    run.add_argument("--config", type=Path, default=None, help="configuration YAML (default: configs/default.yaml)")
    run.add_argument("--out", type=Path, required=True, help="run folder to write (created if absent)")
    add_root(run)
    run.add_argument(
        "--sample", type=int, default=None, metavar="N", help="score a fixed, deterministic sample of N cases"
    )
    run.add_argument(
        "--resume", action="store_true", help="keep finished cases of an interrupted run in --out and do the rest"
    )
    run.add_argument("--cache", type=Path, default=None, help="model-call cache file (default: OUT/.cache/ollama.db)")
    run.add_argument(
        "--quiet", action="store_true", help="no progress bar (there is none when stderr is not a terminal)"
    )
    run.add_argument(
        "--ollama-host",
        default=None,
        metavar="HOST",
        help="Ollama server for the model legs: host, host:port or http(s)://host:port; overrides the "
        "configuration's ollama.host and $OLLAMA_HOST (default: the configuration's, else $OLLAMA_HOST, "
        "else 127.0.0.1:11434)",
    )
    run.add_argument(
        "--jobs", type=int, default=1, metavar="N",
        help="score the cases on N worker processes (0: one per CPU; default 1: in this process); the files "
        "are the same bytes whatever N (docs/harness-at-scale.md)",
    )
    run.add_argument(
        "--dataset",
        default=None,
        metavar="NAME",
        help="score an imported dataset from the label store instead (its contexts as given, no retrieval)",
    )
    add_db(run)
    run.set_defaults(func=run_run)


def _add_compare(sub: argparse._SubParsersAction) -> None:
    """``harness compare``: two runs side by side."""
    compare = sub.add_parser(
        "compare",
        help="before/after table of two runs per metric and case type",
        description="Print the metrics of RUN_A and RUN_B side by side, overall and per case type.",
    )
    compare.add_argument("run_a", type=Path)
    compare.add_argument("run_b", type=Path)
    compare.add_argument("--all", action="store_true", help="also list metrics that did not change")
    compare.set_defaults(func=run_compare)


def _add_gate(sub: argparse._SubParsersAction) -> None:
    """``harness gate``: a run against the baseline; with ``--scores``, the calibrated gate."""
    gate = sub.add_parser(
        "gate",
        help="exit 1 when a run regresses against the committed baseline",
        description="Fail (exit 1) when a gated metric drops more than the tolerance (default 5%% relative) below "
        "the baseline, or any gated hard assertion fails. Improvements never fail; a missing baseline passes with a "
        "notice. With --scores, the calibrated gate: exit 0 PASS, 1 FAIL, 2 INCONCLUSIVE (nothing gated, or a metric "
        "of the record not gated: what would decide it is printed), 3 bad input.",
    )
    gate.add_argument("run", type=Path, nargs="?", default=None,
                      help="harness run folder (optional with --scores: then only the calibrated gate runs)")
    gate.add_argument("--baseline", type=Path, default=None, help="baseline JSON (default: golden/baseline.json)")
    gate.add_argument(
        "--tolerance",
        type=float,
        default=None,
        help="relative drop allowed (default: the baseline's max_relative_drop, else 0.05; never the run's own config)",
    )
    from .gate_scores import add_score_gate_options

    add_score_gate_options(gate)
    gate.set_defaults(func=run_gate)


def _add_baseline(sub: argparse._SubParsersAction) -> None:
    """``harness baseline``: write a baseline from a finished run."""
    baseline = sub.add_parser(
        "baseline",
        help="write a baseline file from a finished run",
        description="Write the gated overall metrics of RUN to --out (default: golden/baseline.json).",
    )
    baseline.add_argument("run", type=Path)
    baseline.add_argument("--out", type=Path, default=None)
    baseline.set_defaults(func=run_baseline)


def _model_errors():
    try:
        from ..harness.llm import ModelError

        return ModelError
    except ImportError:  # pragma: no cover
        return ()


def _check_out(out: Path) -> str | None:
    """Why ``--out`` cannot be a run folder, or None."""
    if out.is_symlink() and not out.exists():
        return f"--out {out} is a dangling symbolic link"
    if out.exists() and not out.is_dir():
        return f"--out {out} is a file, not a folder — choose a new or empty folder"
    parent = next((p for p in out.absolute().parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        return f"--out {out}: {parent} is a file, not a folder"
    return None


def run_run(args: argparse.Namespace) -> int:
    from ..harness.config import load_config
    from ..harness.run import RunError, run_harness

    config = load_config(args.config)
    if args.ollama_host is not None:
        config = config.with_ollama_host(args.ollama_host)
    problem = _check_out(args.out)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    if args.dataset is not None:
        return _run_dataset(args, config)
    try:
        report = run_harness(
            config,
            args.out,
            root=args.root,
            sample=args.sample,
            resume=args.resume,
            progress=not args.quiet,
            cache_path=args.cache,
            jobs=args.jobs,
        )
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except _model_errors() as exc:  # one line with the fix; finished cases stay checkpointed
        print(f"error: {exc}", file=sys.stderr)
        print(f"finished cases are kept in {args.out}/checkpoints; rerun with --resume to continue", file=sys.stderr)
        return 1
    except OSError as exc:  # disk full, permissions, a path component that is a file
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"error: cannot write the run to {args.out}{where}: {exc.strerror or exc}", file=sys.stderr)
        print(f"finished cases are kept in {args.out}/checkpoints; free space and rerun with --resume", file=sys.stderr)
        return 1
    return _finished(report, args.out)


def _run_dataset(args: argparse.Namespace, config) -> int:
    from ..datasets import DatasetNotFound, open_dataset
    from ..harness.run import RunError
    from ..harness.run_dataset import current_labels, run_dataset
    from ..store import StoreError, open_store

    try:
        with open_store(args.db, create=False, read_only=True) as store:
            opened = open_dataset(args.dataset, store, args.root)
            labels = current_labels(opened, store)  # the floors are calibrated on them when they suffice
        report = run_dataset(config, opened, args.out, progress=not args.quiet, labels=labels,
                             jobs=args.jobs)
    except (DatasetNotFound, RunError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    from ..harness.dataset_floors import floor_note

    print(floor_note(report))
    return _finished(report, args.out)


def _finished(report: dict, out: Path) -> int:
    """Print the scorecard of a finished run and where its files are; exit code 0."""
    print(summary(report))
    print(f"reports written to {out}/")
    return 0


def summary(report: dict) -> str:
    """A short plain-text scorecard: hard assertions first, then metrics."""
    a = report["assertions"]
    lines = [
        f"config {report['config']['name']} ({report['config_fingerprint']}), "
        f"{report['counts']['cases']} cases, {report['counts']['responses']} responses"
    ]
    lines.append(
        f"hard assertions (gated): {'PASS' if a['gated_failures'] == 0 else 'FAIL'} — {a['gated_failures']} failure(s)"
    )
    for name, info in a["gated"].items():
        lines.append(
            f"  {name:<26} pass {info['passed']:>4}  fail {info['failed']:>3}  n/a {info['not_applicable']:>4}"
            + (
                f"  failing: {', '.join(info['failing'][:5])}{' …' if len(info['failing']) > 5 else ''}"
                if info["failing"]
                else ""
            )
        )
    without = report["counts"].get("cases_without_relevant_source")
    lines.append(
        "metrics (overall):"
        + (
            f" retrieval over the {report['counts']['cases'] - without} cases with a "
            f"relevant source ({without} without one are left out, as trec_eval)"
            if without
            else ""
        )
    )
    for name, value in report["metrics"]["overall"].items():
        lines.append(f"  {name:<26} {_fmt(value)}")
    lines.append("verdicts: " + ", ".join(f"{k} {v}" for k, v in report["decisions"]["verdicts"].items()))
    if "judge" in report:
        j = report["judge"]
        if j["skipped"]:
            lines.append(f"judge: {j['reason']}")
        else:
            lines.append(f"judge: faithfulness {j['faithfulness']}, citation accuracy {j['citation_accuracy']}, "
                         f"answer relevance {j['answer_relevance']}")
        lines.append("model calls: " + ", ".join(f"{k} {v}" for k, v in report["models"].items()))
    return "\n".join(lines)


def _load_baseline(path: Path) -> dict[str, Any] | None:
    """The baseline at ``path``, None when there is none; a DataError when it is not a baseline."""
    if not path.exists():
        return None
    data = load_json_object(path, "a baseline", ("metrics",), summary="unreadable baseline")
    if not isinstance(data["metrics"], dict):
        problem = Problem(str(path), f"not a baseline ('metrics' is a JSON {json_type(data['metrics'])}, "
                          "expected an object)")
        raise DataError([problem], "unreadable baseline")
    return data


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def run_compare(args: argparse.Namespace) -> int:
    from ..harness.gate import compare, load_report

    a, b = load_report(args.run_a), load_report(args.run_b)
    print(f"A = {args.run_a} (config {a['config']['name']}), B = {args.run_b} (config {b['config']['name']})")
    diff = _config_diff(a["config"], b["config"])
    print("configs differ in: " + (", ".join(diff) if diff else "nothing"))
    print(f"{'scope':<18} {'metric':<26} {'A':>8} {'B':>8} {'B-A':>8}")
    for row in compare(a, b):
        if not args.all and row["delta"] is not None and abs(row["delta"]) < 1e-9:
            continue
        delta = "—" if row["delta"] is None else f"{row['delta']:+.3f}"
        print(f"{row['scope']:<18} {row['metric']:<26} {_fmt(row['a']):>8} {_fmt(row['b']):>8} {delta:>8}")
    return 0


def _config_diff(a: dict, b: dict, prefix: str = "") -> list[str]:
    keys = sorted(set(a) | set(b))
    out = []
    for k in keys:
        path = f"{prefix}{k}"
        if isinstance(a.get(k), dict) and isinstance(b.get(k), dict):
            out += _config_diff(a[k], b[k], path + ".")
        elif a.get(k) != b.get(k) and k not in ("name", "description"):
            out.append(path)
    return out


def _default_baseline() -> Path:
    from .. import REPO_ROOT

    return REPO_ROOT / "golden" / "baseline.json"


def run_gate(args: argparse.Namespace) -> int:
    from .gate_scores import refused_without_scores, run_score_gate

    if args.run is None and args.scores is None:
        print("error: give a harness RUN folder, --scores FILE --record RECORD, or both", file=sys.stderr)
        return 2
    unused = refused_without_scores(args) if args.scores is None else ""
    if args.run is None and args.baseline is not None:
        unused = ", ".join(x for x in (unused, "--baseline (the harness run's; use --scores-baseline)") if x)
    if unused:
        print(f"error: {unused} would be ignored here: they belong to the "
              f"{'calibrated gate (--scores)' if args.scores is None else 'harness run gate (RUN)'}", file=sys.stderr)
        return 2
    code = 0 if args.scores is None else run_score_gate(args)
    if args.run is None or code == 3:  # the calibrated gate's verdict alone, or its bad input
        return code
    run_code = _run_gate(args)  # 0, 1, or 2 on its own bad input
    if args.scores is None or run_code == 2:
        return 3 if args.scores is not None else run_code
    return 1 if 1 in (code, run_code) else code  # FAIL, else the calibrated gate's PASS or INCONCLUSIVE


def _run_gate(args: argparse.Namespace) -> int:
    from ..harness.gate import gate, load_report

    report = load_report(args.run)
    path = args.baseline or _default_baseline()
    baseline = _load_baseline(path)
    try:
        result = gate(report, baseline, args.tolerance)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(result.lines))
    for r in result.regressions:
        print(f"REGRESSION: {r}", file=sys.stderr)
    if baseline is None:
        print(f"notice: no baseline at {path}", file=sys.stderr)
    print(f"gate: {'PASS' if result.passed else 'FAIL'}")
    return 0 if result.passed else 1


def run_baseline(args: argparse.Namespace) -> int:
    from ..harness.gate import baseline_from_report, load_report

    path = args.out or _default_baseline()
    data = baseline_from_report(load_report(args.run))
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
    print(
        f"baseline written to {path} ({len(data['metrics'])} metrics overall and per case type, "
        f"{len(data['by_case_type'])} case types)"
    )
    return 0
