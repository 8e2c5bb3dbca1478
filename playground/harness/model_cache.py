"""The model-call cache: results of chat and embed calls in a SQLite file, keyed by the call.

The key of a call is the SHA-256 of the canonical JSON (sorted keys, no
spaces, UTF-8) of ``{"kind": "chat", "model", "messages", "options",
"format"[, "repeat"]}`` or ``{"kind": "embed", "model", "input", "options"}``
(one text per embed entry); see :mod:`playground.harness.llm`.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_CACHE_RELPATH", "ModelCache", "cache_key", "canonical_json", "sha256_hex"]

#: Where the cache lives inside a run directory unless a path is given.
DEFAULT_CACHE_RELPATH = Path(".cache") / "ollama.db"


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 text, no NaN: the same value gives the same bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_hex(text: str) -> str:
    """The SHA-256 of ``text``'s UTF-8 bytes, as 64 lowercase hex digits."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(kind: str, model: str, payload: Any, options: Mapping[str, Any], format: Any = None,
              repeat: int = 0) -> str:
    """The cache key of one call (see the module docstring; ``repeat`` >= 1 is part of a chat call's key)."""
    if kind == "chat":
        body = {"kind": "chat", "model": model, "messages": payload, "options": dict(options), "format": format}
        if repeat:
            body["repeat"] = int(repeat)
    elif kind == "embed":
        body = {"kind": "embed", "model": model, "input": payload, "options": dict(options)}
    else:
        raise ValueError(f"unknown call kind {kind!r}")
    return sha256_hex(canonical_json(body))


class ModelCache:
    """Results of model calls in a SQLite file, keyed by :func:`cache_key`.

    Every ``put`` commits, so a run stopped half-way keeps everything it
    already paid for and ``--resume`` (or a plain re-run) gets it for free.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS calls ("
            " key TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT NOT NULL,"
            " request TEXT NOT NULL, value TEXT NOT NULL, created REAL NOT NULL)"
        )

    @classmethod
    def for_run_dir(cls, run_dir: str | Path) -> ModelCache:
        """The default cache of a run: ``<run_dir>/.cache/ollama.db``."""
        return cls(Path(run_dir) / DEFAULT_CACHE_RELPATH)

    def get_text(self, key: str) -> str | None:
        """The stored canonical JSON for ``key`` (counting a hit or a miss)."""
        with self._lock:
            row = self._db.execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
            return str(row[0])

    def get(self, key: str) -> Any | None:
        text = self.get_text(key)
        return None if text is None else json.loads(text)

    def put(self, key: str, kind: str, model: str, request: Any, value: Any) -> str:
        """Store ``value`` (as canonical JSON, returned) and commit."""
        text = canonical_json(value)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO calls (key, kind, model, request, value, created) VALUES (?, ?, ?, ?, ?, ?)",
                (key, kind, model, canonical_json(request), text, time.time()),
            )
        return text

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM calls WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "entries": len(self)}

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> ModelCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
