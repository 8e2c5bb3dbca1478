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
from typing import Any

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
    p.add_argument("--judge", default=None, metavar="MODEL",
                   help="with --pairs-with: probe this Ollama judge for position bias (each pair in both orders)")
    p.add_argument("--pairs-with", default=None, metavar="DATASET",
                   help="another run of the same questions (a dataset in the store): its answers are paired "
                   "with --dataset's by sample id")
    p.add_argument("--max-pairs", type=int, default=50, metavar="N",
                   help="at most N pairs, the first of the seeded ranking of the sample ids (default 50)")
    p.add_argument("--generator", default=None, metavar="MODEL",
                   help="the model that wrote the answers: a scorer whose judge model is this one is probed "
                   "for self-preference (its pass rate against people's on the same samples)")
    p.add_argument("--ollama-host", default=None, metavar="URL", help="Ollama server (default: $OLLAMA_HOST)")
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
    try:
        record = load_record(args.record)
        if record["dataset"]["name"] != args.dataset:
            raise ValueError(f"the record is of dataset {record['dataset']['name']!r}, not {args.dataset!r}")
        rates = {e["column"]: RATE_OF_DIMENSION[e["dimension"]] for e in record["scorers"]}
        table = read_result(result, scale=args.scale, extra_metrics=rates, only=tuple(rates))
        opened, votes = _votes_of(args, args.dataset)
    except DataError as exc:
        print(exc.report(), file=sys.stderr)
        return 2
    except (ValueError, OSError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    matched, _rows, _samples = match_rows(table, opened)
    length = {s["case_id"]: len(s["response"] or "") for s in opened.payload["samples"]}
    return record, matched, length, votes


def _votes_of(args: argparse.Namespace, name: str) -> tuple[Any, dict]:
    from .gate_scores import _votes

    return _votes(args, name)


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
    from ..harness.model_errors import ModelError
    from ..store import StoreError

    try:
        _judge_probes(args, record, matched, votes)
    except (ValueError, OSError, StoreError, ModelError) as exc:  # DatasetNotFound is a ValueError
        print(f"error: {exc}; the record was not written", file=sys.stderr)
        return 2
    _write(args, record, "the bias probes")
    return 0


def _judge_probes(args: argparse.Namespace, record: dict, matched: dict, votes: dict) -> None:
    """Self-preference (``--generator``) and position bias (``--judge --pairs-with``) into the judge's entries."""
    from ..calibrate.judge_bias import position_probe, self_preference

    for e in record["scorers"]:
        if args.generator is not None and e["identity"].get("model") == args.generator:
            _cases, scores, human = _labelled(record, e, matched, votes)
            sp = self_preference([int(s >= e["threshold"]) for s in scores], human)
            e.setdefault("bias", {})["self_preference"] = sp
            print(f"{e['column']}: self-preference (judge model {args.generator} wrote the answers): judge minus "
                  f"people {sp['difference']} [{sp['low']}, {sp['high']}], n = {sp['n']}: "
                  + ("SELF-PREFERRING" if sp["biased"] else "not above people's rate"))
    if args.judge is None or args.pairs_with is None:
        return
    probe = position_probe(_asker(args), _pairs(args))
    print(f"judge {args.judge}: {probe['pairs']} pair(s) asked in both orders: the first-shown answer chosen "
          f"{probe['first_chosen']}/{probe['verdicts']} [{probe['low']}, {probe['high']}], "
          f"{probe['order_flipped_pairs']} pair(s) whose choice followed the position, {probe['unreadable']} "
          f"unreadable: " + ("POSITION-BIASED" if probe["biased"] else "no position bias beyond ±0.1"))
    for e in record["scorers"]:
        if e["identity"].get("model") == args.judge:
            e.setdefault("bias", {})["position"] = probe


def _asker(args: argparse.Namespace) -> Any:
    import os

    from ..calibrate.judge_bias import PAIRWISE_FORMAT
    from ..harness.llm import OllamaModels

    models = OllamaModels(host=args.ollama_host or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434")
    return lambda prompt: models.chat(args.judge, [{"role": "user", "content": prompt}], format=PAIRWISE_FORMAT)


def _pairs(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """``(question, answer here, answer there)`` per sample id in both datasets, answers differing, seeded order."""
    from ..sampling import ranked

    samples = {}
    for name in (args.dataset, args.pairs_with):
        opened, _votes = _votes_of(args, name)
        samples[name] = {s["case_id"].split(":", 1)[1]: s for s in opened.payload["samples"]}
    here, there = samples[args.dataset], samples[args.pairs_with]
    ids = [i for i in here if i in there and (here[i]["response"] or "") != (there[i]["response"] or "")]
    return [(here[i]["query"], here[i]["response"], there[i]["response"])
            for i in ranked(ids, "position")[: args.max_pairs]]


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
