"""The label store: where every label a person sets lives — durable, multi-annotator, auditable.

One interface (:class:`LabelStore`, opened with :func:`open_store`), two backends:

* **SQLite** (default): one file — ``--db PATH``, ``sqlite:///abs/path.db``,
  ``$PLAYGROUND_DB``, else ``user_data_dir("rag-label-playground")/labels.db``.
  WAL mode, ``synchronous=FULL``, ``BEGIN IMMEDIATE`` per user action, bounded
  busy waits with retries, so several Voila kernels (one per browser tab) can
  write one file at once.
* **PostgreSQL**: ``postgresql://user@host/dbname`` (psycopg 3) for a class or a
  team across machines.  Same schema, same behaviour; event times are server
  time, and the later of two concurrent writers of one label wins.

Plain SQL, not SQLAlchemy Core: the store issues about twenty statements, all
of them standard SQL both databases accept (``ON CONFLICT``, ``RETURNING``);
the few real differences (transactions and their retries, locking, the clock,
id allocation, timestamp types) need backend-specific handling that an ORM
layer would not hide anyway (``BEGIN IMMEDIATE`` and ``busy_timeout`` on
SQLite, advisory locks and ``lock_timeout`` on PostgreSQL).  A tiny dialect
layer (:mod:`.base`) keeps them in one place, with one dependency fewer and
every statement visible for review.

What is stored (schema in :mod:`.schema`): annotators (a name, created on
first use), the current label of each (annotator, unit, dimension) with the
unit's text hash at labelling time, and every change as an append-only event
(who, when, old and new value, action ``set``/``clear``/``undo``/``import``,
and an optional free-text ``note`` such as who adjudicated).
The current-label view is written in the same transaction as its event;
:meth:`LabelStore.verify` replays the log to prove it.

**Identity is not authentication.**  An annotator is whatever name a person
types; the store keeps names verbatim (SQL parameters only) and anyone who can
open the store can write under any name.  Protect the file or the database
role instead; dashboards can open the store with ``read_only=True``, which
refuses every write (:class:`ReadOnlyStoreError`) and, on PostgreSQL, also
makes the session read-only.  Give dashboard users a read-only database role.

Unsure answers are stored as :data:`UNSURE` (2): events as usual, never in a
rate or a consensus vote (:meth:`LabelStore.labels` leaves them out unless
``include_unsure=True``), counted by :meth:`LabelStore.unsure_counts`.
Comments (one per annotator and unit) are ``comment`` events too.

Error analysis (schema 5): a whole response is a unit of kind ``response``
with the one dimension ``pass`` (its verdict, an ordinary label); its note is
its comment; failure-mode tags are ``tags`` events with a per-dataset
taxonomy that can be extended, renamed and merged without rewriting any event
(:mod:`.tags`).  Each dataset can carry versioned markdown guidelines, and
every event records the guidelines version it was made under (:mod:`.guidelines`).

Consensus is derived on demand (:meth:`LabelStore.consensus`, majority over
annotators, ties reported with status ``tie`` and no value) unless someone
adjudicated the item (:meth:`LabelStore.adjudicate`, status ``adjudicated``).
Adjudications are stored under the reserved name ``consensus``;
:data:`RESERVED_ANNOTATORS` (``consensus``, ``harness``) are never annotators
(:func:`check_annotator` refuses them, :meth:`LabelStore.annotators` hides them).

The store also keeps assignments (:class:`Assignment`: annotator queues and
calibration samples, see :mod:`playground.assign`) and imported datasets
(:meth:`LabelStore.put_dataset`, in one transaction with their labels).

Safety: a SQLite file deleted or replaced while open makes the next write
raise :class:`StoreGoneError` before anything is written; ``create=False``
never creates a file; a foreign SQLite database is never modified; a file on
read-only media opens read-only.

Stale labels: a label whose unit's text hash differs from the catalog's is
kept and reported (:meth:`LabelStore.stale`, reason ``changed``), as is one
whose unit vanished (``orphaned``); progress, consensus with a catalog,
exports with a catalog and golden exports never count them as current.
"""
from .core import (
    CONSENSUS_ANNOTATOR,
    ENV_VAR,
    MAX_NAME_LENGTH,
    RESERVED_ANNOTATORS,
    LabelStore,
    annotator_problem,
    check_annotator,
    default_db_path,
    majority,
    open_store,
    parse_url,
)
from .errors import (
    InvalidLabelError,
    LabelImportError,
    ReadOnlyStoreError,
    SchemaVersionError,
    StoreBusyError,
    StoreError,
    StoreGoneError,
)
from .io import (
    COLUMNS,
    EXPORT_COLUMNS,
    FORMATS,
    ConsensusExport,
    GoldenExport,
    consensus_export,
    export_golden,
    export_rows,
    export_table,
    format_bytes,
    format_rows,
    import_file,
    migrate_store,
    validate_file,
    write_export,
)
from .schema import CURRENT_VERSION
from .types import (
    ACTIONS,
    UNSURE,
    Assignment,
    CaseProgress,
    Comment,
    ConsensusRow,
    DatasetInfo,
    Event,
    FailureMode,
    Guidelines,
    ImportReport,
    Lesson,
    Progress,
    StaleLabel,
    StoredDataset,
    StoredLabel,
    UnitTags,
)

__all__ = [
    "ACTIONS",
    "COLUMNS",
    "CONSENSUS_ANNOTATOR",
    "CURRENT_VERSION",
    "ENV_VAR",
    "EXPORT_COLUMNS",
    "FORMATS",
    "MAX_NAME_LENGTH",
    "RESERVED_ANNOTATORS",
    "UNSURE",
    "Assignment",
    "CaseProgress",
    "Comment",
    "ConsensusExport",
    "ConsensusRow",
    "DatasetInfo",
    "Event",
    "FailureMode",
    "GoldenExport",
    "Guidelines",
    "ImportReport",
    "InvalidLabelError",
    "LabelImportError",
    "LabelStore",
    "Lesson",
    "Progress",
    "ReadOnlyStoreError",
    "SchemaVersionError",
    "StaleLabel",
    "StoreBusyError",
    "StoreError",
    "StoreGoneError",
    "StoredDataset",
    "StoredLabel",
    "UnitTags",
    "annotator_problem",
    "check_annotator",
    "consensus_export",
    "default_db_path",
    "export_golden",
    "export_rows",
    "export_table",
    "format_bytes",
    "format_rows",
    "import_file",
    "majority",
    "migrate_store",
    "open_store",
    "parse_url",
    "validate_file",
    "write_export",
]
