"""The harness's results for the page, computed once and kept on disk, so each page's kernel skips the run.

Every page needs the harness's retrieval hits and scores of every case
(:func:`playground.ui.session.compute_harness`: about 3 s on the shipped set,
and BM25 brings scipy and numba into the kernel).  With thirty kernels on one
machine that is done thirty times; :func:`cached_harness` does it once per
(dataset, configuration, code) and later kernels read a JSON file.

The file's name is the SHA-256 of: every file under the dataset's
``corpus/`` and ``golden/`` (path and bytes), the configuration (canonical
JSON of ``Config.data``) and the source of the modules whose code decides the
results (``playground/*.py`` and ``playground/harness/*.py``).  Any change
gives another name, so a stale file is never read.  JSON only (no pickle):
reading a file can never run code.  A file that cannot be read or written is
ignored (the harness runs as before); writes are atomic (a temporary file
renamed into place), so two kernels racing write the same bytes.

The directory is ``$PLAYGROUND_CACHE`` or the user cache directory
(``platformdirs``); ``PLAYGROUND_CACHE=off`` turns the cache off.

A dataset imported into the label store (10,000 samples is 7–30 s of
harness) is not run whole: :class:`CaseHarness` scores a case when the page
first needs it and keeps one file per case in the folder
``dataset-<key>/``, where the key (:func:`dataset_fingerprint`) is the
SHA-256 of the dataset's name, its revision in the store (the SHA-256 of its
stored payload, so a re-import with other content gets another folder), the
configuration and the same deciding source code.  A case's file holds the
case id it was written for and is used only when that id matches.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..files import write_atomic

if TYPE_CHECKING:
    from ..golden import Dataset
    from ..model import Passage

__all__ = ["FORMAT", "CaseHarness", "KeptFiles", "KeptHit", "cache_dir", "cached_harness", "compute_harness",
           "dataset_fingerprint", "fingerprint", "hits_from_json", "hits_of", "hits_to_json"]

FORMAT = 1


class KeptHit(NamedTuple):
    """A retrieval hit read back from the file: the fields of ``playground.harness.retrieve.Hit``, without
    importing retrieval (BM25 brings scipy and numba into the kernel)."""

    passage: Any
    score: float
    rank: int
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


def fingerprint(root: Path, config: Any) -> str:
    """SHA-256 of the dataset's files, the configuration and the deciding source code (module docstring)."""
    h = hashlib.sha256(f"format {FORMAT}\n".encode())
    for top in ("corpus", "golden"):
        for path in sorted(p for p in (root / top).rglob("*") if p.is_file()):
            h.update(f"{path.relative_to(root).as_posix()}\n".encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
    _config_and_code(h, config)
    return h.hexdigest()


def _config_and_code(h: Any, config: Any) -> None:
    h.update(json.dumps(config.data, sort_keys=True, default=str).encode())
    for path in sorted([*_PACKAGE.glob("*.py"), *(_PACKAGE / "harness").glob("*.py")]):
        h.update(path.name.encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())


def dataset_fingerprint(name: str, revision: str, config: Any) -> str:
    """SHA-256 of a stored dataset's name and revision (its payload's SHA-256), the configuration and the code."""
    h = hashlib.sha256(f"format {FORMAT}\nstored dataset\n{name}\n{revision}\n".encode())
    _config_and_code(h, config)
    return h.hexdigest()


def _write_atomic(path: Path, text: str) -> None:
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
            _write_atomic(self.folder / f"{name}.json", text)
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
            return kept["result"]
        from ..harness.retrieve import Hit
        from ..harness.run import score_case

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


def _locator(loc: Any) -> list[str]:
    return [loc.tenant, loc.slug, loc.heading]


def hits_to_json(hits: Mapping[str, list]) -> dict[str, list]:
    """Retrieval hits as JSON-able lists (every field of the passage, its score and rank)."""
    return {cid: [{"locator": _locator(h.passage.locator), "text": h.passage.text, "title": h.passage.title,
                   "updated": h.passage.updated.isoformat() if h.passage.updated else None,
                   "overlaps": [_locator(o) for o in h.passage.overlaps], "score": h.score, "rank": h.rank}
                  for h in hs] for cid, hs in hits.items()}


def hits_from_json(data: Mapping[str, list]) -> dict[str, list]:
    """The inverse of :func:`hits_to_json`."""
    from ..model import Locator, Passage

    out: dict[str, list] = {}
    for cid, rows in data.items():
        out[cid] = [KeptHit(Passage(Locator(*r["locator"]), r["text"], r["title"],
                                date.fromisoformat(r["updated"]) if r["updated"] else None,
                                tuple(Locator(*o) for o in r["overlaps"])), float(r["score"]), int(r["rank"]))
                    for r in rows]
    return out


def cached_harness(dataset: Any, config: Any = None) -> tuple[dict[str, list], dict[str, dict], str]:
    """``(hits, results, how)`` of :func:`~playground.ui.session.compute_harness`; ``how`` is ``read``,
    ``computed and kept`` or ``computed`` (cache off or not writable)."""
    from ..harness.config import load_config

    config = config or load_config()
    where = cache_dir()
    path = None
    if where is not None:
        try:
            path = where / f"{fingerprint(Path(dataset.root), config)}.json"
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") == FORMAT and set(data["results"]) == set(dataset.cases):
                return hits_from_json(data["hits"]), data["results"], "read"
        except (OSError, ValueError, KeyError, TypeError):
            pass
    hits, results = compute_harness(dataset, config)
    if path is None:
        return hits, results, "computed"
    try:
        text = json.dumps({"format": FORMAT, "hits": hits_to_json(hits), "results": results}, sort_keys=True)
        _write_atomic(path, text)
    except (OSError, TypeError, ValueError):
        return hits, results, "computed"
    # what the page uses is what a later kernel will read: the JSON form (tuples become lists)
    return hits, json.loads(text)["results"], "computed and kept"


# --- the harness, once (the page's session and the cache above both use it) ---------------------------------


def hits_of(passages: Mapping[str, Sequence[Passage]]) -> dict[str, list]:
    """Given passages as retrieval hits (rank in the order given, score 0), for a dataset that brings its own."""
    from ..harness.retrieve import Hit

    return {cid: [Hit(p, 0.0, i + 1) for i, p in enumerate(ps)] for cid, ps in passages.items()}


def compute_harness(dataset: Dataset, config=None, hits: Mapping[str, list] | None = None
                    ) -> tuple[dict[str, list], dict[str, dict]]:
    """Retrieve (unless ``hits`` are given) and score every case on ``config``: ``(hits, results)`` by case id.

    Authored responses and BM25 only: the playground never calls a model.
    """
    from ..harness.config import load_config
    from ..harness.retrieve import retrieve_cases
    from ..harness.run import score_case

    config = config or load_config()
    hits = dict(hits) if hits is not None else retrieve_cases(dataset, config)
    results = {cid: score_case(dataset.cases[cid], hits[cid], dataset.responses_for(cid), config)
               for cid in sorted(dataset.cases)}
    return hits, results
