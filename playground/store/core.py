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
from typing import Any, Self

from .assignments import Plans
from .audit import Audit
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
from .guidelines import GuidelineVersions
from .handle import StoreHandle
from .label_reads import LabelReads, majority
from .label_writes import LabelWrites
from .stored_datasets import StoredDatasets
from .tags import TagSets

__all__ = [
    "APP_NAME", "CONSENSUS_ANNOTATOR", "ENV_VAR", "MAX_COMMENT_LENGTH", "MAX_NAME_LENGTH", "MAX_NOTE_LENGTH", "PARTS",
    "RESERVED_ANNOTATORS", "LabelStore", "annotator_problem", "canonical_json", "check_annotator", "check_comment",
    "check_note", "check_unit", "check_value", "default_db_path", "majority", "open_store", "parse_url",
]


class LabelStore:
    """Annotators, their labels and every change to them (see the package docstring).

    Open with :func:`open_store`; one store object per process (it owns one
    connection).  Use as a context manager or call :meth:`close`.

    A facade over parts with one job each, every one given the same
    :class:`~.handle.StoreHandle` (:attr:`handle`: the backend, transactions,
    schema check on open, annotator ids) in its constructor:
    :attr:`writes` (:class:`~.label_writes.LabelWrites`: set, clear, undo,
    comments, adjudications, bulk rows), :attr:`reads`
    (:class:`~.label_reads.LabelReads`: events, labels, stale, progress,
    consensus), :attr:`tagging` (:class:`~.tags.TagSets`: failure-mode tags
    and taxonomy), :attr:`guideline_versions`
    (:class:`~.guidelines.GuidelineVersions`), :attr:`plans`
    (:class:`~.assignments.Plans`: assignments and lessons),
    :attr:`stored_datasets` (:class:`~.stored_datasets.StoredDatasets`) and
    :attr:`audit` (:class:`~.audit.Audit`: dump, verify, copy).  The parts'
    names are not the methods' (``store.labels()``, ``store.tags()``,
    ``store.guidelines()`` and ``store.datasets()`` read, as they always did):
    each public method of a part is also this store's, the same bound method
    (:data:`PARTS` lists which part has which).
    """

    def __init__(self, backend: Backend, *, create: bool = True):
        self.handle = StoreHandle(backend, create=create)
        self.tagging = TagSets(self.handle)
        self.writes = LabelWrites(self.handle, self.tagging)
        self.reads = LabelReads(self.handle)
        self.guideline_versions = GuidelineVersions(self.handle)
        self.plans = Plans(self.handle)
        self.stored_datasets = StoredDatasets(self.handle, self.writes)
        self.audit = Audit(self.handle)
        self.read_only = self.handle.read_only
        self.schema_version = self.handle.schema_version
        # The old names, the parts' own bound methods (thin delegations: no code of their own).
        h, w, r, t, g, p, d, a = (self.handle, self.writes, self.reads, self.tagging, self.guideline_versions,
                                  self.plans, self.stored_datasets, self.audit)
        self.annotators, self.close = h.annotators, h.close
        self.set_label, self.undo, self.write_rows = w.set_label, w.undo, w.write_rows
        self.set_comment, self.adjudicate = w.set_comment, w.adjudicate
        self.history, self.events, self.labels, self.comments = r.history, r.events, r.labels, r.comments
        self.stale, self.current_labels, self.unsure_counts = r.stale, r.current_labels, r.unsure_counts
        self.progress, self.consensus = r.progress, r.consensus
        self.set_tags, self.tags, self.taxonomy = t.set_tags, t.tags, t.taxonomy
        self.add_failure_mode, self.rename_failure_mode = t.add_failure_mode, t.rename_failure_mode
        self.merge_failure_modes = t.merge_failure_modes
        self.set_guidelines, self.guidelines_tx = g.set_guidelines, g.guidelines_tx
        self.guidelines, self.guidelines_history = g.guidelines, g.guidelines_history
        self.save_assignment, self.assignment, self.assignments = p.save_assignment, p.assignment, p.assignments
        self.save_lesson, self.lesson, self.lessons, self.delete_lesson = (p.save_lesson, p.lesson, p.lessons,
                                                                           p.delete_lesson)
        self.put_dataset, self.dataset, self.dataset_revision = d.put_dataset, d.dataset, d.dataset_revision
        self.dataset_names, self.datasets = d.dataset_names, d.datasets
        self.dump, self.verify, self.integrity_check, self.copy_from = a.dump, a.verify, a.integrity_check, a.copy_from

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self.handle.backend

    @property
    def url(self) -> str:
        """Where the store lives (passwords redacted)."""
        return self.handle.url

    @property
    def _b(self) -> Backend:
        """The backend (:attr:`~.handle.StoreHandle.db`), under the name tests and benches have always used."""
        return self.handle.db

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LabelStore({self.url!r}{', read_only=True' if self.read_only else ''})"


#: Which part (attribute of :class:`LabelStore`) has each public method the store hands on.
PARTS: dict[str, tuple[str, ...]] = {
    "handle": ("annotators", "close"),
    "writes": ("adjudicate", "set_comment", "set_label", "undo", "write_rows"),
    "reads": ("comments", "consensus", "current_labels", "events", "history", "labels", "progress", "stale",
              "unsure_counts"),
    "tagging": ("add_failure_mode", "merge_failure_modes", "rename_failure_mode", "set_tags", "tags", "taxonomy"),
    "guideline_versions": ("guidelines", "guidelines_history", "guidelines_tx", "set_guidelines"),
    "plans": ("assignment", "assignments", "delete_lesson", "lesson", "lessons", "save_assignment", "save_lesson"),
    "stored_datasets": ("dataset", "dataset_names", "dataset_revision", "datasets", "put_dataset"),
    "audit": ("copy_from", "dump", "integrity_check", "verify"),
}


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
