"""The library on plain data: one call per question, as ``import playground as pg``.

Every function takes plain records (dicts), a pandas DataFrame, or the
project's own objects, and is a thin layer over the core that computes the
figures (:mod:`playground.metrics`, :mod:`playground.calibrate`,
:mod:`playground.importers`, :mod:`playground.datasets`):

* :func:`load_dataset` — the shipped set, a dataset in the label store, or a
  RAGAS / DeepEval / table file of your own, as units (no store import);
* :func:`rates` — the four dimensions with Wilson intervals;
* :func:`diagnose` — every dimension below its threshold, with its cause;
* :func:`agreement` — a person against an automatic scorer (or two people);
* :func:`score` — the deterministic scorers on a loaded dataset, per unit;
* :func:`calibrate` — every calibration figure of one scorer against people,
  as a :class:`Calibration` with ``summary()``, ``to_frame()`` and ``plot()``.

A label record has ``dimension`` (``relevant``, ``supported``, ``correct``,
``covered``, or the evaluation names ``context_relevance``, ``faithfulness``,
``correctness``, ``coverage``) and ``value`` (0 or 1), and for agreement and
calibration a ``unit_id``.  A score record has ``unit_id``, ``dimension`` and
``score`` (and optionally ``label``; without it the label is ``score >=
threshold``).  Plotting imports matplotlib only when called.

>>> import playground as pg
>>> labels = [{"unit_id": "u1", "dimension": "supported", "value": 1},
...           {"unit_id": "u2", "dimension": "supported", "value": 0},
...           {"unit_id": "u3", "dimension": "faithfulness", "value": 1}]
>>> r = pg.rates(labels)
>>> r["faithfulness"].successes, r["faithfulness"].n, round(r["faithfulness"].low, 3)
(2, 3, 0.208)
>>> print(pg.diagnose(labels).summary())
1 dimension fails: faithfulness 67% (95% CI 21%-94%) < 70% — unsupported generation (interval still crosses \
the threshold: more labels needed). No data: context relevance, correctness, coverage.
>>> a = pg.agreement({"u1": 1, "u2": 0, "u3": 1}, {"u1": 1, "u2": 1, "u4": 0})
>>> a.n_shared, a.only_a, a.only_b, a.disagreements
(2, 1, 1, [('u2', 0, 1)])
"""
from __future__ import annotations

import tempfile
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .calibrate.plain import Calibration, calibrate
from .metrics import DIMENSION_LABELS, Agreement, Diagnosis, DimensionRate
from .records import TO_LABEL, label_dimension, records

__all__ = ["Calibration", "Rates", "agreement", "calibrate", "diagnose", "load_dataset", "rates", "score"]


@dataclass(frozen=True)
class _Label:
    """What :func:`playground.metrics.rates_from_labels` reads: ``dimension``, ``value``, ``unit_id``."""

    dimension: str
    value: Any
    unit_id: Any = None


def _labels(data: Any) -> list[_Label]:
    out = []
    for i, r in enumerate(records(data), 1):
        if "value" not in r:
            raise ValueError(f"record {i}: no 'value' (0 or 1)")
        out.append(_Label(label_dimension(r, f"record {i}"), r["value"], r.get("unit_id")))
    return out


# --------------------------------------------------------------------------- rates and diagnosis


class Rates(Mapping[str, DimensionRate]):
    """The four rates by evaluation dimension (in :data:`~playground.metrics.DIMENSION_ORDER`), each a
    :class:`~playground.metrics.DimensionRate` with its Wilson interval."""

    def __init__(self, by_dimension: Mapping[str, DimensionRate]) -> None:
        self._rates = dict(by_dimension)

    def __getitem__(self, dimension: str) -> DimensionRate:
        return self._rates[dimension]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rates)

    def __len__(self) -> int:
        return len(self._rates)

    def to_frame(self) -> Any:
        """One row per dimension: ``dimension, successes, n, rate, low, high, confidence``."""
        import pandas as pd

        cols = ["dimension", "successes", "n", "rate", "low", "high", "confidence"]
        return pd.DataFrame([{c: getattr(r, c) for c in cols} for r in self._rates.values()], columns=cols)

    def summary(self) -> str:
        """One line per dimension: rate, interval and counts, or ``no data``."""
        lines = []
        for d, r in self._rates.items():
            if r.rate is None or r.low is None or r.high is None:
                lines.append(f"{DIMENSION_LABELS[d]:<18} no data")
            else:
                lines.append(f"{DIMENSION_LABELS[d]:<18} {r.rate:6.1%}  ({r.confidence:.0%} CI {r.low:.1%}-"
                             f"{r.high:.1%}), {r.successes} of {r.n}")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """The rates with their intervals as error bars (imports matplotlib); returns the Axes."""
        import matplotlib.pyplot as plt

        ax = ax if ax is not None else plt.subplots(figsize=(6, 2.5))[1]
        shown = [(d, r.rate, r.low, r.high) for d, r in self._rates.items()
                 if r.rate is not None and r.low is not None and r.high is not None]
        ys = list(range(len(shown)))
        ax.errorbar([x for _, x, _, _ in shown], ys, fmt="o",
                    xerr=[[x - lo for _, x, lo, _ in shown], [hi - x for _, x, _, hi in shown]])
        ax.set_yticks(ys, [DIMENSION_LABELS[d] for d, _, _, _ in shown])
        ax.set_xlim(0, 1)
        ax.set_xlabel("rate (Wilson interval)")
        return ax

    def __repr__(self) -> str:
        return self.summary()


def rates(labels: Any, confidence: float = 0.95) -> Rates:
    """The four rates of ``labels`` (dicts, a DataFrame or Label objects) with Wilson intervals.

    ``rate = sum(value) / count`` per dimension (see
    :func:`playground.metrics.rates_from_labels`); a dimension without labels
    has ``n == 0`` and ``rate`` None.  Records with a ``unit_id`` must carry
    one label per unit and dimension (pass one annotator's labels).
    """
    from .metrics import rates_from_labels

    return Rates(rates_from_labels(_labels(labels), confidence))


def diagnose(labels_or_rates: Any, thresholds: Mapping[str, float] | None = None,
             confidence: float = 0.95) -> Diagnosis:
    """Every dimension below its threshold with its cause (:func:`playground.metrics.diagnose`).

    Takes labels (as :func:`rates` does) or the rates themselves.  A dimension
    fails when ``rate < threshold`` and is borderline when it passes but the
    interval's lower end is below the threshold.
    """
    from .metrics import diagnose as diagnose_rates

    if isinstance(labels_or_rates, Mapping) and all(isinstance(v, DimensionRate) for v in labels_or_rates.values()):
        return diagnose_rates(labels_or_rates, thresholds)
    return diagnose_rates(rates(labels_or_rates, confidence), thresholds)


# --------------------------------------------------------------------------- agreement


def _by_unit(data: Any, field: str, dimension: str | None) -> dict[Hashable, int]:
    """``{unit_id: 0/1}`` (or ``{(unit_id, dimension): 0/1}`` over several dimensions) of one labelling."""
    if isinstance(data, Mapping):
        return {k: int(v) for k, v in data.items()}
    rows = records(data)
    for i, r in enumerate(rows, 1):
        r["dimension"] = label_dimension(r, f"record {i}")
    wanted = TO_LABEL.get(dimension, dimension) if dimension else None
    rows = [r for r in rows if wanted is None or r["dimension"] == wanted]
    several = len({r["dimension"] for r in rows}) > 1
    out: dict[Hashable, int] = {}
    for i, r in enumerate(rows, 1):
        key = (r["unit_id"], r["dimension"]) if several else r["unit_id"]
        value = r[field] if field in r else r.get("label", r.get("value"))
        if value is None:
            raise ValueError(f"record {i}: no {field!r} (0 or 1)")
        out[key] = int(value)
    return out


def agreement(human: Any, auto: Any, dimension: str | None = None, confidence: float = 0.95) -> Agreement:
    """A person's labels against a scorer's (or another person's) on the units both labelled.

    Each side is ``{unit_id: 0/1}`` or records: a human record's ``value``, an
    automatic record's ``label`` (else ``value``).  Over several dimensions a
    unit is ``(unit_id, dimension)``; ``dimension`` keeps one.  Percent
    agreement, Cohen's kappa with its interval, PABAK, MCC, the confusion
    matrix (rows human, columns automatic) and the disagreeing units; ``only_a``
    counts units only the person labelled, ``only_b`` units only the scorer did
    (:func:`playground.metrics.agreement`).
    """
    from .metrics import agreement as compare_labels

    return compare_labels(_by_unit(human, "value", dimension), _by_unit(auto, "label", dimension), confidence)


# --------------------------------------------------------------------------- datasets and scores


def load_dataset(source: str | Path | None = None, *, kind: str = "ragas", name: str | None = None,
                 mapping: dict[str, str] | None = None, store: Any = None) -> Any:
    """A dataset ready to label or score: an :class:`~playground.datasets.OpenDataset` (``.units()``).

    ``source``: None or ``"golden"`` → the shipped Tidewell set; an existing
    file → read as ``kind`` (``ragas``, ``deepeval`` or ``table`` with
    ``mapping``), named ``name`` (default: the file's stem), validated as
    ``playground import`` does but written nowhere; any other string → a
    dataset imported into the label store ``store`` (a store or a URL; None:
    ``$PLAYGROUND_DB``, else the default store).
    """
    from .datasets import SHIPPED, OpenDataset, open_dataset

    if source is None or source == SHIPPED:
        return open_dataset(None)
    path = Path(source)
    if path.is_file():
        from .importers.core import build_dataset
        from .importers.load import prepare
        from .installed import REPO_ROOT
        from .model import slugify

        label = name or slugify(path.stem).replace("_", "-")
        payload = prepare(path, kind, label, mapping=mapping)
        dataset, passages = build_dataset(payload, REPO_ROOT)
        return OpenDataset(label, kind, dataset, passages, payload)
    from .importers.core import SUFFIXES
    from .store import open_store

    if path.suffix in SUFFIXES:
        raise FileNotFoundError(f"{source}: no such file")

    if store is None or isinstance(store, (str, Path)):
        with open_store(store, read_only=True, create=False) as opened:
            return open_dataset(str(source), opened)
    return open_dataset(str(source), store)


def score(dataset: Any, config: Any = None) -> Any:
    """The deterministic scorers on a loaded dataset (contexts as given): one row per unit and dimension.

    A DataFrame with ``unit_id, unit_kind, case_id, response_id, dimension,
    score, label`` — what ``playground harness run --dataset`` writes to
    ``units.csv`` (it runs that, in a temporary folder); ``frame.attrs["thresholds"]``
    holds the configuration's threshold of each dimension.
    """
    from .calibrate import auto_from_run
    from .harness.config import load_config
    from .harness.run_dataset import run_dataset

    with tempfile.TemporaryDirectory(prefix="playground-score-") as tmp:
        run_dataset(config or load_config(), dataset, Path(tmp) / "run", progress=False)
        auto = auto_from_run(Path(tmp) / "run")
    frame = auto.frame
    frame.attrs["thresholds"] = dict(auto.thresholds)  # what pg.calibrate marks as the default per dimension
    return frame


