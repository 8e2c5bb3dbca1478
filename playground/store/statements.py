"""The SQL statements several store modules share, written once with ``?`` placeholders (see :mod:`.base`).

Column lists follow :mod:`.schema` (version 5): ``events`` ends with
``guidelines_version``; :data:`DUMP` lists every table, ordered by primary key,
with the positions of its timestamp columns (:meth:`LabelStore.dump`).
"""
from __future__ import annotations

__all__ = [
    "DELETE_LABEL", "DUMP", "EVENT_COLUMNS", "INSERT_EVENT", "LESSON_COLUMNS", "UPSERT_COMMENT", "UPSERT_LABEL",
    "UPSERT_TAGS",
]

#: An event row as :meth:`LabelStore._event` reads it (``e`` events joined with ``a`` annotators).
EVENT_COLUMNS = (
    "e.event_id, a.name, e.unit_kind, e.unit_id, e.dimension, e.old_value, e.new_value, e.text_hash,"
    " e.created_at, e.action, e.case_id, e.old_text_hash, e.batch_id, e.undoes, e.note, e.guidelines_version"
)
UPSERT_LABEL = (
    "INSERT INTO labels (annotator_id, unit_id, dimension, unit_kind, case_id, value, text_hash, updated_at, event_id)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (annotator_id, unit_id, dimension) DO UPDATE SET unit_kind = excluded.unit_kind,"
    " case_id = excluded.case_id, value = excluded.value, text_hash = excluded.text_hash,"
    " updated_at = excluded.updated_at, event_id = excluded.event_id"
)
INSERT_EVENT = (
    "INSERT INTO events (event_id, batch_id, annotator_id, unit_kind, unit_id, case_id, dimension,"
    " old_value, new_value, old_text_hash, text_hash, action, undoes, created_at, note, guidelines_version)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
DELETE_LABEL = "DELETE FROM labels WHERE annotator_id = ? AND unit_id = ? AND dimension = ?"
UPSERT_COMMENT = (
    "INSERT INTO comments (annotator_id, unit_id, unit_kind, case_id, text, updated_at, event_id)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (annotator_id, unit_id) DO UPDATE SET unit_kind = excluded.unit_kind,"
    " case_id = excluded.case_id, text = excluded.text, updated_at = excluded.updated_at,"
    " event_id = excluded.event_id"
)
#: The current tag set of one (annotator, unit): ``tags`` is the canonical JSON list of the raw names.
UPSERT_TAGS = (
    "INSERT INTO tags (annotator_id, unit_id, unit_kind, case_id, dataset, tags, text_hash, updated_at, event_id)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (annotator_id, unit_id) DO UPDATE SET unit_kind = excluded.unit_kind,"
    " case_id = excluded.case_id, dataset = excluded.dataset, tags = excluded.tags,"
    " text_hash = excluded.text_hash, updated_at = excluded.updated_at, event_id = excluded.event_id"
)
LESSON_COLUMNS = "name, dataset, cases, responses, units, created_at"
#: Full-table dumps, ordered by primary key (timestamps at these column positions).
DUMP: dict[str, tuple[str, tuple[int, ...]]] = {
    "meta": ("SELECT key, value FROM meta ORDER BY key", ()),
    "annotators": ("SELECT annotator_id, name, created_at FROM annotators ORDER BY annotator_id", (2,)),
    "events": (
        "SELECT event_id, batch_id, annotator_id, unit_kind, unit_id, case_id, dimension, old_value, new_value,"
        " old_text_hash, text_hash, action, undoes, created_at, note, guidelines_version FROM events"
        " ORDER BY event_id",
        (13,),
    ),
    "labels": (
        "SELECT annotator_id, unit_id, dimension, unit_kind, case_id, value, text_hash, updated_at, event_id"
        " FROM labels ORDER BY annotator_id, unit_id, dimension",
        (7,),
    ),
    "comments": (
        "SELECT annotator_id, unit_id, unit_kind, case_id, text, updated_at, event_id FROM comments"
        " ORDER BY annotator_id, unit_id",
        (5,),
    ),
    "tags": (
        "SELECT annotator_id, unit_id, unit_kind, case_id, dataset, tags, text_hash, updated_at, event_id FROM tags"
        " ORDER BY annotator_id, unit_id",
        (7,),
    ),
    "failure_modes": (
        "SELECT dataset, name, description, created_by, created_at, merged_into, merged_by, merged_at"
        " FROM failure_modes ORDER BY dataset, name",
        (4, 7),
    ),
    "guidelines": (
        "SELECT dataset, version, markdown, author, created_at FROM guidelines ORDER BY dataset, version", (4,),
    ),
    "assignments": (
        "SELECT name, kind, dataset, seed, overlap, queues, created_at FROM assignments ORDER BY name", (6,),
    ),
    "datasets": ("SELECT name, kind, payload, sha256, created_at FROM datasets ORDER BY name", (4,)),
    "lessons": ("SELECT name, dataset, cases, responses, units, created_at FROM lessons ORDER BY name", (5,)),
}
