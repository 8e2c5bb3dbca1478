"""RAG Label Playground: label RAG answers, watch four dimensions move, calibrate scorers.

The library, one call per question on plain data (dicts or DataFrames)::

    import playground as pg
    ds = pg.load_dataset("tests/fixtures/ragas_single.jsonl")   # your own RAGAS file, as units
    pg.rates(labels)                                           # four dimensions, Wilson intervals
    pg.diagnose(labels)                                        # what fails, and why
    pg.agreement(human, auto)                                  # kappa, confusion, disagreements
    pg.calibrate(scores, human).summary()                      # .to_frame(), .plot()

The functions live in :mod:`playground.api` and are loaded on first use, so
``import playground`` stays cheap.  The core (model, corpus, golden, claims,
stats, metrics, store, harness, calibrate, importers) imports no widget or
plotting code; ``playground.ui`` and ``playground.cli`` are thin layers over it.
"""
from __future__ import annotations

import importlib

from .installed import REPO_ROOT, __version__

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing would double what `import playground` costs
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "REPO_ROOT",
    "Calibration",
    "Rates",
    "__version__",
    "agreement",
    "calibrate",
    "diagnose",
    "load_dataset",
    "rates",
    "score",
]
#: The public names that :func:`__getattr__` loads from :mod:`playground.api` on first use.
_API = frozenset({"Calibration", "Rates", "agreement", "calibrate", "diagnose", "load_dataset", "rates", "score"})


def __getattr__(name: str) -> Any:
    """The library's functions (:mod:`playground.api`), imported when first asked for (PEP 562)."""
    if name == "calibrate":  # the package, callable as the plain-data function (see playground.calibrate)
        return importlib.import_module("playground.calibrate")
    if name in _API:
        value = getattr(importlib.import_module("playground.api"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'playground' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
