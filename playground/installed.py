"""Which version this is and where its data lives: the checkout, else an installed wheel's shared data.

At the lowest floor, so that any module may ask where ``corpus/``, ``golden/``, ``configs/`` and
``notebooks/`` are without importing the package's face (``playground/__init__.py`` re-exports both names).
"""
from __future__ import annotations

import site
import sys
from pathlib import Path

__all__ = ["REPO_ROOT", "__version__"]

__version__ = "0.1.0"


def _data_root() -> Path:
    """Where corpus/, golden/, configs/ and notebooks/ live: the checkout, else an installed wheel's data.

    A wheel installs them under ``<prefix>/share/rag-label-playground`` (the
    ``data-files`` of pyproject.toml), ``prefix`` being the environment's
    (``sys.prefix``) or, for ``pip install --user``, ``site.USER_BASE``.
    """
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "corpus").is_dir() and (checkout / "golden").is_dir():
        return checkout
    for prefix in (sys.prefix, site.USER_BASE or ""):
        shared = Path(prefix) / "share" / "rag-label-playground"
        if (shared / "golden").is_dir():
            return shared
    return checkout


#: The repository root when running from a checkout (corpus/, golden/, configs/ live here), else the
#: installed copy of that data (see :func:`_data_root`).
REPO_ROOT = _data_root()
