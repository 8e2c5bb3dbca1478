"""Serving the playground to a class: the guarded Voila launcher, its kernel manager, frame guards, pool sizing.

The core imports nothing from here; ``playground serve`` (:mod:`playground.cli.serve`)
starts ``python -m playground.serving``.  Submodules are imported on use so that
``playground --help`` does not load Voila.
"""
from __future__ import annotations

__all__ = ["app", "auth", "guards", "kernels", "page", "queue", "roster", "scrub", "sizing"]
