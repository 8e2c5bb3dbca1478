"""Failure-mode tags on responses, and each dataset's taxonomy of them (error analysis, issue 24.6).

*Open coding*: an annotator gives a response a set of tags
(:meth:`TagSets.set_tags`); a name not yet in the dataset's taxonomy is
added to it in the same transaction (created by that annotator).  Each change
is a ``tags`` event (dimension ``tags``, the new set as typed in ``note`` as
a JSON list) so history, undo, export and verify carry it like a label.

*Axial coding*: an owner renames a tag or merges several into one
(:meth:`TagSets.rename_failure_mode`, :meth:`TagSets.merge_failure_modes`).
No tag event and no note is ever rewritten: the old tag keeps its row with
``merged_into`` set, and every read resolves a typed name by following
``merged_into`` to the tag in use (:func:`resolve_tag`).  Merging into a
missing or merged-away tag, from a missing one, or a bad name: one
:class:`InvalidLabelError`, nothing written.

The tag name rule (:func:`check_tag_name`): lower-case ASCII letters, digits,
``-`` and ``_``; 1 to 40 characters; the first a letter.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..model import Unit
from .base import Backend, Cursor
from .checks import TAGS_DIMENSION, check_annotator, check_unit_identity, dataset_of_case
from .errors import InvalidLabelError
from .guidelines import check_dataset_exists, guidelines_now
from .handle import StoreHandle
from .statements import INSERT_EVENT, UPSERT_TAGS
from .types import Event, FailureMode, UnitTags

__all__ = [
    "MAX_TAG_LENGTH", "TAG_RULE", "TagSets", "check_tag_name", "check_tag_set", "parse_tag_note", "resolve_tag",
    "tag_note",
]

MAX_TAG_LENGTH = 40
#: The tag name rule in words (every refusal quotes it).
TAG_RULE = ("a tag name is 1 to 40 characters: lower-case letters a-z, digits, '-' and '_', "
            "starting with a letter")
_TAG_RE = re.compile(r"[a-z][a-z0-9_-]{0,39}")
_FM_COLUMNS = "dataset, name, description, created_by, created_at, merged_into, merged_by, merged_at"


def check_tag_name(name: Any) -> str:
    """``name`` if it follows :data:`TAG_RULE`, else :class:`InvalidLabelError` (a ``ValueError``) quoting it."""
    if not isinstance(name, str) or _TAG_RE.fullmatch(name) is None:
        raise InvalidLabelError(f"bad tag name {name!r}: {TAG_RULE}")
    return name


def check_tag_set(tags: Iterable[Any]) -> tuple[str, ...]:
    """The sorted set of ``tags`` (each checked by :func:`check_tag_name`); a lone string is refused."""
    if isinstance(tags, str):
        raise InvalidLabelError(f"tags must be a list of names, got the string {tags!r}")
    return tuple(sorted({check_tag_name(t) for t in tags}))


def tag_note(tags: Sequence[str]) -> str:
    """The ``note`` of a ``tags`` event: the canonical JSON list of the (sorted) names."""
    return json.dumps(list(tags), separators=(",", ":"))


def parse_tag_note(note: str | None) -> tuple[str, ...]:
    """The names a ``tags`` event's ``note`` holds (``None`` and ``"[]"`` are the empty set)."""
    return tuple(json.loads(note)) if note else ()


def resolve_tag(mapping: Mapping[str, str | None], name: str) -> str:
    """Follow ``merged_into`` from ``name`` to the tag in use (a name not in ``mapping`` is itself)."""
    seen = {name}
    while (nxt := mapping.get(name)) is not None and nxt not in seen:
        seen.add(nxt)
        name = nxt
    return name


def _failure_mode(b: Backend, row: tuple[Any, ...]) -> FailureMode:
    ds, name, desc, by, created, into, merged_by, merged_at = row
    return FailureMode(ds, name, desc, by, b.ts_out(created), into, merged_by,
                       None if merged_at is None else b.ts_out(merged_at))


class TagSets:
    """Failure-mode tag sets and each dataset's taxonomy, over one handle."""

    def __init__(self, handle: StoreHandle):
        self._h = handle
        self._b = handle.db

    # --- tag sets -------------------------------------------------------------------------------------
    def set_tags(self, annotator: str, unit: Unit, tags: Iterable[str], *, dataset: str | None = None
                 ) -> Event | None:
        """Set ``annotator``'s whole tag set on ``unit`` (empty: no tags); a ``tags`` event, or ``None`` when unchanged.

        Names follow :func:`check_tag_name`; new ones join ``dataset``'s taxonomy
        (default: :func:`dataset_of_case` of the unit's case) in the same transaction.
        """
        name = check_annotator(annotator)
        check_unit_identity(unit)
        raw = check_tag_set(tags)
        ds = dataset or dataset_of_case(unit.case_id)
        note = tag_note(raw)
        b = self._b

        def tx(cur: Cursor) -> tuple[Event, int] | None:
            aid = self._h.annotator_id(cur, name, create=bool(raw))
            if aid is None:
                return None
            b.lock_annotators(cur, [aid])
            old = cur.scalar("SELECT tags FROM tags WHERE annotator_id = ? AND unit_id = ?", (aid, unit.unit_id))
            if (old or "[]") == note:
                return None
            if raw:
                check_dataset_exists(cur, ds)
            now = b.now(cur)
            self.add_missing(cur, ds, raw, name, now)
            return self.tag_event(cur, aid, name, unit, ds, note, now, "tags", None), aid

        result = self._h.write(tx)
        if result is None:
            return None
        self._h.remember(name, result[1])
        return result[0]

    def tags_tx(self, items: Sequence[tuple[str, Unit, Sequence[str]]], times: Sequence[str | None] = ()
                 ) -> Callable[[Cursor], int]:
        """Check ``(annotator, unit, tags)`` items now; return the transaction body setting each non-empty set
        that differs from the current one (a ``tags`` event each; imports never clear).  It returns how many.
        ``times`` (parallel to ``items``, canonical text or ``None`` for now) are the times the events keep."""
        checked = []
        for i, (name, unit, tags) in enumerate(items):
            check_unit_identity(unit)
            raw = check_tag_set(tags)
            if raw:
                checked.append((check_annotator(name), unit, raw, times[i] if i < len(times) else None))
        b = self._b

        def tx(cur: Cursor) -> int:
            if not checked:
                return 0
            ids, _created = self._h.ids_creating(cur, sorted({c[0] for c in checked}))
            b.lock_annotators(cur, ids.values())
            now, written = b.now(cur), 0
            for name, unit, raw, when in checked:
                note, aid = tag_note(raw), ids[name]
                have = cur.scalar("SELECT tags FROM tags WHERE annotator_id = ? AND unit_id = ?", (aid, unit.unit_id))
                if have == note:
                    continue
                ds = dataset_of_case(unit.case_id)
                check_dataset_exists(cur, ds)
                at = now if when is None else b.ts_in(when)
                self.add_missing(cur, ds, raw, name, now)
                self.tag_event(cur, aid, name, unit, ds, note, at, "tags", None)
                written += 1
            return written

        return tx

    def add_missing(self, cur: Cursor, dataset: str, names: Iterable[str], by: str, now: Any) -> None:
        for tag in names:
            cur.execute(f"INSERT INTO failure_modes ({_FM_COLUMNS}) VALUES (?, ?, '', ?, ?, NULL, NULL, NULL)"
                        " ON CONFLICT (dataset, name) DO NOTHING", (dataset, tag, by, now))

    def tag_event(self, cur: Cursor, aid: int, name: str, unit: Unit, dataset: str, note: str, now: Any,
                   action: str, undoes: int | None) -> Event:
        """Append one ``tags`` (or undo) event and bring the ``tags`` row in line with it."""
        b = self._b
        eid = b.next_event_ids(cur, 1)[0]
        gv = guidelines_now(cur, dataset)
        cur.execute(INSERT_EVENT, (eid, eid, aid, unit.unit_kind, unit.unit_id, unit.case_id, TAGS_DIMENSION, None,
                                   None, None, unit.text_hash, action, undoes, now, note, gv))
        if note == "[]":
            cur.execute("DELETE FROM tags WHERE annotator_id = ? AND unit_id = ?", (aid, unit.unit_id))
        else:
            cur.execute(UPSERT_TAGS, (aid, unit.unit_id, unit.unit_kind, unit.case_id, dataset, note, unit.text_hash,
                                      now, eid))
        return Event(eid, name, unit.unit_kind, unit.unit_id, TAGS_DIMENSION, None, None, unit.text_hash,
                     b.ts_out(now), action, unit.case_id, None, eid, undoes, note, gv)

    def undo_tags(self, cur: Cursor, aid: int, name: str, target: Event) -> Event:
        """The undo of ``target`` (a ``tags`` event): restore the set the chain had before it."""
        before = cur.scalar(
            "SELECT note FROM events WHERE annotator_id = ? AND unit_id = ? AND dimension = ? AND event_id < ?"
            " ORDER BY event_id DESC LIMIT 1", (aid, target.unit_id, TAGS_DIMENSION, target.event_id))
        dataset = cur.scalar("SELECT dataset FROM tags WHERE annotator_id = ? AND unit_id = ?", (aid, target.unit_id))
        unit = Unit(target.unit_kind, target.unit_id, target.case_id, "", (), "", target.text_hash)
        return self.tag_event(cur, aid, name, unit, dataset or dataset_of_case(target.case_id),
                               tag_note(parse_tag_note(before)), self._b.now(cur), "undo", target.event_id)

    def tags(self, unit_ids: Iterable[str] | None = None, annotator: str | None = None,
             dataset: str | None = None) -> list[UnitTags]:
        """Current tag sets, sorted by (unit_id, annotator), names resolved through each dataset's taxonomy."""
        sql = ("SELECT a.name, t.unit_id, t.unit_kind, t.case_id, t.dataset, t.tags, t.text_hash, t.updated_at"
               " FROM tags t JOIN annotators a ON a.annotator_id = t.annotator_id WHERE 1 = 1")
        params: list[Any] = []
        if annotator is not None:
            sql += " AND a.name = ?"
            params.append(annotator)
        if dataset is not None:
            sql += " AND t.dataset = ?"
            params.append(dataset)

        def q(cur: Cursor) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
            return (self._h.chunked(cur, sql, params, "t.unit_id", unit_ids),
                    cur.execute("SELECT dataset, name, merged_into FROM failure_modes").fetchall())

        rows, modes = self._b.read(q)
        maps: dict[str, dict[str, str | None]] = {}
        for ds, tag, into in modes:
            maps.setdefault(ds, {})[tag] = into
        out = []
        for who, uid, kind, case_id, ds, note, thash, updated in rows:
            raw = parse_tag_note(note)
            resolved = tuple(sorted({resolve_tag(maps.get(ds, {}), t) for t in raw}))
            out.append(UnitTags(who, uid, resolved, thash, self._b.ts_out(updated), raw, ds, case_id, kind))
        out.sort(key=lambda x: (x.unit_id, x.annotator))
        return out

    # --- the taxonomy ---------------------------------------------------------------------------------
    def taxonomy(self, dataset: str) -> list[FailureMode]:
        """Every tag of ``dataset``'s taxonomy, sorted by name (renamed/merged ones with ``merged_into``)."""
        rows = self._b.read(lambda cur: cur.execute(
            f"SELECT {_FM_COLUMNS} FROM failure_modes WHERE dataset = ? ORDER BY name", (dataset,)).fetchall())
        return [_failure_mode(self._b, r) for r in rows]

    def add_failure_mode(self, dataset: str, name: str, annotator: str, description: str = "") -> FailureMode:
        """Add ``name`` to ``dataset``'s taxonomy (open coding); a tag already in use is returned as it is.

        A name that was renamed or merged away is refused (it names where it went).
        """
        tag = check_tag_name(name)
        who = check_annotator(annotator, allow_reserved=True)
        if not isinstance(description, str) or "\x00" in description or len(description) > 2000:
            raise InvalidLabelError("a tag description is text of at most 2000 characters")
        b = self._b

        def tx(cur: Cursor) -> FailureMode:
            check_dataset_exists(cur, dataset)
            cur.execute(f"INSERT INTO failure_modes ({_FM_COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL, NULL, NULL)"
                        " ON CONFLICT (dataset, name) DO NOTHING", (dataset, tag, description.strip(), who, b.now(cur)))
            mode = self._mode(cur, dataset, tag)
            assert mode is not None
            if mode.merged_into is not None:
                raise InvalidLabelError(f"tag {tag!r} of dataset {dataset!r} was merged into {mode.merged_into!r}; "
                                        f"use {mode.merged_into!r}; nothing was written")
            return mode

        return self._h.write(tx)

    def _mode(self, cur: Cursor, dataset: str, name: str) -> FailureMode | None:
        row = cur.execute(f"SELECT {_FM_COLUMNS} FROM failure_modes WHERE dataset = ? AND name = ?",
                          (dataset, name)).fetchone()
        return None if row is None else _failure_mode(self._b, row)

    def _in_use(self, cur: Cursor, dataset: str, name: str, role: str) -> FailureMode:
        mode = self._mode(cur, dataset, name)
        if mode is None:
            known = [m.name for m in self._modes(cur, dataset) if m.merged_into is None]
            raise InvalidLabelError(f"no tag {name!r} in the taxonomy of dataset {dataset!r} to {role} "
                                    f"(tags in use: {', '.join(known) or 'none'}); nothing was written")
        if mode.merged_into is not None:
            raise InvalidLabelError(f"tag {name!r} of dataset {dataset!r} was already merged into "
                                    f"{mode.merged_into!r}; nothing was written")
        return mode

    def _modes(self, cur: Cursor, dataset: str) -> list[FailureMode]:
        rows = cur.execute(f"SELECT {_FM_COLUMNS} FROM failure_modes WHERE dataset = ? ORDER BY name",
                           (dataset,)).fetchall()
        return [_failure_mode(self._b, r) for r in rows]

    def rename_failure_mode(self, dataset: str, old: str, new: str, by: str) -> FailureMode:
        """Rename tag ``old`` to ``new`` (a name not used before in ``dataset``); returns the new tag.

        ``old`` keeps its row, ``merged_into = new``: tag sets that hold ``old`` now read as ``new``.
        """
        check_tag_name(old)
        tag = check_tag_name(new)
        who = check_annotator(by, allow_reserved=True)
        b = self._b

        def tx(cur: Cursor) -> FailureMode:
            source = self._in_use(cur, dataset, old, "rename")
            if self._mode(cur, dataset, tag) is not None:
                raise InvalidLabelError(f"tag {tag!r} already exists in dataset {dataset!r}: merge {old!r} into it "
                                        "instead (playground tags merge); nothing was written")
            now = b.now(cur)
            cur.execute(f"INSERT INTO failure_modes ({_FM_COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL, NULL, NULL)",
                        (dataset, tag, source.description, who, now))
            cur.execute("UPDATE failure_modes SET merged_into = ?, merged_by = ?, merged_at = ?"
                        " WHERE dataset = ? AND name = ?", (tag, who, now, dataset, old))
            mode = self._mode(cur, dataset, tag)
            assert mode is not None
            return mode

        return self._h.write(tx)

    def merge_failure_modes(self, dataset: str, sources: Sequence[str], target: str, by: str) -> FailureMode:
        """Merge every tag of ``sources`` into ``target`` (which must exist and be in use); returns the target.

        All names are checked before anything is written; a source equal to
        the target, missing, or already merged is refused.
        """
        if isinstance(sources, str) or not sources:
            raise InvalidLabelError("merge needs a list of one or more tags to merge")
        names = [check_tag_name(s) for s in sources]
        check_tag_name(target)
        who = check_annotator(by, allow_reserved=True)
        if target in names:
            raise InvalidLabelError(f"cannot merge tag {target!r} into itself; nothing was written")
        b = self._b

        def tx(cur: Cursor) -> FailureMode:
            into = self._in_use(cur, dataset, target, "merge into")
            for s in names:
                self._in_use(cur, dataset, s, "merge")
            now = b.now(cur)
            cur.executemany("UPDATE failure_modes SET merged_into = ?, merged_by = ?, merged_at = ?"
                            " WHERE dataset = ? AND name = ?", [(target, who, now, dataset, s) for s in names])
            return into

        return self._h.write(tx)
