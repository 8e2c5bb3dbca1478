"""The rates chart: a point and its 95% Wilson interval per dimension, this case versus all labelled.

An inline SVG string (no matplotlib, no image encoding): a redraw is string
formatting of a few dozen numbers, well under a millisecond, and the chart is
crisp at any width because the browser draws the vectors (``viewBox`` scales
with the column).  Labels come only from :data:`playground.metrics.DIMENSION_LABELS`.
"""
from __future__ import annotations

from collections.abc import Mapping

from ..metrics import DEFAULT_THRESHOLDS, DIMENSION_LABELS, DIMENSION_ORDER, DimensionRate

__all__ = ["SERIES", "rates_svg"]

#: Colours of the two series (colour-blind safe: blue and orange of the Okabe-Ito palette).
SERIES = (("this case", "#0072B2"), ("all labelled", "#E69F00"))
_W, _ROW, _LEFT, _RIGHT, _TOP = 520, 44, 150, 20, 26
_OFFSET = 8


def _x(value: float) -> float:
    return round(_LEFT + value * (_W - _LEFT - _RIGHT), 1)


def rates_svg(current: Mapping[str, DimensionRate], pooled: Mapping[str, DimensionRate],
              thresholds: Mapping[str, float] | None = None) -> str:
    """The chart as an ``<svg>`` element: per dimension a row with the threshold (dashed red), and for each
    series its interval (a line from ``low`` to ``high``) and its rate (a dot), or "no data"."""
    limits = dict(thresholds or DEFAULT_THRESHOLDS)
    height = _TOP + _ROW * len(DIMENSION_ORDER) + 40
    parts = [f'<svg class="pg-rates-svg" viewBox="0 0 {_W} {height}" xmlns="http://www.w3.org/2000/svg" '
             f'role="img" aria-label="rate and 95% Wilson interval per dimension" font-size="12" '
             f'font-family="system-ui, sans-serif">',
             f'<text x="{_LEFT}" y="14" fill="#444">rate and 95% Wilson interval</text>']
    bottom = _TOP + _ROW * len(DIMENSION_ORDER)
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = _x(tick)
        parts.append(f'<line x1="{x}" y1="{_TOP}" x2="{x}" y2="{bottom}" stroke="#ddd"/>'
                     f'<text x="{x}" y="{bottom + 14}" text-anchor="middle" fill="#555">{tick:.0%}</text>')
    for i, d in enumerate(DIMENSION_ORDER):
        y = _TOP + _ROW * i + _ROW / 2
        t = _x(limits[d])
        parts.append(f'<text x="{_LEFT - 8}" y="{y + 4}" text-anchor="end" fill="#222">{DIMENSION_LABELS[d]}</text>'
                     f'<line class="pg-svg-threshold" x1="{t}" y1="{y - 16}" x2="{t}" y2="{y + 16}" '
                     f'stroke="#C0392B" stroke-width="1.5" stroke-dasharray="3 2"/>')
        for s, (rates, (_name, colour)) in enumerate(zip((current, pooled), SERIES, strict=True)):
            yy = y - _OFFSET if s == 0 else y + _OFFSET
            r = rates.get(d)
            if r is None or not r.has_data or r.rate is None or r.low is None or r.high is None:
                parts.append(f'<text x="{_LEFT + 4}" y="{yy + 4}" fill="#888" font-size="10">no data</text>')
                continue
            parts.append(f'<line x1="{_x(r.low)}" y1="{yy}" x2="{_x(r.high)}" y2="{yy}" stroke="{colour}" '
                         f'stroke-width="3"/><circle cx="{_x(r.rate)}" cy="{yy}" r="4.5" fill="{colour}"/>')
    legend_y = bottom + 32
    x = _LEFT
    for name, colour in SERIES:
        parts.append(f'<circle cx="{x}" cy="{legend_y - 4}" r="4.5" fill="{colour}"/>'
                     f'<text x="{x + 9}" y="{legend_y}" fill="#333">{name}</text>')
        x += 100
    parts.append(f'<line x1="{x}" y1="{legend_y - 9}" x2="{x}" y2="{legend_y + 1}" stroke="#C0392B" '
                 f'stroke-dasharray="3 2" stroke-width="1.5"/><text x="{x + 6}" y="{legend_y}" fill="#333">'
                 'threshold</text></svg>')
    return "".join(parts)
