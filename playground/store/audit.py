"""Auditing a store: a full dump, the log replayed against the current views, and exact copies.

:meth:`Audit.dump` gives every row of every table in primary-key order
(timestamps canonical), so two stores with equal dumps hold the same content.
:meth:`Audit.verify` replays the event log: each label event's
``old_value`` must be the value the previous event of that label left, every
undo must name an earlier event, and the replay must give exactly the
``labels``, ``comments`` and ``tags`` tables.  :meth:`Audit.copy_from`
copies a store into an empty one, ids and timestamps included, and checks that
both dumps are equal.
"""
from __future__ import annotations

from typing import Any, Protocol

from .base import Cursor
from .checks import TAGS_DIMENSION
from .errors import StoreError
from .handle import StoreHandle
from .statements import DUMP, INSERT_EVENT, LESSON_COLUMNS, UPSERT_COMMENT, UPSERT_TAGS

__all__ = ["Audit", "DumpSource"]


class DumpSource(Protocol):
    """What :meth:`Audit.copy_from` reads a store through (a :class:`~.core.LabelStore` is one)."""

    @property
    def url(self) -> str: ...

    def dump(self) -> dict[str, list[tuple[Any, ...]]]: ...


class Audit:
    """Auditing one store: dump, verify (the log replayed), integrity check, exact copies into it."""

    def __init__(self, handle: StoreHandle):
        self._h = handle
        self._b = handle.db

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
        if self._h.backend == "sqlite":
            rows = self._b.read(lambda cur: cur.execute("PRAGMA integrity_check").fetchall())
            problems += [r[0] for r in rows if r[0] != "ok"]
        return problems + self.verify()

    def copy_from(self, source: DumpSource) -> dict[str, int]:
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
                    raise StoreError(f"the target store {self._h.url} is not empty ({table} has rows); "
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

        self._h.write(tx)
        copied = self.dump()
        if copied != data:
            diff = [t for t in data if data[t] != copied[t]]
            raise StoreError(f"copy verification failed: tables {diff} differ between {source.url} and {self._h.url}")
        return {t: len(rows) for t, rows in data.items()}

