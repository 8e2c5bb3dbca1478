"""``playground tags``: a dataset's failure-mode taxonomy (error analysis: open and axial coding).

* ``playground tags list --dataset NAME`` — every tag with how many responses carry it, and where merged ones went.
* ``playground tags add --dataset NAME TAG [--description TEXT]`` — a new tag (annotators also add tags by using them).
* ``playground tags rename --dataset NAME OLD NEW`` — OLD now reads as NEW everywhere.
* ``playground tags merge --dataset NAME TAG... --into TARGET`` — every TAG now reads as TARGET.
"""
from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from .labels import run_on_store, terminal_safe
from .options import add_db

__all__ = ["register", "run_tags"]

_DESCRIPTION = (
    "The failure-mode tags of a dataset. Annotators tag responses while labelling (open coding: a new name joins "
    "the taxonomy); an owner then renames tags and merges near-duplicates (axial coding). Renaming or merging "
    "rewrites nothing: every tag event and note stays as it was typed, and every count, page and export reads the "
    "tag through the mapping. A tag name is 1 to 40 characters: lower-case letters a-z, digits, '-' and '_', "
    "starting with a letter. A bad name, a missing tag, or a merge into a missing or merged-away tag: one error, "
    "exit code 2, nothing written."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "tags", help="a dataset's failure-mode tags: list (with counts), add, rename, merge",
        description=_DESCRIPTION,
        epilog="examples:\n  playground tags list --dataset demo\n"
        "  playground tags add --dataset demo off-topic --description 'answers another question'\n"
        "  playground tags rename --dataset demo halluc hallucination\n"
        "  playground tags merge --dataset demo made-up invented --into hallucination",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=lambda args: p.print_help() or 2)
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    actions = {
        "list": ("every tag with the responses that carry it (of the judged ones, with a 95% Wilson interval) and "
                 "its tag sets; where merged ones went", None, ""),
        "add": ("add TAG to the taxonomy", "TAG", "the new tag"),
        "rename": ("rename tag OLD to NEW (a name not used before)", None, ""),
        "merge": ("merge every TAG into --into TARGET (which must exist)", "TAG", "the tags to merge"),
    }
    for action, (text, metavar, arg_help) in actions.items():
        a = sub.add_parser(action, help=text.replace("%", "%%"),  # argparse formats help with %
                           description=f"{text[0].upper()}{text[1:]}. {_DESCRIPTION}")
        if action == "add":
            a.add_argument("names", nargs=1, metavar=metavar, help=arg_help)
            a.add_argument("--description", default="", metavar="TEXT", help="what the tag means")
        elif action == "rename":
            a.add_argument("old", metavar="OLD", help="the tag to rename")
            a.add_argument("new", metavar="NEW", help="its new name")
        elif action == "merge":
            a.add_argument("names", nargs="+", metavar=metavar, help=arg_help)
            a.add_argument("--into", required=True, metavar="TARGET", help="the tag they all become (must exist)")
        a.add_argument("--dataset", required=True, metavar="NAME", help="the dataset ('golden' or an imported one)")
        if action != "list":
            a.add_argument("--by", default="owner", metavar="NAME", help="who does it (default: owner)")
        add_db(a)
        a.set_defaults(func=run_tags, **({"names": []} if action == "list" else {}))


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _list(args: argparse.Namespace, store: Any) -> int:
    from ..verdicts import failure_mode_table, pass_rate, response_catalog

    modes = store.taxonomy(args.dataset)
    if not modes:
        print(f"dataset {terminal_safe(args.dataset)} has no failure-mode tags yet")
        return 0
    units = list(response_catalog(store, getattr(args, "root", None), args.dataset).values())
    table = {r.name: r for r in failure_mode_table(store, units)}
    passed = pass_rate(store, units)
    judged = next(iter(table.values())).responses_judged if table else 0
    print(f"{judged} response(s) judged (pass or fail, any annotator); consensus pass {passed.passed} of "
          f"{passed.judged} (ties left out): {_pct(passed.passed / passed.judged if passed.judged else None)} "
          f"[{_pct(passed.low)}, {_pct(passed.high)}]")
    sets = store.tags(dataset=args.dataset)
    votes = Counter(tag for s in sets for tag in s.tags)
    print(f"{'tag':<24} {'responses':>9} {'of judged':>9}  {'95% Wilson':<16} {'tag sets':>8}  description")
    for m in modes:
        if m.merged_into is None:
            r = table.get(m.name)
            ci = "—" if r is None or r.low is None else f"[{_pct(r.low)}, {_pct(r.high)}]"
            line = (f"{terminal_safe(m.name):<24} {r.responses_tagged if r else 0:>9} {_pct(r.rate if r else None):>9}"
                    f"  {ci:<16} {votes[m.name]:>8}  {terminal_safe(m.description)}")
            print(line.rstrip())
    for m in modes:
        if m.merged_into is not None:
            print(f"{terminal_safe(m.name):<24} -> {terminal_safe(m.merged_into)} (by {terminal_safe(m.merged_by)}, "
                  f"{m.merged_at})")
    return 0


def _write(args: argparse.Namespace, store: Any) -> int:
    ds = terminal_safe(args.dataset)
    if args.action == "add":
        m = store.add_failure_mode(args.dataset, args.names[0], args.by, args.description)
        print(f"tag {terminal_safe(m.name)} is in the taxonomy of {ds}")
    elif args.action == "rename":
        m = store.rename_failure_mode(args.dataset, args.old, args.new, args.by)
        print(f"renamed {terminal_safe(args.old)} to {terminal_safe(m.name)} in {ds} (tag events and notes "
              "unchanged; they now read as the new name)")
    else:
        m = store.merge_failure_modes(args.dataset, args.names, args.into, args.by)
        print(f"merged {', '.join(map(terminal_safe, args.names))} into {terminal_safe(m.name)} in {ds} "
              "(tag events and notes unchanged)")
    return 0


def run_tags(args: argparse.Namespace) -> int:
    """``list``, ``add``, ``rename`` or ``merge``; bad input exits 2 with nothing written."""
    from ..store import open_store

    def command() -> int:
        with open_store(args.db, create=args.action != "list") as store:
            return _list(args, store) if args.action == "list" else _write(args, store)

    return run_on_store(command)
