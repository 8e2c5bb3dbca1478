"""A dataset's own annotation records out of the store and back in: its taxonomy and its guidelines.

An export carries, besides the label events (:mod:`.replay`), one *record*
per failure mode of the dataset's taxonomy and per guidelines version, as
plain JSON-able dicts with a ``record`` key (``"failure_mode"`` or
``"guidelines"``), in the label history of the export's first sample, so a
file alone restores them.

The rule of a restore (:func:`restore_records_tx`):

* a failure mode the store's taxonomy lacks is added as it was (creator,
  time, ``merged_into``); one it has is left as the store has it;
* guidelines: when the store has no version of the dataset, every version is
  written as it was (numbers, authors, times); when the store's versions
  begin with the file's (or the file's with the store's), the missing later
  ones are appended as they were; otherwise the two differ and the file's
  latest text, unless it is the store's current one, becomes a new version
  now.  Nothing is dropped, nothing the store has is changed.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .base import Cursor
from .checks import annotator_problem
from .guidelines import check_guidelines, guidelines_now
from .tags import check_tag_name
from .types import FailureMode, Guidelines

__all__ = ["RECORD_KINDS", "check_record", "failure_mode_record", "guidelines_record", "is_record",
           "records_of", "restore_records_tx"]

RECORD_KINDS = ("failure_mode", "guidelines")
_FM_KEYS = ("name", "description", "created_by", "time", "merged_into", "merged_by", "merged_at")
_GL_KEYS = ("version", "markdown", "author", "time")


def is_record(obj: Any) -> bool:
    """Whether ``obj`` (an item of an exported label history) is a record, not an event."""
    return isinstance(obj, dict) and "record" in obj


def failure_mode_record(m: FailureMode) -> dict[str, Any]:
    """One failure mode as exported."""
    return {"record": "failure_mode", "name": m.name, "description": m.description, "created_by": m.created_by,
            "time": m.created_at, "merged_into": m.merged_into, "merged_by": m.merged_by, "merged_at": m.merged_at}


def guidelines_record(g: Guidelines) -> dict[str, Any]:
    """One guidelines version as exported."""
    return {"record": "guidelines", "version": g.version, "markdown": g.markdown, "author": g.author,
            "time": g.created_at}


def records_of(store: Any, dataset: str) -> list[dict[str, Any]]:
    """Every record of ``dataset``: its failure modes (by name), then its guidelines versions (oldest first)."""
    return ([failure_mode_record(m) for m in store.taxonomy(dataset)]
            + [guidelines_record(g) for g in store.guidelines_history(dataset)])


def _text_or_none(obj: Mapping[str, Any], *keys: str) -> bool:
    return all(obj[k] is None or isinstance(obj[k], str) for k in keys)


def check_record(obj: Mapping[str, Any]) -> str | None:
    """Why ``obj`` is not a well-formed record (``None`` when it is)."""
    kind = obj.get("record")
    if kind not in RECORD_KINDS:
        return f"unknown record {kind!r} (known: {', '.join(RECORD_KINDS)})"
    keys = _FM_KEYS if kind == "failure_mode" else _GL_KEYS
    missing = [k for k in keys if k not in obj]
    if missing:
        return f"a {kind} record needs {', '.join(missing)}"
    try:
        if kind == "failure_mode":
            check_tag_name(obj["name"])
            if obj["merged_into"] is not None:
                check_tag_name(obj["merged_into"])
            if not isinstance(obj["description"], str) or not isinstance(obj["time"], str) or not _text_or_none(
                    obj, "merged_by", "merged_at"):
                return "a failure_mode record's description and time are text; merged_by and merged_at text or null"
            return annotator_problem(obj["created_by"], allow_reserved=True)
        check_guidelines(obj["markdown"], "a guidelines record")
    except ValueError as exc:
        return str(exc)
    v = obj["version"]
    if not isinstance(v, int) or isinstance(v, bool) or v < 1 or not isinstance(obj["time"], str):
        return "a guidelines record's version is an integer from 1 and its time text"
    return annotator_problem(obj["author"], allow_reserved=True)


def restore_records_tx(store: Any, records: Sequence[Mapping[str, Any]], dataset: str
                       ) -> Callable[[Cursor], tuple[int, int]]:
    """The transaction body restoring checked ``records`` of ``dataset`` (see the module docstring); it returns
    ``(failure modes added, guidelines versions added)``."""
    modes = [r for r in records if r["record"] == "failure_mode"]
    versions = sorted((r for r in records if r["record"] == "guidelines"), key=lambda r: r["version"])
    b = store.handle.db

    def tx(cur: Cursor) -> tuple[int, int]:
        added = 0
        for r in modes:
            merged_at = None if r["merged_at"] is None else b.ts_in(r["merged_at"])
            row = cur.execute(
                "INSERT INTO failure_modes (dataset, name, description, created_by, created_at, merged_into, merged_by,"
                " merged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dataset, name) DO NOTHING RETURNING name",
                (dataset, r["name"], r["description"], r["created_by"], b.ts_in(r["time"]), r["merged_into"],
                 r["merged_by"], merged_at)).fetchone()
            added += row is not None
        return added, _restore_guidelines(store, cur, dataset, versions)

    return tx


def _restore_guidelines(store: Any, cur: Cursor, dataset: str, versions: list[Mapping[str, Any]]) -> int:
    if not versions:
        return 0
    b = store.handle.db
    have = [r[0] for r in cur.execute("SELECT markdown FROM guidelines WHERE dataset = ? ORDER BY version",
                                      (dataset,)).fetchall()]
    mine = [v["markdown"] for v in versions]
    if have[:len(mine)] == mine:
        return 0
    insert = "INSERT INTO guidelines (dataset, version, markdown, author, created_at) VALUES (?, ?, ?, ?, ?)"
    if mine[:len(have)] == have and [v["version"] for v in versions] == list(range(1, len(versions) + 1)):
        later = versions[len(have):]
        cur.executemany(insert, [(dataset, v["version"], v["markdown"], v["author"], b.ts_in(v["time"]))
                                 for v in later])
        return len(later)
    if have and have[-1] == mine[-1]:
        return 0
    last = versions[-1]
    cur.execute(insert, (dataset, (guidelines_now(cur, dataset) or 0) + 1, last["markdown"], last["author"],
                         b.now(cur)))
    return 1
