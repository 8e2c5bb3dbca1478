"""The ``playground`` command.

Each command group lives in its own module with a ``register(subparsers)``
function; handlers take the parsed arguments and return an exit code.  Bad
input (:class:`~playground.errors.DataError` and the store's and importers'
errors) is printed as a plain list without a traceback, exit code 1.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from ..errors import DataError

__all__ = ["COMMAND_MODULES", "EPILOG", "build_parser", "main"]


#: Command modules, in the order ``--help`` lists them.
COMMAND_MODULES = ("data", "units", "labels", "assign", "lesson", "harness", "calibrate", "importer", "export",
                   "guidelines", "tags", "serve", "roster")

EPILOG = """\
examples:
  playground data check                 validate the shipped corpus and golden set
  playground units --format csv         every labellable unit with its stable id
  playground serve --port 8866          the labelling playground in the browser
  playground lesson create week-1 --cases GC-0036,GC-0034   what the whole class labels, in order
  playground harness run --config configs/default.yaml --out runs/default
  playground labels export --format jsonl --out labels.jsonl
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="playground",
        description="RAG Label Playground: label the parts of RAG answers, score them automatically, "
        "and calibrate automatic scorers against people.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # a command group not built in this installation
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        return int(args.func(args) or 0)
    except DataError as exc:
        print(exc.report(), file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
