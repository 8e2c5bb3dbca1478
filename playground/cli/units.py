"""``playground units``: list every labellable unit with its stable id."""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from .options import add_root

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
    units.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    units.add_argument(
        "--config", type=Path, default=None, help="harness configuration deciding the retrieved passages"
    )
    units.set_defaults(func=run_units)


def run_units(args: argparse.Namespace) -> int:
    from ..golden import load_dataset
    from ..harness.config import load_config
    from ..units import dataset_units

    dataset = load_dataset(args.root)
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
        for u in dataset_units(dataset, load_config(args.config))
    ]
    if args.format == "jsonl":
        for row in rows:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        writer = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return 0
