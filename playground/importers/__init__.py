"""Importers: turn external human-labelled data sets into playground units and labels.

Each importer validates its whole input first and imports nothing from a bad
file (every problem listed with its line number).  Imported data sets live
beside the golden set, not in it: their cases and responses have their own id
prefixes (``RT-`` for RAGTruth) and case types, so the golden set's
validation and the harness never see them.

* :mod:`playground.importers.ragtruth` — RAGTruth claim files
  (``playground import ragtruth FILE``).
"""
from __future__ import annotations

__all__ = ["ragtruth"]
