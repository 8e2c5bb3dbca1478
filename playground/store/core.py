"""The label store: one interface, SQLite or PostgreSQL behind it (see :mod:`playground.store`).

This module composes :class:`LabelStore` from its parts (one job each, see its
docstring) and opens it: :func:`open_store` reads a location
(:func:`parse_url`: a path, ``sqlite:///...`` or ``postgresql://...``; none
means ``$PLAYGROUND_DB``, else :func:`default_db_path`), picks the backend and
checks or migrates the schema.  The name checks of :mod:`.checks` and
:func:`majority` are re-exported here, where callers have always found them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .assignments import AssignmentsMixin
from .audit import AuditMixin
from .base import Backend
from .checks import (
    APP_NAME,
    CONSENSUS_ANNOTATOR,
    ENV_VAR,
    MAX_COMMENT_LENGTH,
    MAX_NAME_LENGTH,
    MAX_NOTE_LENGTH,
    RESERVED_ANNOTATORS,
    annotator_problem,
    canonical_json,
    check_annotator,
    check_comment,
    check_note,
    check_unit,
    check_value,
)
from .errors import StoreError
from .guidelines import GuidelinesMixin
from .label_reads import LabelReadsMixin, majority
from .label_writes import LabelWritesMixin
from .stored_datasets import DatasetsMixin
from .tags import TagsMixin

__all__ = [
    "APP_NAME", "CONSENSUS_ANNOTATOR", "ENV_VAR", "MAX_COMMENT_LENGTH", "MAX_NAME_LENGTH", "MAX_NOTE_LENGTH",
    "RESERVED_ANNOTATORS", "LabelStore", "annotator_problem", "canonical_json", "check_annotator", "check_comment",
    "check_note",
    "check_unit", "check_value", "default_db_path", "majority", "open_store", "parse_url",
]


class LabelStore(LabelWritesMixin, LabelReadsMixin, TagsMixin, GuidelinesMixin, AssignmentsMixin, DatasetsMixin,
                 AuditMixin):
    """Annotators, their labels and every change to them (see the package docstring).

    Open with :func:`open_store`; one store object per process (it owns one
    connection).  Use as a context manager or call :meth:`close`.

    One part per job, each a mixin of :class:`~.handle.StoreHandle` (the
    backend, transactions, schema check on open, annotator ids):
    :class:`~.label_writes.LabelWritesMixin` (set, clear, undo, comments,
    adjudications, bulk rows), :class:`~.label_reads.LabelReadsMixin` (events,
    labels, stale, progress, consensus), :class:`~.tags.TagsMixin` (failure-mode
    tags and taxonomy), :class:`~.guidelines.GuidelinesMixin` (versioned
    guidelines), :class:`~.assignments.AssignmentsMixin` (assignments and
    lessons), :class:`~.stored_datasets.DatasetsMixin` (datasets) and
    :class:`~.audit.AuditMixin` (dump, verify, copy).
    """


# --- opening -----------------------------------------------------------------------------------------------


def default_db_path() -> Path:
    """``user_data_dir("rag-label-playground")/labels.db`` (platformdirs)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False)) / "labels.db"


def parse_url(url: str | os.PathLike[str] | None) -> tuple[str, str | Path]:
    """``("sqlite", Path)`` or ``("postgresql", url)`` for a store location (see :func:`open_store`)."""
    if url is None:
        url = os.environ.get(ENV_VAR) or None
    if url is None:
        return "sqlite", default_db_path()
    if isinstance(url, os.PathLike):
        return "sqlite", Path(url).expanduser()
    text = str(url).strip()
    if not text:
        raise StoreError("empty label store location")
    lower = text.lower()
    if lower.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        return "postgresql", text.replace("postgresql+psycopg://", "postgresql://", 1)
    if lower.startswith("sqlite:"):
        rest = text[len("sqlite:"):]
        if rest.startswith("//"):
            rest = rest[2:]  # sqlite:///abs/path -> /abs/path ; sqlite://rel.db -> rel.db
        if rest.startswith("//"):
            rest = rest[1:]  # sqlite:////abs/path -> /abs/path
        if not rest:
            raise StoreError(f"no file path in {text!r}")
        return "sqlite", Path(rest).expanduser()
    if "://" in text:
        raise StoreError(f"unsupported label store URL {text!r}: use a file path, sqlite:///path or postgresql://...")
    return "sqlite", Path(text).expanduser()


def open_store(url: str | os.PathLike[str] | None = None, *, read_only: bool = False, create: bool = True,
               busy_timeout: float | None = None, retries: int | None = None) -> LabelStore:
    """Open (creating or migrating as needed) the label store at ``url``.

    ``url``: ``None`` → ``$PLAYGROUND_DB`` → ``user_data_dir("rag-label-playground")/labels.db``;
    a plain path or ``sqlite:///abs/path.db`` → SQLite; ``postgresql://user@host/db`` → PostgreSQL.
    ``read_only=True`` refuses every write (:class:`ReadOnlyStoreError`) — for dashboards.
    ``create=False`` refuses to create a new SQLite file (for commands that only read).
    ``busy_timeout`` (seconds per attempt) and ``retries`` bound the waits for other writers.
    """
    kind, where = parse_url(url)
    opts: dict[str, Any] = {}
    if busy_timeout is not None:
        opts["busy_timeout"] = busy_timeout
    if retries is not None:
        opts["retries"] = retries
    if kind == "postgresql":
        from .postgres import PostgresBackend

        backend: Backend = PostgresBackend(str(where), read_only=read_only, create=create, **opts)
    else:
        from .sqlite import SQLiteBackend

        path = Path(where)
        if url is None and not os.environ.get(ENV_VAR) and create and not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
        backend = SQLiteBackend(path, read_only=read_only, create=create, **opts)
    try:
        return LabelStore(backend, create=create)
    except BaseException:
        backend.close()
        raise
