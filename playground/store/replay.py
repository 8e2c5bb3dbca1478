"""A dataset's label history out of the store and back in, exactly: events with their times, notes and order.

:func:`history_of` gives every event on the units of one dataset's cases as
plain JSON-able dicts (:data:`EVENT_KEYS`); :func:`check_events` validates such
dicts read back from a file; :func:`restore_tx` is the transaction body that
writes them into a store (run inside :meth:`LabelStore.put_dataset`, so the
dataset and its history arrive together or not at all).

The rule of a restore, per *chain* — one (annotator, unit, dimension) label,
one (annotator, unit) comment (dimension ``""``), or one (annotator, unit) tag
set (dimension ``tags``; its rows in the ``tags`` table follow the last event):

* the store has no event on the chain: every event of the chain is appended
  as it was (action, old and new value, text hashes, note, time); event ids
  are new (after the store's last), ``batch`` and ``undoes`` are renumbered to
  those new ids, so a fresh store ends up with the same history, labels,
  comments and adjudications as the exported one;
* the store's events on the chain are the file's (same actions, values,
  hashes, notes and times) or begin with them: unchanged;
* otherwise the two histories differ: the file's final state is written as
  one ``import`` event now (a label value, or a comment), as ``labels import``
  would, or one ``tags`` event now (a tag set); a final state of "no label"
  or "no tags" clears nothing.  Nothing is dropped.

Items of a history that are records (a dataset's taxonomy and guidelines,
:mod:`.records`) are skipped here; :func:`.records.restore_records_tx` writes them.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .base import Cursor
from .checks import TAGS_DIMENSION, annotator_problem
from .core import LabelStore
from .records import is_record
from .statements import DELETE_LABEL, INSERT_EVENT, UPSERT_COMMENT, UPSERT_LABEL, UPSERT_TAGS
from .tags import parse_tag_note, tag_note
from .types import ACTIONS, UNSURE, Event

__all__ = ["EVENT_KEYS", "Restored", "check_events", "event_dict", "history_of", "restore_tx"]

#: The keys every exported event has (see :func:`event_dict`); ``guidelines_version`` (schema 5) may be
#: missing in an older export (read as null).
EVENT_KEYS: tuple[str, ...] = ("event", "batch", "time", "annotator", "action", "unit_kind", "unit_id", "case_id",
                               "dimension", "old", "value", "text_hash", "old_text_hash", "undoes", "note")
_VALUES: dict[int, int | str] = {1: 1, 0: 0, UNSURE: "unsure"}
_BACK: dict[Any, int | None] = {1: 1, 0: 0, "unsure": UNSURE, None: None}


def _out(value: int | None) -> int | str | None:
    return None if value is None else _VALUES[value]


def event_dict(e: Event) -> dict[str, Any]:
    """One event as exported: values 1, 0, ``"unsure"`` or null; ``event``/``batch``/``undoes`` the store's ids."""
    return {"event": e.event_id, "batch": e.batch_id, "time": e.created_at, "annotator": e.annotator,
            "action": e.action, "unit_kind": e.unit_kind, "unit_id": e.unit_id, "case_id": e.case_id,
            "dimension": e.dimension, "old": _out(e.old_value), "value": _out(e.new_value), "text_hash": e.text_hash,
            "old_text_hash": e.old_text_hash, "undoes": e.undoes, "note": e.note,
            "guidelines_version": e.guidelines_version}


def history_of(store: LabelStore, case_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """``{case_id: [event dict, ...]}`` (oldest first) of every event on the units of ``case_ids``."""
    wanted = set(case_ids)
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in store.events():
        if e.case_id in wanted:
            out[e.case_id].append(event_dict(e))
    return dict(out)


def _int_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def check_event(obj: Any, prefix: str) -> str | None:
    """Why ``obj`` is not an exported event of a dataset whose unit ids start with ``prefix`` (None when it is)."""
    if not isinstance(obj, dict):
        return f"an event must be an object, got {type(obj).__name__}"
    missing = [k for k in EVENT_KEYS if k not in obj]
    if missing:
        return f"an event needs {', '.join(missing)}"
    problem = annotator_problem(obj["annotator"], allow_reserved=True)
    if problem:
        return problem
    if obj["action"] not in ACTIONS:
        return f"unknown action {obj['action']!r} (known: {', '.join(ACTIONS)})"
    for key in ("unit_kind", "unit_id", "case_id", "dimension", "text_hash", "time"):
        if not isinstance(obj[key], str):
            return f"{key} must be text, got {obj[key]!r}"
    if not obj["unit_id"].startswith(prefix) or not obj["case_id"].startswith(prefix):
        return f"unit {obj['unit_id']!r} is not of this dataset (its ids start with {prefix!r}: import under that name)"
    for key in ("old", "value"):
        if obj[key] not in _BACK or isinstance(obj[key], bool):
            return f"{key} must be 1, 0, \"unsure\" or null, got {obj[key]!r}"
    if not all(_int_or_none(obj[k]) for k in ("event", "batch", "undoes")) or obj["event"] is None:
        return "event, batch and undoes must be integers (undoes may be null)"
    if not all(obj[k] is None or isinstance(obj[k], str) for k in ("note", "old_text_hash")):
        return "note and old_text_hash must be text or null"
    if not _int_or_none(obj.get("guidelines_version")):
        return "guidelines_version must be an integer or null"
    if obj["dimension"] == TAGS_DIMENSION:
        try:
            parse_tag_note(obj["note"])
        except (TypeError, ValueError):
            return "the note of a tags event must be a JSON list of tag names"
    return None


def check_events(events: Sequence[Any], prefix: str) -> list[tuple[int, str]]:
    """``[(index, problem)]`` of events that are not well formed (see :func:`check_event`); ids given twice too."""
    problems = []
    seen: set[int] = set()
    for i, obj in enumerate(events):
        if is_record(obj):
            continue
        problem = check_event(obj, prefix)
        if problem is None and obj["event"] in seen:
            problem = f"event {obj['event']} is given twice"
        if problem is not None:
            problems.append((i, problem))
        else:
            seen.add(obj["event"])
    return problems


@dataclass(frozen=True)
class Restored:
    """What :func:`restore_tx` wrote: events appended as they were, chains already so, chains merged as imports."""

    restored: int = 0
    unchanged: int = 0
    merged: int = 0


def _chain(e: Mapping[str, Any]) -> tuple[str, str, str]:
    return (e["annotator"], e["unit_id"], e["dimension"] if e["action"] != "comment" else "")


def _same(e: Mapping[str, Any]) -> tuple[Any, ...]:
    """What must agree for two events to be the same change (not the ids)."""
    return (e["action"], e["old"], e["value"], e["text_hash"], e["old_text_hash"], e["note"], e["time"],
            e.get("guidelines_version"))


def _stored_chains(store: LabelStore, cur: Cursor, prefix: str) -> dict[tuple[str, str, str], list[tuple[Any, ...]]]:
    """The store's events on unit ids starting with ``prefix``, by chain (oldest first)."""
    b = store.handle.db
    rows = cur.execute(
        "SELECT e.event_id, a.name, e.unit_kind, e.unit_id, e.dimension, e.old_value, e.new_value, e.text_hash,"
        " e.created_at, e.action, e.case_id, e.old_text_hash, e.batch_id, e.undoes, e.note, e.guidelines_version"
        " FROM events e"
        " JOIN annotators a ON a.annotator_id = e.annotator_id WHERE e.unit_id >= ? AND e.unit_id < ?"
        " ORDER BY e.event_id", (prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1))).fetchall()
    out: dict[tuple[str, str, str], list[tuple[Any, ...]]] = defaultdict(list)
    for r in rows:
        e = event_dict(Event(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], b.ts_out(r[8]), r[9], r[10], r[11],
                             r[12], r[13], r[14], r[15]))
        out[_chain(e)].append(_same(e))
    return out


def restore_tx(store: LabelStore, events: Sequence[Mapping[str, Any]], prefix: str,
               units: Mapping[str, Any]) -> Callable[[Cursor], Restored]:
    """The transaction body restoring checked ``events`` (see the module docstring); ``units`` for merges."""
    chains: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    dataset = prefix[:-1]
    for e in sorted((x for x in events if not is_record(x)), key=lambda x: x["event"]):
        chains[_chain(e)].append(e)

    def tx(cur: Cursor) -> Restored:
        stored = _stored_chains(store, cur, prefix)
        fresh: list[Mapping[str, Any]] = []
        merges: list[Mapping[str, Any]] = []
        unchanged = 0
        for key, mine in chains.items():
            have = stored.get(key, [])
            if not have:
                fresh += mine
            elif have[:len(mine)] == [_same(e) for e in mine]:
                unchanged += 1
            else:
                merges.append(mine[-1])
        ids, _created = store.handle.ids_creating(cur, sorted({e["annotator"] for e in fresh}))
        store.handle.db.lock_annotators(cur, ids.values())
        _append_as_they_were(store, cur, sorted(fresh, key=lambda x: x["event"]), ids, dataset)
        merged = _merge(store, cur, merges, units, dataset)
        return Restored(len(fresh), unchanged, merged)

    return tx


def _append_as_they_were(store: LabelStore, cur: Cursor, events: list[Mapping[str, Any]], ids: dict[str, int],
                         dataset: str) -> None:
    """Append ``events`` (chains the store has no event on) with their times; bring labels and comments in line."""
    if not events:
        return
    b = store.handle.db
    new_ids = dict(zip((e["event"] for e in events), b.next_event_ids(cur, len(events)), strict=True))
    batches: dict[int, int] = {}
    for e in events:
        batches.setdefault(e["batch"] if e["batch"] is not None else e["event"], new_ids[e["event"]])
    rows = []
    last: dict[tuple[str, str, str], tuple[Mapping[str, Any], int]] = {}
    for e in events:
        eid = new_ids[e["event"]]
        batch = batches[e["batch"] if e["batch"] is not None else e["event"]]
        undoes = new_ids.get(e["undoes"]) if e["undoes"] is not None else None
        rows.append((eid, batch, ids[e["annotator"]], e["unit_kind"], e["unit_id"], e["case_id"], e["dimension"],
                     _BACK[e["old"]], _BACK[e["value"]], e["old_text_hash"], e["text_hash"], e["action"], undoes,
                     b.ts_in(e["time"]), e["note"], e.get("guidelines_version")))
        last[_chain(e)] = (e, eid)
    cur.executemany(INSERT_EVENT, rows)
    labels, gone, comments, silent, tagged = [], [], [], [], []
    for (_name, uid, dim), (e, eid) in last.items():
        aid = ids[e["annotator"]]
        if dim == TAGS_DIMENSION:
            tagged.append((aid, uid, e, eid))
        elif e["action"] == "comment":
            if e["note"]:
                comments.append((aid, uid, e["unit_kind"], e["case_id"], e["note"], b.ts_in(e["time"]), eid))
            else:
                silent.append((aid, uid))
        elif e["value"] is None:
            gone.append((aid, uid, dim))
        else:
            labels.append((aid, uid, dim, e["unit_kind"], e["case_id"], _BACK[e["value"]], e["text_hash"],
                           b.ts_in(e["time"]), eid))
    cur.executemany(UPSERT_LABEL, labels)
    cur.executemany(DELETE_LABEL, gone)
    cur.executemany(UPSERT_COMMENT, comments)
    cur.executemany("DELETE FROM comments WHERE annotator_id = ? AND unit_id = ?", silent)
    _tag_rows(store, cur, tagged, dataset)


def _tag_rows(store: LabelStore, cur: Cursor, tagged: list[tuple[int, str, Mapping[str, Any], int]],
              dataset: str) -> None:
    """The ``tags`` rows of restored tag chains, and every tag they name in the taxonomy (as the file had it)."""
    b = store.handle.db
    for aid, uid, e, eid in tagged:
        names = parse_tag_note(e["note"])
        if not names:
            cur.execute("DELETE FROM tags WHERE annotator_id = ? AND unit_id = ?", (aid, uid))
            continue
        cur.execute(UPSERT_TAGS, (aid, uid, e["unit_kind"], e["case_id"], dataset, tag_note(names), e["text_hash"],
                                  b.ts_in(e["time"]), eid))
        store.tagging.add_missing(cur, dataset, names, e["annotator"], b.ts_in(e["time"]))


def _merge(store: LabelStore, cur: Cursor, finals: list[Mapping[str, Any]], units: Mapping[str, Any],
           dataset: str) -> int:
    """Write the final state of chains whose histories differ as ``import`` events (never clearing); a
    differing tag set as one ``tags`` event now (an empty final set clears nothing)."""
    rows: list[tuple[str, Any, str, int]] = []
    notes: list[tuple[str, Any, str]] = []
    tagged = 0
    for e in finals:
        unit = units.get(e["unit_id"])
        if unit is None or (e["annotator"] == "consensus" and e["action"] != "comment"):
            continue  # an orphaned unit, or an adjudication the store settled otherwise: the store's stands
        if e["dimension"] == TAGS_DIMENSION:
            tagged += _merge_tags(store, cur, e, unit, dataset)
        elif e["action"] == "comment":
            if e["note"]:
                notes.append((e["annotator"], unit, e["note"]))
        elif (value := _BACK[e["value"]]) is not None:
            rows.append((e["annotator"], unit, e["dimension"], value))
    if not rows and not notes:
        return tagged
    changed, *_ = store.writes.rows_tx(rows, "import", notes)(cur)
    return int(changed) + tagged


def _merge_tags(store: LabelStore, cur: Cursor, e: Mapping[str, Any], unit: Any, dataset: str) -> int:
    """The file's final tag set of one chain as a ``tags`` event now, when it is not empty and not the store's."""
    names = parse_tag_note(e["note"])
    if not names:
        return 0
    ids, _ = store.handle.ids_creating(cur, [e["annotator"]])
    aid = ids[e["annotator"]]
    store.handle.db.lock_annotators(cur, [aid])
    note = tag_note(names)
    if cur.scalar("SELECT tags FROM tags WHERE annotator_id = ? AND unit_id = ?", (aid, unit.unit_id)) == note:
        return 0
    now = store.handle.db.now(cur)
    store.tagging.add_missing(cur, dataset, names, e["annotator"], now)
    store.tagging.tag_event(cur, aid, e["annotator"], unit, dataset, note, now, "tags", None)
    return 1
