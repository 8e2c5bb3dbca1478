"""The label store: one interface, SQLite or PostgreSQL behind it (see :mod:`playground.store`)."""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..model import DIMENSIONS, Unit
from .base import Backend, Cursor
from .checks import (
    APP_NAME,
    CONSENSUS_ANNOTATOR,
    ENV_VAR,
    MAX_COMMENT_LENGTH,
    MAX_NAME_LENGTH,
    MAX_NOTE_LENGTH,
    RESERVED_ANNOTATORS,
    TAGS_DIMENSION,
    annotator_problem,
    canonical_json,
    check_annotator,
    check_comment,
    check_note,
    check_unit,
    check_unit_identity,
    check_value,
    dataset_info,
    dataset_of_case,
)
from .errors import InvalidLabelError, ReadOnlyStoreError, SchemaVersionError, StoreError
from .guidelines import GuidelinesMixin, guidelines_now
from .schema import CURRENT_VERSION, MIGRATIONS, TABLES, current_ddl
from .statements import (
    DELETE_LABEL,
    DUMP,
    EVENT_COLUMNS,
    INSERT_EVENT,
    LESSON_COLUMNS,
    UPSERT_COMMENT,
    UPSERT_LABEL,
    UPSERT_TAGS,
)
from .tags import TagsMixin
from .types import (
    ASSIGNMENT_KINDS,
    UNSURE,
    Assignment,
    CaseProgress,
    Comment,
    ConsensusRow,
    DatasetInfo,
    Event,
    Lesson,
    Progress,
    StaleLabel,
    StoredDataset,
    StoredLabel,
)

__all__ = [
    "APP_NAME", "CONSENSUS_ANNOTATOR", "ENV_VAR", "MAX_COMMENT_LENGTH", "MAX_NAME_LENGTH", "MAX_NOTE_LENGTH",
    "RESERVED_ANNOTATORS", "LabelStore", "annotator_problem", "canonical_json", "check_annotator", "check_comment",
    "check_note",
    "check_unit", "check_value", "default_db_path", "majority", "open_store", "parse_url",
]

T = TypeVar("T")

_ADJUDICATED_BY = "adjudicated by "


def majority(yes: int, no: int) -> tuple[int | None, str]:
    """``(value, status)`` of a vote: status ``single``, ``unanimous``, ``majority`` or ``tie`` (value None)."""
    if yes == no:
        return None, "tie"
    value = 1 if yes > no else 0
    return value, "single" if yes + no == 1 else ("unanimous" if min(yes, no) == 0 else "majority")


class LabelStore(TagsMixin, GuidelinesMixin):
    """Annotators, their labels and every change to them (see the package docstring).

    Open with :func:`open_store`; one store object per process (it owns one
    connection).  Use as a context manager or call :meth:`close`.
    """

    def __init__(self, backend: Backend, *, create: bool = True):
        self._b = backend
        self.read_only = backend.read_only
        self._create = create
        #: name -> annotator_id of annotators seen in committed transactions (rows are never deleted).
        self._annotator_ids: dict[str, int] = {}
        self.schema_version = self._prepare_schema()

    # --- basics ---------------------------------------------------------------------------------
    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._b.dialect

    @property
    def url(self) -> str:
        """Where the store lives (passwords redacted)."""
        return self._b.display

    def close(self) -> None:
        self._b.close()

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LabelStore({self.url!r}{', read_only=True' if self.read_only else ''})"

    def _write(self, fn: Callable[[Cursor], T]) -> T:
        if self.read_only:
            raise ReadOnlyStoreError(f"the label store {self.url} is open read-only; nothing was written")
        return self._b.write(fn)

    # --- schema ----------------------------------------------------------------------------------
    @staticmethod
    def _version(cur: Cursor, tables: set[str], where: str) -> int | None:
        if "meta" not in tables:
            ours = tables & set(TABLES)
            if ours:
                raise StoreError(f"{where} has tables {sorted(ours)} but no schema version: not a label store")
            return None
        raw = cur.scalar("SELECT value FROM meta WHERE key = 'schema_version'")
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise StoreError(f"{where}: unreadable schema version {raw!r}") from None

    def _prepare_schema(self) -> int:
        b = self._b

        def inspect(cur: Cursor) -> tuple[set[str], int | None]:
            tables = b.table_names(cur)
            return tables, self._version(cur, tables, b.display)

        tables, version = b.read(inspect)
        if version is not None and version > CURRENT_VERSION:
            raise SchemaVersionError(version, CURRENT_VERSION)
        if version == CURRENT_VERSION:
            return version
        if version is None and not self._create:
            raise StoreError(f"no label store at {b.display} (it is empty) and creating one was not asked for")
        if self.read_only:
            if version is None:
                raise StoreError(f"{b.display} is not a label store yet (it is empty) and it is open read-only")
            raise StoreError(
                f"the label store {b.display} is at schema {version} and needs migrating to {CURRENT_VERSION}; "
                "open it once without read-only to migrate it"
            )
        if version is None and b.dialect == "sqlite" and tables:
            raise StoreError(f"{b.display} is a SQLite database but not a label store "
                             f"(tables: {', '.join(sorted(tables))})")
        if version is not None:
            b.before_migration(version)

        def upgrade(cur: Cursor) -> int:
            b.lock_schema(cur)
            tables = b.table_names(cur)
            found = self._version(cur, tables, b.display)  # again, inside the lock: another process may have done it
            if found is None:
                for stmt in current_ddl(b.dialect):
                    cur.execute(stmt)
                return CURRENT_VERSION
            if found > CURRENT_VERSION:
                raise SchemaVersionError(found, CURRENT_VERSION)
            for target, migrate in MIGRATIONS:
                if target > found:
                    migrate(b, cur)
                    cur.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(target),))
            return CURRENT_VERSION

        return b.write(upgrade)

    # --- annotators ---------------------------------------------------------------------------------
    def _annotator_id(self, cur: Cursor, name: str, create: bool) -> int | None:
        cached = self._annotator_ids.get(name)
        if cached is not None:
            return cached
        aid = cur.scalar("SELECT annotator_id FROM annotators WHERE name = ?", (name,))
        if aid is None and create:
            cur.execute(
                "INSERT INTO annotators (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                (name, self._b.now(cur)),
            )
            aid = cur.scalar("SELECT annotator_id FROM annotators WHERE name = ?", (name,))
        return None if aid is None else int(aid)

    def annotators(self) -> list[str]:
        """Every annotator name ever used, sorted; the reserved names (:data:`RESERVED_ANNOTATORS`) never."""
        names = self._b.read(lambda cur: [r[0] for r in cur.execute("SELECT name FROM annotators").fetchall()])
        return sorted(n for n in names if n not in RESERVED_ANNOTATORS)

    # --- writing --------------------------------------------------------------------------------------
    def _event(self, row: tuple[Any, ...]) -> Event:
        (eid, name, kind, uid, dim, old, new, thash, created, action, case_id, old_hash, batch, undoes, note,
         gv) = row
        return Event(eid, name, kind, uid, dim, old, new, thash, self._b.ts_out(created), action, case_id,
                     old_hash, batch, undoes, note, None if gv is None else int(gv))

    def _append(self, cur: Cursor, aid: int, name: str, kind: str, uid: str, case_id: str, dim: str,
                old: tuple[int | None, str | None], new_value: int | None, new_hash: str, action: str,
                undoes: int | None = None, note: str | None = None, dataset: str | None = None) -> Event:
        """Append one event (its own batch) and bring the current-label row in line with it."""
        b = self._b
        gv = guidelines_now(cur, dataset or dataset_of_case(case_id))
        now, eid = b.stamp(cur)  # after the annotator lock: later writers get later times and ids
        batch = eid
        cur.execute(INSERT_EVENT, (eid, batch, aid, kind, uid, case_id, dim, old[0], new_value, old[1], new_hash,
                                    action, undoes, now, note, gv))
        if new_value is None:
            cur.execute(DELETE_LABEL, (aid, uid, dim))
        else:
            cur.execute(UPSERT_LABEL, (aid, uid, dim, kind, case_id, new_value, new_hash, now, eid))
        return Event(eid, name, kind, uid, dim, old[0], new_value, new_hash, b.ts_out(now), action, case_id,
                     old[1], batch, undoes, note, gv)

    def set_label(self, annotator: str, unit: Unit, dimension: str, value: int | None, *,
                  note: str | None = None, dataset: str | None = None) -> Event | None:
        """Set (1/0/:data:`UNSURE`) or clear (``None``) ``annotator``'s label of ``unit`` on ``dimension``.

        One transaction: the event and the current label are written together,
        durably, before this returns.  The unit's ``text_hash`` is stored with
        the label.  Returns the new :class:`Event`, or ``None`` when nothing
        changed: the same value on the same text again, or clearing a label
        that is not there.  Setting the same value on a unit whose text changed
        is a change (it re-confirms a stale label on the new text).  ``note``
        is optional free text kept verbatim with the event (not with the
        label); a note alone does not make a change.  The name is checked
        (and stripped) by :func:`check_annotator`; reserved names are refused.
        The event records the current guidelines version of ``dataset``
        (default: :func:`~playground.store.checks.dataset_of_case` of the unit's case).
        A response unit (kind ``response``) takes dimension ``pass``: its verdict.
        """
        annotator = check_annotator(annotator)
        check_unit(unit, dimension)
        value = check_value(value)
        check_note(note)

        return self._change(annotator, unit, dimension, value, "clear" if value is None else "set", note, dataset)

    def _change(self, annotator: str, unit: Unit, dimension: str, value: int | None, action: str,
                note: str | None, dataset: str | None = None) -> Event | None:
        """One label change of ``annotator`` (already checked) in its own transaction; None when nothing changes."""

        def tx(cur: Cursor) -> tuple[Event, int] | None:
            aid = self._annotator_id(cur, annotator, create=value is not None)
            if aid is None:
                return None
            self._b.lock_annotators(cur, [aid])
            row = cur.execute(
                "SELECT value, text_hash FROM labels WHERE annotator_id = ? AND unit_id = ? AND dimension = ?",
                (aid, unit.unit_id, dimension),
            ).fetchone()
            old = (row[0], row[1]) if row else (None, None)
            if old == (value, unit.text_hash) or (value is None and row is None):
                return None  # nothing changes, nothing is written (a new annotator always changes something)
            return self._append(cur, aid, annotator, unit.unit_kind, unit.unit_id, unit.case_id, dimension, old, value,
                                unit.text_hash, action, note=note, dataset=dataset), aid

        result = self._write(tx)
        if result is None:
            return None
        event, aid = result
        self._annotator_ids[annotator] = aid  # committed: safe to remember
        return event

    def undo(self, annotator: str) -> Event | None:
        """Revert ``annotator``'s most recent change that has not been undone yet.

        The rule: an annotator's history is a stack of their own events (sets,
        clears and imported rows, one label each).  ``undo`` takes the latest
        event that is not an undo and that no undo has reverted yet, and
        appends an ``undo`` event restoring the label exactly as it was before
        (value and text hash, or no label).  Undo events are never undone
        themselves, so calling ``undo`` again walks further back — there is no
        redo (set the label again instead).  Other annotators' labels are never
        touched; comments are not label changes and are skipped.  A ``tags``
        event is undone like a label: the tag set before it comes back.  Returns the
        undo event, or ``None`` when there is nothing left.
        """
        annotator = check_annotator(annotator)

        def tx(cur: Cursor) -> Event | None:
            aid = self._annotator_id(cur, annotator, create=False)
            if aid is None:
                return None
            self._b.lock_annotators(cur, [aid])
            target = cur.execute(
                f"SELECT {EVENT_COLUMNS} FROM events e JOIN annotators a ON a.annotator_id = e.annotator_id"
                " WHERE e.annotator_id = ? AND e.action NOT IN ('undo', 'comment')"
                " AND NOT EXISTS (SELECT 1 FROM events u WHERE u.undoes = e.event_id)"
                " ORDER BY e.event_id DESC LIMIT 1",
                (aid,),
            ).fetchone()
            if target is None:
                return None
            ev = self._event(target)
            if ev.dimension == TAGS_DIMENSION:
                return self._undo_tags(cur, aid, annotator, ev)
            row = cur.execute(
                "SELECT value, text_hash FROM labels WHERE annotator_id = ? AND unit_id = ? AND dimension = ?",
                (aid, ev.unit_id, ev.dimension),
            ).fetchone()
            current = (row[0], row[1]) if row else (None, None)
            restore_hash = (ev.old_text_hash or ev.text_hash) if ev.old_value is not None else ev.text_hash
            return self._append(cur, aid, annotator, ev.unit_kind, ev.unit_id, ev.case_id, ev.dimension, current,
                                ev.old_value, restore_hash, "undo", undoes=ev.event_id)

        return self._write(tx)

    def write_rows(self, rows: Sequence[tuple[str, Unit, str, int]], action: str = "import",
                   comments: Sequence[tuple[str, Unit, str]] = ()) -> tuple[int, int, list[str], int | None]:
        """Write many ``(annotator, unit, dimension, value)`` in ONE transaction (used by imports).

        Each row that changes a label appends one event with ``action``, all
        sharing one ``batch_id``; values are 1, 0 or :data:`UNSURE`.
        ``comments`` are ``(annotator, unit, text)`` set in the same
        transaction (a ``comment`` event each that changes one; ``""`` leaves
        a comment as it is — imports never clear).  Returns ``(changed,
        unchanged, new_annotators, batch_id)`` (comment events counted in ``changed``).
        """
        return self._write(self._rows_tx(rows, action, comments))

    def _rows_tx(self, rows: Sequence[tuple[str, Unit, str, int]], action: str,
                 comments: Sequence[tuple[str, Unit, str]] = ()
                 ) -> Callable[[Cursor], tuple[int, int, list[str], int | None]]:
        """Validate ``rows`` now; return the transaction body that writes them (see :meth:`write_rows`)."""
        if action not in ("import", "set"):
            raise InvalidLabelError(f"bulk writes record 'import' or 'set' events, not {action!r}")
        checked: list[tuple[str, Unit, str, int]] = []
        for name, unit, dim, value in rows:
            check_unit(unit, dim)
            v = check_value(value)
            if v is None:
                raise InvalidLabelError("imported values must be 1, 0 or UNSURE")
            checked.append((check_annotator(name), unit, dim, v))
        notes: list[tuple[str, Unit, str]] = []
        for name, unit, text in comments:
            check_unit_identity(unit)
            if check_comment(text):
                notes.append((check_annotator(name), unit, check_comment(text)))
        names = sorted({r[0] for r in checked} | {c[0] for c in notes})
        b = self._b

        def tx(cur: Cursor) -> tuple[int, int, list[str], int | None]:
            ids, created = self._ids_creating(cur, names)
            b.lock_annotators(cur, ids.values())
            current, said = self._state_of(cur, ids.values())
            changes = []
            for name, unit, dim, value in checked:
                key = (ids[name], unit.unit_id, dim)
                old = current.get(key, (None, None))
                if old != (value, unit.text_hash):
                    changes.append((key, old, unit, dim, value))
                    current[key] = (value, unit.text_hash)
            new_comments = []
            for name, unit, text in notes:
                ckey = (ids[name], unit.unit_id)
                if said.get(ckey) != text:
                    new_comments.append((ckey, unit, text))
                    said[ckey] = text
            if not changes and not new_comments:
                return 0, len(checked), created, None
            batch = self._insert_batch(cur, action, changes, new_comments)
            return len(changes) + len(new_comments), len(checked) - len(changes), created, batch

        return tx

    def _ids_creating(self, cur: Cursor, names: Iterable[str]) -> tuple[dict[str, int], list[str]]:
        """``({name: annotator_id}, [names created now])``, creating the missing annotators."""
        ids: dict[str, int] = {}
        created: list[str] = []
        for name in names:
            existed = cur.scalar("SELECT annotator_id FROM annotators WHERE name = ?", (name,))
            aid = existed if existed is not None else self._annotator_id(cur, name, create=True)
            assert aid is not None
            ids[name] = int(aid)
            if existed is None:
                created.append(name)
        return ids, created

    @staticmethod
    def _state_of(cur: Cursor, annotator_ids: Iterable[int]
                  ) -> tuple[dict[tuple[Any, ...], tuple[Any, ...]], dict[tuple[Any, ...], str]]:
        """Current ``{(aid, unit_id, dim): (value, text_hash)}`` and ``{(aid, unit_id): comment}``."""
        current: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        said: dict[tuple[Any, ...], str] = {}
        for aid in annotator_ids:
            for uid, dim, value, thash in cur.execute(
                "SELECT unit_id, dimension, value, text_hash FROM labels WHERE annotator_id = ?", (aid,)
            ).fetchall():
                current[(aid, uid, dim)] = (value, thash)
            for uid, text in cur.execute("SELECT unit_id, text FROM comments WHERE annotator_id = ?",
                                         (aid,)).fetchall():
                said[(aid, uid)] = text
        return current, said

    def _insert_batch(self, cur: Cursor, action: str, changes: list[tuple[Any, ...]],
                      new_comments: list[tuple[Any, ...]]) -> int:
        """Append one event per label change and per new comment, one batch; update the current views."""
        b = self._b
        now = b.now(cur)
        eids = b.next_event_ids(cur, len(changes) + len(new_comments))
        batch = eids[0]
        leids, ceids = eids[:len(changes)], eids[len(changes):]
        versions: dict[str, int | None] = {}

        def gv(unit: Unit) -> int | None:
            ds = dataset_of_case(unit.case_id)
            if ds not in versions:
                versions[ds] = guidelines_now(cur, ds)
            return versions[ds]

        cur.executemany(INSERT_EVENT, [
            (eid, batch, key[0], unit.unit_kind, unit.unit_id, unit.case_id, dim, old[0], value, old[1],
             unit.text_hash, action, None, now, None, gv(unit))
            for eid, (key, old, unit, dim, value) in zip(leids, changes, strict=True)
        ])
        cur.executemany(UPSERT_LABEL, [
            (key[0], unit.unit_id, dim, unit.unit_kind, unit.case_id, value, unit.text_hash, now, eid)
            for eid, (key, _old, unit, dim, value) in zip(leids, changes, strict=True)
        ])
        cur.executemany(INSERT_EVENT, [
            (eid, batch, ckey[0], unit.unit_kind, unit.unit_id, unit.case_id, "", None, None, None,
             unit.text_hash, "comment", None, now, text, gv(unit))
            for eid, (ckey, unit, text) in zip(ceids, new_comments, strict=True)
        ])
        cur.executemany(UPSERT_COMMENT, [
            (ckey[0], unit.unit_id, unit.unit_kind, unit.case_id, text, now, eid)
            for eid, (ckey, unit, text) in zip(ceids, new_comments, strict=True)
        ])
        return batch

    # --- comments ---------------------------------------------------------------------------------------
    def set_comment(self, annotator: str, unit: Unit, text: str, *, dataset: str | None = None) -> Event | None:
        """Set ``annotator``'s free-text comment on ``unit`` (``""`` clears it); a ``comment`` event.

        One comment per (annotator, unit), kept verbatim (surrounding white
        space stripped, at most :data:`MAX_COMMENT_LENGTH` characters, no NUL).
        The event has ``dimension == ""`` and the new text in ``note``.
        Returns ``None`` when nothing changed.
        """
        annotator = check_annotator(annotator)
        check_unit_identity(unit)
        text = check_comment(text)

        def tx(cur: Cursor) -> tuple[Event, int] | None:
            aid = self._annotator_id(cur, annotator, create=bool(text))
            if aid is None:
                return None
            self._b.lock_annotators(cur, [aid])
            old = cur.scalar("SELECT text FROM comments WHERE annotator_id = ? AND unit_id = ?", (aid, unit.unit_id))
            if old == text or (old is None and not text):
                return None
            gv = guidelines_now(cur, dataset or dataset_of_case(unit.case_id))
            now, eid = self._b.stamp(cur)
            cur.execute(INSERT_EVENT, (eid, eid, aid, unit.unit_kind, unit.unit_id, unit.case_id, "", None, None,
                                        None, unit.text_hash, "comment", None, now, text, gv))
            if text:
                cur.execute(UPSERT_COMMENT, (aid, unit.unit_id, unit.unit_kind, unit.case_id, text, now, eid))
            else:
                cur.execute("DELETE FROM comments WHERE annotator_id = ? AND unit_id = ?", (aid, unit.unit_id))
            return Event(eid, annotator, unit.unit_kind, unit.unit_id, "", None, None, unit.text_hash,
                         self._b.ts_out(now), "comment", unit.case_id, None, eid, None, text, gv), aid

        result = self._write(tx)
        if result is None:
            return None
        self._annotator_ids[annotator] = result[1]
        return result[0]

    def comments(self, unit_ids: Iterable[str] | None = None, annotator: str | None = None) -> list[Comment]:
        """Current comments, sorted by (unit_id, annotator); filters combine with AND."""
        base = ("SELECT a.name, c.unit_kind, c.unit_id, c.case_id, c.text, c.updated_at"
                " FROM comments c JOIN annotators a ON a.annotator_id = c.annotator_id WHERE 1 = 1")
        params: list[Any] = []
        if annotator is not None:
            base += " AND a.name = ?"
            params.append(annotator)
        rows = self._b.read(lambda cur: self._chunked(cur, base, params, "c.unit_id", unit_ids))
        out = [Comment(n, k, u, c, t, self._b.ts_out(ts)) for n, k, u, c, t, ts in rows]
        out.sort(key=lambda c: (c.unit_id, c.annotator))
        return out

    @staticmethod
    def _chunked(cur: Cursor, base: str, params: list[Any], column: str,
                 ids: Iterable[str] | None) -> list[tuple[Any, ...]]:
        if ids is None:
            return cur.execute(base, params).fetchall()
        wanted = sorted(set(ids))
        rows: list[tuple[Any, ...]] = []
        for i in range(0, len(wanted), 500):
            chunk = wanted[i:i + 500]
            rows += cur.execute(base + f" AND {column} IN ({', '.join('?' * len(chunk))})", params + chunk).fetchall()
        return rows

    # --- adjudication -----------------------------------------------------------------------------------
    def adjudicate(self, unit: Unit, dimension: str, value: int | None, adjudicator: str) -> Event | None:
        """Settle (unit, dimension): store ``value`` (1/0) as its consensus; ``None`` withdraws it.

        The value is filed under the reserved annotator ``consensus`` with an
        ``adjudicate`` event whose note is ``adjudicated by NAME``; it never
        votes, and :meth:`consensus` reports the row as ``adjudicated`` with
        that value whatever the votes say.  ``adjudicator`` follows
        :func:`check_annotator`.  Returns ``None`` when nothing changed (the
        same value on the same text is already the adjudication).
        """
        name = check_annotator(adjudicator)
        check_unit(unit, dimension)
        value = check_value(value, unsure=False)

        return self._change(CONSENSUS_ANNOTATOR, unit, dimension, value, "adjudicate", _ADJUDICATED_BY + name)

    def _adjudicators(self) -> dict[tuple[str, str], str | None]:
        """(unit_id, dimension) -> adjudicator's name (from the consensus label's event note) or None."""
        rows = self._b.read(lambda cur: cur.execute(
            "SELECT lb.unit_id, lb.dimension, e.note FROM labels lb"
            " JOIN annotators a ON a.annotator_id = lb.annotator_id"
            " JOIN events e ON e.event_id = lb.event_id WHERE a.name = ?", (CONSENSUS_ANNOTATOR,)).fetchall())
        return {(u, d): (n[len(_ADJUDICATED_BY):] if isinstance(n, str) and n.startswith(_ADJUDICATED_BY) else None)
                for u, d, n in rows}

    # --- assignments --------------------------------------------------------------------------------------
    def save_assignment(self, assignment: Assignment) -> Assignment:
        """Store ``assignment`` under its name (replacing one of that name); returns it with ``created_at``."""
        a = assignment
        if not isinstance(a.name, str) or not a.name.strip() or len(a.name) > 200:
            raise InvalidLabelError(f"an assignment needs a name of 1 to 200 characters, got {a.name!r}")
        if a.kind not in ASSIGNMENT_KINDS:
            raise InvalidLabelError(f"assignment kind must be one of {', '.join(ASSIGNMENT_KINDS)}, got {a.kind!r}")
        queues = {str(k): [str(u) for u in v] for k, v in a.queues.items()}
        seed = json.dumps(a.seed)

        def tx(cur: Cursor) -> Any:
            now = self._b.now(cur) if not a.created_at else self._b.ts_in(a.created_at)
            cur.execute(
                "INSERT INTO assignments (name, kind, dataset, seed, overlap, queues, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET kind = excluded.kind,"
                " dataset = excluded.dataset, seed = excluded.seed, overlap = excluded.overlap,"
                " queues = excluded.queues, created_at = excluded.created_at",
                (a.name, a.kind, a.dataset, seed, int(a.overlap), canonical_json(queues), now))
            return now

        created = self._b.ts_out(self._write(tx))
        return Assignment(a.name, a.kind, a.dataset, a.seed, a.overlap, {k: tuple(v) for k, v in queues.items()},
                          created)

    def _assignment(self, row: tuple[Any, ...]) -> Assignment:
        name, kind, dataset, seed, overlap, queues, created = row
        return Assignment(name, kind, dataset, json.loads(seed), int(overlap),
                          {k: tuple(v) for k, v in json.loads(queues).items()}, self._b.ts_out(created))

    def assignment(self, name: str) -> Assignment | None:
        """The assignment saved under ``name``, or ``None``."""
        row = self._b.read(lambda cur: cur.execute(
            "SELECT name, kind, dataset, seed, overlap, queues, created_at FROM assignments WHERE name = ?",
            (name,)).fetchone())
        return None if row is None else self._assignment(row)

    def assignments(self) -> list[Assignment]:
        """Every saved assignment, sorted by name."""
        rows = self._b.read(lambda cur: cur.execute(
            "SELECT name, kind, dataset, seed, overlap, queues, created_at FROM assignments ORDER BY name").fetchall())
        return [self._assignment(r) for r in rows]

    # --- lessons (schema 4) ----------------------------------------------------------------------------------
    def save_lesson(self, lesson: Lesson, *, replace: bool = False) -> Lesson:
        """Store ``lesson`` under its name; a lesson of that name already there is an error unless
        ``replace``.  Returns it with ``created_at``."""
        x = lesson
        if not isinstance(x.name, str) or not x.name.strip() or len(x.name) > 200 or "\x00" in x.name:
            raise InvalidLabelError(f"a lesson needs a name of 1 to 200 characters, got {x.name!r}")
        if not x.units:
            raise InvalidLabelError(f"lesson {x.name!r} has no unit to label")
        row = (x.name, x.dataset, json.dumps(list(x.cases)), json.dumps(list(x.responses)),
               json.dumps(list(x.units)))

        def tx(cur: Cursor) -> Any:
            now = self._b.now(cur)
            on_conflict = ("DO UPDATE SET dataset = excluded.dataset, cases = excluded.cases, responses ="
                           " excluded.responses, units = excluded.units, created_at = excluded.created_at"
                           if replace else "DO NOTHING")
            written = cur.execute(f"INSERT INTO lessons ({LESSON_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
                                  f" ON CONFLICT (name) {on_conflict} RETURNING created_at", (*row, now)).fetchone()
            if written is None:
                raise StoreError(f"a lesson named {x.name!r} is already in the label store {self.url}; nothing was "
                                 "written (delete it first, or choose another name)")
            return written[0]

        created = self._b.ts_out(self._write(tx))
        return Lesson(x.name, x.dataset, tuple(x.cases), tuple(x.responses), tuple(x.units), created)

    def _lesson(self, row: tuple[Any, ...]) -> Lesson:
        name, dataset, cases, responses, units, created = row
        return Lesson(name, dataset, tuple(json.loads(cases)), tuple(json.loads(responses)),
                      tuple(json.loads(units)), self._b.ts_out(created))

    def lesson(self, name: str) -> Lesson | None:
        """The lesson named ``name``, or ``None``."""
        row = self._b.read(lambda cur: cur.execute(
            f"SELECT {LESSON_COLUMNS} FROM lessons WHERE name = ?", (name,)).fetchone())
        return None if row is None else self._lesson(row)

    def lessons(self) -> list[Lesson]:
        """Every lesson, sorted by name."""
        rows = self._b.read(lambda cur: cur.execute(f"SELECT {LESSON_COLUMNS} FROM lessons ORDER BY name").fetchall())
        return [self._lesson(r) for r in rows]

    def delete_lesson(self, name: str) -> bool:
        """Remove the lesson ``name`` (its labels stay: they belong to the units); True when one was removed."""
        return bool(self._write(lambda cur: cur.execute(
            "DELETE FROM lessons WHERE name = ? RETURNING name", (name,)).fetchone()))

    # --- datasets -------------------------------------------------------------------------------------------
    def put_dataset(self, name: str, kind: str, payload: dict[str, Any], *,
                    label_rows: Sequence[tuple[str, Unit, str, int]] = (), replace: bool = False,
                    also: Callable[[Cursor], Any] | None = None) -> DatasetInfo:
        """Store a dataset (canonical JSON and its sha256) and its labels in ONE transaction: all or nothing.

        ``label_rows`` are :meth:`write_rows` tuples, written as ``import``
        events; ``also`` runs in the same transaction before them (a restored
        label history, :func:`playground.store.replay.restore_tx`).  A dataset
        of that name already present is an error unless ``replace=True``
        (labels are never removed by a replace).
        """
        if not isinstance(name, str) or not name.strip() or len(name) > 200 or "\x00" in name:
            raise InvalidLabelError(f"a dataset needs a name of 1 to 200 characters, got {name!r}")
        if not isinstance(kind, str) or not kind:
            raise InvalidLabelError(f"a dataset needs a kind, got {kind!r}")
        if not isinstance(payload, dict):
            raise InvalidLabelError(f"a dataset payload must be a JSON object (dict), got {type(payload).__name__}")
        text = canonical_json(payload)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        write_labels = self._rows_tx(label_rows, "import") if label_rows else None

        def tx(cur: Cursor) -> Any:
            now = self._b.now(cur)
            # One statement decides, so two concurrent imports of one new name cannot both "create" it.
            on_conflict = ("DO UPDATE SET kind = excluded.kind, payload = excluded.payload,"
                           " sha256 = excluded.sha256") if replace else "DO NOTHING"
            written = cur.execute("INSERT INTO datasets (name, kind, payload, sha256, created_at)"
                                  f" VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) {on_conflict} RETURNING created_at",
                                  (name, kind, text, digest, now)).fetchone()
            if written is None:
                # Identical content again is no change (its labels may still be new); other content is refused.
                found = cur.execute("SELECT sha256, created_at FROM datasets WHERE name = ?", (name,)).fetchone()
                if found is None or found[0] != digest:
                    raise StoreError(f"a dataset named {name!r} is already in the label store {self.url} with other"
                                     " content; nothing was written (import with --replace to replace it, its labels"
                                     " are kept, or choose another name)")
                written = found[1:]
            if also is not None:
                also(cur)
            if write_labels is not None:
                write_labels(cur)
            return written[0]

        created = self._b.ts_out(self._write(tx))
        return dataset_info(name, kind, digest, created, payload)

    def dataset(self, name: str) -> StoredDataset | None:
        """The dataset stored under ``name`` (payload parsed back from JSON), or ``None``."""
        row = self._b.read(lambda cur: cur.execute(
            "SELECT name, kind, payload, sha256, created_at FROM datasets WHERE name = ?", (name,)).fetchone())
        if row is None:
            return None
        return StoredDataset(row[0], row[1], json.loads(row[2]), row[3], self._b.ts_out(row[4]))

    def dataset_revision(self, name: str) -> str | None:
        """The SHA-256 of the dataset stored under ``name`` (its revision), without reading the payload; ``None``
        when there is none.  An open page compares it with the revision it opened before each write."""
        row = self._b.read(lambda cur: cur.execute("SELECT sha256 FROM datasets WHERE name = ?", (name,)).fetchone())
        return None if row is None else str(row[0])

    def dataset_names(self) -> list[str]:
        """The name of every stored dataset, sorted, without reading the payloads (a page's dataset picker)."""
        rows = self._b.read(lambda cur: cur.execute("SELECT name FROM datasets ORDER BY name").fetchall())
        return [r[0] for r in rows]

    def datasets(self) -> list[DatasetInfo]:
        """Every stored dataset, sorted by name (``cases``/``units`` from ``payload["summary"]``)."""
        rows = self._b.read(lambda cur: cur.execute(
            "SELECT name, kind, payload, sha256, created_at FROM datasets ORDER BY name").fetchall())
        return [dataset_info(n, k, h, self._b.ts_out(t), json.loads(p)) for n, k, p, h, t in rows]

    # --- reading ------------------------------------------------------------------------------------------
    def history(self, unit_id: str, dimension: str | None = None, annotator: str | None = None) -> list[Event]:
        """Every event of ``unit_id`` (optionally one dimension / annotator), oldest first."""
        sql = (f"SELECT {EVENT_COLUMNS} FROM events e JOIN annotators a ON a.annotator_id = e.annotator_id"
               " WHERE e.unit_id = ?")
        params: list[Any] = [unit_id]
        if dimension is not None:
            sql += " AND e.dimension = ?"
            params.append(dimension)
        if annotator is not None:
            sql += " AND a.name = ?"
            params.append(annotator)
        sql += " ORDER BY e.event_id"
        return [self._event(r) for r in self._b.read(lambda cur: cur.execute(sql, params).fetchall())]

    def events(self, annotator: str | None = None, after: int = 0) -> list[Event]:
        """The event log (optionally one annotator's, and only ids above ``after``), oldest first."""
        sql = (f"SELECT {EVENT_COLUMNS} FROM events e JOIN annotators a ON a.annotator_id = e.annotator_id"
               " WHERE e.event_id > ?")
        params: list[Any] = [after]
        if annotator is not None:
            sql += " AND a.name = ?"
            params.append(annotator)
        sql += " ORDER BY e.event_id"
        return [self._event(r) for r in self._b.read(lambda cur: cur.execute(sql, params).fetchall())]

    def labels(self, annotator: str | None = None, unit_ids: Iterable[str] | None = None,
               case_id: str | None = None, include_unsure: bool = False) -> list[StoredLabel]:
        """Current labels, sorted by (unit_id, dimension, annotator); filters combine with AND.

        Unsure answers (value :data:`UNSURE`) are left out unless
        ``include_unsure=True``, so every rate computed from these labels sees 1 and 0 only.
        Labels of the reserved ``consensus`` name (adjudications) are included.
        """
        base = ("SELECT a.name, lb.unit_kind, lb.unit_id, lb.case_id, lb.dimension, lb.value, lb.text_hash,"
                " lb.updated_at FROM labels lb JOIN annotators a ON a.annotator_id = lb.annotator_id WHERE 1 = 1")
        params: list[Any] = []
        if annotator is not None:
            base += " AND a.name = ?"
            params.append(annotator)
        if case_id is not None:
            base += " AND lb.case_id = ?"
            params.append(case_id)
        if not include_unsure:
            base += f" AND lb.value <> {UNSURE}"
        rows = self._b.read(lambda cur: self._chunked(cur, base, params, "lb.unit_id", unit_ids))
        out = [StoredLabel(n, k, u, c, d, v, h, self._b.ts_out(t)) for n, k, u, c, d, v, h, t in rows]
        out.sort(key=lambda lb: (lb.unit_id, lb.dimension, lb.annotator))
        return out

    def stale(self, catalog: Mapping[str, Unit], annotator: str | None = None) -> list[StaleLabel]:
        """Labels whose unit text changed (``changed``) or whose unit is not in ``catalog`` (``orphaned``).

        They stay in the store untouched; setting the label again on the
        current text (even to the same value) makes it current.
        """
        out = []
        for lb in self.labels(annotator=annotator, include_unsure=True):
            unit = catalog.get(lb.unit_id)
            if unit is None:
                out.append(StaleLabel(lb.annotator, lb.unit_kind, lb.unit_id, lb.case_id, lb.dimension, lb.value,
                                      lb.text_hash, None, "orphaned", lb.updated_at))
            elif unit.text_hash != lb.text_hash:
                out.append(StaleLabel(lb.annotator, lb.unit_kind, lb.unit_id, lb.case_id, lb.dimension, lb.value,
                                      lb.text_hash, unit.text_hash, "changed", lb.updated_at))
        return out

    def current_labels(self, catalog: Mapping[str, Unit], annotator: str | None = None,
                       include_unsure: bool = False) -> list[StoredLabel]:
        """Labels that still apply: unit in ``catalog`` with the same text hash (stale ones left out).

        Unsure answers only with ``include_unsure=True`` (as :meth:`labels`).
        """
        return [lb for lb in self.labels(annotator=annotator, include_unsure=include_unsure)
                if (u := catalog.get(lb.unit_id)) is not None and u.text_hash == lb.text_hash]

    def unsure_counts(self, catalog: Mapping[str, Unit] | None = None) -> dict[tuple[str, str], int]:
        """Number of unsure answers per (annotator, dimension); with a ``catalog``, current ones only.

        Only keys with at least one unsure answer appear; reserved names never do.
        """
        labels = (self.labels(include_unsure=True) if catalog is None
                  else self.current_labels(catalog, include_unsure=True))
        counts = Counter((lb.annotator, lb.dimension) for lb in labels
                         if lb.value == UNSURE and lb.annotator not in RESERVED_ANNOTATORS)
        return dict(sorted(counts.items()))

    def progress(self, catalog: Mapping[str, Unit], annotator: str | None = None) -> Progress:
        """Labelled / total (unit, dimension) pairs and units, per case and overall.

        A pair is labelled when ``annotator`` (or, with ``None``, any annotator
        but the reserved names) has a current, non-stale label on it — an
        unsure answer counts as answered here, it is the person's judgement;
        a unit when all its dimensions are.  ``stale_pairs`` counts pairs whose only labels are stale.
        """
        fresh: set[tuple[str, str]] = set()
        stale: set[tuple[str, str]] = set()
        for lb in self.labels(annotator=annotator, include_unsure=True):
            unit = catalog.get(lb.unit_id)
            if unit is None or (annotator is None and lb.annotator in RESERVED_ANNOTATORS):
                continue
            (fresh if unit.text_hash == lb.text_hash else stale).add((lb.unit_id, lb.dimension))
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
        for unit in catalog.values():
            c = counts[unit.case_id]
            dims = [d for d in unit.dimensions if d in DIMENSIONS]
            done = sum((unit.unit_id, d) in fresh for d in dims)
            c[0] += bool(dims) and done == len(dims)
            c[1] += 1
            c[2] += done
            c[3] += len(dims)
            c[4] += sum((unit.unit_id, d) in stale and (unit.unit_id, d) not in fresh for d in dims)
        cases = {cid: CaseProgress(cid, *v) for cid, v in sorted(counts.items())}
        overall = CaseProgress("", *(sum(c[i] for c in counts.values()) for i in range(5)))
        return Progress(annotator, overall, cases)

    def consensus(self, dimension: str | None = None, catalog: Mapping[str, Unit] | None = None,
                  unit_ids: Iterable[str] | None = None) -> list[ConsensusRow]:
        """Consensus of each labelled or adjudicated (unit, dimension), sorted by unit and dimension.

        Every annotator's current 1/0 label is one vote; unsure answers and
        the reserved names (:data:`RESERVED_ANNOTATORS`) never vote.  With a
        ``catalog``, stale and orphaned labels (and adjudications) do not count
        either.  An adjudication (:meth:`adjudicate`) decides: the row has
        status ``adjudicated``, the adjudicated value and the adjudicator,
        with the votes still counted in ``yes``/``no``.  Otherwise the
        majority; a tie is a row with ``status == "tie"`` and ``value is
        None``: reported, never broken.  Derived on demand, never stored.
        """
        votes: dict[tuple[str, str], list[Any]] = {}
        settled: dict[tuple[str, str], StoredLabel] = {}
        for lb in self.labels(unit_ids=unit_ids):
            if dimension is not None and lb.dimension != dimension:
                continue
            if catalog is not None:
                unit = catalog.get(lb.unit_id)
                if unit is None or unit.text_hash != lb.text_hash:
                    continue
            if lb.annotator == CONSENSUS_ANNOTATOR:
                settled[(lb.unit_id, lb.dimension)] = lb
                continue
            if lb.annotator in RESERVED_ANNOTATORS:
                continue
            v = votes.setdefault((lb.unit_id, lb.dimension), [lb.unit_kind, lb.case_id, 0, 0])
            v[2 if lb.value == 1 else 3] += 1
        who = self._adjudicators() if settled else {}
        out = []
        for key in sorted(set(votes) | set(settled)):
            uid, dim = key
            if key in settled:
                s = settled[key]
                yes, no = votes[key][2:] if key in votes else (0, 0)
                out.append(ConsensusRow(s.unit_kind, uid, s.case_id, dim, s.value, "adjudicated", yes, no,
                                        who.get(key)))
                continue
            kind, case_id, yes, no = votes[key]
            value, status = majority(yes, no)
            out.append(ConsensusRow(kind, uid, case_id, dim, value, status, yes, no))
        return out

    # --- auditing --------------------------------------------------------------------------------------------
    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, in primary-key order, timestamps as canonical strings.

        Two stores with equal dumps hold exactly the same content; used to
        verify copies and that rejected imports changed nothing.
        """
        def q(cur: Cursor) -> dict[str, list[tuple[Any, ...]]]:
            out = {}
            for table, (sql, ts_cols) in DUMP.items():
                rows = []
                for raw in cur.execute(sql).fetchall():
                    row = list(raw)
                    for i in ts_cols:
                        row[i] = None if row[i] is None else self._b.ts_out(row[i])
                    rows.append(tuple(row))
                out[table] = rows
            return out

        return self._b.read(q)

    def verify(self) -> list[str]:
        """Check the current-label view against a replay of the event log; return every mismatch.

        Also checks each event's ``old_value`` against the previous event of the
        same label (an unbroken chain) and that every undo names a real event.
        An empty list means the store is consistent.
        """
        data = self.dump()
        problems: list[str] = []
        state: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}
        ids = set()
        said: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        tagged: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        for (eid, _batch, aid, kind, uid, case_id, dim, old, new, _old_hash, thash, action, undoes, _ts,
             note, _gv) in data["events"]:
            if dim == TAGS_DIMENSION:
                ids.add(eid)
                if note and note != "[]":
                    tagged[(aid, uid)] = (note, eid)
                else:
                    tagged.pop((aid, uid), None)
                continue
            if action == "comment":
                ids.add(eid)
                if note:
                    said[(aid, uid)] = (note, eid)
                else:
                    said.pop((aid, uid), None)
                continue
            key = (aid, uid, dim)
            prev = state.get(key)
            prev_value = prev[0] if prev else None
            if old != prev_value:
                problems.append(f"event {eid}: old value {old!r} but the label was {prev_value!r}")
            if undoes is not None and undoes not in ids:
                problems.append(f"event {eid}: undoes unknown event {undoes}")
            ids.add(eid)
            state[key] = (new, thash, eid, kind, case_id) if new is not None else None
            if state[key] is None:
                del state[key]
        actual: dict[tuple[Any, ...], tuple[Any, ...] | None] = {(aid, uid, dim): (value, thash, eid, kind, case_id)
                  for aid, uid, dim, kind, case_id, value, thash, _t, eid in data["labels"]}
        for key in sorted(set(state) | set(actual), key=str):
            if state.get(key) != actual.get(key):
                problems.append(f"label {key}: events say {state.get(key)!r}, labels table has {actual.get(key)!r}")
        stored = {(aid, uid): (text, eid) for aid, uid, _k, _c, text, _t, eid in data["comments"]}
        for ckey in sorted(set(said) | set(stored), key=str):
            if said.get(ckey) != stored.get(ckey):
                problems.append(f"comment {ckey}: events say {said.get(ckey)!r}, "
                                f"comments table has {stored.get(ckey)!r}")
        tag_rows = {(r[0], r[1]): (r[5], r[8]) for r in data["tags"]}
        for tkey in sorted(set(tagged) | set(tag_rows), key=str):
            if tagged.get(tkey) != tag_rows.get(tkey):
                problems.append(f"tags {tkey}: events say {tagged.get(tkey)!r}, tags table has {tag_rows.get(tkey)!r}")
        return problems

    def integrity_check(self) -> list[str]:
        """The backend's own check (SQLite ``PRAGMA integrity_check``) plus :meth:`verify`."""
        problems = []
        if self.backend == "sqlite":
            rows = self._b.read(lambda cur: cur.execute("PRAGMA integrity_check").fetchall())
            problems += [r[0] for r in rows if r[0] != "ok"]
        return problems + self.verify()

    def copy_from(self, source: LabelStore) -> dict[str, int]:
        """Copy every row of ``source`` into this (empty) store exactly, ids and timestamps included.

        Refuses when this store already holds annotators, events or labels.
        Verifies afterwards that both dumps are equal.  Returns row counts.
        """
        data = source.dump()
        b = self._b

        def tx(cur: Cursor) -> None:
            for table in ("annotators", "events", "labels", "comments", "assignments", "datasets", "lessons", "tags",
                          "failure_modes", "guidelines"):
                if cur.scalar(f"SELECT COUNT(*) FROM {table}"):
                    raise StoreError(f"the target store {self.url} is not empty ({table} has rows); "
                                     "copy into an empty store")
            ts = b.ts_in
            cur.executemany("INSERT INTO annotators (annotator_id, name, created_at) VALUES (?, ?, ?)",
                            [(i, n, ts(t)) for i, n, t in data["annotators"]])
            cur.executemany(INSERT_EVENT, [(*r[:13], ts(r[13]), *r[14:]) for r in data["events"]])
            cur.executemany(
                "INSERT INTO labels (annotator_id, unit_id, dimension, unit_kind, case_id, value, text_hash,"
                " updated_at, event_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(*r[:7], ts(r[7]), r[8]) for r in data["labels"]],
            )
            cur.executemany(UPSERT_COMMENT, [(*r[:5], ts(r[5]), r[6]) for r in data["comments"]])
            cur.executemany("INSERT INTO assignments (name, kind, dataset, seed, overlap, queues, created_at)"
                            " VALUES (?, ?, ?, ?, ?, ?, ?)", [(*r[:6], ts(r[6])) for r in data["assignments"]])
            cur.executemany("INSERT INTO datasets (name, kind, payload, sha256, created_at) VALUES (?, ?, ?, ?, ?)",
                            [(*r[:4], ts(r[4])) for r in data["datasets"]])
            cur.executemany(f"INSERT INTO lessons ({LESSON_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                            [(*r[:5], ts(r[5])) for r in data["lessons"]])
            cur.executemany(UPSERT_TAGS, [(*r[:7], ts(r[7]), r[8]) for r in data["tags"]])
            cur.executemany("INSERT INTO failure_modes (dataset, name, description, created_by, created_at,"
                            " merged_into, merged_by, merged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            [(*r[:4], ts(r[4]), r[5], r[6], None if r[7] is None else ts(r[7]))
                             for r in data["failure_modes"]])
            cur.executemany("INSERT INTO guidelines (dataset, version, markdown, author, created_at)"
                            " VALUES (?, ?, ?, ?, ?)", [(*r[:4], ts(r[4])) for r in data["guidelines"]])
            b.reset_sequences(cur)

        self._write(tx)
        copied = self.dump()
        if copied != data:
            diff = [t for t in data if data[t] != copied[t]]
            raise StoreError(f"copy verification failed: tables {diff} differ between {source.url} and {self.url}")
        return {t: len(rows) for t, rows in data.items()}


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
