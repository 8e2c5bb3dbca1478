"""Named datasets: the shipped Tidewell set and every dataset imported into the label store.

* :data:`SHIPPED` (``"golden"``) — corpus + golden set on disk; its passages
  are those the default retrieval returns (:func:`retrieved_passages`).
* anything imported (``playground import ragas|deepeval|table|ragtruth``) —
  stored in the label store with its labels; its passages are the contexts
  the file gave, in order, with no retrieval.

``open_dataset(name, store, root)`` gives an :class:`OpenDataset` either way,
so the page, the room, ``serve`` and the harness treat both alike.  An
imported dataset's ``passages`` is a :class:`StoredPassages` mapping: each
case's passages are made from its stored row when first asked for (the page
of a 10,000-sample dataset shows one case at a time), by the importer's own
:func:`playground.importers.core.build_dataset`.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .golden import Dataset, load_dataset
from .model import Passage, Unit

__all__ = ["SHIPPED", "DatasetNotFound", "OpenDataset", "StoredPassages", "case_ids", "dataset_link", "dataset_names",
           "open_dataset", "retrieved_passages", "with_dataset"]

#: The name of the shipped Tidewell set.
SHIPPED = "golden"


class DatasetNotFound(ValueError):
    """No dataset of that name (the message lists the known ones)."""


@dataclass(frozen=True)
class OpenDataset:
    """A dataset ready to label or score: cases and responses, and the passages of each case.

    ``kind`` is ``golden``, ``ragas``, ``deepeval``, ``table`` or ``ragtruth``;
    ``payload`` the stored form of an imported dataset (empty for golden).
    """

    name: str
    kind: str
    dataset: Dataset
    passages: Mapping[str, list[Passage]]
    payload: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: Units that are not derived from cases and responses (RAGTruth's claim units).
    extra_units: tuple[Unit, ...] = field(default=(), compare=False, repr=False)
    #: The revision in the store: the SHA-256 of the stored payload ("" for golden); keys the kept harness results.
    revision: str = field(default="", compare=False)

    def units(self) -> list[Unit]:
        """Every unit in a stable order: per case its passages, then per response claims and facts."""
        if self.extra_units:
            return list(self.extra_units)
        return self.dataset.units(dict(self.passages))

    def catalog(self) -> dict[str, Unit]:
        """``unit_id -> Unit``."""
        return {u.unit_id: u for u in self.units()}


class StoredPassages(Mapping[str, list[Passage]]):
    """``case_id -> passages`` of a stored payload, each case's made on first access and kept.

    The same passages as ``build_dataset(payload, root)[1]``: each is made by
    ``build_dataset`` on a payload of that one sample.
    """

    def __init__(self, payload: dict[str, Any], root: Path) -> None:
        self._rows = {row["case_id"]: row for row in payload["samples"]}
        self._name = payload["name"]
        self._root = root
        self._made: dict[str, list[Passage]] = {}

    def __getitem__(self, case_id: str) -> list[Passage]:
        made = self._made.get(case_id)
        if made is None:
            from .importers.core import build_dataset

            row = self._rows[case_id]  # KeyError for a case not in the dataset, as a dict
            made = self._made[case_id] = build_dataset({"name": self._name, "samples": [row]}, self._root)[1][case_id]
        return made

    def count(self, case_id: str) -> int:
        """How many passages ``case_id`` has (one per stored context), without making them."""
        return len(self._rows[case_id]["contexts"])

    def context_texts(self, case_id: str) -> list[str]:
        """The text of each stored context of ``case_id``, in order, without making its passages (the page's
        search reads every case's)."""
        return [str(c) for c in self._rows[case_id]["contexts"]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def retrieved_passages(dataset: Dataset, config: Any = None) -> dict[str, list[Passage]]:
    """The passages retrieved for each case under ``config`` (default configuration if None)."""
    from .harness.config import load_config
    from .harness.retrieve import retrieve_cases

    config = config or load_config()
    return {cid: [h.passage for h in hits] for cid, hits in retrieve_cases(dataset, config).items()}


def dataset_names(store: Any = None) -> list[str]:
    """``"golden"`` first, then every dataset in ``store`` (when given), sorted."""
    if store is None:
        return [SHIPPED]
    return [SHIPPED, *sorted(n for n in store.dataset_names() if n != SHIPPED)]  # names only: no payload parsed


def _ragtruth(name: str, payload: dict[str, Any], root: Path, revision: str) -> OpenDataset:
    from .corpus import Corpus
    from .importers.claim_dataset import imported_from_payload

    imported = imported_from_payload(payload)
    return OpenDataset(name, "ragtruth", Dataset(root, Corpus(()), {}, {}), {}, payload, tuple(imported.units),
                       revision)


def open_dataset(name: str | None, store: Any = None, root: str | Path | None = None,
                 config: Any = None) -> OpenDataset:
    """The dataset ``name`` (None → golden); imported ones are read from ``store``.

    Raises :class:`DatasetNotFound` naming the known datasets when there is
    none of that name (or no store to look in).
    """
    from .installed import REPO_ROOT

    base = Path(root) if root is not None else REPO_ROOT
    if name is None or name == SHIPPED:
        golden = load_dataset(root)
        return OpenDataset(SHIPPED, "golden", golden, retrieved_passages(golden, config))
    stored = None
    if store is not None:
        stored = store.dataset(name)
    if stored is None:
        where = f" in {store.url}" if store is not None else " (no label store given to look in)"
        raise DatasetNotFound(f"no dataset named {name!r}{where}; known: {', '.join(dataset_names(store))}")
    if stored.kind == "ragtruth":
        return _ragtruth(name, stored.payload, base, stored.sha256)
    from .importers.core import build_dataset

    # the cases and responses at once (no contexts needed); the passages per case when asked for
    rows = stored.payload["samples"]
    bare = {**stored.payload, "samples": [{**row, "contexts": [], "context_ids": []} for row in rows]}
    dataset_, _ = build_dataset(bare, base)
    return OpenDataset(name, stored.kind, dataset_, StoredPassages(stored.payload, base), stored.payload,
                       revision=stored.sha256)


def case_ids(opened: OpenDataset) -> set[str]:
    """Every case id of ``opened`` (its cases, and the cases its units name): what its labels' case ids are."""
    return set(opened.dataset.cases) | {u.case_id for u in opened.extra_units}


def dataset_link(case_id: str, name: str | None, base: str = "") -> str:
    """A link to a case on the page: ``{base}?dataset=NAME&case=ID`` (no ``dataset=`` for the shipped set)."""
    head = "" if name in (None, SHIPPED) else f"dataset={quote(str(name), safe='')}&"
    return f"{base}?{head}case={quote(str(case_id), safe='')}"


def with_dataset(command: str, name: str | None) -> str:
    """``command`` (its words, e.g. ``playground calibrate sample``) with ``--dataset NAME``, as advice prints it.

    The shipped set needs no option: ``command`` as it is.
    """
    return command if name in (None, SHIPPED) else f"{command} --dataset {name}"
