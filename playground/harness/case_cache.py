"""The harness's result of each case of a stored dataset, kept on disk: what a run and the page share.

A dataset imported into the label store (10,000 samples is 7–30 s of
harness) is not run whole by the page: :class:`CaseHarness` scores a case
when first needed and keeps it in the folder ``dataset-<key>/`` of
:func:`cache_dir`, where the key (:func:`dataset_fingerprint`) is the SHA-256
of the dataset's name, its revision in the store (the SHA-256 of its stored
payload, so a re-import with other content gets another folder), the
configuration and the source of the modules whose code decides the results
(``playground/*.py`` and ``playground/harness/*.py``).

One file per dataset revision: every case's result is a row of
``dataset-<key>/cases.sqlite`` (:class:`CaseResults`: case id → the JSON text
``{"case_id": ..., "result": ...}``), written in batches of one transaction
by ``playground harness run --dataset`` and one row at a time by a page that
scores a case on demand.  SQLite's write-ahead log lets the kernels of a class
read while one writes, and a cache is written without an fsync per case
(``synchronous=NORMAL``: the log is synced at checkpoints, never torn).  A row
holds the case id it was written for and is used only when that id matches
and its JSON parses.  JSON only (no pickle): reading can never run code.  A
file that cannot be opened, read or written is ignored (the case is scored as
if nothing were kept); the file is created ``0600`` (a per-user cache).
Other JSON documents of the revision (the page's unit counts) are
:class:`KeptFiles`, one small file each.

The directory is ``$PLAYGROUND_CACHE`` or the user cache directory
(``platformdirs``); ``PLAYGROUND_CACHE=off`` turns the cache off.
``playground harness run --dataset`` fills it (:mod:`.run_dataset`) and the
labelling page reads it (:mod:`playground.ui.harness_cache`, which adds the
shipped set's whole-run file).  Core code: no widgets.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..files import write_atomic

__all__ = ["FORMAT", "CaseHarness", "CaseResults", "KeptFiles", "cache_dir", "case_text", "config_and_code",
           "dataset_fingerprint", "write_kept"]

#: 2: one SQLite file of case results per dataset revision (1 was one JSON file per case).
FORMAT = 2

_PACKAGE = Path(__file__).resolve().parents[1]


def cache_dir() -> Path | None:
    """Where the files live, or None when the cache is off."""
    where = os.environ.get("PLAYGROUND_CACHE", "")
    if where.strip().lower() == "off":
        return None
    if where:
        return Path(where)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("rag-label-playground")) / "harness"


def config_and_code(h: Any, config: Any) -> None:
    """Feed the configuration (canonical JSON) and the deciding source code into the hash ``h``."""
    h.update(json.dumps(config.data, sort_keys=True, default=str).encode())
    for path in sorted([*_PACKAGE.glob("*.py"), *(_PACKAGE / "harness").glob("*.py")]):
        h.update(path.name.encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())


def dataset_fingerprint(name: str, revision: str, config: Any) -> str:
    """SHA-256 of a stored dataset's name and revision (its payload's SHA-256), the configuration and the code."""
    h = hashlib.sha256(f"format {FORMAT}\nstored dataset\n{name}\n{revision}\n".encode())
    config_and_code(h, config)
    return h.hexdigest()


def write_kept(path: Path, text: str) -> None:
    """Write a kept file atomically, creating its folder; 0600 (a per-user cache)."""
    if not path.parent.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text, private=True)  # a per-user cache: 0600, as before


def case_text(case_id: str, result: Mapping[str, Any]) -> str:
    """The kept JSON text of a case's result: ``{"case_id": ..., "result": ...}``, keys sorted."""
    return json.dumps({"case_id": case_id, "result": result}, sort_keys=True)


class KeptFiles:
    """JSON documents kept under one key: ``cache_dir()/dataset-<key>/<name>.json``; off when the cache is.

    :meth:`get` gives None for a missing, unreadable or damaged file (never an
    error); :meth:`put` writes atomically and returns False when it cannot.
    """

    def __init__(self, key: str) -> None:
        where = cache_dir()
        self.folder = None if where is None else where / f"dataset-{key}"

    def get(self, name: str) -> Any:
        if self.folder is None:
            return None
        try:
            return json.loads((self.folder / f"{name}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, name: str, data: Any) -> bool:
        try:
            return self.put_text(name, json.dumps(data, sort_keys=True))
        except (TypeError, ValueError):
            return False

    def put_text(self, name: str, text: str) -> bool:
        """Write ``text`` (JSON already) as ``name``; False when the cache is off or not writable."""
        if self.folder is None:
            return False
        try:
            write_kept(self.folder / f"{name}.json", text)
        except OSError:
            return False
        return True


class CaseResults:
    """The kept case results of one dataset revision: ``folder/cases.sqlite`` (module docstring).

    :meth:`get` gives the kept text of a case or None (cache off, no row, a file
    that cannot be read); :meth:`put` writes many rows in one transaction and
    returns False when it cannot.  The connection opens on first use.
    """

    FILE = "cases.sqlite"

    def __init__(self, folder: Path | None) -> None:
        self.path = None if folder is None else folder / self.FILE
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection | None:
        if self._db is not None or self.path is None:
            return self._db
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))  # 0600 before SQLite makes it
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS results (case_id TEXT PRIMARY KEY, kept TEXT NOT NULL)")
        except (OSError, sqlite3.Error):
            self.path = None  # not usable: behave as if the cache were off
            return None
        self._db = db
        return db

    def get(self, case_id: str) -> str | None:
        db = self._connect()
        if db is None:
            return None
        try:
            row = db.execute("SELECT kept FROM results WHERE case_id = ?", (case_id,)).fetchone()
        except sqlite3.Error:
            return None
        return None if row is None else str(row[0])

    def put(self, rows: Iterable[tuple[str, str]]) -> bool:
        """Keep every ``(case_id, text)`` of ``rows`` (replacing what was kept) in one transaction."""
        db = self._connect()
        if db is None:
            return False
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT OR REPLACE INTO results (case_id, kept) VALUES (?, ?)", rows)
            db.execute("COMMIT")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            return False
        return True

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class CaseHarness:
    """The harness's result of each case of a stored dataset, scored on first request and kept on disk.

    ``result(case_id)`` is :func:`playground.harness.run.score_case` on the
    case, its responses and its passages as given (rank in the order given,
    score 0) — what :func:`~playground.ui.session.compute_harness` gives for
    that case — in its JSON form (tuples become lists), whether read from the
    file or computed now.  ``read`` and ``computed`` count the cases of each.
    """

    def __init__(self, dataset: Any, passages: Mapping[str, Any], config: Any, key: str) -> None:
        self.dataset = dataset
        self.passages = passages
        self.config = config
        self.files = KeptFiles(key)
        self.cases = CaseResults(self.files.folder)
        self.read = 0
        self.computed = 0

    def _kept(self, case_id: str) -> dict[str, Any] | None:
        text = self.cases.get(case_id)
        try:
            kept = None if text is None else json.loads(text)
        except ValueError:
            return None
        if isinstance(kept, dict) and kept.get("case_id") == case_id and isinstance(kept.get("result"), dict):
            result: dict[str, Any] = kept["result"]
            return result
        return None

    def result(self, case_id: str) -> dict[str, Any]:
        kept = self._kept(case_id)
        if kept is not None:
            self.read += 1
            return kept
        from .retrieve import Hit
        from .run import score_case

        hits = [Hit(p, 0.0, i + 1) for i, p in enumerate(self.passages.get(case_id, []))]
        result = score_case(self.dataset.cases[case_id], hits, self.dataset.responses_for(case_id), self.config)
        self.computed += 1
        out: dict[str, Any] = json.loads(self.keep(case_id, result))["result"]
        return out

    def keep(self, case_id: str, result: Mapping[str, Any]) -> str:
        """Keep ``result`` (``score_case`` of the case on its given passages) as the case's row; the row's text."""
        text = case_text(case_id, result)
        self.cases.put([(case_id, text)])
        return text

    def keep_texts(self, rows: Iterable[tuple[str, str]]) -> bool:
        """Keep many ``(case_id, case_text(...))`` rows in one transaction (a harness run's batch)."""
        return self.cases.put(rows)

    def describe(self) -> str:
        """``per case on demand: 3 read, 1 computed`` (for the server's log)."""
        where = "kept on disk" if self.cases.path is not None else "not kept (cache off)"
        return f"per case on demand, {where}: {self.read} read, {self.computed} computed"
