"""``playground guidelines``: a dataset's own labelling guidelines (markdown, versioned).

* ``playground guidelines set --dataset NAME FILE.md [--author NAME]`` — store FILE as the next version.
* ``playground guidelines show --dataset NAME [--version N]`` — the markdown on stdout (a header on stderr).
* ``playground guidelines list --dataset NAME`` — every version: number, author, time, size.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .labels import run_on_store, terminal_safe
from .options import add_db

__all__ = ["register", "run_guidelines"]

_DESCRIPTION = (
    "Give a dataset its own labelling guidelines: a markdown file (UTF-8 text, at most 256 KiB) that the page "
    "shows beside the built-in explanations (rendered safely: no raw HTML, links sanitised). Every 'set' of a "
    "different text stores a new version (1, 2, ...); the same text as the current version stores nothing. "
    "Every label, comment and tag written afterwards records the version it was made under, and exports carry "
    "every version. NAME is 'golden' (the shipped set) or a dataset imported into the label store. A file that "
    "is not UTF-8 text, or an unknown dataset: one error, exit code 2, nothing written."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "guidelines", help="a dataset's own labelling guidelines (markdown, versioned)", description=_DESCRIPTION,
        epilog="examples:\n  playground guidelines set --dataset demo guidelines.md --author lea\n"
        "  playground guidelines show --dataset demo\n  playground guidelines show --dataset demo --version 1\n"
        "  playground guidelines list --dataset demo",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=lambda args: p.print_help() or 2)
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    helps = {"set": "store FILE.md as the dataset's next guidelines version",
             "show": "print a version's markdown (default: the current one)",
             "list": "every version: number, author, time, size"}
    for action, text in helps.items():
        a = sub.add_parser(action, help=text, description=f"{text[0].upper()}{text[1:]}. {_DESCRIPTION}")
        if action == "set":
            a.add_argument("file", type=Path, metavar="FILE.md", help="the markdown file (UTF-8, at most 256 KiB)")
            a.add_argument("--author", default="owner", metavar="NAME", help="who wrote this version (default: owner)")
        if action == "show":
            a.add_argument("--version", type=int, default=None, metavar="N", help="this version (default: current)")
        a.add_argument("--dataset", required=True, metavar="NAME", help="the dataset ('golden' or an imported one)")
        add_db(a)
        a.set_defaults(func=run_guidelines)


def _set(args: argparse.Namespace, store: Any, text: str) -> int:
    before = store.guidelines(args.dataset)
    version = store.set_guidelines(args.dataset, text, args.author)
    name = terminal_safe(args.dataset)
    if before is not None and before.version == version:
        print(f"guidelines of {name}: unchanged, the same text as version {version}")
    else:
        print(f"guidelines of {name}: version {version} stored ({len(text.encode('utf-8'))} bytes, "
              f"by {terminal_safe(args.author)})")
    return 0


def _show(args: argparse.Namespace, store: Any) -> int:
    g = store.guidelines(args.dataset, args.version)
    if g is None:
        which = f"version {args.version}" if args.version is not None else "guidelines"
        print(f"error: dataset {terminal_safe(args.dataset)} has no {which} "
              f"(set them: playground guidelines set --dataset {terminal_safe(args.dataset)} FILE.md)",
              file=sys.stderr)
        return 1
    print(f"guidelines of {terminal_safe(g.dataset)}, version {g.version}, by {terminal_safe(g.author)}, "
          f"{g.created_at}", file=sys.stderr)
    sys.stdout.write(g.markdown if g.markdown.endswith("\n") else g.markdown + "\n")
    return 0


def _list(args: argparse.Namespace, store: Any) -> int:
    versions = store.guidelines_history(args.dataset)
    if not versions:
        print(f"dataset {terminal_safe(args.dataset)} has no guidelines")
    for g in versions:
        print(f"version {g.version}: by {terminal_safe(g.author)}, {g.created_at}, "
              f"{len(g.markdown.encode('utf-8'))} bytes")
    return 0


def run_guidelines(args: argparse.Namespace) -> int:
    """``set``, ``show`` or ``list`` a dataset's guidelines; bad input exits 2 with nothing written."""
    from ..store import open_store
    from ..store.guidelines import read_guidelines_file

    def command() -> int:
        text = read_guidelines_file(args.file) if args.action == "set" else ""
        with open_store(args.db, create=args.action == "set") as store:
            if args.action == "set":
                return _set(args, store, text)
            return _show(args, store) if args.action == "show" else _list(args, store)

    return run_on_store(command)
