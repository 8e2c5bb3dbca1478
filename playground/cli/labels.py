"""``playground labels``: import, export, statistics, history and migration of the label store.

Every subcommand takes ``--db`` (a SQLite file path, ``sqlite:///abs/path.db`` or
``postgresql://user@host/dbname``; default ``$PLAYGROUND_DB``, else the
store under the user's data directory).  Exports have the columns
``case_id, response_id, unit_kind, unit_id, text, dimension, value, comment,
annotator, time`` (value 1, 0 or unsure); ``--minimal`` and older files use
``annotator, unit_kind, unit_id, dimension, value``.  Errors are printed as
one line (or the list of bad rows) on stderr, exit 1.  Text from the store
(names, comments, notes) is printed with control characters escaped.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "register",
    "run_export",
    "run_history",
    "run_import",
    "run_init",
    "run_migrate",
    "run_on_store",
    "run_stats",
    "terminal_safe",
]

from .labels_stats import annotator_lines, per_dataset_lines, progress_lines, verdict_lines
from .options import add_dataset, add_root
from .options import add_db as _add_db
from .terminal import terminal_safe

ROOT_HELP = "folder holding corpus/ and golden/, whose units labels refer to (default: the repository)"


def _add_root(p: argparse.ArgumentParser) -> None:
    add_root(p, ROOT_HELP)
    p.add_argument("--config", type=Path, default=None, metavar="FILE",
                   help="harness configuration deciding which passages are retrieved (default configuration)")


def register(subparsers: argparse._SubParsersAction) -> None:
    labels = subparsers.add_parser(
        "labels", help="import, export and inspect the label store",
        description="Import, export and inspect the label store. Exports have the columns case_id, response_id, "
        "unit_kind, unit_id, text, dimension, value (1, 0 or unsure), comment, annotator, time; older files with "
        "annotator, unit_kind, unit_id, dimension, value are read too. Annotator names are what people "
        "type: they identify, they do not authenticate.",
    )
    sub = labels.add_subparsers(dest="labels_command", metavar="SUBCOMMAND")
    _add_import(sub)
    _add_export(sub)
    _add_init(sub)
    _add_stats(sub)
    _add_history(sub)
    _add_migrate(sub)
    labels.set_defaults(func=lambda args: labels.print_help() or 2)


def _add_import(sub: argparse._SubParsersAction) -> None:
    """``labels import FILE``: a label file, all rows or none."""
    p = sub.add_parser(
        "import", help="import a CSV, JSONL or Parquet label file (all rows or none)",
        description="Import FILE (CSV with a header, JSONL: one object per line, or Parquet), as written by "
        "'labels export' (either column set). Every row is checked first against the units the data defines "
        "(unknown unit, unit_kind, dimension, value 1/0/unsure, annotator name rule and reserved names, text "
        "that changed since the export, missing column, duplicates); any bad row rejects the whole file, each "
        "bad row is listed (CSV/Parquet: data row number, JSONL: line number) and nothing is written. A good "
        "file is written in one transaction; each row that changes a label is recorded as an 'import' event, "
        "each new comment as a 'comment' event.",
    )
    p.add_argument("file", type=Path, metavar="FILE", help="label file (.csv, .jsonl or .parquet)")
    p.add_argument("--format", choices=("csv", "jsonl", "parquet"), default=None,
                   help="file format (default: from the suffix)")
    p.add_argument("--annotator", default=None, metavar="NAME",
                   help="file every row under NAME (the file's annotator column may then be absent)")
    _add_db(p)
    _add_root(p)
    p.set_defaults(func=run_import)


def _add_export(sub: argparse._SubParsersAction) -> None:
    """``labels export``: current labels as CSV, JSONL, Parquet or golden-set YAML."""
    p = sub.add_parser(
        "export", help="export labels as CSV, JSONL or a golden-set YAML file",
        description="Export current labels, sorted by annotator, unit and dimension: all annotators, one "
        "(--annotator) or the consensus (--consensus: the adjudicated value where someone adjudicated, else the "
        "majority over annotators; ties are listed on stderr and left out, never broken). Columns: case_id, "
        "response_id, unit_kind, unit_id, text, dimension, value (1, 0 or unsure), comment, annotator, time; "
        "a comment on a unit without labels is a row with empty dimension and value. CSV cells starting with "
        "= + - @ tab, CR or ' get a leading ' (spreadsheet formula injection); import removes it. Labels whose "
        "unit text changed or whose unit no longer exists (stale) are left out and counted on stderr unless "
        "--include-stale. --format golden writes responses whose claims and facts are fully labelled in the "
        "golden set's own YAML format (consensus unless --annotator).",
    )
    p.add_argument("--format", choices=("csv", "jsonl", "parquet", "golden"), default="csv",
                   help="output format (default: csv)")
    p.add_argument("--minimal", action="store_true",
                   help="only the five older columns annotator, unit_kind, unit_id, dimension, value (1/0 labels)")
    p.add_argument("--out", type=Path, default=None, metavar="FILE", help="output file (default: stdout)")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--annotator", default=None, metavar="NAME", help="only this annotator's labels")
    who.add_argument("--consensus", action="store_true", help="majority over annotators, as annotator 'consensus'")
    p.add_argument("--include-stale", action="store_true",
                   help="export stale labels too (no check against the data's units)")
    add_dataset(p, "only the labels of the dataset NAME ('golden' or an imported one; default: every dataset)")
    p.add_argument("--lesson", default=None, metavar="NAME",
                   help="only the units of this lesson (playground lesson list)")
    _add_db(p)
    _add_root(p)
    p.set_defaults(func=run_export)


def _add_init(sub: argparse._SubParsersAction) -> None:
    """``labels init``: create or migrate the store."""
    p = sub.add_parser(
        "init", help="create the store (or migrate it to this version's schema) and say where it is",
        description="Create the label store at --db, or migrate an older one forward, and print its location, "
        "backend and schema version. Other commands that only read never create a store; run this once for a "
        "shared PostgreSQL database as a role that may create tables, then grant the annotators' role access.",
    )
    _add_db(p)
    p.set_defaults(func=run_init)


def _add_stats(sub: argparse._SubParsersAction) -> None:
    """``labels stats``: annotators, progress, stale labels, consensus."""
    p = sub.add_parser(
        "stats", help="annotators, label and unsure counts, comments, progress, stale labels, consensus",
        description="Print the store's annotators with their label counts per dimension, unsure answers and "
        "comments, then progress (labelled / total units and unit-dimension pairs, overall and per case; an "
        "unsure answer counts as answered) against the data's units, stale and orphaned labels, and the "
        "consensus by status (unanimous, majority, single, adjudicated, tie); the cases listed are those with "
        "labels. Without --dataset, over every dataset and then one line per dataset; with --dataset NAME, that "
        "dataset alone.",
    )
    p.add_argument("--annotator", default=None, metavar="NAME", help="progress of this annotator only")
    add_dataset(p, "only the dataset NAME ('golden' or an imported one; default: every dataset, then per dataset)")
    _add_db(p)
    _add_root(p)
    p.set_defaults(func=run_stats)


def _add_history(sub: argparse._SubParsersAction) -> None:
    """``labels history UNIT_ID``: every event of one unit."""
    p = sub.add_parser(
        "history", help="every change of one unit's labels",
        description="Print every event (who, when, old -> new, action, notes and comments) of UNIT_ID, oldest "
        "first. Values: 1, 0, ? (unsure), - (none).",
    )
    p.add_argument("unit_id", metavar="UNIT_ID")
    p.add_argument("--dimension", default=None, help="only this dimension")
    p.add_argument("--annotator", default=None, metavar="NAME", help="only this annotator")
    p.add_argument("--format", choices=("table", "jsonl"), default="table")
    _add_db(p)
    p.set_defaults(func=run_history)


def _add_migrate(sub: argparse._SubParsersAction) -> None:
    """``labels migrate``: copy a whole store into a new or empty one."""
    p = sub.add_parser(
        "migrate", help="copy a whole store into a new or empty one (SQLite <-> PostgreSQL)",
        description="Copy every annotator, event and current label from --from into --to exactly (ids and "
        "timestamps kept), then verify both hold the same rows. --to must be new or empty. Example: "
        "playground labels migrate --from sqlite:///home/me/labels.db --to postgresql://me@db/labels",
    )
    p.add_argument("--from", dest="source", required=True, metavar="URL", help="source store (path or URL)")
    p.add_argument("--to", dest="target", required=True, metavar="URL", help="target store (path or URL), new or empty")
    p.set_defaults(func=run_migrate)


# --- helpers --------------------------------------------------------------------------------------


def run_on_store(command: Callable[[], int]) -> int:
    """``command()``'s exit code; input the store refuses (``InvalidLabelError``) is one ``error:`` line and
    exit 2, a store that fails (``StoreError``) one line and exit 1 — nothing written in either case."""
    from ..store import InvalidLabelError, StoreError

    try:
        return command()
    except InvalidLabelError as exc:
        print(f"error: {terminal_safe(exc)}", file=sys.stderr)
        return 2
    except StoreError as exc:
        print(f"error: {terminal_safe(exc)}", file=sys.stderr)
        return 1


def _err(message: str) -> int:
    print(f"error: {terminal_safe(message)}", file=sys.stderr)
    return 1


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        from ..errors import DataError
        from ..store import LabelImportError, StoreError

        try:
            return fn(args)
        except LabelImportError as exc:
            print(exc.report(), file=sys.stderr)
            return 1
        except DataError as exc:
            print(exc.report(), file=sys.stderr)
            return 1
        except (StoreError, ValueError) as exc:
            return _err(str(exc))
        except OSError as exc:
            return _err(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))

    handler.__name__ = fn.__name__
    handler.__doc__ = fn.__doc__
    return handler


def _scoped_catalog(args: argparse.Namespace, store: Any) -> tuple[dict[str, Any], set[str] | None]:
    """``(catalog, case ids)`` of --dataset, or ``(every dataset's units, None)`` without it."""
    if getattr(args, "dataset", None) is None:
        return _load_catalog(args), None
    from ..datasets import case_ids, open_dataset

    config = None
    if getattr(args, "config", None) is not None:
        from ..harness.config import load_config

        config = load_config(args.config)
    opened = open_dataset(args.dataset, store, getattr(args, "root", None), config)
    return opened.catalog(), case_ids(opened)


def _load_catalog(args: argparse.Namespace):
    """unit_id -> Unit for the data at --root (imported lazily: it loads the corpus and runs retrieval)."""
    from ..units import load_catalog

    config = None
    if getattr(args, "config", None) is not None:
        from ..harness.config import load_config

        config = load_config(args.config)
    from ..store import StoreError, open_store

    try:  # the datasets imported into the store are known units too (their labels are not orphans)
        with open_store(getattr(args, "db", None), read_only=True, create=False) as store:
            return load_catalog(getattr(args, "root", None), config, store)
    except StoreError:
        return load_catalog(getattr(args, "root", None), config)


def _responses(args: argparse.Namespace, store: Any, dataset: str | None) -> dict[str, Any]:
    """The verdict units (one per response) of ``dataset`` or of every dataset: labels export|import know them."""
    from ..verdicts import response_catalog

    return response_catalog(store, getattr(args, "root", None), dataset)


def _open(args: argparse.Namespace, **kw):
    from ..store import open_store

    return open_store(args.db, **kw)


# --- handlers ----------------------------------------------------------------------------------------


@_guard
def run_import(args: argparse.Namespace) -> int:
    from ..limits import LimitExceeded, check_file
    from ..store import import_file

    try:
        check_file(args.file, text=False)  # a FIFO is refused unopened; the size is import_file's to check
    except FileNotFoundError:
        return _err(f"no such file: {args.file}")
    except LimitExceeded as exc:
        return _err(f"{args.file}: {exc}")
    catalog = _load_catalog(args)
    with _open(args) as store:
        catalog = {**catalog, **_responses(args, store, None)}  # verdicts and tags (issue 24.6) are known units
        report = import_file(store, args.file, catalog, annotator_override=args.annotator, fmt=args.format)
    print(report.summary())
    return 0


def _lesson_units(args: argparse.Namespace, store: Any) -> set[str] | None:
    """The unit ids of ``--lesson`` (None without it); an unknown lesson is an error naming the known ones."""
    if not getattr(args, "lesson", None):
        return None
    if args.format == "golden":
        raise ValueError("--lesson cannot be combined with --format golden (it writes whole responses)")
    lesson = store.lesson(args.lesson)
    if lesson is None:
        known = ", ".join(x.name for x in store.lessons()) or "none"
        raise ValueError(f"no lesson named {args.lesson!r} (known: {known})")
    return set(lesson.units)


def _export_catalog(args: argparse.Namespace) -> tuple[dict[str, Any] | None, str]:
    """``(units, "")``: the units exported labels are checked against (None with --include-stale: no check);
    ``(None, why)`` when the data cannot be loaded (a golden export raises instead)."""
    if args.dataset is not None:
        with _open(args, create=False, read_only=True) as store:
            return _scoped_catalog(args, store)[0], ""
    if args.include_stale and args.format != "golden":
        return None, ""
    try:
        return _load_catalog(args), ""
    except Exception as exc:  # the data may be missing; say so rather than export stale labels silently
        if args.format == "golden":
            raise
        return None, (f"cannot load the units to check for stale labels ({exc}); pass --include-stale to "
                      "export without that check")


def _export_golden(args: argparse.Namespace, store: Any) -> int:
    """``--format golden``: fully labelled responses in the golden set's YAML; the skipped ones on stderr."""
    from ..golden import load_dataset
    from ..store import export_golden

    dataset = load_dataset(args.root)
    target = args.out if args.out is not None else sys.stdout
    result = export_golden(store, dataset, target, annotator=args.annotator)
    print(f"golden export: {len(result.written)} response(s) written, {len(result.skipped)} skipped",
          file=sys.stderr)
    for rid, why in result.skipped:
        print(f"  skipped {terminal_safe(rid)}: {terminal_safe(why)}", file=sys.stderr)
    return 0


def _export_rows(args: argparse.Namespace, store: Any, catalog: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The rows to export: the consensus (its ties listed on stderr), the five older columns, or the table."""
    from ..store import consensus_export, export_rows, export_table

    if args.consensus:
        ties = consensus_export(store, catalog).ties
        rows: list[dict[str, Any]] = (consensus_export(store, catalog).rows if args.minimal
                                      else export_table(store, catalog, consensus=True))
        if ties:
            print(f"{len(ties)} tie(s) left out (not broken; adjudicate them to settle):", file=sys.stderr)
            for t in ties:
                print(f"  {terminal_safe(t.unit_id)} {t.dimension}: {t.yes} yes, {t.no} no", file=sys.stderr)
        return rows
    if args.minimal:
        return export_rows(store, annotator=args.annotator, catalog=catalog)
    return export_table(store, catalog, annotator=args.annotator)


def _count_stale(args: argparse.Namespace, store: Any, catalog: dict[str, Any]) -> None:
    """Say on stderr how many stale labels (text changed or unit gone) the export left out."""
    from ..datasets import with_dataset

    stale = store.stale(catalog, annotator=args.annotator if not args.consensus else None)
    if args.dataset is not None:
        mine = {u.case_id for u in catalog.values()}
        stale = [s for s in stale if s.case_id in mine]
    if stale:
        print(f"{len(stale)} stale label(s) left out (text changed or unit gone); see "
              f"'{with_dataset('playground labels stats', args.dataset)}', or pass --include-stale",
              file=sys.stderr)


@_guard
def run_export(args: argparse.Namespace) -> int:
    from ..store import write_export

    if args.dataset is not None and args.include_stale:
        return _err("--include-stale exports every label unchecked: it cannot be limited to one --dataset")
    catalog, problem = _export_catalog(args)
    if problem:
        return _err(problem)
    with _open(args, create=False) as store:
        if catalog is not None:  # response verdicts, notes and tags (issue 24.6) are exported too
            catalog = {**catalog, **_responses(args, store, args.dataset)}
        in_lesson = _lesson_units(args, store)
        if in_lesson is not None and catalog is not None:
            catalog = {u: x for u, x in catalog.items() if u in in_lesson}
        if args.format == "golden":
            return _export_golden(args, store)
        rows = _export_rows(args, store, catalog)
        if catalog is not None:
            _count_stale(args, store, catalog)
    if in_lesson is not None:
        rows = [r for r in rows if r["unit_id"] in in_lesson]
    if args.format == "parquet" and args.out is None and sys.stdout.isatty():
        return _err("Parquet is binary: pass --out FILE (or redirect the output)")
    write_export(rows, args.out if args.out is not None else sys.stdout, args.format)
    if args.out is not None:
        print(f"exported {len(rows)} row(s) to {args.out}", file=sys.stderr)
    return 0


@_guard
def run_init(args: argparse.Namespace) -> int:
    with _open(args) as store:
        print(f"label store ready: {store.url} ({store.backend}, schema {store.schema_version}); "
              f"{len(store.annotators())} annotator(s)")
    return 0


@_guard
def run_stats(args: argparse.Namespace) -> int:
    with _open(args, create=False) as store:
        lines = [f"label store: {terminal_safe(store.url)} (schema {store.schema_version}, {store.backend})"]
        try:
            catalog, cases = _scoped_catalog(args, store)
        except Exception as exc:
            if args.dataset is not None:
                raise
            lines += annotator_lines(store, store.labels(), None)
            lines.append(f"progress: unavailable (cannot load the units: {terminal_safe(exc)})")
            print("\n".join(lines))
            return 0
        if args.dataset is not None:
            lines.append(f"dataset: {terminal_safe(args.dataset)} ({len(catalog)} units)")
        lines += annotator_lines(store, store.labels(), catalog, cases)
        responses = _responses(args, store, args.dataset)
        lines += progress_lines(store, catalog, args.annotator, cases, responses)
        lines += verdict_lines(store, responses, args.annotator, args.dataset)
        if args.dataset is None:
            lines += per_dataset_lines(store, catalog, getattr(args, "root", None))
    print("\n".join(lines))
    return 0


def _show_value(v: int | None) -> str:
    return "-" if v is None else "?" if v == 2 else str(v)


@_guard
def run_history(args: argparse.Namespace) -> int:
    with _open(args, create=False) as store:
        events = store.history(args.unit_id, dimension=args.dimension, annotator=args.annotator)
    if args.format == "jsonl":
        from dataclasses import asdict

        for e in events:
            sys.stdout.write(json.dumps(asdict(e), ensure_ascii=True) + "\n")
        return 0
    if not events:
        print(f"no events for unit {terminal_safe(args.unit_id)}")
        return 0
    for e in events:
        who = terminal_safe(e.annotator)
        if e.action == "comment":
            said = f"comment: {terminal_safe(repr(e.note))}" if e.note else "comment cleared"
            print(f"{e.event_id:>6}  {e.created_at}  {who}  {said}")
            continue
        extra = f" (undoes event {e.undoes})" if e.undoes else ""
        extra += f"  note: {terminal_safe(repr(e.note))}" if e.note else ""
        print(f"{e.event_id:>6}  {e.created_at}  {who}  {e.dimension}  "
              f"{_show_value(e.old_value)} -> {_show_value(e.new_value)}  {e.action}{extra}  text {e.text_hash}")
    return 0


@_guard
def run_migrate(args: argparse.Namespace) -> int:
    from ..store import migrate_store
    from ..store.postgres import redact

    counts = migrate_store(args.source, args.target)
    print(f"copied {counts['annotators']} annotator(s), {counts['events']} event(s), {counts['labels']} label(s) "
          f"from {redact(args.source)} into {redact(args.target)}; verified identical")
    return 0
