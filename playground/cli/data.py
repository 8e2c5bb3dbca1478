"""``playground data check``: validate a corpus and golden set and print what they hold."""
from __future__ import annotations

import argparse
from collections import Counter

from .options import add_root

__all__ = ["register", "run_check", "summary_lines"]


def register(subparsers: argparse._SubParsersAction) -> None:
    data = subparsers.add_parser("data", help="validate the corpus and golden set")
    sub = data.add_subparsers(dest="data_command", metavar="SUBCOMMAND")
    check = sub.add_parser(
        "check",
        help="validate DIR/corpus and DIR/golden and print counts",
        description="Validate DIR/corpus and DIR/golden (default: the repository's own). Exit 0 and print "
        "counts per tenant, case type and response variant; or exit 1 with every problem listed, each with "
        "its file, line and case/fact id.",
    )
    add_root(check)
    check.set_defaults(func=run_check)
    data.set_defaults(func=lambda args: data.print_help() or 2)


def _table(title: str, counts: Counter) -> list[str]:
    width = max([len(k) for k in counts] + [len(title)])
    lines = [f"{title:<{width}}  count"]
    lines += [f"{k:<{width}}  {counts[k]:>5}" for k in sorted(counts)]
    lines.append(f"{'total':<{width}}  {sum(counts.values()):>5}")
    return lines


def summary_lines(dataset) -> list[str]:
    """Counts per tenant, case type and response variant, as printable lines."""
    corpus = dataset.corpus
    lines = [f"data at {dataset.root}: valid", ""]
    sections: Counter[str] = Counter()
    for d in corpus.documents:
        sections[d.tenant] += len(d.sections)
    lines += _table("tenant (articles)", Counter(d.tenant for d in corpus.documents))
    lines += [
        f"  sections: {sum(sections.values())}; superseded pairs: {sum(1 for d in corpus.documents if d.supersedes)}",
        "",
    ]
    lines += _table("case type", Counter(c.case_type for c in dataset.cases.values()))
    lines.append("")
    lines += _table("cases per tenant", Counter(c.tenant for c in dataset.cases.values()))
    lines.append("")
    lines += _table("response variant", Counter(r.variant for r in dataset.responses.values()))
    n_claims = sum(len(r.key_claims) for r in dataset.responses.values())
    n_facts = sum(len(c.reference_facts) for c in dataset.cases.values())
    lines += ["", f"claims keyed: {n_claims}; reference facts: {n_facts}"]
    return lines


def run_check(args: argparse.Namespace) -> int:
    from ..golden import load_dataset

    dataset = load_dataset(args.root)  # DataError → printed by main, exit 1
    print("\n".join(summary_lines(dataset)))
    return 0
