"""Schema of the label store, per dialect, and its forward migrations.

Tables (current version, :data:`CURRENT_VERSION` = 5):

``meta(key, value)``
    ``schema_version`` lives here.
``annotators(annotator_id, name UNIQUE, created_at)``
    One row per name, created on first use; names are stored verbatim.
``events(event_id, batch_id, annotator_id, unit_kind, unit_id, case_id, dimension,
old_value, new_value, old_text_hash, text_hash, action, undoes UNIQUE, created_at, note)``
    Append-only (triggers refuse UPDATE, DELETE and, on PostgreSQL, TRUNCATE).
    One row per change of one label.  ``batch_id`` is the first event id of
    the user action that wrote it; ``undoes`` the event an ``undo`` reverted;
    ``note`` optional free text given with the change (stored verbatim).
``labels(annotator_id, unit_id, dimension, unit_kind, case_id, value, text_hash,
updated_at, event_id)``
    The current-label view: one row per (annotator, unit, dimension) that has a
    value, written in the same transaction as its event; ``event_id`` is that
    event.  A cleared label has no row.  ``value`` is 1, 0 or 2 (unsure).
``comments(annotator_id, unit_id, unit_kind, case_id, text, updated_at, event_id)``
    The current comment of each (annotator, unit); a cleared comment has no row.
``assignments(name, kind, dataset, seed, overlap, queues, created_at)``
    Saved queues and calibration samples (``seed`` and ``queues`` as JSON).
``datasets(name, kind, payload, sha256, created_at)``
    Imported datasets, canonical JSON and its sha256.
``lessons(name, dataset, cases, responses, units, created_at)``
    Lessons: the cases, responses and ordered unit ids a class labels (JSON lists).
``tags(annotator_id, unit_id, unit_kind, case_id, dataset, tags, text_hash, updated_at, event_id)``
    The current failure-mode tag set of each (annotator, unit) as typed (a canonical JSON
    list of raw names); an empty set has no row.  Written with its ``tags`` event.
``failure_modes(dataset, name, description, created_by, created_at, merged_into, merged_by, merged_at)``
    The per-dataset taxonomy; a renamed or merged tag keeps its row with ``merged_into``
    naming where it went (tag events and notes are never rewritten).
``guidelines(dataset, version, markdown, author, created_at)``
    Every version of a dataset's labelling guidelines (1, 2, ...).

Version history:

1. ``meta``, ``annotators``, ``events(event_id, annotator_id, unit_kind, unit_id,
   dimension, old_value, new_value, text_hash, created_at)`` and
   ``labels(annotator_id, unit_kind, unit_id, dimension, value, text_hash,
   updated_at)``; timestamps from ``CURRENT_TIMESTAMP``.  Shipped below as
   :data:`V1_DDL`, the migrations' starting point.
2. Adds ``case_id`` (labels by case), ``action``, ``batch_id``, ``undoes`` and
   ``old_text_hash`` (undo that restores exactly), ``note``, ``labels.event_id``,
   append-only triggers, indexes, and canonical UTC ISO-8601 timestamps.

3. Unsure answers (value 2 in ``events`` and ``labels``), actions ``comment``
   (``dimension = ''``) and ``adjudicate``, and the ``comments``,
   ``assignments`` and ``datasets`` tables.  Version 2's tables are shipped
   as :func:`v2_ddl`.
4. The ``lessons`` table (issue 23); nothing else changes, so the migration
   only creates it.  Version 3's tables are shipped as :func:`v3_ddl`.
5. Error analysis and guidelines (issue 24): unit kind ``response`` with
   dimension ``pass``, action ``tags`` (dimension ``tags``, the new raw set in
   ``note`` as a JSON list; an ``undo`` of one has dimension ``tags`` too),
   ``events.guidelines_version``, and the ``tags``, ``failure_modes`` and
   ``guidelines`` tables.  Version 4's tables are shipped as :func:`v4_ddl`.

A migration is a function ``(backend, cursor) -> None`` run inside the same
write transaction that bumps ``schema_version``; on SQLite a copy of the file
is taken first (``<file>.schema<N>.bak``).
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Backend, Cursor

from ..model import DIMENSIONS, UNIT_KINDS

__all__ = [
    "CURRENT_VERSION", "MIGRATIONS", "TABLES", "V1_DDL", "canonical_timestamp", "case_id_from_unit_id",
    "current_ddl", "v2_ddl", "v3_ddl", "v4_ddl",
]

CURRENT_VERSION = 5
TABLES: tuple[str, ...] = ("meta", "annotators", "events", "labels", "comments", "assignments", "datasets",
                           "lessons", "tags", "failure_modes", "guidelines")

_KINDS = ", ".join(f"'{k}'" for k in UNIT_KINDS)
_DIMS = ", ".join(f"'{d}'" for d in DIMENSIONS)
_ACTIONS = "'set', 'clear', 'undo', 'import'"

# --- version 1 (the starting point of the migrations; never changed) -----------------------

V1_DDL: dict[str, list[str]] = {
    "sqlite": [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE annotators (annotator_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
        " created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)",
        "CREATE TABLE events (event_id INTEGER PRIMARY KEY,"
        " annotator_id INTEGER NOT NULL REFERENCES annotators(annotator_id),"
        " unit_kind TEXT NOT NULL, unit_id TEXT NOT NULL, dimension TEXT NOT NULL,"
        " old_value INTEGER, new_value INTEGER, text_hash TEXT NOT NULL,"
        " created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)",
        "CREATE TABLE labels (annotator_id INTEGER NOT NULL REFERENCES annotators(annotator_id),"
        " unit_kind TEXT NOT NULL, unit_id TEXT NOT NULL, dimension TEXT NOT NULL,"
        " value INTEGER NOT NULL, text_hash TEXT NOT NULL,"
        " updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,"
        " PRIMARY KEY (annotator_id, unit_id, dimension))",
        "INSERT INTO meta (key, value) VALUES ('schema_version', '1')",
    ],
    "postgresql": [
        "CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL)",
        "CREATE TABLE annotators (annotator_id bigserial PRIMARY KEY, name text NOT NULL UNIQUE,"
        " created_at timestamptz NOT NULL DEFAULT now())",
        "CREATE TABLE events (event_id bigserial PRIMARY KEY,"
        " annotator_id bigint NOT NULL REFERENCES annotators(annotator_id),"
        " unit_kind text NOT NULL, unit_id text NOT NULL, dimension text NOT NULL,"
        " old_value smallint, new_value smallint, text_hash text NOT NULL,"
        " created_at timestamptz NOT NULL DEFAULT now())",
        "CREATE TABLE labels (annotator_id bigint NOT NULL REFERENCES annotators(annotator_id),"
        " unit_kind text NOT NULL, unit_id text NOT NULL, dimension text NOT NULL,"
        " value smallint NOT NULL, text_hash text NOT NULL,"
        " updated_at timestamptz NOT NULL DEFAULT now(),"
        " PRIMARY KEY (annotator_id, unit_id, dimension))",
        "INSERT INTO meta (key, value) VALUES ('schema_version', '1')",
    ],
}

# --- version 2 (the starting point of the 2 -> 3 migration; never changed) ---------------

_TYPES = {
    "sqlite": {"id": "INTEGER PRIMARY KEY", "ref": "INTEGER", "int": "INTEGER", "text": "TEXT", "ts": "TEXT"},
    "postgresql": {"id": "bigserial PRIMARY KEY", "ref": "bigint", "int": "smallint", "text": "text",
                   "ts": "timestamptz"},
}


def _v2_tables(dialect: str) -> list[str]:
    t = _TYPES[dialect]
    return [
        f"CREATE TABLE events (event_id {t['id']}, batch_id {t['ref']} NOT NULL,"
        f" annotator_id {t['ref']} NOT NULL REFERENCES annotators(annotator_id),"
        f" unit_kind {t['text']} NOT NULL CHECK (unit_kind IN ({_KINDS})),"
        f" unit_id {t['text']} NOT NULL, case_id {t['text']} NOT NULL,"
        f" dimension {t['text']} NOT NULL CHECK (dimension IN ({_DIMS})),"
        f" old_value {t['int']} CHECK (old_value IN (0, 1)),"
        f" new_value {t['int']} CHECK (new_value IN (0, 1)),"
        f" old_text_hash {t['text']}, text_hash {t['text']} NOT NULL,"
        f" action {t['text']} NOT NULL CHECK (action IN ({_ACTIONS})),"
        f" undoes {t['ref']} UNIQUE REFERENCES events(event_id),"
        f" created_at {t['ts']} NOT NULL, note {t['text']})",
        "CREATE INDEX events_by_unit ON events (unit_id, dimension, event_id)",
        "CREATE INDEX events_by_annotator ON events (annotator_id, event_id)",
        f"CREATE TABLE labels (annotator_id {t['ref']} NOT NULL REFERENCES annotators(annotator_id),"
        f" unit_id {t['text']} NOT NULL,"
        f" dimension {t['text']} NOT NULL CHECK (dimension IN ({_DIMS})),"
        f" unit_kind {t['text']} NOT NULL CHECK (unit_kind IN ({_KINDS})),"
        f" case_id {t['text']} NOT NULL,"
        f" value {t['int']} NOT NULL CHECK (value IN (0, 1)),"
        f" text_hash {t['text']} NOT NULL, updated_at {t['ts']} NOT NULL,"
        f" event_id {t['ref']} NOT NULL REFERENCES events(event_id),"
        " PRIMARY KEY (annotator_id, unit_id, dimension))",
        "CREATE INDEX labels_by_unit ON labels (unit_id, dimension)",
        "CREATE INDEX labels_by_case ON labels (case_id)",
    ]


def _v2_triggers(dialect: str) -> list[str]:
    if dialect == "sqlite":
        return [
            "CREATE TRIGGER events_no_update BEFORE UPDATE ON events"
            " BEGIN SELECT RAISE(ABORT, 'events are append-only'); END",
            "CREATE TRIGGER events_no_delete BEFORE DELETE ON events"
            " BEGIN SELECT RAISE(ABORT, 'events are append-only'); END",
        ]
    return [
        "CREATE FUNCTION playground_events_append_only() RETURNS trigger LANGUAGE plpgsql AS"
        " $fn$ BEGIN RAISE EXCEPTION 'events are append-only'; END $fn$",
        "CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events"
        " FOR EACH ROW EXECUTE FUNCTION playground_events_append_only()",
        "CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events"
        " FOR EACH STATEMENT EXECUTE FUNCTION playground_events_append_only()",
    ]


def _meta_and_annotators(dialect: str) -> list[str]:
    """``meta`` and ``annotators`` as versions 2, 3 and 4 create them (unchanged since version 2)."""
    t = _TYPES[dialect]
    return [
        f"CREATE TABLE meta (key {t['text']} PRIMARY KEY, value {t['text']} NOT NULL)",
        f"CREATE TABLE annotators (annotator_id {t['id']}, name {t['text']} NOT NULL UNIQUE,"
        f" created_at {t['ts']} NOT NULL)",
    ]


def v2_ddl(dialect: str) -> list[str]:
    """Statements that create an empty version-2 store (for migration tests; never changed)."""
    return [
        *_meta_and_annotators(dialect),
        *_v2_tables(dialect),
        *_v2_triggers(dialect),
        "INSERT INTO meta (key, value) VALUES ('schema_version', '2')",
    ]


# --- version 3 (the starting point of the 3 -> 4 migration; never changed) ---------------

_V3_ACTIONS = "'set', 'clear', 'undo', 'import', 'comment', 'adjudicate'"


def _v3_label_tables(dialect: str) -> list[str]:
    t = _TYPES[dialect]
    return [
        f"CREATE TABLE events (event_id {t['id']}, batch_id {t['ref']} NOT NULL,"
        f" annotator_id {t['ref']} NOT NULL REFERENCES annotators(annotator_id),"
        f" unit_kind {t['text']} NOT NULL CHECK (unit_kind IN ({_KINDS})),"
        f" unit_id {t['text']} NOT NULL, case_id {t['text']} NOT NULL,"
        f" dimension {t['text']} NOT NULL CHECK (dimension IN ({_DIMS}) OR (action = 'comment' AND dimension = '')),"
        f" old_value {t['int']} CHECK (old_value IN (0, 1, 2)),"
        f" new_value {t['int']} CHECK (new_value IN (0, 1, 2)),"
        f" old_text_hash {t['text']}, text_hash {t['text']} NOT NULL,"
        f" action {t['text']} NOT NULL CHECK (action IN ({_V3_ACTIONS})),"
        f" undoes {t['ref']} UNIQUE REFERENCES events(event_id),"
        f" created_at {t['ts']} NOT NULL, note {t['text']})",
        "CREATE INDEX events_by_unit ON events (unit_id, dimension, event_id)",
        "CREATE INDEX events_by_annotator ON events (annotator_id, event_id)",
        f"CREATE TABLE labels (annotator_id {t['ref']} NOT NULL REFERENCES annotators(annotator_id),"
        f" unit_id {t['text']} NOT NULL,"
        f" dimension {t['text']} NOT NULL CHECK (dimension IN ({_DIMS})),"
        f" unit_kind {t['text']} NOT NULL CHECK (unit_kind IN ({_KINDS})),"
        f" case_id {t['text']} NOT NULL,"
        f" value {t['int']} NOT NULL CHECK (value IN (0, 1, 2)),"
        f" text_hash {t['text']} NOT NULL, updated_at {t['ts']} NOT NULL,"
        f" event_id {t['ref']} NOT NULL REFERENCES events(event_id),"
        " PRIMARY KEY (annotator_id, unit_id, dimension))",
        "CREATE INDEX labels_by_unit ON labels (unit_id, dimension)",
        "CREATE INDEX labels_by_case ON labels (case_id)",
    ]


def _v3_new_tables(dialect: str) -> list[str]:
    t = _TYPES[dialect]
    return [
        f"CREATE TABLE comments (annotator_id {t['ref']} NOT NULL REFERENCES annotators(annotator_id),"
        f" unit_id {t['text']} NOT NULL,"
        f" unit_kind {t['text']} NOT NULL CHECK (unit_kind IN ({_KINDS})),"
        f" case_id {t['text']} NOT NULL, text {t['text']} NOT NULL, updated_at {t['ts']} NOT NULL,"
        f" event_id {t['ref']} NOT NULL REFERENCES events(event_id),"
        " PRIMARY KEY (annotator_id, unit_id))",
        f"CREATE TABLE assignments (name {t['text']} PRIMARY KEY,"
        f" kind {t['text']} NOT NULL CHECK (kind IN ('queue', 'calibration_sample')),"
        f" dataset {t['text']} NOT NULL, seed {t['text']} NOT NULL, overlap {t['int']} NOT NULL,"
        f" queues {t['text']} NOT NULL, created_at {t['ts']} NOT NULL)",
        f"CREATE TABLE datasets (name {t['text']} PRIMARY KEY, kind {t['text']} NOT NULL,"
        f" payload {t['text']} NOT NULL, sha256 {t['text']} NOT NULL, created_at {t['ts']} NOT NULL)",
    ]


def _v3_triggers(dialect: str) -> list[str]:
    if dialect == "sqlite":
        return _v2_triggers(dialect)
    return [_v2_triggers(dialect)[0].replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1),
            *_v2_triggers(dialect)[1:]]


def v3_ddl(dialect: str) -> list[str]:
    """Statements that create an empty version-3 store (for migration tests; never changed)."""
    return [
        *_meta_and_annotators(dialect),
        *_v3_label_tables(dialect),
        *_v3_new_tables(dialect),
        *_v3_triggers(dialect),
        "INSERT INTO meta (key, value) VALUES ('schema_version', '3')",
    ]


# --- version 4 (the starting point of the 4 -> 5 migration; never changed) -----------------


def _v4_new_tables(dialect: str) -> list[str]:
    t = _TYPES[dialect]
    return [
        f"CREATE TABLE lessons (name {t['text']} PRIMARY KEY, dataset {t['text']} NOT NULL,"
        f" cases {t['text']} NOT NULL, responses {t['text']} NOT NULL, units {t['text']} NOT NULL,"
        f" created_at {t['ts']} NOT NULL)",
    ]


def v4_ddl(dialect: str) -> list[str]:
    """Statements that create an empty version-4 store (for migration tests; never changed)."""
    return [
        *v3_ddl(dialect)[:-1],
        *_v4_new_tables(dialect),
        "INSERT INTO meta (key, value) VALUES ('schema_version', '4')",
    ]


# --- version 5 (current) -------------------------------------------------------------------

_V5_KINDS = ", ".join(f"'{k}'" for k in (*UNIT_KINDS, "response"))
_V5_DIMS = ", ".join(f"'{d}'" for d in (*DIMENSIONS, "pass"))
_V5_ACTIONS = "'set', 'clear', 'undo', 'import', 'comment', 'adjudicate', 'tags'"


def _v5_label_tables(dialect: str) -> list[str]:
    """``events``, ``labels`` and ``comments`` of version 5: response units, ``pass``, tag events and
    guideline versions."""
    t = _TYPES[dialect]
    return [
        f"CREATE TABLE events (event_id {t['id']}, batch_id {t['ref']} NOT NULL,"
        f" annotator_id {t['ref']} NOT NULL REFERENCES annotators(annotator_id),"
        f" unit_kind {t['text']} NOT NULL CHECK (unit_kind IN ({_V5_KINDS})),"
        f" unit_id {t['text']} NOT NULL, case_id {t['text']} NOT NULL,"
        f" dimension {t['text']} NOT NULL CHECK (dimension IN ({_V5_DIMS}) OR (action = 'comment' AND dimension = '')"
        " OR (action IN ('tags', 'undo') AND dimension = 'tags')),"
        f" old_value {t['int']} CHECK (old_value IN (0, 1, 2)),"
        f" new_value {t['int']} CHECK (new_value IN (0, 1, 2)),"
        f" old_text_hash {t['text']}, text_hash {t['text']} NOT NULL,"
        f" action {t['text']} NOT NULL CHECK (action IN ({_V5_ACTIONS})),"
        f" undoes {t['ref']} UNIQUE REFERENCES events(event_id),"
        f" created_at {t['ts']} NOT NULL, note {t['text']}, guidelines_version {t['ref']})",
        "CREATE INDEX events_by_unit ON events (unit_id, dimension, event_id)",
        "CREATE INDEX events_by_annotator ON events (annotator_id, event_id)",
        f"CREATE TABLE labels (annotator_id {t['ref']} NOT NULL REFERENCES annotators(annotator_id),"
        f" unit_id {t['text']} NOT NULL,"
        f" dimension {t['text']} NOT NULL CHECK (dimension IN ({_V5_DIMS})),"
        f" unit_kind {t['text']} NOT NULL CHECK (unit_kind IN ({_V5_KINDS})),"
        f" case_id {t['text']} NOT NULL,"
        f" value {t['int']} NOT NULL CHECK (value IN (0, 1, 2)),"
        f" text_hash {t['text']} NOT NULL, updated_at {t['ts']} NOT NULL,"
        f" event_id {t['ref']} NOT NULL REFERENCES events(event_id),"
        " PRIMARY KEY (annotator_id, unit_id, dimension))",
        "CREATE INDEX labels_by_unit ON labels (unit_id, dimension)",
        "CREATE INDEX labels_by_case ON labels (case_id)",
        f"CREATE TABLE comments (annotator_id {t['ref']} NOT NULL REFERENCES annotators(annotator_id),"
        f" unit_id {t['text']} NOT NULL,"
        f" unit_kind {t['text']} NOT NULL CHECK (unit_kind IN ({_V5_KINDS})),"
        f" case_id {t['text']} NOT NULL, text {t['text']} NOT NULL, updated_at {t['ts']} NOT NULL,"
        f" event_id {t['ref']} NOT NULL REFERENCES events(event_id),"
        " PRIMARY KEY (annotator_id, unit_id))",
    ]


def _v5_new_tables(dialect: str) -> list[str]:
    """``tags`` (current tag sets), ``failure_modes`` (the taxonomy) and ``guidelines`` (versions)."""
    t = _TYPES[dialect]
    return [
        f"CREATE TABLE tags (annotator_id {t['ref']} NOT NULL REFERENCES annotators(annotator_id),"
        f" unit_id {t['text']} NOT NULL,"
        f" unit_kind {t['text']} NOT NULL CHECK (unit_kind IN ({_V5_KINDS})),"
        f" case_id {t['text']} NOT NULL, dataset {t['text']} NOT NULL, tags {t['text']} NOT NULL,"
        f" text_hash {t['text']} NOT NULL, updated_at {t['ts']} NOT NULL,"
        f" event_id {t['ref']} NOT NULL REFERENCES events(event_id),"
        " PRIMARY KEY (annotator_id, unit_id))",
        "CREATE INDEX tags_by_dataset ON tags (dataset, unit_id)",
        f"CREATE TABLE failure_modes (dataset {t['text']} NOT NULL, name {t['text']} NOT NULL,"
        f" description {t['text']} NOT NULL, created_by {t['text']} NOT NULL, created_at {t['ts']} NOT NULL,"
        f" merged_into {t['text']}, merged_by {t['text']}, merged_at {t['ts']},"
        " PRIMARY KEY (dataset, name))",
        f"CREATE TABLE guidelines (dataset {t['text']} NOT NULL, version {t['ref']} NOT NULL CHECK (version >= 1),"
        f" markdown {t['text']} NOT NULL, author {t['text']} NOT NULL, created_at {t['ts']} NOT NULL,"
        " PRIMARY KEY (dataset, version))",
    ]


def current_ddl(dialect: str) -> list[str]:
    """Statements that create an empty store at :data:`CURRENT_VERSION` (``meta`` row included)."""
    return [
        *_meta_and_annotators(dialect),
        *_v5_label_tables(dialect),
        *_v3_new_tables(dialect)[1:],  # assignments, datasets (unchanged since version 3)
        *_v4_new_tables(dialect),
        *_v5_new_tables(dialect),
        *_v3_triggers(dialect),
        f"INSERT INTO meta (key, value) VALUES ('schema_version', '{CURRENT_VERSION}')",
    ]


# --- helpers ---------------------------------------------------------------------------------


def canonical_timestamp(value: object) -> str:
    """A timestamp as the store spells it: UTC, ISO 8601, microseconds, ``+00:00``.

    Accepts ``datetime`` (naive means UTC) and the strings SQLite and
    PostgreSQL produce (``2024-05-01 12:00:00``, ``...T...Z``, with offset).
    """
    if isinstance(value, datetime):
        dt = value
    else:
        text = str(value).strip().replace("Z", "+00:00")
        dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


def case_id_from_unit_id(unit_kind: str, unit_id: str) -> str:
    """Best-effort case id from a unit id, by the id scheme of :mod:`playground.model`.

    Used only to backfill ``case_id`` when migrating version-1 stores (which did
    not record it); new labels take the case id from their :class:`Unit`.
    """
    if unit_kind == "passage":
        return unit_id.split("::", 1)[0]
    if unit_kind == "claim":
        response_id = unit_id.rsplit(":", 2)[0] if unit_id.count(":") >= 2 else unit_id
    else:
        response_id = unit_id.split("::", 1)[0]
    return response_id.rsplit("-R", 1)[0] if "-R" in response_id else response_id


# --- migrations --------------------------------------------------------------------------------


def _migrate_1_to_2(backend: Backend, cur: Cursor) -> None:
    """Version 1 → 2: rebuild ``events`` and ``labels`` with the new columns, keep every row."""
    dialect = backend.dialect
    cur.execute(
        "SELECT event_id, annotator_id, unit_kind, unit_id, dimension, old_value, new_value, text_hash, created_at"
        " FROM events ORDER BY event_id"
    )
    old_events = cur.fetchall()
    cur.execute("SELECT annotator_id, unit_kind, unit_id, dimension, value, text_hash, updated_at FROM labels")
    old_labels = cur.fetchall()
    cur.execute("SELECT annotator_id, created_at FROM annotators")
    annotators = cur.fetchall()
    cur.execute("DROP TABLE labels")
    cur.execute("DROP TABLE events")
    for stmt in _v2_tables(dialect):
        cur.execute(stmt)
    if dialect == "sqlite":  # v1 wrote CURRENT_TIMESTAMP ('YYYY-MM-DD HH:MM:SS'); make them canonical
        cur.executemany(
            "UPDATE annotators SET created_at = ? WHERE annotator_id = ?",
            [(canonical_timestamp(ts), aid) for aid, ts in annotators],
        )

    events, last = _v2_events(backend, old_events)
    labels = _v2_labels(backend, old_labels, events, last)
    cur.executemany(
        "INSERT INTO events (event_id, batch_id, annotator_id, unit_kind, unit_id, case_id, dimension,"
        " old_value, new_value, old_text_hash, text_hash, action, undoes, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        events,
    )
    cur.executemany(
        "INSERT INTO labels (annotator_id, unit_id, dimension, unit_kind, case_id, value, text_hash,"
        " updated_at, event_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        labels,
    )
    for stmt in _v2_triggers(dialect):
        cur.execute(stmt)
    backend.reset_sequences(cur)


def _v2_events(backend: Backend, old_events: list[tuple[Any, ...]]
               ) -> tuple[list[tuple[Any, ...]], dict[tuple[Any, ...], tuple[Any, ...]]]:
    """Version-2 rows of the version-1 events (their own batch; ``old_text_hash`` from the previous event of the
    label), and ``{(annotator_id, unit_id, dimension): (event_id, new_value, text_hash)}`` of each label's last."""
    events: list[tuple[Any, ...]] = []
    last: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # key -> (event_id, new_value, text_hash)
    for eid, aid, kind, uid, dim, old, new, thash, created in old_events:
        key = (aid, uid, dim)
        prev = last.get(key)
        old_hash = prev[2] if (prev is not None and old is not None) else (thash if old is not None else None)
        events.append((
            eid, eid, aid, kind, uid, case_id_from_unit_id(kind, uid), dim, old, new, old_hash, thash,
            "clear" if new is None else "set", None, backend.ts_in(canonical_timestamp(created)),
        ))
        last[key] = (eid, new, thash)
    return events, last


def _v2_labels(backend: Backend, old_labels: list[tuple[Any, ...]], events: list[tuple[Any, ...]],
               last: dict[tuple[Any, ...], tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Version-2 rows of the version-1 labels, each pointing at its last event; a label its last event does not
    explain gets an ``import`` event appended to ``events`` (ids after the last one)."""
    next_id = (events[-1][0] if events else 0) + 1
    labels: list[tuple[Any, ...]] = []
    for aid, kind, uid, dim, value, thash, updated in old_labels:
        key = (aid, uid, dim)
        prev = last.get(key)
        updated_ts = backend.ts_in(canonical_timestamp(updated))
        if prev is None or prev[1] != value or prev[2] != thash:
            # A label without a matching last event (should not happen): keep it, and record
            # an event so the log and the current view agree again.
            events.append((
                next_id, next_id, aid, kind, uid, case_id_from_unit_id(kind, uid), dim,
                prev[1] if prev else None, value, prev[2] if prev and prev[1] is not None else None,
                thash, "import", None, updated_ts,
            ))
            prev = (next_id, value, thash)
            last[key] = prev
            next_id += 1
        labels.append((aid, uid, dim, kind, case_id_from_unit_id(kind, uid), value, thash, updated_ts, prev[0]))
    return labels


_V2_EVENTS = ("event_id, batch_id, annotator_id, unit_kind, unit_id, case_id, dimension, old_value, new_value,"
              " old_text_hash, text_hash, action, undoes, created_at, note")
_V2_LABELS = "annotator_id, unit_id, dimension, unit_kind, case_id, value, text_hash, updated_at, event_id"
_V3_COMMENTS = "annotator_id, unit_id, unit_kind, case_id, text, updated_at, event_id"


def _migrate_2_to_3(backend: Backend, cur: Cursor) -> None:
    """Version 2 → 3: rebuild ``events`` and ``labels`` with the wider checks, keep every row; add tables.

    A rebuild rather than ``ALTER``: SQLite cannot change a CHECK constraint in
    place.  Rows are copied verbatim (ids, timestamps, values).
    """
    dialect = backend.dialect
    events = cur.execute(f"SELECT {_V2_EVENTS} FROM events ORDER BY event_id").fetchall()
    labels = cur.execute(f"SELECT {_V2_LABELS} FROM labels").fetchall()
    cur.execute("DROP TABLE labels")
    cur.execute("DROP TABLE events")
    for stmt in _v3_label_tables(dialect) + _v3_new_tables(dialect):
        cur.execute(stmt)
    cur.executemany(f"INSERT INTO events ({_V2_EVENTS}) VALUES ({', '.join('?' * 15)})", events)
    cur.executemany(f"INSERT INTO labels ({_V2_LABELS}) VALUES ({', '.join('?' * 9)})", labels)
    for stmt in _v3_triggers(dialect):
        cur.execute(stmt)
    backend.reset_sequences(cur)


def _migrate_3_to_4(backend: Backend, cur: Cursor) -> None:
    """Version 3 → 4: add the ``lessons`` table; every other table and row stays as it is."""
    for stmt in _v4_new_tables(backend.dialect):
        cur.execute(stmt)


def _migrate_4_to_5(backend: Backend, cur: Cursor) -> None:
    """Version 4 → 5: rebuild ``events``, ``labels`` and ``comments`` with the wider checks (response units,
    ``pass``, ``tags`` events) and the new ``events.guidelines_version`` (NULL on every old event: no
    guidelines existed); add ``tags``, ``failure_modes`` and ``guidelines``.  Rows are copied verbatim."""
    dialect = backend.dialect
    events = cur.execute(f"SELECT {_V2_EVENTS} FROM events ORDER BY event_id").fetchall()
    labels = cur.execute(f"SELECT {_V2_LABELS} FROM labels").fetchall()
    comments = cur.execute(f"SELECT {_V3_COMMENTS} FROM comments").fetchall()
    for table in ("comments", "labels", "events"):
        cur.execute(f"DROP TABLE {table}")
    for stmt in _v5_label_tables(dialect) + _v5_new_tables(dialect):
        cur.execute(stmt)
    cur.executemany(f"INSERT INTO events ({_V2_EVENTS}) VALUES ({', '.join('?' * 15)})", events)
    cur.executemany(f"INSERT INTO labels ({_V2_LABELS}) VALUES ({', '.join('?' * 9)})", labels)
    cur.executemany(f"INSERT INTO comments ({_V3_COMMENTS}) VALUES ({', '.join('?' * 7)})", comments)
    for stmt in _v3_triggers(dialect):
        cur.execute(stmt)
    backend.reset_sequences(cur)


#: Ordered forward migrations: ``(target_version, function)``; each takes the store from
#: ``target_version - 1`` to ``target_version``.
MIGRATIONS: list[tuple[int, Callable[[Backend, Cursor], None]]] = [
    (2, _migrate_1_to_2),
    (3, _migrate_2_to_3),
    (4, _migrate_3_to_4),
    (5, _migrate_4_to_5),
]
assert [v for v, _ in MIGRATIONS] == list(range(2, CURRENT_VERSION + 1))
