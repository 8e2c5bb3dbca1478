"""The two kinds of labelling of the same units, and the bad-input error of every reader.

* :class:`HumanLabelling`: one 0/1 label per (unit, dimension), columns
  :data:`HUMAN_COLUMNS`; ``kind`` says whose (annotator, consensus, key,
  ragtruth).
* :class:`AutoLabelling`: per (unit, dimension) a continuous ``score`` and
  the automatic 0/1 ``label``, columns :data:`AUTO_COLUMNS`, plus each
  dimension's default threshold; for the deterministic scorers
  ``label = score >= threshold``.

Rule of every frame: id columns are strings (missing = ""), ``value`` and
``label`` integers, ``score`` float, rows sorted by ``(unit_id, dimension)``
(stable sort), at most one row per (unit, dimension).  A subsample keeps the
units first in SHA-256 order of ``seed:unit_id``.  Where the labellings come
from: :mod:`.store_labels`, :mod:`.answer_key`, :mod:`.run_folder`,
:mod:`.external_csv`, :mod:`.ragtruth`.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..sampling import ranked
from .tables import _dim_key

__all__ = [
    "AUTO_COLUMNS",
    "BINARY_THRESHOLD",
    "COARSE_GRID",
    "CONSENSUS",
    "HUMAN_COLUMNS",
    "AutoLabelling",
    "CalibrationInputError",
    "HumanLabelling",
    "auto_from_frame",
    "human_from_labels",
]

HUMAN_COLUMNS: tuple[str, ...] = ("unit_id", "unit_kind", "case_id", "response_id", "dimension", "value")
AUTO_COLUMNS: tuple[str, ...] = ("unit_id", "unit_kind", "case_id", "response_id", "dimension", "score", "label")
#: Annotator name of adjudicated labels (the store's reserved consensus name; they never vote).
CONSENSUS = "consensus"
#: Candidate thresholds for the deterministic harness scores: 0.05 .. 0.95 step 0.05.
COARSE_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(1, 20))
#: Default threshold of a binary (0/1) score.
BINARY_THRESHOLD = 0.5


class CalibrationInputError(ValueError):
    """Bad calibration input; ``problems`` lists every ``(row_or_line, message)`` (0 = the file)."""

    def __init__(self, problems: list[tuple[int, str]], source: str = ""):
        self.problems = sorted(problems)
        self.source = source
        head = f"{source or 'input'}: {len(self.problems)} problem(s)"
        super().__init__(head + "".join(f"\n  row {n}: {m}" if n else f"\n  {m}" for n, m in self.problems))


@dataclass(frozen=True, eq=False)
class HumanLabelling:
    """One 0/1 label per (unit, dimension): columns :data:`HUMAN_COLUMNS` (+ optional ``group``, ``variant``).

    ``kind``: ``annotator``, ``consensus``, ``key`` or ``ragtruth``.
    ``group`` (when present) is what cross-validation groups by (RAGTruth:
    the source id); otherwise ``case_id``.
    """

    name: str
    frame: pd.DataFrame
    kind: str = "annotator"
    note: str = ""

    def __post_init__(self) -> None:
        missing = [c for c in HUMAN_COLUMNS if c not in self.frame.columns]
        if missing:
            raise ValueError(f"human labelling {self.name!r} lacks column(s) {missing}")
        dup = self.frame.duplicated(["unit_id", "dimension"])
        if dup.any():
            first = self.frame[dup].iloc[0]
            raise ValueError(f"human labelling {self.name!r} has two labels of {first.unit_id} {first.dimension}")

    def __len__(self) -> int:
        return len(self.frame)

    def dimensions(self) -> list[str]:
        return sorted(set(self.frame["dimension"]), key=_dim_key)

    def labels(self, dimension: str) -> dict[str, int]:
        f = self.frame[self.frame["dimension"] == dimension]
        return dict(zip(f["unit_id"], f["value"].astype(int), strict=True))

    def subsample(self, share: float, seed: int | str = 0) -> HumanLabelling:
        """A deterministic ``share`` of the labelled units ("what if only this many were labelled?").

        Units are ordered by :func:`playground.sampling.ranked` under ``seed``
        and the first ``round(share * units)`` kept (all dimensions of a kept
        unit), so the same share and seed always keep the same units, a larger
        share keeps a superset, and when the labelling covers every unit the
        kept units are the calibration sample of that seed
        (:mod:`playground.calibrate.ppi`).  No random number generator is involved.
        """
        if not 0 < share <= 1:
            raise ValueError(f"share must be in (0, 1], got {share!r}")
        units = ranked(self.frame["unit_id"].astype(str), seed)  # the calibration-sample order
        keep = set(units[:max(1, round(share * len(units)))])
        frame = self.frame[self.frame["unit_id"].isin(keep)].reset_index(drop=True)
        return HumanLabelling(f"{self.name} ({share:.0%} subsample)", frame, self.kind,
                              f"deterministic {share:.0%} subsample of {len(units)} units (seed {seed})")


@dataclass(frozen=True, eq=False)
class AutoLabelling:
    """Per (unit, dimension) a ``score`` and the automatic ``label``: columns :data:`AUTO_COLUMNS`.

    ``thresholds``: the current default threshold of each dimension's score
    (the label is ``score >= threshold`` for the deterministic scorers; an
    external tool or a judge may label otherwise).  ``grids``: candidate
    thresholds per dimension for the sweep (default: see
    :func:`threshold_sweep`).
    """

    name: str
    frame: pd.DataFrame
    thresholds: dict[str, float] = field(default_factory=dict)
    source: str = ""
    grids: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = [c for c in AUTO_COLUMNS if c not in self.frame.columns]
        if missing:
            raise ValueError(f"automatic labelling {self.name!r} lacks column(s) {missing}")
        dup = self.frame.duplicated(["unit_id", "dimension"])
        if dup.any():
            first = self.frame[dup].iloc[0]
            raise ValueError(f"automatic labelling {self.name!r} has two rows for {first.unit_id} {first.dimension}")

    def __len__(self) -> int:
        return len(self.frame)

    def dimensions(self) -> list[str]:
        return sorted(set(self.frame["dimension"]), key=_dim_key)

    def threshold(self, dimension: str) -> float | None:
        return self.thresholds.get(dimension)


def _human_frame(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    cols = [*HUMAN_COLUMNS, *extra]
    frame = rows[cols].copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows), columns=cols)
    frame["value"] = frame["value"].astype(int)
    for c in ("unit_id", "unit_kind", "case_id", "response_id", "dimension"):
        frame[c] = frame[c].fillna("").astype(str)
    frame = frame.sort_values(["unit_id", "dimension"], key=None, kind="mergesort").reset_index(drop=True)
    return frame


def _auto_frame(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    cols = [*AUTO_COLUMNS, *extra]
    frame = rows[cols].copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows), columns=cols)
    frame["score"] = frame["score"].astype(float)
    frame["label"] = frame["label"].astype(int)
    for c in ("unit_id", "unit_kind", "case_id", "response_id", "dimension"):
        frame[c] = frame[c].fillna("").astype(str)
    return frame.sort_values(["unit_id", "dimension"], kind="mergesort").reset_index(drop=True)


def _field(label: Any, name: str) -> Any:
    """``name`` of a label given as a mapping (None if absent) or as an object (empty string if absent)."""
    return label.get(name) if isinstance(label, Mapping) else getattr(label, name, "")


def human_from_labels(labels: Iterable[Any], name: str, kind: str = "annotator", note: str = "") -> HumanLabelling:
    """A labelling from label objects (``StoredLabel``, ``model.Label`` or dicts) of ONE annotator."""
    rows = []
    for label in labels:
        rows.append(
            {
                "unit_id": _field(label, "unit_id"),
                "unit_kind": _field(label, "unit_kind"),
                "case_id": _field(label, "case_id") or "",
                "response_id": _field(label, "response_id") or "",
                "dimension": _field(label, "dimension"),
                "value": int(_field(label, "value")),
            }
        )
    return HumanLabelling(name, _human_frame(rows), kind, note)


def auto_from_frame(frame: pd.DataFrame, name: str, thresholds: Mapping[str, float] | None = None,
                    grids: Mapping[str, Sequence[float]] | None = None, source: str = "") -> AutoLabelling:
    """An automatic labelling from a frame with at least ``unit_id``, ``dimension``, ``score``, ``label``."""
    f = frame.copy()
    for c in ("unit_kind", "case_id", "response_id"):
        if c not in f.columns:
            f[c] = ""
    return AutoLabelling(name, _auto_frame(f), dict(thresholds or {}),
                         source, {k: tuple(v) for k, v in (grids or {}).items()})
