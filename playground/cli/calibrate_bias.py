"""``playground calibrate bias RESULT --dataset NAME --record RECORD``: bias probes into the calibration record.

For every scorer of the record whose column the result table has: the length probe
(:mod:`playground.calibrate.bias`) on the table's samples that people labelled, matched to the dataset's
samples as ``calibrate external`` matches them; the record is written again with ``bias: {length: …}`` in
each scorer's entry (a new fingerprint; everything else as it was), to ``--out`` or in place.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import DataError
from ..files import write_atomic

__all__ = ["register_bias", "run_bias"]


def register_bias(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bias", help="probe the scorers of a calibration record for length bias; the record keeps the result",
        description="Among samples people labelled alike, does a scorer's score follow the answer's length? "
        "Spearman's rho with a 95%% interval per human class; a whole interval beyond +-0.2 makes the record "
        "length-biased, and the calibrated gate then leaves the scorer advisory.")
    p.add_argument("result", type=Path, help="the result table the record was calibrated on")
    p.add_argument("--dataset", required=True, metavar="NAME", help="the dataset the record is of")
    p.add_argument("--record", required=True, type=Path, metavar="RECORD", help="the calibration record")
    p.add_argument("--out", type=Path, default=None, metavar="FILE", help="write here (default: the record itself)")
    p.add_argument("--scale", type=float, default=1.0, choices=(1.0, 100.0), help="scores are on 0–SCALE")
    from .options import add_db

    add_db(p)
    p.set_defaults(func=run_bias)


def run_bias(args: argparse.Namespace) -> int:
    from ..calibrate.bias import length_bias
    from ..calibrate.external_samples import RATE_OF_DIMENSION, match_rows, read_result
    from ..calibrate.record import dumps_record, load_record
    from ..store import StoreError
    from .gate_scores import _votes

    try:
        record = load_record(args.record)
        if record["dataset"]["name"] != args.dataset:
            raise ValueError(f"the record is of dataset {record['dataset']['name']!r}, not {args.dataset!r}")
        rates = {e["column"]: RATE_OF_DIMENSION[e["dimension"]] for e in record["scorers"]}
        table = read_result(args.result, scale=args.scale, extra_metrics=rates, only=tuple(rates))
        opened, votes = _votes(args, args.dataset)
    except DataError as exc:
        print(exc.report(), file=sys.stderr)
        return 2
    except (ValueError, OSError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    matched, _rows, _samples = match_rows(table, opened)
    length = {s["case_id"]: len(s["response"] or "") for s in opened.payload["samples"]}
    cut = record["human"]["human_threshold"]
    for e in record["scorers"]:
        human = {c: int(sum(v) / len(v) >= cut) for (c, d), v in votes.items() if d == e["dimension"] and v}
        cases = sorted(c for c, sc in matched.items() if sc.get(e["column"]) is not None and c in human)
        probe = length_bias([matched[c][e["column"]] for c in cases], [length[c] for c in cases],
                            [human[c] for c in cases])
        e["bias"] = {"length": probe}
        figures = ", ".join(f"human-'{k}' " + (f"rho {f['rho']:.3f} [{f['low']:.3f}, {f['high']:.3f}] n={f['n']}"
                                               if f["rho"] is not None else f"n={f['n']}: {f['note']}")
                            for k, f in probe["by_class"].items())
        print(f"{e['column']}: length probe on {len(cases)} labelled sample(s): {figures}: "
              + (f"LENGTH-BIASED ({probe['reason']})" if probe["biased"] else "no length bias beyond ±0.2"))
    out = args.out or args.record
    write_atomic(out, dumps_record(record))
    print(f"calibration record with the bias probes written to {out}")
    return 0
