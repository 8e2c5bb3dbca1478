"""``playground import ragas|deepeval|table|ragtruth FILE``: bring your own RAG data into the label store."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..limits import describe
from .options import DB_HELP, add_db

__all__ = ["register", "run_import", "run_ragtruth"]

_COMMON = (
    "Every problem is listed with its line (JSONL/CSV), item (JSON) or row (Parquet) and field, and nothing is "
    "written when there is one. The dataset and any labels go into the label store in ONE transaction. Each sample "
    "becomes a case (question + history) with one response; each retrieved context a passage to judge for "
    "relevance; the response is split into claims (supported; correct when there is a reference); the reference "
    "into facts (covered). Ids carry the dataset name and the sample's own id (else a hash of its question), so "
    "re-importing a changed file with --replace keeps every label and marks those on changed text stale. A file "
    "`playground export` wrote carries its label history (answers, unsure, comments, adjudications, who and when), "
    "which comes back exactly. Bounds (playground/importers/limits.py): a regular file (a FIFO is refused "
    f"unopened) of {describe()}; beyond one, one line says which."
)
_FORMATS = {
    "ragas": ("a RAGAS EvaluationDataset (to_jsonl / to_csv / Parquet; single- or multi-turn)",
              "Fields user_input, retrieved_contexts, retrieved_context_ids, response, reference, "
              "reference_contexts; a multi-turn user_input (messages) becomes history plus the last human turn."),
    "deepeval": ("a DeepEval dataset saved by EvaluationDataset.save_as (JSON / JSONL / CSV)",
                 "Fields input, actual_output, expected_output, retrieval_context, context, additional_metadata "
                 "(its 'id' is the sample id)."),
    "table": ("any JSONL / CSV / Parquet table, with --map naming its columns",
              "Fields question and answer (required), contexts, context_ids, reference, facts, history, id; "
              "--map question=q,contexts=docs,answer=output,reference=gold,id=trace_id."),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    imp = subparsers.add_parser("import", help="import RAG data (RAGAS, DeepEval, any table, RAGTruth) as a dataset",
                                description="Import RAG samples or external human-labelled data sets as named "
                                "datasets of playground units (and labels) in the label store.")
    imp.set_defaults(func=lambda args: imp.print_help() or 2)
    sub = imp.add_subparsers(dest="import_command", metavar="SUBCOMMAND")
    for kind, (summary, fields) in _FORMATS.items():
        p = sub.add_parser(kind, help=summary, description=f"Import FILE, {summary}, as the dataset NAME. {fields} "
                           + _COMMON)
        p.add_argument("file", type=Path, metavar="FILE",
                       help="the file (.jsonl, .json, .csv or .parquet), or a Hugging Face save_to_disk folder")
        p.add_argument("--dataset", required=True, metavar="NAME",
                       help="the dataset's name (a-z, 0-9, '-', '_'; part of every unit id)")
        add_db(p)
        p.add_argument("--split", default=None, metavar="SPLIT", help="the split of a saved DatasetDict")
        if kind == "table":
            p.add_argument("--map", default=None, metavar="FIELD=COLUMN,...", help="which column holds each field")
        p.add_argument("--labels", type=Path, default=None, metavar="FILE",
                       help="also import labels (annotator, unit_id, dimension, value), e.g. the .labels table "
                       "`playground export` writes, in the same transaction")
        p.add_argument("--replace", action="store_true",
                       help="replace an existing dataset of that name (labels are kept; changed ones become stale)")
        p.add_argument("--dry-run", action="store_true", help="validate and report; write nothing")
        p.add_argument("--guidelines", type=Path, default=None, metavar="FILE.md",
                       help="the dataset's own labelling guidelines (UTF-8 markdown, at most 256 KiB), stored as its "
                       "next version in the same transaction (see `playground guidelines`); a file that is not UTF-8 "
                       "text: exit code 2, nothing imported")
        p.add_argument("--guidelines-author", default="owner", metavar="NAME",
                       help="who wrote the guidelines (default: owner)")
        p.add_argument("--text-kind", choices=("qa", "summary", "dialogue"), default=None,
                       help="the kind of text: which support rules and default floors the harness uses (default: "
                       "inferred from the samples -- conversations, summary requests, else qa -- and printed)")
        p.set_defaults(func=run_import, kind=kind)

    from .traces import add_import

    add_import(sub)  # import traces: OpenInference / Phoenix spans (playground/cli/traces.py)
    p = sub.add_parser(
        "ragtruth", help="a RAGTruth claim file: cases, responses, passages, claims and human labels",
        description="Validate FILE (RAGTruth claims, one JSON object per line; see shared/data/ragtruth/README.md) "
        "and turn it into cases (one per source), responses, evidence passages and claim units (ids RT-...), "
        "stored as the dataset 'ragtruth' in the label store together with the human labels (supported = not "
        "hallucinated) under the annotator 'ragtruth-human', in one transaction. With --out DIR, write the "
        "older data set file DIR/ragtruth.dataset.json instead (no store). A file with any malformed line is "
        "rejected whole: every bad line is listed with its number and nothing is written.",
    )
    p.add_argument("file", type=Path, metavar="FILE", help="RAGTruth claims (.jsonl)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="write DIR/ragtruth.dataset.json instead of importing into the store")
    add_db(p, "label store for the dataset and its labels: " + DB_HELP.removeprefix("label store: "))
    p.add_argument("--dataset", default="ragtruth", metavar="NAME", help="dataset name in the store (default ragtruth)")
    p.add_argument("--annotator", default=None, metavar="NAME",
                   help="annotator name of the labels (default ragtruth-human)")
    p.add_argument("--no-labels", action="store_true", help="same as --out imported: the data set file only, no store")
    p.add_argument("--dry-run", action="store_true", help="validate and report; write nothing")
    p.set_defaults(func=run_ragtruth)


#: How a dry run's one line ends.
_DRY_RUN = "nothing written (--dry-run)"
#: The last line on stderr of an import that failed past validation of its file (store, options, disk).
_NOTHING_IMPORTED = "nothing was imported"


def _refused(message: str) -> int:
    """Print ``message`` and :data:`_NOTHING_IMPORTED` on stderr; the exit code of a refused import (1)."""
    print(f"{message}\n{_NOTHING_IMPORTED}", file=sys.stderr)
    return 1


def _absent(file: Path | None, *more: Path | None) -> bool:
    """True, having said so on stderr, when ``file`` (or a ``more``) is no regular file within the size limit.

    Checked without opening it (a FIFO would wait for a writer forever); then nothing was tried, so no more is said.
    """
    from ..limits import LimitExceeded, check_file

    for path in (file, *more):
        if path is None:
            continue
        try:
            check_file(path, text=path.suffix.lower() != ".parquet")
        except FileNotFoundError:
            print(f"error: no such file: {path}", file=sys.stderr)
            return True
        except (LimitExceeded, OSError) as exc:
            print(f"error: {path}: {exc}", file=sys.stderr)
            return True
    return False


def run_import(args: argparse.Namespace) -> int:
    from ..errors import DataError, Problem
    from ..importers.load import import_dataset, read_import
    from ..importers.table import parse_map
    from ..importers.text_kind import text_kind_choice
    from ..store import StoreError, open_store

    # a folder is a Hugging Face save_to_disk, read by hf_disk; the labels file is always a file
    if _absent(None if args.file.is_dir() else args.file, args.labels):
        return 1
    if getattr(args, "split", None) is not None:
        from ..importers.hf_disk import split_folder

        problems: list[Problem] = []
        folder = split_folder(args.file, args.split, problems)
        if folder is None:
            print(DataError(problems, f"{args.file}: nothing was imported").report(), file=sys.stderr)
            return 1
        args.file = folder
    from ..store import InvalidLabelError
    from ..store.guidelines import read_guidelines_file

    guidelines = None
    if getattr(args, "guidelines", None) is not None:
        try:
            guidelines = read_guidelines_file(args.guidelines)
        except InvalidLabelError as exc:
            print(f"error: {exc}\n{_NOTHING_IMPORTED}", file=sys.stderr)
            return 2
    try:
        mapping = parse_map(getattr(args, "map", None))
        read = read_import(args.file, args.kind, args.dataset, mapping=mapping)  # before opening (or creating) a store
        text_kind = text_kind_choice(read.samples, args.text_kind)  # issue 36.4: recorded or inferred, and said
        if args.dry_run:
            print(f"{args.file}: valid {args.kind} file — {read.cases} samples, {read.units()} units; {_DRY_RUN}")
            print(text_kind.line())
            return 0
        with open_store(args.db) as store:
            result = import_dataset(args.file, args.kind, args.dataset, store, mapping=mapping, labels=args.labels,
                                    replace=args.replace, text_kind=text_kind.kind, guidelines=guidelines,
                                    guidelines_author=args.guidelines_author, read=read)
    except DataError as exc:
        print(exc.report(), file=sys.stderr)
        return 1
    except (StoreError, ValueError, OSError) as exc:
        return _refused(f"error: {exc}")
    print(result.summary())
    print(text_kind.line())
    return 0


def run_ragtruth(args: argparse.Namespace) -> int:
    from ..importers.ragtruth import HUMAN_ANNOTATOR, RagTruthError, build_dataset, import_ragtruth, load_ragtruth
    from ..store import StoreError

    if _absent(args.file):
        return 1
    annotator = args.annotator or HUMAN_ANNOTATOR
    out = args.out if args.out is not None else (Path("imported") if args.no_labels else None)
    try:
        if args.dry_run:
            dataset = build_dataset(load_ragtruth(args.file), source_file=args.file.name, annotator=annotator)
            c = dataset.counts()
            print(f"{args.file}: valid — {c['claims']} claims ({c['hallucinated']} hallucinated), "
                  f"{c['responses']} responses, {c['cases']} sources, {c['passages']} passages; {_DRY_RUN}")
            return 0
        if out is not None:
            result = import_ragtruth(args.file, out, None, annotator=annotator)
        else:
            from ..store import open_store

            sample = load_ragtruth(args.file)  # validate before even opening (or creating) the store
            with open_store(args.db) as store:
                result = import_ragtruth(args.file, None, store, annotator=annotator, name=args.dataset,
                                         sample=sample)
    except RagTruthError as exc:
        return _refused(str(exc))
    except (StoreError, ValueError, OSError) as exc:
        return _refused(f"error: {exc}")
    print(result.summary())
    return 0
