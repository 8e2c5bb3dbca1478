"""Hugging Face ``save_to_disk`` folders read through pyarrow (the ``datasets`` library is not needed).

``Dataset.save_to_disk(DIR)`` writes ``DIR/state.json`` (``_data_files``:
the shards, in order), ``DIR/dataset_info.json`` and the shards
``data-0000N-of-0000M.arrow``, each an Arrow IPC *stream*.
``DatasetDict.save_to_disk(DIR)`` writes ``DIR/dataset_dict.json``
(``{"splits": [...]}``) and one such folder per split, ``DIR/<split>/``.
RAGAS (``EvaluationDataset.to_hf_dataset().save_to_disk``) and Argilla
(``Dataset.to_disk``) write the same layout.

:func:`split_folder` resolves ``DIR`` plus an optional ``--split`` to the
folder of one Dataset (a DatasetDict without ``--split`` is a problem naming
its splits; with one split only, that split is taken); :func:`read_rows`
gives that folder's records, one :class:`~.core.Row` per record, numbered
``row N`` across the shards in order; :func:`digest` is the SHA-256 over
the shards' bytes (names and contents), streamed.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import limits
from ..errors import Problem
from .rows import Row, bounded_rows

__all__ = ["digest", "is_hf_folder", "read_rows", "shards", "split_folder"]

_STATE = "state.json"
_DICT = "dataset_dict.json"


def is_hf_folder(path: Path) -> bool:
    """True when ``path`` is a folder a ``save_to_disk`` wrote (a Dataset or a DatasetDict)."""
    return path.is_dir() and ((path / _STATE).is_file() or (path / _DICT).is_file())


def _json(path: Path, problems: list[Problem], label: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problems.append(Problem(label, f"not a readable JSON file: {exc}"))
        return None


def split_folder(path: Path, split: str | None, problems: list[Problem]) -> Path | None:
    """The folder of the one Dataset meant by ``path`` and ``split`` (None, with a problem, if there is none)."""
    if not path.is_dir():
        problems.append(Problem(str(path), "not a folder"))
        return None
    if (path / _DICT).is_file():
        info = _json(path / _DICT, problems, f"{path.name}/{_DICT}")
        splits = info.get("splits") if isinstance(info, dict) else None
        if not isinstance(splits, list) or not all(isinstance(s, str) for s in splits):
            problems.append(Problem(f"{path.name}/{_DICT}", "no list of splits ('splits')"))
            return None
        if split is None and len(splits) == 1:
            split = splits[0]
        if split is None:
            problems.append(Problem(path.name, f"a DatasetDict with the splits {', '.join(splits)}: "
                                    "choose one with --split"))
            return None
        if split not in splits:
            problems.append(Problem(path.name, f"no split {split!r} (the splits: {', '.join(splits)})"))
            return None
        path = path / split
    elif split is not None:
        problems.append(Problem(path.name, f"--split {split} given, but this is one Dataset, not a DatasetDict"))
        return None
    if not (path / _STATE).is_file():
        problems.append(Problem(path.name, f"no {_STATE}: not a folder written by save_to_disk"))
        return None
    return path


def shards(folder: Path, problems: list[Problem]) -> list[Path]:
    """The Arrow shards of a Dataset folder, in ``state.json``'s order."""
    state = _json(folder / _STATE, problems, f"{folder.name}/{_STATE}")
    files = state.get("_data_files") if isinstance(state, dict) else None
    if not isinstance(files, list) or not files:
        problems.append(Problem(f"{folder.name}/{_STATE}", "no '_data_files' list of shards"))
        return []
    out = []
    for f in files:
        name = f.get("filename") if isinstance(f, dict) else None
        if not isinstance(name, str) or "/" in name or not (folder / name).is_file():
            problems.append(Problem(f"{folder.name}/{_STATE}", f"shard {name!r} is missing"))
            continue
        out.append(folder / name)
    return out


def _records(shard: Path) -> Iterator[dict[str, Any]]:
    import pyarrow as pa

    with pa.memory_map(str(shard)) as source:
        reader = pa.ipc.open_stream(source)
        for batch in reader:
            yield from batch.to_pylist()


def read_rows(path: Path, problems: list[Problem], split: str | None = None, *,
              limit: int | None = None) -> list[Row]:
    """The records of the Dataset at ``path`` (``split`` of a DatasetDict), numbered ``row N`` across its shards.

    Within the bounds of :mod:`.limits` (:func:`.rows.bounded_rows`: at most ``limit`` rows, default
    :data:`~.limits.MAX_ROWS`, counted as the shards stream; each cell and nesting; the text in all):
    the first bound crossed is one problem and no rows.
    """
    import pyarrow as pa

    folder = split_folder(path, split, problems)
    if folder is None:
        return []
    name = f"{folder.parent.name}/{folder.name}" if (folder.parent / _DICT).is_file() else folder.name
    files = shards(folder, problems)
    unreadable: list[Problem] = []

    def records() -> Iterator[dict[str, Any]]:
        for shard in files:
            try:
                yield from _records(shard)
            except (pa.ArrowException, OSError) as exc:
                unreadable.append(Problem(f"{name}/{shard.name}", f"not a readable Arrow stream: {exc}"))

    rows = bounded_rows(records(), name, problems, limits.MAX_ROWS if limit is None else limit)
    problems += unreadable
    return rows


def digest(path: Path) -> str:
    """SHA-256 of a file, or of a folder's files (relative names and bytes, sorted), read in blocks."""
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        if path.is_dir():
            h.update(f.relative_to(path).as_posix().encode("utf-8") + b"\0")
        with f.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()
