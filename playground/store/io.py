"""Export and import of labels: JSONL and CSV rows, golden-set YAML, store-to-store copies.

Rows have exactly the columns :data:`COLUMNS` — ``annotator, unit_kind,
unit_id, dimension, value`` with value 1 or 0 — in both formats.  Exports are
sorted by (annotator, unit_id, dimension); export then import into an empty
store gives back the same rows exactly.

An import is all-or-nothing: every row is validated against the unit catalog
first, and one :class:`LabelImportError` lists every bad row; only a file
without problems is written, in one transaction.
"""
from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..model import UNIT_DIMENSIONS, UNIT_KINDS, Unit
from .core import CONSENSUS_ANNOTATOR, MAX_NAME_LENGTH, LabelStore, open_store
from .errors import LabelImportError
from .types import ConsensusRow, ImportReport

COLUMNS: tuple[str, ...] = ("annotator", "unit_kind", "unit_id", "dimension", "value")
FORMATS: tuple[str, ...] = ("csv", "jsonl")


# --- export ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConsensusExport:
    """Consensus rows (annotator ``consensus``) and the ties left out of them."""

    rows: list[dict]
    ties: list[ConsensusRow]


def consensus_export(store: LabelStore, catalog: Mapping[str, Unit] | None = None) -> ConsensusExport:
    """Majority rows under the annotator name ``consensus``; ties are returned apart, never broken."""
    rows, ties = [], []
    for c in store.consensus(catalog=catalog):
        if c.value is None:
            ties.append(c)
        else:
            rows.append({"annotator": CONSENSUS_ANNOTATOR, "unit_kind": c.unit_kind, "unit_id": c.unit_id,
                         "dimension": c.dimension, "value": c.value})
    rows.sort(key=lambda r: (r["annotator"], r["unit_id"], r["dimension"]))
    return ConsensusExport(rows, ties)


def export_rows(store: LabelStore, annotator: str | None = None, consensus: bool = False,
                catalog: Mapping[str, Unit] | None = None) -> list[dict]:
    """Label rows with exactly :data:`COLUMNS`, sorted by (annotator, unit_id, dimension).

    ``annotator`` restricts to one person; ``consensus=True`` gives the
    majority rows instead (ties left out — use :func:`consensus_export` to get
    them).  With a ``catalog``, stale and orphaned labels are left out (the
    five columns cannot say a label is stale, and importing it would make it
    look current); use :meth:`LabelStore.stale` to list them.
    """
    if consensus:
        return consensus_export(store, catalog).rows
    labels = store.labels(annotator=annotator) if catalog is None else store.current_labels(catalog, annotator)
    rows = [{"annotator": l.annotator, "unit_kind": l.unit_kind, "unit_id": l.unit_id, "dimension": l.dimension,
             "value": int(l.value)} for l in labels]
    rows.sort(key=lambda r: (r["annotator"], r["unit_id"], r["dimension"]))
    return rows


def _atomic_text(path: Path, text: str) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def format_rows(rows: Iterable[Mapping[str, Any]], fmt: str = "csv") -> str:
    """The rows as CSV (pandas, header first) or JSONL text."""
    rows = [{c: r[c] for c in COLUMNS} for r in rows]
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if fmt == "csv":
        import csv

        import pandas as pd

        frame = pd.DataFrame(rows, columns=list(COLUMNS))
        # Minimal quoting with "\n" line ends; a lone "\r" inside a name would then go unquoted and
        # split the row on reading, so such an export quotes every field instead.
        carriage = any("\r" in str(v) for r in rows for v in r.values())
        return frame.to_csv(index=False, lineterminator="\n", quoting=csv.QUOTE_ALL if carriage else csv.QUOTE_MINIMAL)
    raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")


def write_export(rows: Iterable[Mapping[str, Any]], path_or_stream: str | os.PathLike | IO[str], fmt: str = "csv") -> None:
    """Write rows to a file (atomically: a reader never sees half a file) or a text stream."""
    text = format_rows(rows, fmt)
    if hasattr(path_or_stream, "write"):
        path_or_stream.write(text)
        if hasattr(path_or_stream, "flush"):
            path_or_stream.flush()
    else:
        _atomic_text(Path(path_or_stream), text)


# --- import --------------------------------------------------------------------------------------


def detect_format(path: str | os.PathLike, fmt: str | None = None) -> str:
    if fmt:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix in (".csv", ".txt"):
        return "csv"
    head = Path(path).read_text(encoding="utf-8-sig", errors="replace").lstrip()[:1]
    return "jsonl" if head == "{" else "csv"


def _read_csv(text: str, problems: list[tuple[int, str]]) -> tuple[list[str], list[tuple[int, dict]]]:
    import pandas as pd

    if not text.strip():
        problems.append((0, "empty file: expected a header line " + ",".join(COLUMNS)))
        return [], []
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        problems.append((0, f"malformed CSV: {str(exc).strip()}"))
        return [], []
    header = [str(c) for c in frame.columns]
    return header, [(i + 1, rec) for i, rec in enumerate(frame.to_dict(orient="records"))]


def _read_jsonl(text: str, problems: list[tuple[int, str]]) -> list[tuple[int, dict]]:
    rows = []
    # Split on "\n" only: str.splitlines() would also split on U+2028 and friends, which
    # json.dumps(ensure_ascii=False) leaves raw inside strings.
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append((n, f"not valid JSON: {exc.msg} at column {exc.colno}"))
            continue
        if not isinstance(obj, dict):
            problems.append((n, f"expected a JSON object, got {type(obj).__name__}"))
            continue
        rows.append((n, obj))
    return rows


def _parse_value(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int) and raw in (0, 1):
        return raw
    if isinstance(raw, str) and raw.strip() in ("0", "1"):
        return int(raw.strip())
    return None


@dataclass
class ParsedFile:
    """Validated rows of one label file: ``(row_number, annotator, unit, dimension, value)``."""

    source: str
    fmt: str
    rows: list[tuple[int, str, Unit, str, int]] = field(default_factory=list)


def validate_file(path: str | os.PathLike, catalog: Mapping[str, Unit], annotator_override: str | None = None,
                  fmt: str | None = None) -> ParsedFile:
    """Read and check every row of a label file; raise :class:`LabelImportError` listing every bad row.

    Checks: the file is readable UTF-8 CSV/JSONL; the columns are exactly
    :data:`COLUMNS` (``annotator`` may be absent with ``annotator_override``);
    a non-empty annotator; a unit id the catalog knows, with the catalog's
    unit kind; a dimension that unit takes; value 1 or 0; no (annotator,
    unit, dimension) twice in the file.
    """
    source = str(path)
    problems: list[tuple[int, str]] = []
    try:
        fmt = detect_format(path, fmt)
        with open(path, encoding="utf-8-sig", newline="") as fh:  # newline="": keep "\r" inside fields
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise LabelImportError([(0, f"not UTF-8 text ({exc.reason} at byte {exc.start})")], source) from None
    except OSError as exc:
        raise LabelImportError([(0, f"cannot read the file: {exc.strerror or exc}")], source) from None
    required = [c for c in COLUMNS if not (c == "annotator" and annotator_override is not None)]
    if fmt == "csv":
        header, records = _read_csv(text, problems)
    else:
        header, records = [], _read_jsonl(text, problems)
    if fmt == "csv" and not problems:
        missing = [c for c in required if c not in header]
        extra = [c for c in header if c not in COLUMNS]
        if missing:
            problems.append((0, f"missing column(s) {', '.join(missing)} (expected {', '.join(COLUMNS)})"))
        if extra:
            problems.append((0, f"unknown column(s) {', '.join(map(repr, extra))} (expected {', '.join(COLUMNS)})"))
        if missing or extra:
            records = []
    parsed = ParsedFile(source, fmt)
    seen: dict[tuple[str, str, str], int] = {}
    for n, rec in records:
        reasons = []
        if fmt == "jsonl":
            missing = [c for c in required if c not in rec]
            extra = [c for c in rec if c not in COLUMNS]
            if missing:
                reasons.append(f"missing column(s) {', '.join(missing)}")
            if extra:
                reasons.append(f"unknown column(s) {', '.join(map(repr, extra))}")
            if missing:
                problems.append((n, "; ".join(reasons)))
                continue
        annotator = annotator_override if annotator_override is not None else rec.get("annotator")
        kind, uid, dim, raw_value = rec.get("unit_kind"), rec.get("unit_id"), rec.get("dimension"), rec.get("value")
        if not isinstance(annotator, str) or not annotator.strip():
            reasons.append(f"empty or missing annotator ({annotator!r})")
        elif "\x00" in annotator or len(annotator) > MAX_NAME_LENGTH:
            reasons.append(f"annotator name must be at most {MAX_NAME_LENGTH} characters and contain no NUL")
        unit = catalog.get(uid) if isinstance(uid, str) else None
        if unit is None:
            reasons.append(f"unknown unit {uid!r} (not among the {len(catalog)} units the data defines)")
        else:
            if kind != unit.unit_kind:
                reasons.append(f"unit_kind {kind!r} does not match unit {uid}, which is a {unit.unit_kind}")
            allowed = [d for d in unit.dimensions if d in UNIT_DIMENSIONS.get(unit.unit_kind, ())]
            if dim not in allowed:
                reasons.append(f"dimension {dim!r} is not labelled on a {unit.unit_kind} (it takes: {', '.join(allowed)})")
        if unit is None and kind not in UNIT_KINDS:
            reasons.append(f"unknown unit_kind {kind!r} (known: {', '.join(UNIT_KINDS)})")
        value = _parse_value(raw_value)
        if value is None:
            reasons.append(f"value must be 1 or 0, got {raw_value!r}")
        if isinstance(annotator, str) and isinstance(uid, str) and isinstance(dim, str):
            key = (annotator, uid, dim)
            if key in seen:
                reasons.append(f"duplicate of row {seen[key]} (same annotator, unit and dimension)")
            else:
                seen[key] = n
        if reasons:
            problems.append((n, "; ".join(reasons)))
        else:
            parsed.rows.append((n, annotator, unit, dim, value))
    if problems:
        raise LabelImportError(problems, source)
    return parsed


def import_file(store: LabelStore, path: str | os.PathLike, catalog: Mapping[str, Unit],
                annotator_override: str | None = None, fmt: str | None = None) -> ImportReport:
    """Import a CSV or JSONL label file: all rows or none.

    Every row is validated first (:func:`validate_file`); any problem raises
    :class:`LabelImportError` with all of them and nothing is written.  Then
    every row is written in ONE transaction: a row that changes a label adds
    an ``import`` event (all sharing one ``batch_id``); a row equal to the
    current label (same value, same text hash) is counted as unchanged.
    Imports set values only — they never clear a label.  ``annotator_override``
    files every row under that name (the ``annotator`` column may then be absent).
    """
    parsed = validate_file(path, catalog, annotator_override, fmt)
    rows = [(a, u, d, v) for _n, a, u, d, v in parsed.rows]
    if store.read_only:
        from .errors import ReadOnlyStoreError

        raise ReadOnlyStoreError(f"the label store {store.url} is open read-only; nothing was imported")
    changed, unchanged, created, batch = store.write_rows(rows, action="import") if rows else (0, 0, [], None)
    names = tuple(sorted({a for a, *_ in rows}))
    return ImportReport(parsed.source, parsed.fmt, len(rows), changed, unchanged, names, tuple(created), batch)


# --- golden-set export -----------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldenExport:
    """Which responses went into the golden-set file, and which were skipped and why."""

    path: str
    written: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]


def export_golden(store: LabelStore, dataset: Any, path: str | os.PathLike | IO[str], annotator: str | None = None
                  ) -> GoldenExport:
    """Write the labels as a golden-set response file (``golden/responses/*.yaml`` format).

    ``annotator=None`` uses the consensus of all annotators (a tie leaves the
    response out); a name uses that person's labels.  A response is written
    only when every one of its claims has ``supported`` and ``correct`` and
    every reference fact has ``covered``, all current (not stale); the others
    are listed in :attr:`GoldenExport.skipped` with the reason.  Passage
    relevance has no place in that format and is not exported.  ``dataset``
    needs ``cases`` and ``responses`` mappings (a :class:`playground.golden.Dataset`).
    """
    import yaml

    from ..golden import response_units
    from .core import majority

    by_unit: dict[str, list] = {}
    for label in store.labels(annotator=annotator):
        if annotator is None and label.annotator == CONSENSUS_ANNOTATOR:
            continue
        by_unit.setdefault(label.unit_id, []).append(label)
    written, skipped, out = [], [], []
    for rid in sorted(dataset.responses):
        response = dataset.responses[rid]
        case = dataset.cases.get(response.case_id)
        if case is None:
            skipped.append((rid, f"case {response.case_id} is not in the dataset"))
            continue
        units = response_units(case, response)
        values: dict[tuple[str, str], int] = {}
        problems: list[str] = []
        unlabelled: list[str] = []
        for unit in units:
            for dim in unit.dimensions:
                labels = [l for l in by_unit.get(unit.unit_id, ()) if l.dimension == dim]
                fresh = [l for l in labels if l.text_hash == unit.text_hash]
                if not fresh:
                    if labels:
                        problems.append(f"stale label(s) on {unit.unit_id} {dim} (its text changed)")
                    else:
                        unlabelled.append(f"{unit.unit_id} {dim}")
                    continue
                yes = sum(l.value == 1 for l in fresh)
                value, _status = majority(yes, len(fresh) - yes)
                if value is None:
                    problems.append(f"tie on {unit.unit_id} {dim} ({yes} yes, {len(fresh) - yes} no)")
                else:
                    values[(unit.unit_id, dim)] = value
        if unlabelled:
            problems.append(f"{len(unlabelled)} unlabelled: {', '.join(unlabelled[:5])}"
                            + (" ..." if len(unlabelled) > 5 else ""))
        if problems:
            skipped.append((rid, "; ".join(problems)))
            continue
        claims = [u for u in units if u.unit_kind == "claim"]
        entry: dict[str, Any] = {
            "response_id": rid, "case_id": response.case_id, "variant": response.variant,
            "claims": [{"text": u.text, "supported": bool(values[(u.unit_id, "supported")]),
                        "correct": bool(values[(u.unit_id, "correct")])} for u in claims],
            "facts": {f.fact_id: bool(values[(u.unit_id, "covered")])
                      for f, u in zip(case.reference_facts, [u for u in units if u.unit_kind == "fact"])},
            "notes": response.notes,
        }
        if response.text != " ".join(u.text for u in claims):
            entry["text"] = response.text
        if getattr(response, "origin", "authored") != "authored":
            entry["origin"] = response.origin
        out.append(entry)
        written.append(rid)
    who = "consensus of all annotators" if annotator is None else f"annotator {annotator}"
    header = f"# Golden-set responses exported from the label store ({who}).\n"
    text = header + yaml.safe_dump({"responses": out}, sort_keys=False, allow_unicode=True, width=100)
    if hasattr(path, "write"):
        path.write(text)
        target = getattr(path, "name", "<stream>")
    else:
        _atomic_text(Path(path), text)
        target = str(path)
    return GoldenExport(str(target), tuple(written), tuple(skipped))


# --- store to store -----------------------------------------------------------------------------------


def migrate_store(source_url: str | os.PathLike, target_url: str | os.PathLike) -> dict[str, int]:
    """Copy the store at ``source_url`` into a new or empty store at ``target_url``, exactly.

    Annotators, every event and every current label keep their ids and
    timestamps; the copy is verified table by table.  The source is opened
    normally, so an older-schema source is migrated forward in place first.
    """
    with open_store(source_url, create=False) as source, open_store(target_url) as target:
        return target.copy_from(source)
