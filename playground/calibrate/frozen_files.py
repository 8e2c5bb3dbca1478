"""The frozen and tuning-CV reports as files: the printed table, and one row per claim with every verdict.

``--out DIR`` on ``playground calibrate ragtruth --frozen|--tuning-cv`` and
``playground calibrate begin [--tuning-cv]`` writes two files
(:func:`report_files`; ``<dataset>`` is ``ragtruth`` or ``begin``, ``<part>``
``frozen`` or ``tuning``):

* ``<dataset>-frozen.csv`` (``-tuning-cv.csv``): the printed table —
  :meth:`~playground.calibrate.frozen.PartReport.table` in the columns
  :data:`TABLE_COLUMNS`, every float as printed (three decimals), an undefined
  figure (printed ``—``) empty;
* ``<dataset>-<part>-claims.csv``: one row per claim of the reported part —
  ``claim_id, source_id, task_type, human_supported``, then per scorer, in the
  table's order, ``<prefix>_score`` (``round(score, 6)``, what the floor is
  compared with) and ``<prefix>_pass`` (the scorer's label at the floor used:
  ``round(score, 6) >= floor``), and last ``claim`` (the text).  The floor used
  is the one the report applied to that claim: the tuning part's floor for the
  frozen report; for ``--tuning-cv`` the floor chosen without the claim's fold
  (fold ``sampling.fold_of(source, folds, seed)``), empty when that fold got
  none.  The judge (:class:`~playground.calibrate.judge_scorer.JudgeVerdicts`)
  has ``judge_verdict`` (``yes``/``no``), ``judge_pass`` and ``judge_reason``
  instead of score and pass.  ``<prefix>`` is the scorer's name in lower case,
  every run of other characters than letters and digits one ``_`` (``ROUGE-1
  precision`` → ``rouge_1_precision``); a prefix met twice gets ``_2``, ``_3``…

Row order: the claims where at least one scorer's pass differs from
``human_supported`` first, then the others; within each, by claim id in
natural order (digit runs compared as numbers: ``904:2`` before ``904:10``).
Booleans are ``True``/``False``; cells are written by :mod:`csv` with ``\\n``
line ends.  The file is for reading in a spreadsheet, so a claim or a judge's
reason that starts with ``= + - @``, a tab, CR or ``'`` gets a leading ``'``
(:func:`playground.store.io.neutralise_cell`, as the store's CSV exports do).
Same report, records and scorers: the same bytes.  Both files are written
together or not at all (:func:`playground.files.write_all_atomic`).
"""
from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..files import write_all_atomic
from ..sampling import fold_of
from ..store.io import neutralise_cell
from .frozen import AnyScorer, GivenScores, PartReport, items_of, score_items
from .judge_scorer import JudgeVerdicts

__all__ = [
    "CLAIM_COLUMNS",
    "TABLE_COLUMNS",
    "WrittenFiles",
    "claim_rows",
    "file_names",
    "report_files",
    "scorer_prefixes",
    "table_rows",
    "write_report_files",
]

#: The columns of the table file, in order (the printed table's, with ``dataset`` first).
TABLE_COLUMNS = ("dataset", "scorer", "task_type", "n", "hallucinated", "sources", "floor", "kappa", "kappa_low",
                 "kappa_high", "balanced_accuracy", "balanced_accuracy_low", "balanced_accuracy_high",
                 "recall_hallucinated", "recall_hallucinated_low", "recall_hallucinated_high",
                 "precision_hallucinated", "precision_hallucinated_low", "precision_hallucinated_high")
#: The first columns of the claims file, before the scorers' columns.
CLAIM_COLUMNS = ("claim_id", "source_id", "task_type", "human_supported")

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_DIGITS = re.compile(r"(\d+)")


def file_names(report: PartReport) -> tuple[str, str]:
    """``(table file, claims file)`` names of ``report``: ``ragtruth-frozen.csv`` and
    ``ragtruth-frozen-claims.csv``, or ``…-tuning-cv.csv`` and ``…-tuning-claims.csv``."""
    stem = report.dataset.lower()
    if report.tuning_cv:
        return f"{stem}-tuning-cv.csv", f"{stem}-tuning-claims.csv"
    return f"{stem}-frozen.csv", f"{stem}-frozen-claims.csv"


def _printed(v: Any) -> str:
    """A table cell as printed (three decimals), an undefined figure empty."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def table_rows(report: PartReport) -> list[list[str]]:
    """The table file's rows, header first (:data:`TABLE_COLUMNS`, the cells as printed)."""
    frame = report.table()
    rows = [list(TABLE_COLUMNS)]
    if frame.empty:
        return rows
    for r in frame.reindex(columns=list(TABLE_COLUMNS)).itertuples(index=False):
        rows.append([_printed(v) for v in r])
    return rows


def scorer_prefixes(scorers: Sequence[tuple[str, AnyScorer]]) -> list[str]:
    """The column prefix of each scorer (module docstring): ``judge`` for the judge, else from the name."""
    out: list[str] = []
    for name, fn in scorers:
        base = "judge" if isinstance(fn, JudgeVerdicts) else (_NON_ALNUM.sub("_", name.lower()).strip("_") or "scorer")
        prefix, k = base, 1
        while prefix in out:
            k += 1
            prefix = f"{base}_{k}"
        out.append(prefix)
    return out


def _natural(claim_id: str) -> tuple[tuple[tuple[int, int | str], ...], str]:
    parts = tuple((0, int(p)) if p.isdigit() else (1, p) for p in _DIGITS.split(claim_id) if p)
    return parts, claim_id


def _passes(report: PartReport, name: str, scores: np.ndarray, sources: Sequence[str],
            fn: AnyScorer) -> list[bool | None]:
    """Each claim's label at the floor the report used (None: no floor)."""
    if isinstance(fn, GivenScores) and fn.yes_no:
        return [bool(x) for x in scores >= 0.5]
    if not report.tuning_cv:
        floor = report.scorer(name).floor
        return [None] * len(sources) if floor is None else [bool(x) for x in scores >= floor]
    floors = report.scorer(name).fold_floors
    out: list[bool | None] = []
    for score, source in zip(scores.tolist(), sources, strict=True):
        k = fold_of(source, report.folds, report.seed)
        f = floors[k] if k < len(floors) else None
        out.append(None if f is None else bool(score >= f))
    return out


def claim_rows(report: PartReport, records: Sequence[Any], scorers: Sequence[tuple[str, AnyScorer]]) -> list[list[Any]]:
    """The claims file's rows, header first, in the order of the module docstring (values not yet text:
    ``bool``, ``float``, ``str``, None for an empty cell)."""
    return _claims(report, records, scorers)[0]


def _claims(report: PartReport, records: Sequence[Any],
            scorers: Sequence[tuple[str, AnyScorer]]) -> tuple[list[list[Any]], int]:
    """:func:`claim_rows` and how many claims some scorer disagrees with the human label on."""
    items = items_of(records)
    sources = [i.source for i in items]
    human = [i.supported for i in items]
    header: list[str] = [*CLAIM_COLUMNS]
    columns: list[list[Any]] = []
    disagree = [False] * len(items)
    for prefix, (name, fn) in zip(scorer_prefixes(scorers), scorers, strict=True):
        scores = score_items(fn, items)
        passes = _passes(report, name, scores, sources, fn)
        disagree = [d or (p is not None and p != h) for d, p, h in zip(disagree, passes, human, strict=True)]
        if isinstance(fn, JudgeVerdicts):
            header += [f"{prefix}_verdict", f"{prefix}_pass", f"{prefix}_reason"]
            columns += [["yes" if p else "no" for p in passes], passes,
                        [neutralise_cell(fn.reasons.get(i.item_id, "")) for i in items]]
        else:
            header += [f"{prefix}_score", f"{prefix}_pass"]
            columns += [scores.tolist(), passes]
    header.append("claim")
    body = [[i.item_id, i.source, i.task, i.supported, *(c[k] for c in columns), neutralise_cell(i.claim)]
            for k, i in enumerate(items)]
    order = sorted(range(len(items)), key=lambda k: (not disagree[k], _natural(items[k].item_id)))
    return [header, *(body[k] for k in order)], sum(disagree)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        text = f"{v:.6f}".rstrip("0").rstrip(".")
        return "0" if text in ("", "-0") else text
    return str(v)


def _csv(rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows([[_cell(v) for v in r] for r in rows])
    return buf.getvalue()


def report_files(report: PartReport, records: Sequence[Any],
                 scorers: Sequence[tuple[str, AnyScorer]]) -> dict[str, str]:
    """``{file name: CSV text}`` of the two files (module docstring); ``records``: the reported part's records
    (RAGTruth or BEGIN), ``scorers``: the report's scorers by row name."""
    return _texts(report, _claims(report, records, scorers)[0])


def _texts(report: PartReport, claims: list[list[Any]]) -> dict[str, str]:
    table_name, claims_name = file_names(report)
    return {table_name: _csv(table_rows(report)), claims_name: _csv(claims)}


@dataclass(frozen=True)
class WrittenFiles:
    """What :func:`write_report_files` wrote: the two paths, the table's rows, the claims and how many of
    them at least one scorer disagrees with the human label on (the first rows of the claims file)."""

    table: Path
    claims: Path
    table_rows: int
    n_claims: int
    disagreements: int

    def summary(self) -> str:
        """The one line the commands print."""
        return (f"wrote {self.table} (the table, {self.table_rows} rows) and {self.claims} ({self.n_claims} "
                f"claims, the {self.disagreements} where a scorer disagrees with the human label first)")


def write_report_files(out_dir: str | Path, report: PartReport, records: Sequence[Any],
                       scorers: Sequence[tuple[str, AnyScorer]]) -> WrittenFiles:
    """Write :func:`report_files` into ``out_dir`` (made if missing): both files or neither."""
    out = Path(out_dir)
    claims, disagreements = _claims(report, records, scorers)
    texts = _texts(report, claims)
    out.mkdir(parents=True, exist_ok=True)
    write_all_atomic({out / name: text for name, text in texts.items()})
    table_name, claims_name = file_names(report)
    return WrittenFiles(out / table_name, out / claims_name, len(table_rows(report)) - 1, len(claims) - 1,
                        disagreements)
