"""Table conventions: the same input gives the same bytes.

Rules every table of the package follows:

* a float ``x`` is written as ``round(x, DECIMALS) + 0.0`` (``+ 0.0`` turns
  -0.0 into 0.0); NaN and None become None; bools and integers (numpy's too)
  become Python ``bool``/``int`` (:func:`_r`, :func:`_round_frame`);
* dimensions sort by their position in :data:`playground.model.DIMENSIONS`,
  unknown ones after them by name (:func:`_dim_key`);
* :func:`write_tables` writes each table as ``<stem>.csv``, stems in sorted
  order, rounded, without index, with LF line ends.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..model import DIMENSIONS

__all__ = ["DECIMALS", "write_tables"]

#: Decimal places of every float in a table.
DECIMALS = 4
_ORDER = {d: i for i, d in enumerate(DIMENSIONS)}


def _r(x: Any, decimals: int = DECIMALS) -> Any:
    """Round a float (None and NaN stay None); other values pass through."""
    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return None if math.isnan(x) else round(x, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
    return x


def _round_frame(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype.kind == "f":
            out[col] = out[col].round(DECIMALS) + 0.0
        elif out[col].dtype == object:
            out[col] = [(_r(v) if isinstance(v, (float, np.floating)) else v) for v in out[col]]
    return out


def _dim_key(d: str) -> tuple[int, str]:
    return (_ORDER.get(d, len(_ORDER)), d)


def write_tables(tables: Mapping[str, pd.DataFrame], out_dir: str | Path) -> list[Path]:
    """Write each table as ``out_dir/<stem>.csv`` (rounded, ``\n`` line ends, no index); return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem in sorted(tables):
        path = out / f"{stem}.csv"
        _round_frame(tables[stem]).to_csv(path, index=False, lineterminator="\n")
        paths.append(path)
    return paths
