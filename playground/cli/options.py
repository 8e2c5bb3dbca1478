"""Options several command groups share, with one wording each."""
from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["DATASET_HELP", "DB_HELP", "ROOT_HELP", "add_dataset", "add_db", "add_root"]


DB_HELP = ("label store: a SQLite file path, sqlite:///abs/path.db or postgresql://user@host/dbname "
           "(default: $PLAYGROUND_DB, else labels.db under the user's data directory)")
ROOT_HELP = "folder holding corpus/ and golden/ (default: the repository)"
DATASET_HELP = ("only the dataset NAME: 'golden' (the shipped set) or one imported into the label store "
                "(`playground import ...`; `playground labels stats` lists them)")


def add_db(parser: argparse.ArgumentParser, help: str = DB_HELP) -> None:
    """``--db PATH|URL``: where the labels live."""
    parser.add_argument("--db", default=None, metavar="PATH|URL", help=help)


def add_root(parser: argparse.ArgumentParser, help: str = ROOT_HELP) -> None:
    """``--root DIR``: the data whose units labels refer to."""
    parser.add_argument("--root", type=Path, default=None, metavar="DIR", help=help)


def add_dataset(parser: argparse.ArgumentParser, help: str = DATASET_HELP) -> None:
    """``--dataset NAME``: which dataset's units a command reads (None: the command's default)."""
    parser.add_argument("--dataset", default=None, metavar="NAME", help=help)
