"""``playground export ragas|deepeval --dataset NAME --out FILE``: a labelled dataset back in the tool's format."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .options import add_db, add_root

__all__ = ["register", "run_export"]


def register(subparsers: argparse._SubParsersAction) -> None:
    exp = subparsers.add_parser("export", help="export a labelled dataset as RAGAS or DeepEval rows with human results",
                                description="Export an imported dataset in a tool's own format with the human results.")
    exp.set_defaults(func=lambda args: exp.print_help() or 2)
    sub = exp.add_subparsers(dest="export_command", metavar="FORMAT")
    for tool, exts in (("ragas", ".jsonl, .csv or .parquet"), ("deepeval", ".json, .jsonl, .csv or .parquet")):
        p = sub.add_parser(
            tool, help=f"{tool} rows ({exts}) with human results per sample",
            description=f"Write the dataset NAME as {tool} rows to FILE ({exts}, chosen by the extension): the "
            "samples in the tool's fields plus, per sample, the human rate and counts of context relevance, "
            "faithfulness, correctness and coverage; beside it FILE's NAME.labels.EXT (per-unit labels, which "
            "`playground import ... --labels` reads back), NAME.units.parquet and NAME.labels.parquet. Labels are "
            "one annotator's (--annotator) or the consensus (default; ties left out and counted). Stale labels are "
            "never counted. Each row also carries the whole label history of its units — every annotator's answers "
            "(yes, no, unsure), comments and adjudications with who and when (RAGAS column human_labels, DeepEval "
            "additional_metadata.human.labels) — whatever --annotator says, so `playground import` of FILE alone "
            "restores the store's labels exactly. CSV cells a spreadsheet would run get a leading ' that the "
            "import removes.",
        )
        p.add_argument("--dataset", required=True, metavar="NAME", help="the imported dataset")
        p.add_argument("--out", required=True, type=Path, metavar="FILE", help=f"the file to write ({exts})")
        who = p.add_mutually_exclusive_group()
        who.add_argument("--annotator", default=None, metavar="NAME", help="one annotator's labels")
        who.add_argument("--consensus", action="store_true", help="the consensus of all annotators (the default)")
        add_db(p)
        add_root(p)
        p.set_defaults(func=run_export, tool=tool)
    from .traces import add_export

    add_export(sub, run_export)  # export traces: Phoenix annotations, OTel GenAI events (playground/cli/traces.py)


def run_export(args: argparse.Namespace) -> int:
    from ..datasets import SHIPPED, open_dataset
    from ..importers.export import export_dataset
    from ..store import StoreError, open_store

    if args.dataset == SHIPPED:
        print("error: the shipped set exports with `playground labels export`; export takes an imported dataset",
              file=sys.stderr)
        return 1
    try:
        with open_store(args.db, create=False, read_only=True) as store:
            opened = open_dataset(args.dataset, store, args.root)
            if args.annotator is not None and args.annotator not in store.annotators():
                print(f"error: no annotator {args.annotator!r} in {store.url}", file=sys.stderr)
                return 1
            if args.tool == "traces":
                from ..importers.trace_export import export_traces

                summary = export_traces(opened, store, args.out, annotator=args.annotator).summary()
            else:
                summary = export_dataset(opened, store, args.tool, args.out, annotator=args.annotator).summary()
    except (StoreError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(summary)
    return 0
