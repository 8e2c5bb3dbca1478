"""RAG Label Playground: label RAG answers, watch four dimensions move, calibrate scorers.

The core (model, corpus, golden, claims, stats, metrics, store, harness,
calibrate) imports no widget or plotting code; ``playground.ui`` and
``playground.cli`` are thin layers over it.
"""
from pathlib import Path

__all__ = ["REPO_ROOT", "__version__"]


__version__ = "0.1.0"

#: The repository root when running from a checkout (corpus/, golden/, configs/ live here).
REPO_ROOT = Path(__file__).resolve().parent.parent
