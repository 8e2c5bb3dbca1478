"""``playground import ragtruth FILE``: external human-labelled data into the playground."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .options import DB_HELP, add_db


def register(subparsers: argparse._SubParsersAction) -> None:
    imp = subparsers.add_parser("import", help="import external human-labelled data (RAGTruth)",
                                description="Import external human-labelled data sets as playground units and labels.")
    imp.set_defaults(func=lambda args: imp.print_help() or 2)
    sub = imp.add_subparsers(dest="import_command", metavar="SUBCOMMAND")
    p = sub.add_parser(
        "ragtruth", help="a RAGTruth claim file: cases, responses, passages, claims and human labels",
        description="Validate FILE (RAGTruth claims, one JSON object per line; see shared/data/ragtruth/README.md) "
        "and turn it into cases (one per source), responses, evidence passages and claim units (ids RT-...), "
        "written to OUT/ragtruth.dataset.json with deterministic bytes, and the human labels (supported = not "
        "hallucinated) into the label store under the annotator 'ragtruth-human', in one transaction. A file with "
        "any malformed line is rejected whole: every bad line is listed with its number and nothing is written.",
    )
    p.add_argument("file", type=Path, metavar="FILE", help="RAGTruth claims (.jsonl)")
    p.add_argument("--out", type=Path, default=Path("imported"), metavar="DIR",
                   help="folder for ragtruth.dataset.json (default: ./imported)")
    add_db(p, "label store for the human labels: " + DB_HELP.removeprefix("label store: "))
    p.add_argument("--annotator", default=None, metavar="NAME", help="annotator name of the labels (default ragtruth-human)")
    p.add_argument("--no-labels", action="store_true", help="write the data set file only, no labels into the store")
    p.add_argument("--dry-run", action="store_true", help="validate and report; write nothing")
    p.set_defaults(func=run_ragtruth)


def run_ragtruth(args: argparse.Namespace) -> int:
    from ..importers.ragtruth import HUMAN_ANNOTATOR, build_dataset, import_ragtruth
    from ..ragtruth import RagTruthError, load_ragtruth
    from ..store import StoreError

    if not args.file.is_file():
        print(f"error: no such file: {args.file}", file=sys.stderr)
        return 1
    annotator = args.annotator or HUMAN_ANNOTATOR
    try:
        if args.dry_run:
            dataset = build_dataset(load_ragtruth(args.file), source_file=args.file.name, annotator=annotator)
            c = dataset.counts()
            print(f"{args.file}: valid — {c['claims']} claims ({c['hallucinated']} hallucinated), "
                  f"{c['responses']} responses, {c['cases']} sources, {c['passages']} passages; nothing written (--dry-run)")
            return 0
        if args.no_labels:
            result = import_ragtruth(args.file, args.out, None, annotator=annotator)
        else:
            from ..store import open_store

            load_ragtruth(args.file)  # validate before even opening (or creating) the store
            with open_store(args.db) as store:
                result = import_ragtruth(args.file, args.out, store, annotator=annotator)
    except RagTruthError as exc:
        print(str(exc), file=sys.stderr)
        print("nothing was imported", file=sys.stderr)
        return 1
    except (StoreError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        print("nothing was imported", file=sys.stderr)
        return 1
    print(result.summary())
    return 0
