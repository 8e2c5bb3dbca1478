"""``playground calibrate annotators | adjudicate | sample``: people against each other, the consensus, the sample.

Registered by :mod:`playground.cli.calibrate`.
"""
from __future__ import annotations

import argparse

from .calibrate_inputs import dataset_catalog, guard
from .calibrate_output import open_label_store, print_table
from .calibrate_real import err

__all__ = ["run_adjudicate", "run_annotators", "run_sample"]


def _key_accuracy(args: argparse.Namespace, labels: list) -> dict:
    """Accuracy against the golden answer key (the shipped set only), printed; its tables for --out."""
    from ..calibrate import CONSENSUS, accuracy_against_key, key_from_dataset
    from ..datasets import SHIPPED
    from ..golden import load_dataset

    print()
    if args.dataset not in (None, SHIPPED):
        print(f"accuracy against an answer key: dataset {args.dataset} has none (the golden set's only)")
        return {}
    key = key_from_dataset(load_dataset(args.root))
    people_labels = [lab for lab in labels if lab.annotator != CONSENSUS]
    acc = accuracy_against_key(people_labels, key)
    print_table(acc, None, "accuracy against the golden answer key (teaching; per authored variant with --out):")
    return {"accuracy_against_key": acc,
            "accuracy_by_variant": accuracy_against_key(people_labels, key, by="variant")}


def _elsewhere(args: argparse.Namespace, people: list[str]) -> None:
    """Without --dataset and with no annotator here: say which imported datasets have labels (then pass --dataset)."""
    if args.dataset is not None or people:
        return
    from ..datasets import dataset_names, open_dataset

    with open_label_store(args.db, create=False, read_only=True) as store:
        names = [n for n in dataset_names(store)[1:]
                 if store.labels(unit_ids=open_dataset(n, store, args.root).catalog())]
    if names:
        print(f"  (the imported dataset(s) {', '.join(names)} have labels: pass --dataset NAME)")


@guard
def run_annotators(args: argparse.Namespace) -> int:
    """Annotators versus each other, the adjudication queue and accuracy against the key."""
    import pandas as pd

    from ..calibrate import CONSENSUS, adjudication_queue, annotator_agreement, write_tables
    from ..datasets import with_dataset

    catalog = dataset_catalog(args)
    with open_label_store(args.db, create=False, read_only=True) as store:
        labels = store.current_labels(catalog)
        queue = adjudication_queue(store, catalog, dataset=args.dataset)
    people = sorted({lab.annotator for lab in labels if lab.annotator != CONSENSUS})
    where = f" of dataset {args.dataset}" if args.dataset else ""
    print(f"annotators with current labels{where}: {len(people)} ({', '.join(people) or '-'})")
    _elsewhere(args, people)
    if len(people) < 2:
        print("agreement between annotators needs at least two of them on shared units")
    dims = sorted({lab.dimension for lab in labels})
    results = [annotator_agreement(labels, d) for d in dims] + [annotator_agreement(labels)]
    summary = pd.DataFrame([r.summary() for r in results])
    print()
    print_table(summary, None, "agreement over shared units (items = unit and dimension):")
    pairs = pd.concat([r.pairwise.assign(dimension=r.dimension or "all") for r in results], ignore_index=True)
    majority = pd.concat([r.vs_majority.assign(dimension=r.dimension or "all") for r in results], ignore_index=True)
    print()
    print_table(pairs, ["dimension", "annotator_a", "annotator_b", "n_shared", "agreement", "kappa", "kappa_low",
                   "kappa_high", "pabak"], "pairwise Cohen's kappa:")
    print()
    print_table(majority, ["dimension", "annotator", "n", "agreement", "kappa", "kappa_low", "kappa_high"],
           "each annotator against the majority of the others:")
    print()
    open_q = queue[queue["adjudicated"].isna()] if len(queue) else queue
    print(f"adjudication queue: {len(queue)} disagreement(s), {len(open_q)} not yet adjudicated (settle with: "
          f"{with_dataset('playground calibrate adjudicate', args.dataset)} UNIT_ID DIMENSION 1|0 --adjudicator NAME)")
    if len(queue):
        print_table(queue.head(args.limit), ["unit_id", "dimension", "status", "votes", "adjudicated", "link"])
    accuracy = _key_accuracy(args, labels)
    if args.out is not None:
        written = write_tables({"annotators": summary, "pairwise": pairs, "vs_majority": majority,
                                "adjudication_queue": queue, **accuracy}, args.out)
        print(f"\nwrote {len(written)} table(s) to {args.out}/")
    return 0


@guard
def run_adjudicate(args: argparse.Namespace) -> int:
    """Write one consensus label."""
    from ..calibrate import adjudicate
    from ..datasets import with_dataset

    catalog = dataset_catalog(args, any_dataset=True)
    unit = catalog.get(args.unit_id)
    if unit is None:
        where = f"dataset {args.dataset}" if args.dataset else "the shipped set or any imported dataset"
        hint = with_dataset("playground units", args.dataset) if args.dataset else "playground units --dataset NAME"
        return err(f"unknown unit {args.unit_id!r}: not in {where} (see '{hint}')")
    value = None if args.value == "clear" else int(args.value)
    try:
        with open_label_store(args.db) as store:
            event = adjudicate(store, unit, args.dimension, value, args.adjudicator)
    except ValueError as exc:
        return err(str(exc))
    if event is None:
        print(f"{args.unit_id} {args.dimension}: consensus already {args.value}; nothing changed")
    else:
        print(f"{args.unit_id} {args.dimension}: consensus {'cleared' if value is None else value} "
              f"(adjudicated by {args.adjudicator})")
    return 0


@guard
def run_sample(args: argparse.Namespace) -> int:
    """The first --size units of the seeded ranking: the units to label for a calibration sample."""
    from ..datasets import with_dataset
    from ..sampling import draw_sample

    if args.size < 1:
        return err(f"--size must be at least 1, got {args.size}")
    catalog = dataset_catalog(args)
    units = [u for u in catalog.values() if args.kind is None or u.unit_kind == args.kind]
    chosen = draw_sample([u.unit_id for u in units], args.size, args.seed)
    print(f"calibration sample: the first {len(chosen)} of {len(units)} units ranked with seed {args.seed} "
          f"(label them in this order; then pass --sample-seed to "
          f"'{with_dataset('playground calibrate store', args.dataset)}')")
    print("rank\tunit_id\tkind\tcase_id")
    for i, unit_id in enumerate(chosen, 1):
        print(f"{i}\t{unit_id}\t{catalog[unit_id].unit_kind}\t{catalog[unit_id].case_id}")
    return 0
