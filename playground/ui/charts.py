"""The rates chart: a point and its 95% Wilson interval per dimension, this case versus all labelled.

Drawn with matplotlib's object API on the Agg canvas (no pyplot, no global
state, no display needed) into PNG bytes for an ``ipywidgets.Image``.  One
:class:`RatesChart` per page keeps its figure and only moves the artists on
update, so a redraw costs a few milliseconds plus the PNG encoding.
"""
from __future__ import annotations

import io
from collections.abc import Mapping

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..metrics import DEFAULT_THRESHOLDS, DIMENSION_LABELS, DIMENSION_ORDER, DimensionRate

#: Colours of the two series (colour-blind safe: blue and orange of the Okabe-Ito palette).
SERIES = (("this case", "#0072B2", "o"), ("all labelled", "#E69F00", "s"))
_OFFSET = 0.17


class RatesChart:
    """A reusable figure; :meth:`render` returns PNG bytes."""

    def __init__(self, width: float = 5.2, height: float = 2.9, dpi: int = 96,
                 thresholds: Mapping[str, float] | None = None):
        self.thresholds = dict(thresholds or DEFAULT_THRESHOLDS)
        self.fig = Figure(figsize=(width, height), dpi=dpi)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax = self.fig.add_axes((0.27, 0.2, 0.70, 0.70))
        ax = self.ax
        n = len(DIMENSION_ORDER)
        self._y = {d: n - 1 - i for i, d in enumerate(DIMENSION_ORDER)}
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.6, n - 0.4)
        ax.set_yticks([self._y[d] for d in DIMENSION_ORDER], [DIMENSION_LABELS[d] for d in DIMENSION_ORDER])
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
        ax.tick_params(labelsize=9)
        ax.grid(axis="x", color="#dddddd", linewidth=0.8)
        ax.set_axisbelow(True)
        for spine in ("top", "right"):
            ax.spines[spine].set_visible(False)
        for d in DIMENSION_ORDER:
            y = self._y[d]
            ax.plot([self.thresholds[d]] * 2, [y - 0.38, y + 0.38], color="#C0392B", linewidth=1.2,
                    linestyle=(0, (2, 1.5)), zorder=1)
        # one line (interval) and one marker (rate) per series and dimension, moved on update
        self._lines = {}
        self._points = {}
        self._nodata = {}
        for s, (name, colour, marker) in enumerate(SERIES):
            for d in DIMENSION_ORDER:
                y = self._y[d] + (_OFFSET if s == 0 else -_OFFSET)
                (line,) = ax.plot([0, 0], [y, y], color=colour, linewidth=2.2, solid_capstyle="butt", zorder=2,
                                  clip_on=False)
                (point,) = ax.plot([0], [y], marker=marker, color=colour, markersize=6, linestyle="none", zorder=3,
                                   clip_on=False, label=name if d == DIMENSION_ORDER[0] else None)
                text = ax.text(0.01, y, "no data", fontsize=7.5, color="#888888", va="center", ha="left")
                self._lines[(s, d)] = line
                self._points[(s, d)] = point
                self._nodata[(s, d)] = text
        ax.plot([], [], color="#C0392B", linewidth=1.2, linestyle=(0, (2, 1.5)), label="threshold")
        ax.legend(loc="upper center", bbox_to_anchor=(0.4, -0.1), ncol=3, fontsize=8, frameon=False)
        self.fig.text(0.27, 0.94, "rate and 95% Wilson interval", fontsize=8.5, color="#444444")

    def update(self, current: Mapping[str, DimensionRate], pooled: Mapping[str, DimensionRate]) -> None:
        for s, rates in enumerate((current, pooled)):
            for d in DIMENSION_ORDER:
                r = rates.get(d)
                line, point, text = self._lines[(s, d)], self._points[(s, d)], self._nodata[(s, d)]
                has = r is not None and r.has_data
                line.set_visible(has)
                point.set_visible(has)
                text.set_visible(not has)
                if has:
                    y = point.get_ydata()[0]
                    line.set_data([r.low, r.high], [y, y])
                    point.set_data([r.rate], [y])

    def png(self) -> bytes:
        buf = io.BytesIO()
        self.canvas.print_png(buf)
        return buf.getvalue()

    def render(self, current: Mapping[str, DimensionRate], pooled: Mapping[str, DimensionRate]) -> bytes:
        """Update the artists and return the figure as PNG bytes."""
        self.update(current, pooled)
        return self.png()
