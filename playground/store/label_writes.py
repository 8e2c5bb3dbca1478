"""Label writes: set, clear and undo one label, comments, adjudications, and bulk writes — each with its event.

The rule of every write: one transaction appends the event(s) to the log and
brings the current views (``labels``, ``comments``) in line with them, so the
log replayed gives the views (:meth:`~.audit.Audit.verify`).  A write that
changes nothing (the same value on the same text, clearing a missing label,
the same comment) writes nothing and returns ``None``.  Writers of one
annotator are serialised (:meth:`~.base.Backend.lock_annotators`) before the
event gets its time and id, so later writers get later times and ids.  Each
event records the guidelines version of its unit's dataset
(:func:`~.guidelines.guidelines_now`).  Bulk writes (:meth:`LabelWrites.write_rows`,
imports) validate every row first and write all of them in one transaction
and one batch.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..model import Unit
from .base import Cursor
from .checks import (
    CONSENSUS_ANNOTATOR,
    TAGS_DIMENSION,
    check_annotator,
    check_comment,
    check_note,
    check_unit,
    check_unit_identity,
    check_value,
    dataset_of_case,
)
from .errors import InvalidLabelError
from .guidelines import guidelines_now
from .handle import StoreHandle
from .statements import DELETE_LABEL, EVENT_COLUMNS, INSERT_EVENT, UPSERT_COMMENT, UPSERT_LABEL
from .tags import TagSets
from .types import Event

__all__ = ["ADJUDICATED_BY", "LabelWrites"]

#: The note of an ``adjudicate`` event: this prefix and the adjudicator's name.
ADJUDICATED_BY = "adjudicated by "


class LabelWrites:
    """Writing labels: set, clear, undo, comments, adjudications, bulk rows; a ``tags`` event is undone by ``tags``."""

    def __init__(self, handle: StoreHandle, tags: TagSets):
        self._h = handle
        self._b = handle.db
        self._tags = tags

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
            aid = self._h.annotator_id(cur, annotator, create=value is not None)
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

        result = self._h.write(tx)
        if result is None:
            return None
        event, aid = result
        self._h.remember(annotator, aid)  # committed: safe to remember
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
            aid = self._h.annotator_id(cur, annotator, create=False)
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
            ev = self._h.event(target)
            if ev.dimension == TAGS_DIMENSION:
                return self._tags.undo_tags(cur, aid, annotator, ev)
            row = cur.execute(
                "SELECT value, text_hash FROM labels WHERE annotator_id = ? AND unit_id = ? AND dimension = ?",
                (aid, ev.unit_id, ev.dimension),
            ).fetchone()
            current = (row[0], row[1]) if row else (None, None)
            restore_hash = (ev.old_text_hash or ev.text_hash) if ev.old_value is not None else ev.text_hash
            return self._append(cur, aid, annotator, ev.unit_kind, ev.unit_id, ev.case_id, ev.dimension, current,
                                ev.old_value, restore_hash, "undo", undoes=ev.event_id)

        return self._h.write(tx)

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
        changed, unchanged, created, batch, _older = self._h.write(self.rows_tx(rows, action, comments))
        return changed, unchanged, created, batch

    def rows_tx(self, rows: Sequence[tuple[str, Unit, str, int]], action: str,
                 comments: Sequence[tuple[str, Unit, str]] = (), *, times: Sequence[str | None] = (),
                 comment_times: Sequence[str | None] = ()
                 ) -> Callable[[Cursor], tuple[int, int, list[str], int | None, int]]:
        """Validate ``rows`` now; return the transaction body that writes them (see :meth:`write_rows`).

        ``times`` (parallel to ``rows``) and ``comment_times`` (to ``comments``) are canonical
        times (:func:`~.schema.canonical_timestamp`) the events keep instead of now — an import
        keeps when a label was made; ``None`` or a missing entry means now.  The body returns
        :meth:`write_rows`' four counts and a fifth: how many changes are older than the label they
        replaced (that label stays in the history, as the new event's old value).
        """
        if action not in ("import", "set"):
            raise InvalidLabelError(f"bulk writes record 'import' or 'set' events, not {action!r}")
        checked: list[tuple[str, Unit, str, int, str | None]] = []
        for i, (name, unit, dim, value) in enumerate(rows):
            check_unit(unit, dim)
            v = check_value(value)
            if v is None:
                raise InvalidLabelError("imported values must be 1, 0 or UNSURE")
            checked.append((check_annotator(name), unit, dim, v, times[i] if i < len(times) else None))
        notes: list[tuple[str, Unit, str, str | None]] = []
        for i, (name, unit, text) in enumerate(comments):
            check_unit_identity(unit)
            if check_comment(text):
                notes.append((check_annotator(name), unit, check_comment(text),
                              comment_times[i] if i < len(comment_times) else None))
        names = sorted({r[0] for r in checked} | {c[0] for c in notes})
        b = self._b

        def tx(cur: Cursor) -> tuple[int, int, list[str], int | None, int]:
            ids, created = self._h.ids_creating(cur, names)
            b.lock_annotators(cur, ids.values())
            current, said = self._state_of(cur, ids.values())
            changes = []
            older = 0
            for name, unit, dim, value, when in checked:
                key = (ids[name], unit.unit_id, dim)
                old = current.get(key, (None, None, None))
                if old[:2] != (value, unit.text_hash):
                    if when is not None and old[2] is not None and when < b.ts_out(old[2]):
                        older += 1
                    changes.append((key, old, unit, dim, value, when))
                    current[key] = (value, unit.text_hash, None)
            new_comments = []
            for name, unit, text, when in notes:
                ckey = (ids[name], unit.unit_id)
                if said.get(ckey) != text:
                    new_comments.append((ckey, unit, text, when))
                    said[ckey] = text
            if not changes and not new_comments:
                return 0, len(checked), created, None, 0
            batch = self._insert_batch(cur, action, changes, new_comments)
            return len(changes) + len(new_comments), len(checked) - len(changes), created, batch, older

        return tx

    @staticmethod
    def _state_of(cur: Cursor, annotator_ids: Iterable[int]
                  ) -> tuple[dict[tuple[Any, ...], tuple[Any, ...]], dict[tuple[Any, ...], str]]:
        """Current ``{(aid, unit_id, dim): (value, text_hash, updated_at)}`` and ``{(aid, unit_id): comment}``."""
        current: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        said: dict[tuple[Any, ...], str] = {}
        for aid in annotator_ids:
            for uid, dim, value, thash, when in cur.execute(
                "SELECT unit_id, dimension, value, text_hash, updated_at FROM labels WHERE annotator_id = ?", (aid,)
            ).fetchall():
                current[(aid, uid, dim)] = (value, thash, when)
            for uid, text in cur.execute("SELECT unit_id, text FROM comments WHERE annotator_id = ?",
                                         (aid,)).fetchall():
                said[(aid, uid)] = text
        return current, said

    def _insert_batch(self, cur: Cursor, action: str, changes: list[tuple[Any, ...]],
                      new_comments: list[tuple[Any, ...]]) -> int:
        """Append one event per label change and per new comment, one batch; update the current views.

        Each change and comment ends with its time (canonical text, or ``None`` for now)."""
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

        def at(when: str | None) -> Any:
            return now if when is None else b.ts_in(when)

        cur.executemany(INSERT_EVENT, [
            (eid, batch, key[0], unit.unit_kind, unit.unit_id, unit.case_id, dim, old[0], value, old[1],
             unit.text_hash, action, None, at(when), None, gv(unit))
            for eid, (key, old, unit, dim, value, when) in zip(leids, changes, strict=True)
        ])
        cur.executemany(UPSERT_LABEL, [
            (key[0], unit.unit_id, dim, unit.unit_kind, unit.case_id, value, unit.text_hash, at(when), eid)
            for eid, (key, _old, unit, dim, value, when) in zip(leids, changes, strict=True)
        ])
        cur.executemany(INSERT_EVENT, [
            (eid, batch, ckey[0], unit.unit_kind, unit.unit_id, unit.case_id, "", None, None, None,
             unit.text_hash, "comment", None, at(when), text, gv(unit))
            for eid, (ckey, unit, text, when) in zip(ceids, new_comments, strict=True)
        ])
        cur.executemany(UPSERT_COMMENT, [
            (ckey[0], unit.unit_id, unit.unit_kind, unit.case_id, text, at(when), eid)
            for eid, (ckey, unit, text, when) in zip(ceids, new_comments, strict=True)
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
            aid = self._h.annotator_id(cur, annotator, create=bool(text))
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

        result = self._h.write(tx)
        if result is None:
            return None
        self._h.remember(annotator, result[1])
        return result[0]

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

        return self._change(CONSENSUS_ANNOTATOR, unit, dimension, value, "adjudicate", ADJUDICATED_BY + name)
