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
first needs it and keeps it as a row of one SQLite file per dataset revision,
``dataset-<key>/cases.sqlite``, where the key (:func:`dataset_fingerprint`) is the
SHA-256 of the dataset's name, its revision in the store (the SHA-256 of its
stored payload, so a re-import with other content gets another folder), the
configuration and the same deciding source code.  A case's row holds the
case id it was written for and is used only when that id matches.  That part
lives in the core, :mod:`playground.harness.case_cache` (``harness run
--dataset`` fills the same file, in batches), and is re-exported here.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..harness.case_cache import (  # the per-case files moved to the core (harness run --dataset writes them)
    FORMAT,
    CaseHarness,
    CaseResults,
    KeptFiles,
    cache_dir,
    dataset_fingerprint,
)
from ..harness.case_cache import config_and_code as _config_and_code
from ..harness.case_cache import write_kept as _write_atomic

if TYPE_CHECKING:
    from ..golden import Dataset
    from ..model import Passage

__all__ = ["FORMAT", "CaseHarness", "CaseResults", "KeptFiles", "KeptHit", "cache_dir", "cached_harness",
           "compute_harness", "dataset_fingerprint", "fingerprint", "hits_from_json", "hits_of", "hits_to_json"]


class KeptHit(NamedTuple):
    """A retrieval hit read back from the file: the fields of ``playground.harness.retrieve.Hit``, without
    importing retrieval (BM25 brings scipy and numba into the kernel)."""

    passage: Any
    score: float
    rank: int


def fingerprint(root: Path, config: Any) -> str:
    """SHA-256 of the dataset's files, the configuration and the deciding source code (module docstring)."""
    h = hashlib.sha256(f"format {FORMAT}\n".encode())
    for top in ("corpus", "golden"):
        for path in sorted(p for p in (root / top).rglob("*") if p.is_file()):
            h.update(f"{path.relative_to(root).as_posix()}\n".encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
    _config_and_code(h, config)
    return h.hexdigest()


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
    """``(hits, results, how)`` of :func:`compute_harness`; ``how`` is ``read``,
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
