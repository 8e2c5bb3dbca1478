"""The harness's result of each case of a stored dataset, kept on disk: what a run and the page share.

A dataset imported into the label store (10,000 samples is 7–30 s of
harness) is not run whole by the page: :class:`CaseHarness` scores a case
when first needed and keeps one file per case in the folder
``dataset-<key>/`` of :func:`cache_dir`, where the key
(:func:`dataset_fingerprint`) is the SHA-256 of the dataset's name, its
revision in the store (the SHA-256 of its stored payload, so a re-import
with other content gets another folder), the configuration and the source of
the modules whose code decides the results (``playground/*.py`` and
``playground/harness/*.py``).  A case's file holds the case id it was
written for and is used only when that id matches.  JSON only (no pickle):
reading a file can never run code.  A file that cannot be read or written is
ignored; writes are atomic.

The directory is ``$PLAYGROUND_CACHE`` or the user cache directory
(``platformdirs``); ``PLAYGROUND_CACHE=off`` turns the cache off.
``playground harness run --dataset`` fills it (:mod:`.run_dataset`) and the
labelling page reads it (:mod:`playground.ui.harness_cache`, which adds the
shipped set's whole-run file).  Core code: no widgets.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..files import write_atomic

__all__ = ["FORMAT", "CaseHarness", "KeptFiles", "cache_dir", "config_and_code", "dataset_fingerprint", "write_kept"]

FORMAT = 1


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
        self.read = 0
        self.computed = 0

    @staticmethod
    def file_name(case_id: str) -> str:
        return "case-" + hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:32]

    def result(self, case_id: str) -> dict[str, Any]:
        name = self.file_name(case_id)
        kept = self.files.get(name)
        if isinstance(kept, dict) and kept.get("case_id") == case_id and isinstance(kept.get("result"), dict):
            self.read += 1
            result: dict[str, Any] = kept["result"]
            return result
        from .retrieve import Hit
        from .run import score_case

        hits = [Hit(p, 0.0, i + 1) for i, p in enumerate(self.passages.get(case_id, []))]
        result = score_case(self.dataset.cases[case_id], hits, self.dataset.responses_for(case_id), self.config)
        self.computed += 1
        out: dict[str, Any] = json.loads(self.keep(case_id, result))["result"]
        return out

    def keep(self, case_id: str, result: Mapping[str, Any]) -> str:
        """Keep ``result`` (``score_case`` of the case on its given passages) as the case's file; the file's text."""
        text = json.dumps({"case_id": case_id, "result": result}, sort_keys=True)
        self.files.put_text(self.file_name(case_id), text)
        return text

    def describe(self) -> str:
        """``per case on demand: 3 read, 1 computed`` (for the server's log)."""
        where = "kept on disk" if self.files.folder is not None else "not kept (cache off)"
        return f"per case on demand, {where}: {self.read} read, {self.computed} computed"
