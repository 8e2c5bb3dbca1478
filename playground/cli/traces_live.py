"""``import traces --phoenix URL --project P`` and ``export traces --phoenix URL``: a running Phoenix, both ways."""
from __future__ import annotations

import argparse
import sys

__all__ = ["run_export_langfuse", "run_export_phoenix", "run_import_phoenix"]


def _fail(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def run_import_phoenix(args: argparse.Namespace) -> int:
    from ..errors import DataError
    from ..importers.phoenix_live import PhoenixError, PhoenixSource, connect, import_phoenix
    from ..store import StoreError, open_store

    if args.phoenix is None:
        return _fail("give FILE, or --phoenix URL --project P", 2)
    if args.file is not None:
        return _fail("give FILE or --phoenix, not both", 2)
    if args.project is None:
        return _fail("--phoenix needs --project P (the Phoenix project to pull)", 2)
    if args.labels is not None:
        return _fail("--labels goes with FILE; label the pulled traces on the page", 2)
    if args.start is not None and args.end is not None and args.start >= args.end:
        return _fail(f"--start {args.start.isoformat()} is not before --end {args.end.isoformat()}", 2)
    source = PhoenixSource(args.phoenix, args.project, args.start, args.end, tuple(args.span_kind), args.sample,
                           args.seed)
    try:
        client, names = connect(args.phoenix)
        from ..importers.phoenix_live import check_project

        check_project(args.phoenix, args.project, names)
        if args.dry_run:
            (payload, units, read), in_window = import_phoenix(client, source, args.dataset, None, dry_run=True)
            print(f"{source.describe()}: {read.spans} spans in {read.traces} traces (of {in_window} in the window) "
                  f"— {len(payload['samples'])} samples, {len(units)} units, {len(read.skipped)} trace(s) skipped; "
                  "nothing written (--dry-run)")
            return 0
        with open_store(args.db) as store:
            result, in_window = import_phoenix(client, source, args.dataset, store, replace=args.replace)
    except PhoenixError as exc:
        return _fail(str(exc), exc.exit_code)
    except DataError as exc:
        print(exc.report(), file=sys.stderr)
        return 1
    except (StoreError, ValueError, OSError) as exc:
        return _fail(f"{exc}\nnothing was imported", 1)
    print(f"from {source.describe()} ({in_window} trace(s) in the window)")
    print(result.summary())
    return 0


def run_export_phoenix(args: argparse.Namespace) -> int:
    from ..datasets import open_dataset
    from ..importers.phoenix_live import PhoenixError, check_project, connect
    from ..importers.phoenix_push import push_annotations
    from ..store import StoreError, open_store

    try:
        client, names = connect(args.phoenix)
        with open_store(args.db, create=False, read_only=True) as store:
            opened = open_dataset(args.dataset, store, args.root)
            if args.annotator is not None and args.annotator not in store.annotators():
                return _fail(f"no annotator {args.annotator!r} in {store.url}", 1)
            project = args.project or _project_of(opened)
            check_project(args.phoenix, project, names)
            result = push_annotations(client, args.phoenix, project, opened, store, annotator=args.annotator,
                                      run=args.run)
    except PhoenixError as exc:
        return _fail(str(exc), exc.exit_code)
    except (StoreError, ValueError, OSError) as exc:
        return _fail(str(exc), 1)
    print(result.summary(args.phoenix, project))
    return 0


def _project_of(opened: object) -> str:
    """The project a dataset was pulled from (``--project`` overrides; a file import needs it)."""
    source = str(getattr(opened, "payload", {}).get("source", {}).get("file", ""))
    _url, sep, project = source.partition(" project ")
    if not sep:
        from ..importers.phoenix_live import PhoenixError

        raise PhoenixError(f"dataset {getattr(opened, 'name', '?')!r} was imported from a file ({source}); "
                           "say which Phoenix project holds its traces with --project P")
    return project


def run_export_langfuse(args: argparse.Namespace) -> int:
    from ..datasets import open_dataset
    from ..importers.langfuse import write_langfuse_scores
    from ..store import StoreError, open_store

    try:
        with open_store(args.db, create=False, read_only=True) as store:
            opened = open_dataset(args.dataset, store, args.root)
            if args.annotator is not None and args.annotator not in store.annotators():
                return _fail(f"no annotator {args.annotator!r} in {store.url}", 1)
            if opened.kind != "traces":
                return _fail(f"dataset {args.dataset!r} is a {opened.kind} dataset; `export traces` takes one "
                             "imported with `playground import traces`", 1)
            n = write_langfuse_scores(opened, store, args.langfuse, annotator=args.annotator)
    except (StoreError, ValueError, OSError) as exc:
        return _fail(str(exc), 1)
    print(f"{n} Langfuse score(s) written to {args.langfuse} (one create-score body a line)")
    return 0
