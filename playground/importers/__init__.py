"""Importers: turn external human-labelled data sets into playground units and labels.

Each importer validates its whole input first and imports nothing from a bad
file (every problem listed with its line number).  Imported data sets live
beside the golden set, not in it: their cases and responses have their own id
prefixes (``RT-`` for RAGTruth) and case types, so the golden set's
validation and the harness never see them.

* :mod:`playground.importers.ragtruth` — the RAGTruth claim format: reading and
  validating a claim file, and importing it (``playground import ragtruth FILE``)
  as an :mod:`~playground.importers.claim_dataset`.
* :mod:`playground.importers.ragas`, :mod:`~playground.importers.deepeval`,
  :mod:`~playground.importers.table` — RAG samples from RAGAS, DeepEval or any
  table (``playground import ragas|deepeval|table FILE --dataset NAME``), on
  the shared core :mod:`~playground.importers.core` (rows, places, problems,
  the payload and its units) and :mod:`~playground.importers.load` (the
  all-or-nothing import).
* :mod:`playground.importers.export` — back out as RAGAS or DeepEval rows with
  the human results (``playground export``).
* traces: :mod:`~playground.importers.traces` (spans to samples, over
  :mod:`~playground.importers.spans`), :mod:`~playground.importers.trace_export`
  (labels as Phoenix annotation frames and GenAI events),
  :mod:`~playground.importers.phoenix_live` (spans pulled from a running
  Phoenix), :mod:`~playground.importers.phoenix_push` (labels pushed to it,
  with :mod:`~playground.importers.phoenix_harness` and
  :mod:`~playground.importers.phoenix_figures`),
  :mod:`~playground.importers.langfuse` (Langfuse exports in, scores out).

Imported datasets live in the label store (``LabelStore.put_dataset``), one
transaction with their labels; :mod:`playground.datasets` opens them.
"""
from __future__ import annotations

__all__ = ["claim_dataset", "core", "deepeval", "export", "langfuse", "load", "phoenix_figures", "phoenix_harness",
           "phoenix_live", "phoenix_push", "ragas", "ragtruth", "table", "trace_export"]
