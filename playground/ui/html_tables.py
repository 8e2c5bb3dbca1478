"""Data frames as escaped HTML tables, for the calibrate page and its imported-dataset section."""
from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

__all__ = ["cell", "esc", "table_html"]


def esc(x: Any) -> str:
    """``x`` as HTML text (``None`` as empty): markup shown literally, never interpreted (quotes escaped too)."""
    return html.escape("" if x is None else str(x))


def _nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def cell(v: Any) -> str:
    """One value as table text: ``—`` for none or NaN, floats to three places, the rest escaped."""
    if v is None or _nan(v):
        return "—"
    if isinstance(v, float):
        return f"{v:.3f}"
    return esc(v)


def table_html(frame, columns: Sequence[str] | None = None, *, link_column: str | None = "link",
               max_rows: int = 200, cls: str = "pc-table") -> str:
    """A data frame as an escaped HTML table; ``link_column`` values become links ("open case")."""
    cols = [c for c in (columns or list(frame.columns)) if c in frame.columns]
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    body = []
    for _, row in frame.head(max_rows).iterrows():
        cells = []
        for c in cols:
            v = row[c]
            if c == link_column and v:
                cells.append(f"<td><a href='{esc(v)}' target='_blank'>open case</a></td>")
            else:
                cells.append(f"<td>{cell(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f"<div class='pc-muted'>{len(frame) - max_rows} more rows not shown</div>" if len(frame) > max_rows else ""
    empty = "<div class='pc-muted'>(none)</div>" if len(frame) == 0 else ""
    return f"<table class='{cls}'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}{empty}"
