"""Import a RAGAS, DeepEval or table file as a named dataset: validate everything, then one transaction.

:func:`import_dataset` reads the file with the format's reader (every
problem collected, :func:`read_import`), writes the payload's canonical JSON
sample by sample (:mod:`.stored`: the bytes :func:`.core.build_payload` would
give, with units counted, and built only for the cases labels name), reads
an optional label table (what ``playground export`` writes beside a dataset:
``annotator, unit_id, dimension, value``; every unknown unit or bad value a
problem), and only then writes the dataset and its labels into the store in
ONE transaction (:func:`playground.store.dataset_text.put_dataset_text`, as
:meth:`playground.store.LabelStore.put_dataset`): a failure at any step leaves
the store as it was.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError, Problem
from ..limits import MAX_LABEL_ROWS
from ..model import Unit
from ..store.core import RESERVED_ANNOTATORS
from ..store.dataset_text import dataset_head, put_dataset_text
from ..store.records import check_record, is_record, restore_records_tx
from ..store.replay import Restored, check_events, restore_tx
from . import deepeval, hf_disk, ragas, table
from .core import Row, Sample, build_dataset, build_payload, check_name, check_samples, payload_head, read_rows
from .stored import count_units, drain, stream_payload

__all__ = ["KINDS", "DatasetImport", "ReadImport", "import_dataset", "payload_units", "prepare", "prepare_units",
           "read_import", "read_label_rows"]

Reader = Callable[[Path, list[Problem], "dict[str, str] | None"], tuple[str, list[Sample]]]
#: Import kind → reader of ``(format, samples)``.
KINDS: dict[str, Reader] = {"ragas": ragas.read_samples, "deepeval": deepeval.read_samples, "table": table.read_samples}
_LABEL_COLUMNS = ("annotator", "unit_id", "dimension", "value")


def payload_units(payload: dict[str, Any]) -> list[Unit]:
    """Every unit of an imported dataset's payload, in the golden set's order."""
    dataset, passages = build_dataset(payload, Path("."))
    return dataset.units(passages)


def prepare(path: str | Path, kind: str, name: str, *, mapping: dict[str, str] | None = None) -> dict[str, Any]:
    """The payload of ``path`` read as ``kind`` under ``name`` (DataError listing every problem).

    ``payload["summary"]`` holds the numbers of cases and units (counted, no unit built).
    """
    read = read_import(path, kind, name, mapping=mapping)
    payload = build_payload(name, kind, read.samples, source=read.path.name, source_sha256=read.source_sha256,
                            source_format=read.source_format)
    payload["summary"]["units"] = read.units()
    return payload


def prepare_units(path: str | Path, kind: str, name: str, *, mapping: dict[str, str] | None = None,
                  text_kind: str = "qa") -> tuple[dict[str, Any], list[Unit]]:
    """``(payload, units)`` of ``path`` (see :func:`prepare`); ``text_kind``: the kind of text
    (qa, summary, dialogue; ``playground.harness.score.KINDS``), kept as ``payload["text_kind"]``
    unless it is the default ``qa`` (an absent key means qa)."""
    payload, units, _events = _prepare(path, kind, name, mapping, text_kind)
    return payload, units


def _history(samples: list[Sample], name: str, problems: list[Problem]) -> list[dict[str, Any]]:
    """The label events the samples carry (a playground export's), each checked; problems name the row."""
    events: list[dict[str, Any]] = []
    first: dict[Any, Sample] = {}
    for s in samples:
        bad = check_events(s.events, f"{name}:")
        bad += [(i, p) for i, e in enumerate(s.events) if is_record(e) and (p := check_record(e)) is not None]
        if bad:  # the first of a row's bad events, and how many more: one line per row
            i, problem = bad[0]
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            problems.append(s.place.problem(f"label event {i + 1}{more}: {problem}", "human_labels"))
        for e in s.events if not bad else ():
            if is_record(e):
                continue
            if first.setdefault(e["event"], s) is not s:
                problems.append(s.place.problem(f"label event {e['event']} is also in {first[e['event']].place}",
                                                "human_labels"))
        events += s.events
    return events


@dataclass
class ReadImport:
    """A file read as ``kind`` under ``name`` and checked (:func:`read_import`): what an import stores.

    ``samples`` are given up as the import writes them (:func:`import_dataset`
    empties the list): pass one ``ReadImport`` to one import.
    """

    path: Path
    kind: str
    name: str
    source_format: str
    samples: list[Sample]
    events: list[dict[str, Any]]
    source_sha256: str
    cases: int

    def head(self, text_kind: str = "qa") -> dict[str, Any]:
        """The payload's keys but ``samples`` (:func:`.core.payload_head`), ``text_kind`` when not qa."""
        head = payload_head(self.name, self.kind, source=self.path.name, source_sha256=self.source_sha256,
                            source_format=self.source_format)
        if text_kind != "qa":
            head["text_kind"] = text_kind
        return head

    def units(self) -> int:
        """The number of units of the samples (:func:`.stored.count_units`), nothing built."""
        return count_units(self.name, self.samples)


def read_import(path: str | Path, kind: str, name: str, *, mapping: dict[str, str] | None = None) -> ReadImport:
    """``path`` read as ``kind`` under ``name``, every problem checked (DataError listing them all)."""
    path = Path(path)
    check_name(name)
    if kind not in KINDS:
        raise ValueError(f"unknown import kind {kind!r} (known: {', '.join(KINDS)})")
    problems: list[Problem] = []
    fmt, samples = KINDS[kind](path, problems, mapping)
    check_samples(samples, problems)
    events = _history(samples, name, problems)
    if not samples and not problems:
        problems.append(Problem(path.name, "no samples in the file"))
    if problems:
        raise DataError(problems, f"{path}: not a valid {kind} file; nothing was imported")
    digest = hf_disk.digest(path)  # a file, or a save_to_disk folder
    return ReadImport(path, kind, name, fmt, samples, events, digest, len(samples))


def _prepare(path: str | Path, kind: str, name: str, mapping: dict[str, str] | None, text_kind: str = "qa"
             ) -> tuple[dict[str, Any], list[Unit], list[dict[str, Any]]]:
    """``(payload, units, label events)`` of ``path``; DataError listing every problem."""
    read = read_import(path, kind, name, mapping=mapping)
    payload = build_payload(name, kind, read.samples, source=read.path.name, source_sha256=read.source_sha256,
                            source_format=read.source_format)
    if text_kind != "qa":
        payload["text_kind"] = text_kind
    units = payload_units(payload)
    payload["summary"]["units"] = len(units)
    return payload, units, read.events


def _label_value(row: Row, problems: list[Problem]) -> int | None:
    value = row.data.get("value")
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
        return value
    if isinstance(value, float) and value in (0.0, 1.0):
        return int(value)
    problems.append(row.place.problem(f"value must be 1 or 0, got {value!r}", "value"))
    return None


def read_label_rows(path: str | Path, catalog: dict[str, Unit], *,
                    derived: bool = False) -> list[tuple[str, Unit, str, int]]:
    """The rows of a label table for units of ``catalog`` (DataError listing every problem).

    Rows of the reserved names (``consensus``: what ``playground export`` writes
    by default) are no person's labels: with ``derived=True`` (the dataset file
    carries its label history, adjudications included) they are skipped, else
    each is a problem.
    """
    path = Path(path)
    problems: list[Problem] = []
    _fmt, rows = read_rows(path, problems, MAX_LABEL_ROWS)
    out = []
    if rows:
        missing = [c for c in _LABEL_COLUMNS if c not in rows[0].data]
        if missing:
            problems.append(Problem(path.name, f"missing column(s) {', '.join(missing)}"))
            rows = []
    for row in rows:
        annotator, uid, dim = (row.data.get(k) for k in ("annotator", "unit_id", "dimension"))
        value = _label_value(row, problems)
        if not isinstance(annotator, str) or not annotator.strip():
            problems.append(row.place.problem("missing or empty", "annotator"))
            continue
        if annotator.strip() in RESERVED_ANNOTATORS:
            if not derived:
                problems.append(row.place.problem(
                    f"{annotator.strip()!r} labels are derived, not a person's (import the export file itself: it "
                    "carries the label history, adjudications included)", "annotator"))
            continue
        unit = catalog.get(uid) if isinstance(uid, str) else None
        if unit is None:
            problems.append(row.place.problem(f"unknown unit {uid!r} (not in this dataset)", "unit_id"))
            continue
        if dim not in unit.dimensions:
            problems.append(row.place.problem(f"a {unit.unit_kind} takes {', '.join(unit.dimensions)}, not {dim!r}",
                                              "dimension"))
            continue
        if value is not None:
            out.append((annotator, unit, str(dim), value))
    if problems:
        raise DataError(problems, f"{path}: not a valid label table; nothing was imported")
    return out


@dataclass(frozen=True)
class DatasetImport:
    """What :func:`import_dataset` did."""

    name: str
    kind: str
    cases: int
    units: int
    store: str
    replaced: bool = False
    unchanged: bool = False
    labels: int = 0
    stale: int = 0
    history: Restored = field(default_factory=Restored)
    guidelines_version: int | None = None

    def summary(self) -> str:
        what = "unchanged (same content)" if self.unchanged else ("replaced" if self.replaced else "imported")
        text = f"dataset {self.name!r} ({self.kind}) {what}: {self.cases} samples, {self.units} units, in {self.store}"
        h = self.history
        if h.restored or h.unchanged or h.merged:
            text += (f"\n  label history from the file: {h.restored} event(s) restored as they were, "
                     f"{h.unchanged} label(s) or comment(s) already so")
            if h.merged:
                text += f", {h.merged} whose history in the store differs written as new import events"
        if self.labels:
            text += f"\n  {self.labels} label(s) from the label table written in the same transaction"
        if self.guidelines_version is not None:
            text += (f"\n  guidelines: version {self.guidelines_version} "
                     f"(`playground guidelines show --dataset {self.name}`)")
        if self.stale:
            text += (f"\n  {self.stale} earlier label(s) rest on text that changed: kept and marked stale "
                     f"(`playground labels stats --dataset {self.name}` lists them)")
        return text


def _label_unit_ids(path: str | Path) -> set[str]:
    """The ``unit_id`` cells of a label table (problems are :func:`read_label_rows`'s to report)."""
    _fmt, rows = read_rows(Path(path), [], MAX_LABEL_ROWS)
    return {uid for row in rows if isinstance(uid := row.data.get("unit_id"), str)}


def import_dataset(path: str | Path, kind: str, name: str, store: Any, *, mapping: dict[str, str] | None = None,
                   labels: str | Path | None = None, replace: bool = False, text_kind: str = "qa",
                   guidelines: str | None = None, guidelines_author: str = "import",
                   read: ReadImport | None = None) -> DatasetImport:
    """Validate ``path`` (and ``labels``), then store the dataset and the labels in one transaction.

    ``guidelines`` (markdown text, e.g. from :func:`playground.store.guidelines.read_guidelines_file`)
    become the dataset's next guidelines version in the same transaction (the same text as the current
    version adds none), after any the file's own history carries.  ``read``: the file already read
    (:func:`read_import` of the same path, kind, name and mapping; its samples are used up).

    Memory is bounded by the samples (:mod:`.stored`): the payload is written as
    its JSON text sample by sample, and units are built only for the cases that
    labels name (the label table, the file's label history, the store's labels
    on this dataset), so an import with none builds no unit at all.
    """
    if read is None:
        read = read_import(path, kind, name, mapping=mapping)
    elif (read.kind, read.name) != (kind, name) or len(read.samples) != read.cases:
        raise ValueError(f"the file read for import is not that of {kind} {name!r}, or was used up")
    prefix = f"{name}:"
    earlier = [lb.unit_id for lb in store.labels(include_unsure=True) if lb.unit_id.startswith(prefix)]
    named = _label_unit_ids(labels) if labels is not None else set()
    events = read.events
    wanted = [*earlier, *named, *(e["unit_id"] for e in events if not is_record(e))]
    stored = stream_payload(read.head(text_kind), drain(read.samples), wanted)
    catalog = stored.catalog
    rows = read_label_rows(labels, catalog, derived=bool(events)) if labels is not None else []
    before = dataset_head(store, name)
    if before is not None and before[0] != kind and not replace:
        raise ValueError(f"a dataset named {name!r} already exists (kind {before[0]}); choose another name")
    restored: list[Restored] = []
    restore = restore_tx(store, events, prefix, catalog)
    records = restore_records_tx(store, [e for e in events if is_record(e)], name)
    write_guidelines = store.guidelines_tx(name, guidelines, guidelines_author) if guidelines is not None else None
    version: list[int] = []

    def also(cur: Any) -> None:
        records(cur)
        restored.append(restore(cur))
        if write_guidelines is not None:
            version.append(write_guidelines(cur))

    info = put_dataset_text(store, name, kind, stored.text, stored.sha256, stored.summary, label_rows=rows,
                            replace=replace, also=also if events or guidelines is not None else None)
    stored.text = ""  # the stale check below reads every label; the text is in the store now
    # Only labels on this dataset's units can be stale; without any there is nothing to compare.
    stale = [s for s in store.stale(catalog) if s.unit_id.startswith(prefix)] if earlier or rows or events else []
    return DatasetImport(name, kind, stored.summary["cases"], stored.summary["units"], store.url,
                         replaced=before is not None and before[1] != info.sha256,
                         unchanged=before is not None and before[1] == info.sha256,
                         labels=len(rows), stale=len(stale), history=restored[0] if restored else Restored(),
                         guidelines_version=version[0] if version else None)
