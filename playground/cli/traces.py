"""``playground import traces FILE`` and ``playground export traces``: OpenInference/Phoenix spans in, labels out."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import UTC, datetime
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
        "and non-UTF-8 attributes are listed with trace and span id, and nothing is imported. With --phoenix URL "
        "--project P instead of FILE, the spans are pulled from a running Phoenix through its client (filters: "
        "--start/--end, --span-kind, --sample N --seed S); a Langfuse export (observations or traces with "
        "observations, JSON or JSON Lines) is recognised, or named with --format langfuse.")
    p.add_argument("file", type=Path, metavar="FILE", nargs="?", default=None,
                   help="the span file (.parquet, .jsonl or .json; a Langfuse export with --format langfuse or "
                   "when recognised), or none with --phoenix")
    p.add_argument("--format", choices=("auto", "openinference", "langfuse"), default="auto",
                   help="what FILE holds: spans (openinference) or a Langfuse export of traces with observations "
                   "(langfuse); auto (the default) recognises a Langfuse export by its observations")
    live = p.add_argument_group("from a running Phoenix (instead of FILE)")
    live.add_argument("--phoenix", default=None, metavar="URL",
                      help="pull the spans from the Phoenix at URL (e.g. http://localhost:6006) through its client")
    live.add_argument("--project", default=None, metavar="P", help="the Phoenix project (required with --phoenix)")
    live.add_argument("--start", type=_when, default=None, metavar="TIME",
                      help="only traces with a span starting at or after TIME (ISO 8601; UTC when no offset)")
    live.add_argument("--end", type=_when, default=None, metavar="TIME",
                      help="only traces with a span starting before TIME (ISO 8601; UTC when no offset)")
    live.add_argument("--span-kind", action="append", default=[], metavar="KIND",
                      help="only traces with a span of this kind (RETRIEVER, LLM, ...; repeat for any of several)")
    live.add_argument("--sample", type=_positive, default=None, metavar="N",
                      help="keep N traces, chosen by the stable hash of (seed, trace id)")
    live.add_argument("--seed", default="0", metavar="S", help="the seed of --sample (default 0)")
    p.add_argument("--dataset", required=True, metavar="NAME",
                   help="the dataset's name (a-z, 0-9, '-', '_'; part of every unit id)")
    add_db(p)
    p.add_argument("--labels", type=Path, default=None, metavar="FILE",
                   help="also import labels (annotator, unit_id, dimension, value) in the same transaction")
    p.add_argument("--replace", action="store_true",
                   help="replace an existing dataset of that name (labels are kept; changed ones become stale)")
    p.add_argument("--dry-run", action="store_true", help="validate and report; write nothing")
    p.set_defaults(func=run_import_traces)


def _when(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r} (e.g. 2026-12-07T20:00:00Z)") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return int(text)


def run_import_traces(args: argparse.Namespace) -> int:
    if args.phoenix is not None or args.file is None:
        from .traces_live import run_import_phoenix

        return run_import_phoenix(args)
    from ..errors import DataError
    from ..importers.langfuse import is_langfuse, prepare_langfuse
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
        if args.format == "langfuse" or (args.format == "auto" and is_langfuse(args.file)):
            prepared = payload, units, read = prepare_langfuse(args.file, args.dataset)
        else:
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
        "ties left out and counted). Stale labels are never exported. The responses' verdicts go as the span "
        "annotation 'verdict' (pass/fail, the note as explanation). --phoenix URL pushes the same annotations to a "
        "running Phoenix (only what is missing or different; read back), with --run DIR the harness's scores as "
        "CODE annotations, and the project-level figures into the project's description; --langfuse FILE writes "
        "Langfuse create-score bodies.")
    p.add_argument("--dataset", required=True, metavar="NAME", help="the imported traces dataset")
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help="the folder to write into")
    live = p.add_argument_group("to a running Phoenix (instead of, or besides, --out)")
    live.add_argument("--phoenix", default=None, metavar="URL",
                      help="push the labels to the Phoenix at URL as span and document annotations (upserted: a "
                      "second push changes nothing), read them back, and say what was written")
    live.add_argument("--project", default=None, metavar="P",
                      help="the Phoenix project holding the traces (default: the one the dataset was pulled from)")
    live.add_argument("--run", type=Path, default=None, metavar="DIR",
                      help="also push the harness's scores of this run over the dataset (`playground harness run "
                      "--dataset NAME`) as CODE annotations")
    p.add_argument("--langfuse", type=Path, default=None, metavar="FILE",
                   help="also write the verdicts and rates as Langfuse scores (JSON Lines, one create-score body "
                   "a line, for its SDK's create_score or POST /api/public/scores)")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--annotator", default=None, metavar="NAME", help="one annotator's labels")
    who.add_argument("--consensus", action="store_true", help="the consensus of all annotators (the default)")
    add_db(p)
    add_root(p)
    p.set_defaults(func=lambda args: _run_export(args, run), tool="traces")


def _run_export(args: argparse.Namespace, run: Callable[[argparse.Namespace], int]) -> int:
    """The file export (``--out``), the Langfuse scores (``--langfuse``) and the push (``--phoenix``), in turn."""
    if args.out is None and args.phoenix is None and args.langfuse is None:
        print("error: say where to: --out DIR, --phoenix URL or --langfuse FILE", file=sys.stderr)
        return 2
    if args.run is not None and args.phoenix is None:
        print("error: --run goes with --phoenix", file=sys.stderr)
        return 2
    code = run(args) if args.out is not None else 0
    if code == 0 and args.langfuse is not None:
        from .traces_live import run_export_langfuse

        code = run_export_langfuse(args)
    if code == 0 and args.phoenix is not None:
        from .traces_live import run_export_phoenix

        code = run_export_phoenix(args)
    return code
