"""``playground assign``: annotator queues with overlap, calibration samples, and their progress.

* ``playground assign --annotators a,b,c --overlap 2 --seed S`` — queues in
  which every unit of the dataset gets ``overlap`` annotators, loads balanced
  (:func:`playground.assign.make_assignment`), saved in the label store.
* ``playground assign --calibration-sample N --seed S`` — a uniform random
  sample of N units (:func:`playground.assign.draw_calibration_sample`).
* ``playground assign show [--name N]`` — per queue: size and how many of its
  units have an answer on every dimension.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .labels import terminal_safe
from .options import add_db, add_root

__all__ = ["register", "run_assign"]

DEFAULT_DATASET = "golden"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "assign", help="annotator queues with overlap, calibration samples, and their progress",
        description="Make and show assignments of units to annotators, saved in the label store. "
        "With --annotators: every unit of the dataset goes to --overlap of them (the units in the seeded order of "
        "playground.sampling.ranked, each to the annotators with the fewest units so far, ties by a seeded hash), "
        "so loads differ by at most one unit; the same seed gives the same queues. With --calibration-sample N: "
        "the first N units of that seeded order, a uniform random sample (what PPI needs). "
        "'playground assign show' prints each queue's size and progress (a unit is done when every dimension "
        "has an answer, unsure included).",
        epilog="examples:\n  playground assign --annotators ana,ben,cy --overlap 2 --seed 7\n"
        "  playground assign --calibration-sample 50 --seed 7\n  playground assign show",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", nargs="?", choices=("show",), help="show saved assignments and their progress")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--annotators", default=None, metavar="A,B,C", help="comma-separated annotator names")
    what.add_argument("--calibration-sample", type=int, default=None, metavar="N",
                      help="draw a calibration sample of N units instead of queues")
    p.add_argument("--overlap", type=int, default=1, metavar="K", help="annotators per unit (default: 1)")
    p.add_argument("--seed", default=None, metavar="S", help="seed of the random order (required to make one)")
    p.add_argument("--dataset", default=None, metavar="NAME",
                   help=f"dataset whose units are assigned (default: {DEFAULT_DATASET}, the shipped set); with show: "
                   "only its assignments")
    p.add_argument("--name", default=None, metavar="N",
                   help="assignment name (default: 'queues' or 'calibration-sample', for an imported dataset NAME "
                   "'NAME-queues' or 'NAME-calibration-sample'; with show: only this one)")
    p.add_argument("--replace", action="store_true", help="replace a saved assignment of the same name")
    add_db(p)
    add_root(p)
    p.set_defaults(func=run_assign)


def _seed(text: str) -> int | str:
    try:
        return int(text)
    except ValueError:
        return text


def dataset_catalog(name: str, store: Any, root: Path | None) -> Mapping[str, Any]:
    """unit_id -> Unit of dataset ``name`` (the shipped set or one imported into ``store``)."""
    from ..datasets import open_dataset

    catalog: Mapping[str, Any] = open_dataset(name, store=store, root=root).catalog()
    return catalog


def _make(args: argparse.Namespace, store: Any) -> int:
    from ..assign import draw_calibration_sample, make_assignment

    if args.seed is None:
        print("error: --seed is required to make an assignment (the same seed gives the same queues)",
              file=sys.stderr)
        return 1
    seed = _seed(args.seed)
    sample = args.calibration_sample is not None
    dataset = args.dataset or DEFAULT_DATASET
    prefix = "" if dataset == DEFAULT_DATASET else f"{dataset}-"  # two datasets' default names never collide
    name = args.name or prefix + ("calibration-sample" if sample else "queues")
    if store.assignment(name) is not None and not args.replace:
        print(f"error: an assignment named {terminal_safe(name)!s} is already saved; pass --replace or another "
              "--name", file=sys.stderr)
        return 1
    unit_ids = sorted(dataset_catalog(dataset, store, args.root))
    if sample and not 1 <= args.calibration_sample <= len(unit_ids):
        print(f"error: a calibration sample of {args.calibration_sample} unit(s) was asked for; dataset "
              f"{terminal_safe(dataset)} has {len(unit_ids)}", file=sys.stderr)
        return 1
    if sample:
        made = draw_calibration_sample(unit_ids, args.calibration_sample, seed, name=name, dataset=dataset)
    else:
        names = [a.strip() for a in args.annotators.split(",") if a.strip()]
        made = make_assignment(unit_ids, names, args.overlap, seed, name=name, dataset=dataset)
    saved = store.save_assignment(made)
    sizes = ", ".join(f"{terminal_safe(k)} {len(v)}" for k, v in saved.queues.items())
    what = (f"calibration sample of {len(saved.queues['*'])} unit(s)" if sample
            else f"{len(unit_ids)} unit(s), {saved.overlap} annotator(s) each; queue sizes: {sizes}")
    print(f"saved assignment {terminal_safe(saved.name)} ({saved.dataset}, seed {saved.seed}): {what}")
    return 0


def _show(args: argparse.Namespace, store: Any) -> int:
    from ..assign import queue_progress

    found = [store.assignment(args.name)] if args.name else store.assignments()
    found = [a for a in found if a is not None and args.dataset in (None, a.dataset)]
    if not found:
        of = f" of dataset {terminal_safe(args.dataset)}" if args.dataset else ""
        print(f"no assignment named {terminal_safe(args.name)}{of}" if args.name else f"no assignments{of} saved")
        return 1 if args.name else 0
    catalogs: dict[str, Mapping[str, Any] | None] = {}
    lines = []
    for a in found:
        if a.dataset not in catalogs:
            try:
                catalogs[a.dataset] = dataset_catalog(a.dataset, store, args.root)
            except Exception as exc:  # the dataset may be gone: show sizes, say why there is no progress
                print(f"progress of dataset {a.dataset} unavailable: {terminal_safe(exc)}", file=sys.stderr)
                catalogs[a.dataset] = None
        catalog = catalogs[a.dataset]
        lines.append(f"{terminal_safe(a.name)}: {a.kind}, dataset {terminal_safe(a.dataset)}, seed {a.seed}, "
                     f"overlap {a.overlap}, created {a.created_at}")
        width = max(len(terminal_safe(k)) for k in [*a.queues, "annotator"])
        if catalog is None:
            for who, queue in a.queues.items():
                lines.append(f"  {terminal_safe(who):<{width}}  {len(queue):>5} unit(s)")
            continue
        labels = store.current_labels(catalog, include_unsure=True)
        dims = {uid: u.dimensions for uid, u in catalog.items()}
        for p in queue_progress(a, labels, dims):
            pct = 100 * p.done / p.size if p.size else 0.0
            lines.append(f"  {terminal_safe(p.annotator):<{width}}  {p.done:>5} / {p.size:<5} done ({pct:.0f}%)")
    print("\n".join(lines))
    return 0


def run_assign(args: argparse.Namespace) -> int:
    """Make an assignment (``--annotators`` or ``--calibration-sample``) or show them (``show``)."""
    from ..store import InvalidLabelError, StoreError, open_store

    try:
        if args.action == "show":
            with open_store(args.db, create=False) as store:
                return _show(args, store)
        if args.annotators is None and args.calibration_sample is None:
            print("error: give --annotators A,B,C (queues) or --calibration-sample N, or 'show'", file=sys.stderr)
            return 2
        with open_store(args.db) as store:
            return _make(args, store)
    except (StoreError, InvalidLabelError, ValueError) as exc:
        print(f"error: {terminal_safe(exc)}", file=sys.stderr)
        return 1
