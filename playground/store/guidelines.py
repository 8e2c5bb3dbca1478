"""A dataset's own labelling guidelines: markdown, versioned, and the version each label was made under.

Rules:

* Guidelines belong to a dataset: the shipped set ``golden`` or a dataset in
  the store (:meth:`LabelStore.put_dataset`); any other name is refused.
* Text: a ``str`` without NUL or other control characters (tab, line feed and
  carriage return allowed), not blank, at most :data:`MAX_GUIDELINES_BYTES`
  (256 KiB) in UTF-8.  A file must be UTF-8 (a leading BOM is dropped)
  (:func:`read_guidelines_file`).  Stored verbatim; rendering (and sanitising)
  is the page's job.
* Versions count 1, 2, ... per dataset.  Setting the same text as the
  current version writes nothing and returns the current version number.
* Every label, comment and tag event records ``guidelines_version``: the
  current version of its unit's dataset when it was written (``None`` while
  the dataset has none).  The dataset of a unit is
  :func:`~playground.store.checks.dataset_of_case` of its case id unless the
  caller names it.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .base import Backend, Cursor
from .checks import SHIPPED_DATASET, check_annotator
from .errors import InvalidLabelError
from .handle import StoreHandle
from .types import Guidelines

__all__ = [
    "MAX_GUIDELINES_BYTES", "GuidelineVersions", "check_dataset_exists", "check_guidelines", "guidelines_now",
    "guidelines_tx", "read_guidelines_file",
]

#: The largest guidelines text, in UTF-8 bytes (256 KiB).
MAX_GUIDELINES_BYTES = 256 * 1024
_ALLOWED_CONTROLS = frozenset("\t\n\r")


def check_guidelines(markdown: Any, where: str = "the guidelines") -> str:
    """``markdown`` if it is usable guidelines text (see the module docstring), else :class:`InvalidLabelError`."""
    if not isinstance(markdown, str):
        raise InvalidLabelError(f"{where}: guidelines must be text, got {type(markdown).__name__}")
    size = len(markdown.encode("utf-8", errors="surrogatepass"))
    if size > MAX_GUIDELINES_BYTES:
        raise InvalidLabelError(f"{where} is {size} bytes, more than {MAX_GUIDELINES_BYTES} (256 KiB)")
    if not markdown.strip():
        raise InvalidLabelError(f"{where} is empty")
    for i, ch in enumerate(markdown):
        if ch not in _ALLOWED_CONTROLS and unicodedata.category(ch) in ("Cc", "Cs"):
            line = markdown.count("\n", 0, i) + 1
            raise InvalidLabelError(f"{where}, line {line}: control character U+{ord(ch):04X} is not text")
    return markdown


def read_guidelines_file(path: str | Path) -> str:
    """The text of a guidelines file: UTF-8 (BOM dropped), checked by :func:`check_guidelines`.

    Raises :class:`InvalidLabelError` saying where and what (a missing file,
    too large, the byte offset of the first byte that is not UTF-8).
    """
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_GUIDELINES_BYTES:
            raise InvalidLabelError(f"{p}: {size} bytes, more than {MAX_GUIDELINES_BYTES} (256 KiB) of guidelines")
        data = p.read_bytes()
    except OSError as exc:
        raise InvalidLabelError(f"{p}: cannot read the guidelines file ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidLabelError(f"{p}: not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r}); "
                                "save the guidelines as UTF-8 markdown") from None
    return check_guidelines(text.removeprefix("\ufeff"), str(p))


def check_dataset_exists(cur: Cursor, dataset: str) -> None:
    """The shipped set or a stored dataset; else :class:`InvalidLabelError` (inside a transaction)."""
    if dataset == SHIPPED_DATASET:
        return
    if cur.scalar("SELECT 1 FROM datasets WHERE name = ?", (dataset,)) is None:
        known = [SHIPPED_DATASET, *(r[0] for r in cur.execute("SELECT name FROM datasets ORDER BY name").fetchall())]
        raise InvalidLabelError(f"no dataset named {dataset!r} (known: {', '.join(known)}); nothing was written")


def guidelines_now(cur: Cursor, dataset: str) -> int | None:
    """The current guidelines version of ``dataset`` (``None`` when it has none)."""
    v = cur.scalar("SELECT MAX(version) FROM guidelines WHERE dataset = ?", (dataset,))
    return None if v is None else int(v)


def guidelines_tx(backend: Backend, dataset: str, markdown: str, author: str) -> Callable[[Cursor], int]:
    """Check now; return the transaction body storing ``markdown`` as ``dataset``'s next version (see
    :meth:`GuidelineVersions.set_guidelines`).  Run it inside :meth:`LabelStore.put_dataset`'s ``also`` to
    store a dataset and its guidelines together."""
    text = check_guidelines(markdown)
    who = check_annotator(author, allow_reserved=True)
    if not isinstance(dataset, str) or not dataset:
        raise InvalidLabelError(f"guidelines need a dataset name, got {dataset!r}")

    def tx(cur: Cursor) -> int:
        check_dataset_exists(cur, dataset)
        current = guidelines_now(cur, dataset)
        if current is not None:
            same = cur.scalar("SELECT markdown FROM guidelines WHERE dataset = ? AND version = ?", (dataset, current))
            if same == text:
                return current
        version = (current or 0) + 1
        cur.execute("INSERT INTO guidelines (dataset, version, markdown, author, created_at) VALUES (?, ?, ?, ?, ?)",
                    (dataset, version, text, who, backend.now(cur)))
        return version

    return tx


class GuidelineVersions:
    """The versioned guidelines of each dataset, over one handle."""

    def __init__(self, handle: StoreHandle):
        self._h = handle
        self._b = handle.db

    def set_guidelines(self, dataset: str, markdown: str, author: str) -> int:
        """Store ``markdown`` as the next guidelines version of ``dataset``; return its number (1, 2, ...).

        The same text as the current version writes nothing and returns the
        current number.  Bad text or an unknown dataset: :class:`InvalidLabelError`, nothing written.
        """
        return self._h.write(guidelines_tx(self._b, dataset, markdown, author))

    def guidelines_tx(self, dataset: str, markdown: str, author: str) -> Callable[[Cursor], int]:
        """The transaction body of :meth:`set_guidelines`, checked now (for ``put_dataset(also=...)``)."""
        return guidelines_tx(self._b, dataset, markdown, author)

    def guidelines(self, dataset: str, version: int | None = None) -> Guidelines | None:
        """Version ``version`` (default: the current one) of ``dataset``'s guidelines, or ``None``."""
        sql = "SELECT dataset, version, markdown, author, created_at FROM guidelines WHERE dataset = ?"
        params: list[Any] = [dataset]
        if version is None:
            sql += " ORDER BY version DESC LIMIT 1"
        else:
            sql += " AND version = ?"
            params.append(int(version))
        row = self._b.read(lambda cur: cur.execute(sql, params).fetchone())
        return None if row is None else Guidelines(row[0], int(row[1]), row[2], row[3], self._b.ts_out(row[4]))

    def guidelines_history(self, dataset: str) -> list[Guidelines]:
        """Every version of ``dataset``'s guidelines, oldest first."""
        rows = self._b.read(lambda cur: cur.execute(
            "SELECT dataset, version, markdown, author, created_at FROM guidelines WHERE dataset = ?"
            " ORDER BY version", (dataset,)).fetchall())
        return [Guidelines(r[0], int(r[1]), r[2], r[3], self._b.ts_out(r[4])) for r in rows]
