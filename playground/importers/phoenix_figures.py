"""Project-level figures of a traces dataset, for the one project-level place Phoenix has: its description.

Phoenix annotates spans, documents, traces and sessions, not projects; the
project's ``description`` (``client.projects.update``) is what its project
list shows beside the name.  :func:`project_figures` writes these lines
(one annotator's labels, or the consensus):

* ``human pass rate: k/n = r (95% Wilson low–high)`` — the responses'
  verdicts (:func:`playground.verdicts.pass_rate`);
* per rate with labels, ``human <rate>: k/n = r (95% Wilson low–high)``,
  pooled over all labelled units of the dataset;
* with a harness run (``--run``), per rate: the harness's raw rate over every
  unit it scored and the **corrected** rate (Rogan–Gladen, with the seeded
  bootstrap interval of :func:`playground.harness.corrected.corrected_rate`,
  seed ``phoenix:<dataset>``), its TPR and TNR measured against the same
  human labels: ``harness <rate>: raw p of N, corrected c (95% low–high;
  TPR tp/npos, TNR tn/nneg)``, or why there is no corrected rate or no
  interval.

:func:`merge_description` puts them between two marker lines, keeping the
rest of the description as the people who wrote it left it; the same
figures give the same description, and no update is sent.
"""
from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..harness.corrected import corrected_rate
from ..model import DIMENSION_NAMES
from ..stats import wilson_interval
from ..verdicts import pass_rate, response_units
from .export import label_rows

__all__ = ["BEGIN", "END", "merge_description", "project_figures"]

BEGIN = "--- rag-label-playground figures ---"
END = "--- end of rag-label-playground figures ---"


def _wilson(k: int, n: int) -> str:
    ci = wilson_interval(k, n)
    return f"{k}/{n} = {k / n:.3f} (95% Wilson {ci[0]:.3f}–{ci[1]:.3f})" if ci else "no labels"


def _harness_line(name: str, rows: Sequence[tuple[int, int | None]], seed: str) -> str:
    """``rows``: (harness value, human value or None) per unit the harness scored."""
    n, passed = len(rows), sum(h for h, _ in rows)
    tp = sum(1 for h, p in rows if p == 1 and h == 1)
    npos = sum(1 for _, p in rows if p == 1)
    tn = sum(1 for h, p in rows if p == 0 and h == 0)
    nneg = sum(1 for _, p in rows if p == 0)
    c = corrected_rate(passed, n, (tp, npos), (tn, nneg), seed=seed)
    head = f"harness {name}: raw {passed}/{n} = {c.raw:.3f}"
    rates = f"TPR {tp}/{npos}, TNR {tn}/{nneg}"
    if c.estimate is None:
        return f"{head}, no corrected rate ({rates}: {c.reason})"
    if c.low is None or c.high is None:
        return f"{head}, corrected {c.estimate:.3f}, no interval ({rates}: {c.reason})"
    return f"{head}, corrected {c.estimate:.3f} (95% {c.low:.3f}–{c.high:.3f}; {rates})"


def _harness(run: Path, catalog: dict[str, Any], human: dict[tuple[str, str], int], seed: str) -> list[str]:
    values: dict[str, list[tuple[int, int | None]]] = {}
    with (run / "units.csv").open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            if row["unit_id"] in catalog and row["dimension"] in DIMENSION_NAMES and row["value"] in ("0", "1"):
                key = (row["unit_id"], row["dimension"])
                values.setdefault(row["dimension"], []).append((int(row["value"]), human.get(key)))
    return [_harness_line(DIMENSION_NAMES[d], values[d], seed) for d in DIMENSION_NAMES if d in values]


def project_figures(opened: Any, store: Any, annotator: str | None = None, run: Path | None = None) -> list[str]:
    """The figure lines (module docstring), in a fixed order."""
    catalog = opened.catalog()
    labels, who, _ties = label_rows(store, catalog, annotator)
    verdicts = pass_rate(store, response_units(opened), annotator)
    lines = [f"dataset {opened.name}, labels of {who}",
             f"human pass rate: {_wilson(verdicts.passed, verdicts.judged)}"]
    human = {(lab.unit_id, lab.dimension): lab.value for lab in labels}
    for dim, name in DIMENSION_NAMES.items():
        values = [v for (_u, d), v in human.items() if d == dim]
        if values:
            lines.append(f"human {name}: {_wilson(sum(values), len(values))}")
    if run is not None:
        lines += _harness(Path(run), catalog, human, f"phoenix:{opened.name}")
    return lines


def merge_description(current: str | None, lines: list[str]) -> str:
    """``current`` with the figures block (between :data:`BEGIN` and :data:`END`) replaced or appended."""
    text = current or ""
    start, end = text.find(BEGIN), text.find(END)
    block = "\n".join([BEGIN, *lines, END])
    if start >= 0 and end > start:
        return text[:start] + block + text[end + len(END):]
    return f"{text.rstrip()}\n\n{block}" if text.strip() else block
