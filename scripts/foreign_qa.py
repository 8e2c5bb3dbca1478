"""The harness's verdicts on foreign QA sets, right answers against wrong ones (issue 36.5).

For each set of tests/fixtures/foreign/ (see its README and ``scripts/make_foreign_fixtures.py``) this does
what a new user does -- ``playground import ragas FILE --dataset SET --db DB`` then ``playground harness run
--dataset SET --db DB --out DIR`` with the default configuration -- in a temporary folder, reads each
response's verdict from ``DIR/cases.jsonl``, and joins it with ``SET.answers.csv`` (which answer is right).
It prints, per set and part (``tuning``, ``held-out``, ``all``), ACCEPT / REVIEW / REJECT for the right
and the wrong answers, and the goals of issue 36: at most 10% of ACCEPTs wrong, at most 10% of right answers
REJECTed, REVIEW at most half of all answers.  ``--rules`` adds the decision rules that decided.

Run: ``python scripts/foreign_qa.py [--part tuning|held-out|all] [--rules]``.  Tune only on ``tuning``.
"""
from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOREIGN = ROOT / "tests" / "fixtures" / "foreign"
VERDICTS = ("ACCEPT", "REVIEW", "REJECT")


def verdicts(set_name: str, work: Path) -> list[dict[str, str]]:
    """One row per response: ``answer`` (right/wrong), ``part``, ``verdict``, ``rule``, ``reason``."""
    db, out = work / "foreign.db", work / set_name
    data = FOREIGN / f"{set_name}.jsonl"
    run = [sys.executable, "-m", "playground"]
    subprocess.run([*run, "import", "ragas", str(data), "--dataset", set_name, "--db", str(db)], check=True,
                   capture_output=True, cwd=work)
    subprocess.run([*run, "harness", "run", "--dataset", set_name, "--db", str(db), "--out", str(out), "--quiet"],
                   check=True, capture_output=True, cwd=work)
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    with (FOREIGN / f"{set_name}.answers.csv").open(encoding="utf-8") as f:
        answers = list(csv.DictReader(f))
    which = {(r["user_input"], r["response"]): a for r, a in zip(rows, answers, strict=True)}
    found = []
    for line in (out / "cases.jsonl").read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        for resp in case["responses"]:
            a = which[(case["query"], resp["text"])]
            d = resp["decision"]
            found.append({"answer": a["answer"], "part": a["part"], "verdict": d["verdict"], "rule": d["rule"],
                          "reason": d["reason"], "question": case["query"], "text": resp["text"]})
    if len(found) != len(rows):
        raise SystemExit(f"{set_name}: {len(found)} verdicts for {len(rows)} rows")
    return found


def summary(rows: list[dict[str, str]]) -> dict[str, float | int]:
    """Counts per answer and verdict, and the three goal figures."""
    c = Counter((r["answer"], r["verdict"]) for r in rows)
    accepts = c["right", "ACCEPT"] + c["wrong", "ACCEPT"]
    right = sum(c["right", v] for v in VERDICTS)
    out: dict[str, float | int] = {f"{a} {v}": c[a, v] for a in ("right", "wrong") for v in VERDICTS}
    out["wrong share of ACCEPTs"] = c["wrong", "ACCEPT"] / accepts if accepts else 0.0
    out["right answers REJECTed"] = c["right", "REJECT"] / right if right else 0.0
    out["REVIEW share"] = (c["right", "REVIEW"] + c["wrong", "REVIEW"]) / len(rows) if rows else 0.0
    return out


def _line(name: str, part: str, rows: list[dict[str, str]]) -> str:
    s = summary(rows)
    met = (s["wrong share of ACCEPTs"] <= 0.10 and s["right answers REJECTed"] <= 0.10 and s["REVIEW share"] <= 0.5)
    return (f"| {name} | {part} | {len(rows)} | {s['right ACCEPT']} / {s['right REVIEW']} / {s['right REJECT']} | "
            f"{s['wrong ACCEPT']} / {s['wrong REVIEW']} / {s['wrong REJECT']} | {s['wrong share of ACCEPTs']:.1%} | "
            f"{s['right answers REJECTed']:.1%} | {s['REVIEW share']:.1%} | {'yes' if met else 'no'} |")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("tuning", "held-out", "all"), default="all")
    ap.add_argument("--rules", action="store_true", help="also count the decision rules that decided")
    args = ap.parse_args(argv)
    parts = ("tuning", "held-out", "all") if args.part == "all" else (args.part,)
    print("| set | part | answers | right: ACCEPT / REVIEW / REJECT | wrong: ACCEPT / REVIEW / REJECT | "
          "wrong share of ACCEPTs | right answers REJECTed | REVIEW share | goals met |")
    print("|---|---|---|---|---|---|---|---|---|")
    rules: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for set_name in sorted(p.stem for p in FOREIGN.glob("*.jsonl")):
            rows = verdicts(set_name, Path(tmp))
            for part in parts:
                chosen = rows if part == "all" else [r for r in rows if r["part"] == part]
                print(_line(set_name, part, chosen))
                if args.rules and part != "all":
                    count = Counter((r["answer"], r["rule"]) for r in chosen)
                    counts = ", ".join(f"{a} {k} {n}" for (a, k), n in sorted(count.items()))
                    rules.append(f"{set_name} {part}: {counts}")
    for line in rules:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
