"""A seeded imported dataset with per-passage human labels and a RAGAS-style result table (for the gate's tests)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from playground.datasets import open_dataset
from playground.importers.load import import_dataset
from playground.store import open_store

__all__ = ["case_ids", "label_samples", "make_labelled", "write_rows"]


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def make_labelled(tmp: Path, n: int = 120, *, tpr: float = 0.9, tnr: float = 0.85, base: float = 0.6,
                  seed: int = 3, label_every: int = 1, name: str = "qa") -> tuple[Path, Path, list[int], list[float]]:
    """``(db, result file, human sample labels, scores)``: n samples of one passage each; people label the
    passage relevant with probability ``base``; the tool scores >= 0.5 with probability tpr / 1 - tnr."""
    rng = np.random.default_rng(seed)
    rows = [{"user_input": f"Question {i}?", "response": f"Answer {i}.", "retrieved_contexts": [f"Context {i}."]}
            for i in range(n)]
    write_rows(tmp / f"{name}.jsonl", rows)
    human = [int(x) for x in rng.random(n) < base]
    says = [bool(rng.random() < (tpr if h else 1 - tnr)) for h in human]
    scores = [round(float(0.5 + 0.5 * rng.random()) if s else float(0.5 * rng.random()), 4) for s in says]
    db = tmp / f"{name}.db"
    with open_store(db) as store:
        import_dataset(tmp / f"{name}.jsonl", "ragas", name, store)
    cases = case_ids(db, name)
    label_samples(db, name, {c: human[i] for i, c in enumerate(cases) if label_every and i % label_every == 0})
    result = write_rows(tmp / f"{name}_result.jsonl",
                        [{**r, "context_precision": s} for r, s in zip(rows, scores, strict=True)])
    return db, result, human, scores


def case_ids(db: Path, name: str) -> list[str]:
    """The dataset's sample (case) ids in file order."""
    with open_store(db) as store:
        return [s["case_id"] for s in open_dataset(name, store).payload["samples"]]


def label_samples(db: Path, name: str, values: dict[str, int], annotator: str = "ann") -> None:
    """Label the one passage of each sample in ``values`` relevant (1) or not (0)."""
    with open_store(db) as store:
        opened = open_dataset(name, store)
        for unit in opened.units():
            if unit.unit_kind == "passage" and unit.case_id in values:
                store.set_label(annotator, unit, "relevant", values[unit.case_id])
