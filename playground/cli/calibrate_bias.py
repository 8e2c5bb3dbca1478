"""``calibrate bias RESULT`` and ``calibrate drift --anchor RESULT``: probes written into the calibration record.

For every scorer of the record whose column the result table has: the length probe
(:mod:`playground.calibrate.bias`) on the table's samples that people labelled, matched to the dataset's
samples as ``calibrate external`` matches them; the record is written again with ``bias: {length: …}`` in
each scorer's entry (a new fingerprint; everything else as it was), to ``--out`` or in place.

``calibrate drift --anchor RESULT --dataset NAME --record RECORD [--on DATE]``: the scorer's new scores on
the anchor set (the dataset's labelled samples) re-checked against the record's TPR and TNR intervals
(:mod:`playground.calibrate.drift`); the record keeps ``anchor: {checked_on, held, last_held, …}``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import DataError
from ..files import write_atomic

__all__ = ["register_bias", "run_bias", "run_drift"]


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
    d = sub.add_parser(
        "drift", help="re-check a recorded scorer on the frozen anchor set; the record says when it last held",
        description="The scorer's new scores on the anchor set (the dataset's labelled samples): TPR and TNR "
        "there against the record's 95%% intervals. Outside either interval, the agreement changed and the "
        "calibrated gate leaves the scorer advisory.")
    d.add_argument("--anchor", required=True, type=Path, metavar="RESULT",
                   help="the scorer's result table on the anchor samples, scored now")
    d.add_argument("--dataset", required=True, metavar="NAME", help="the dataset the record is of")
    d.add_argument("--record", required=True, type=Path, metavar="RECORD", help="the calibration record")
    d.add_argument("--out", type=Path, default=None, metavar="FILE", help="write here (default: the record itself)")
    d.add_argument("--on", default=None, metavar="YYYY-MM-DD", help="the date of the check (default: today, UTC)")
    d.add_argument("--scale", type=float, default=1.0, choices=(1.0, 100.0), help="scores are on 0–SCALE")
    add_db(d)
    d.set_defaults(func=run_drift)


def _load(args: argparse.Namespace, result: Path) -> tuple[dict, dict, dict, dict] | int:
    """``(record, scores by case, response length by case, votes)``, or the exit code 2 after the error."""
    from ..calibrate.external_samples import RATE_OF_DIMENSION, match_rows, read_result
    from ..calibrate.record import load_record
    from ..store import StoreError
    from .gate_scores import _votes

    try:
        record = load_record(args.record)
        if record["dataset"]["name"] != args.dataset:
            raise ValueError(f"the record is of dataset {record['dataset']['name']!r}, not {args.dataset!r}")
        rates = {e["column"]: RATE_OF_DIMENSION[e["dimension"]] for e in record["scorers"]}
        table = read_result(result, scale=args.scale, extra_metrics=rates, only=tuple(rates))
        opened, votes = _votes(args, args.dataset)
    except DataError as exc:
        print(exc.report(), file=sys.stderr)
        return 2
    except (ValueError, OSError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    matched, _rows, _samples = match_rows(table, opened)
    length = {s["case_id"]: len(s["response"] or "") for s in opened.payload["samples"]}
    return record, matched, length, votes


def _labelled(record: dict, entry: dict, matched: dict, votes: dict) -> tuple[list[str], list[float], list[int]]:
    """The cases with a score of ``entry``'s column and a human verdict of its dimension, their scores and verdicts."""
    cut = record["human"]["human_threshold"]
    human = {c: int(sum(v) / len(v) >= cut) for (c, d), v in votes.items() if d == entry["dimension"] and v}
    scored = {c: float(s) for c, sc in matched.items() if (s := sc.get(entry["column"])) is not None and c in human}
    cases = sorted(scored)
    return cases, [scored[c] for c in cases], [human[c] for c in cases]


def _write(args: argparse.Namespace, record: dict, what: str) -> None:
    from ..calibrate.record import dumps_record

    out = args.out or args.record
    write_atomic(out, dumps_record(record))
    print(f"calibration record with {what} written to {out}")


def run_bias(args: argparse.Namespace) -> int:
    from ..calibrate.bias import length_bias

    loaded = _load(args, args.result)
    if isinstance(loaded, int):
        return loaded
    record, matched, length, votes = loaded
    for e in record["scorers"]:
        cases, scores, human = _labelled(record, e, matched, votes)
        probe = length_bias(scores, [length[c] for c in cases], human)
        e["bias"] = {"length": probe}
        figures = ", ".join(f"human-'{k}' " + (f"rho {f['rho']:.3f} [{f['low']:.3f}, {f['high']:.3f}] n={f['n']}"
                                               if f["rho"] is not None else f"n={f['n']}: {f['note']}")
                            for k, f in probe["by_class"].items())
        print(f"{e['column']}: length probe on {len(cases)} labelled sample(s): {figures}: "
              + (f"LENGTH-BIASED ({probe['reason']})" if probe["biased"] else "no length bias beyond ±0.2"))
    _write(args, record, "the bias probes")
    return 0


def run_drift(args: argparse.Namespace) -> int:
    import datetime

    from ..calibrate.drift import anchor_check

    loaded = _load(args, args.anchor)
    if isinstance(loaded, int):
        return loaded
    record, matched, _length, votes = loaded
    on = args.on or datetime.datetime.now(datetime.UTC).date().isoformat()
    for e in record["scorers"]:
        _cases, scores, human = _labelled(record, e, matched, votes)
        e["anchor"] = check = anchor_check(e, scores, human, on)
        rates = ", ".join(f"{r.upper()} {check[r]['successes']}/{check[r]['n']} "
                          f"(record [{e[r]['low']}, {e[r]['high']}])" for r in ("tpr", "tnr"))
        verdict = "held" if check["held"] else (
            f"CHANGED ({check['reason']}); last held {check['last_held'] or 'never'}")
        print(f"{e['column']}: anchor set of {check['n']} labelled sample(s) on {on}: {rates}: {verdict}")
    _write(args, record, "the anchor check")
    return 0
