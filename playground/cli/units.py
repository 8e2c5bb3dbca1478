"""``playground units``: list every labellable unit with its stable id."""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from .options import add_dataset, add_db, add_root

__all__ = ["COLUMNS", "register", "run_units"]


COLUMNS = ("unit_kind", "unit_id", "case_id", "response_id", "dimensions", "text_hash", "text")


def register(subparsers: argparse._SubParsersAction) -> None:
    units = subparsers.add_parser(
        "units",
        help="list every labellable unit (passages, claims, facts)",
        description="List every labellable unit of DIR's data: retrieved passages (default configuration), "
        "claims of every response, and reference facts per response. Columns: " + ", ".join(COLUMNS)
        + ". dimensions is space-separated (relevant | supported correct | covered).",
    )
    add_root(units)
    add_dataset(units, "the dataset NAME: 'golden' (the shipped set, default) or one imported into the label store")
    add_db(units)
    units.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    units.add_argument(
        "--config", type=Path, default=None, help="harness configuration deciding the retrieved passages"
    )
    units.set_defaults(func=run_units)


def _units(args: argparse.Namespace) -> list:
    """The units of --dataset (the shipped set by default, its passages retrieved under --config)."""
    from ..datasets import SHIPPED, open_dataset
    from ..harness.config import load_config

    config = load_config(args.config)
    if args.dataset in (None, SHIPPED):
        return open_dataset(SHIPPED, None, args.root, config).units()
    from ..store import open_store

    with open_store(args.db, create=False, read_only=True) as store:
        return open_dataset(args.dataset, store, args.root, config).units()


def run_units(args: argparse.Namespace) -> int:
    from ..datasets import DatasetNotFound
    from ..store import StoreError

    try:
        units = _units(args)
    except (DatasetNotFound, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    rows = [
        {
            "unit_kind": u.unit_kind,
            "unit_id": u.unit_id,
            "case_id": u.case_id,
            "response_id": u.response_id,
            "dimensions": " ".join(u.dimensions),
            "text_hash": u.text_hash,
            "text": u.text,
        }
        for u in units
    ]
    if args.format == "jsonl":
        for row in rows:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        carriage = any("\r" in row["text"] for row in rows)  # a lone CR would split an unquoted row on reading
        writer = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, lineterminator="\n",
                                quoting=csv.QUOTE_ALL if carriage else csv.QUOTE_MINIMAL)
        writer.writeheader()
        writer.writerows(rows)
    return 0
