"""``playground calibrate modes --dataset NAME``: the failure modes of a run as rates, each gated on a baseline.

See :mod:`playground.calibrate.failure_modes` for the rule.  Exit 0 PASS, 1 FAIL, 2 INCONCLUSIVE (no baseline,
or a mode of the baseline not checked), 3 bad input.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import DataError
from ..files import write_atomic

__all__ = ["register_modes", "run_modes"]


def register_modes(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "modes", help="gate each failure mode (open-coded tags) of a run on a baseline of rates",
        description="The share of judged responses tagged with each failure mode, with its 95%% Wilson interval; "
        "against --baseline a mode regresses when its lower bound lies above baseline x (1 + tolerance).")
    p.add_argument("--dataset", required=True, metavar="NAME", help="the run: a dataset judged and tagged")
    p.add_argument("--baseline", type=Path, default=None, metavar="FILE", help="rates per mode to gate against")
    p.add_argument("--write-baseline", type=Path, default=None, metavar="FILE", help="write this run's rates")
    p.add_argument("--tolerance", type=float, default=0.0, help="relative rise allowed (default 0)")
    from .options import add_db

    add_db(p)
    p.set_defaults(func=run_modes)


def run_modes(args: argparse.Namespace) -> int:
    from ..calibrate.failure_modes import gate_modes, modes_baseline
    from ..errors import load_json_object
    from ..store import StoreError, open_store
    from ..verdicts import failure_mode_table, response_catalog

    try:
        baseline = None if args.baseline is None else load_json_object(
            args.baseline, "a baseline of failure-mode rates", ("modes",), summary="unreadable baseline")
        with open_store(args.db, create=False, read_only=True) as store:
            units = list(response_catalog(store, getattr(args, "root", None), args.dataset).values())
            rows = failure_mode_table(store, units)
        result = gate_modes(rows, baseline, args.tolerance)
    except DataError as exc:
        print(exc.report(), file=sys.stderr)
        return 3
    except (ValueError, OSError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    print("\n".join(result.lines))
    for line in result.regressions:
        print(f"REGRESSION: {line}", file=sys.stderr)
    for line in result.unchecked:
        print(f"NOT CHECKED: {line}", file=sys.stderr)
    if args.write_baseline is not None:
        body = modes_baseline(rows, args.dataset, args.tolerance)
        write_atomic(args.write_baseline, json.dumps(body, indent=2, sort_keys=True) + "\n")
        print(f"baseline of failure-mode rates written to {args.write_baseline} ({len(body['modes'])} mode(s))")
    if baseline is None:
        print("no baseline: nothing gated (write one with --write-baseline)")
    print(f"failure-mode gate: {result.verdict}")
    return {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 2}[result.verdict]
