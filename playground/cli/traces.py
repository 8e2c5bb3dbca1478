"""``playground import traces FILE`` and ``playground export traces``: OpenInference/Phoenix spans in, labels out."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from .options import add_db, add_root

__all__ = ["add_export", "add_import", "run_import_traces"]


def add_import(sub: argparse._SubParsersAction) -> None:
    """The ``import traces`` subcommand."""
    p = sub.add_parser(
        "traces", help="OpenInference / Phoenix spans (Parquet, JSONL, OTLP JSON): one sample per trace",
        description="Import FILE, spans as Phoenix exports them (the spans dataframe as .parquet or .jsonl, "
        "Phoenix span JSON lines) or OTLP JSON (.json, or .jsonl with one request per line), as the dataset NAME: "
        "one sample per trace — the root span's input is the question, the documents of its retriever spans (a "
        "reranker's output when there is one) the passages, the root's output (else the last LLM output) the "
        "response, earlier traces of the same session.id the history. The trace id is the sample id, so "
        "re-importing a later export with --replace keeps every label. Traces with no retriever span or no "
        "output are listed, not imported. Missing parents, cycles, two final outputs, documents without content "
        "and non-UTF-8 attributes are listed with trace and span id, and nothing is imported.")
    p.add_argument("file", type=Path, metavar="FILE", help="the span file (.parquet, .jsonl or .json)")
    p.add_argument("--dataset", required=True, metavar="NAME",
                   help="the dataset's name (a-z, 0-9, '-', '_'; part of every unit id)")
    add_db(p)
    p.add_argument("--labels", type=Path, default=None, metavar="FILE",
                   help="also import labels (annotator, unit_id, dimension, value) in the same transaction")
    p.add_argument("--replace", action="store_true",
                   help="replace an existing dataset of that name (labels are kept; changed ones become stale)")
    p.add_argument("--dry-run", action="store_true", help="validate and report; write nothing")
    p.set_defaults(func=run_import_traces)


def run_import_traces(args: argparse.Namespace) -> int:
    from ..errors import DataError
    from ..importers.traces import import_traces, prepare_traces
    from ..limits import LimitExceeded, check_file
    from ..store import StoreError, open_store

    try:
        check_file(args.file, text=False)  # a FIFO is refused unopened; the size is read_traces' to check
    except FileNotFoundError:
        print(f"error: no such file: {args.file}", file=sys.stderr)
        return 1
    except (LimitExceeded, OSError) as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 1
    try:
        prepared = payload, units, read = prepare_traces(args.file, args.dataset)  # before opening a store
        if args.dry_run:
            print(f"{args.file}: {read.spans} spans in {read.traces} traces — {len(payload['samples'])} samples, "
                  f"{len(units)} units, {len(read.skipped)} trace(s) skipped; nothing written (--dry-run)")
            for s in read.skipped:
                print(f"  skipped {s}")
            return 0
        with open_store(args.db) as store:
            result = import_traces(args.file, args.dataset, store, labels=args.labels, replace=args.replace,
                                   prepared=prepared)
    except DataError as exc:
        print(exc.report(), file=sys.stderr)
        return 1
    except (StoreError, ValueError, OSError) as exc:
        print(f"error: {exc}\nnothing was imported", file=sys.stderr)
        return 1
    print(result.summary())
    return 0


def add_export(sub: argparse._SubParsersAction, run: Callable[[argparse.Namespace], int]) -> None:
    """The ``export traces`` subcommand, run by ``run`` (``playground export``'s own, which opens the dataset)."""
    p = sub.add_parser(
        "traces", help="Phoenix document/span annotations and OTel GenAI evaluation events of a traces dataset",
        description="Write the human labels of the traces dataset NAME into DIR: NAME.document_annotations.parquet "
        "(span_id, document_position, name=relevance, annotator_kind=HUMAN, label, score, explanation: what "
        "Phoenix's log_document_annotations_dataframe takes), NAME.span_annotations.parquet (the four rates per "
        "trace on the response's span: log_span_annotations_dataframe) and NAME.gen_ai_evaluations.jsonl "
        "(gen_ai.evaluation.result events). Labels are one annotator's (--annotator) or the consensus (default; "
        "ties left out and counted). Stale labels are never exported.")
    p.add_argument("--dataset", required=True, metavar="NAME", help="the imported traces dataset")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="the folder to write into")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--annotator", default=None, metavar="NAME", help="one annotator's labels")
    who.add_argument("--consensus", action="store_true", help="the consensus of all annotators (the default)")
    add_db(p)
    add_root(p)
    p.set_defaults(func=run, tool="traces")
