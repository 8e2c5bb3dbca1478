"""Write tests/fixtures/foreign/: public QA sets with a right and a wrong answer per question, in RAGAS's format.

Issue 36.5: the harness's verdicts measured on data nobody tuned them on.  The source is RGB's
counterfactual-robustness split (Chen et al., "Benchmarking Large Language Models in Retrieval-Augmented
Generation", AAAI 2024; https://github.com/chen700564/RGB, ``data/en_fact.json`` and ``data/zh_fact.json``,
CC BY-NC-SA 4.0): per question, the true ``answer``, a counterfactual ``fakeanswer`` and the retrieved
``positive`` passages that state the true answer.  Each question gives two rows, as ``ragas`` writes an
``EvaluationDataset`` with ``to_jsonl`` (``user_input``, ``retrieved_contexts``, ``response``,
``reference``): the right answer and the wrong one, each against the same passages.  Which row is right is
in ``NAME.answers.csv`` beside it (``line,question_id,answer,part``), never in the data the harness reads.

**The held-out part is chosen before any result is seen**: question ``ID`` of set ``SET`` is held out when
``sampling.uniform("foreign-split-2026-12", "SET:ID") < 0.5``; its rows are ``part=held-out``, the others
``part=tuning``.  Nothing may be tuned on the held-out rows.

Run (the RGB repository checked out or its git directory fetched)::

    python scripts/make_foreign_fixtures.py RGB_DATA_DIR     # the folder with en_fact.json and zh_fact.json

``RGB_DATA_DIR`` may also be ``git:GIT_DIR`` to read the files with ``git show HEAD:data/...``.
The output is the same bytes on every run (rows in question-id order, right before wrong).
"""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playground.sampling import uniform  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "foreign"
SPLIT_SEED = "foreign-split-2026-12"
SETS = {"rgb_en": "en_fact.json", "rgb_zh": "zh_fact.json"}


def _read(source: str, name: str) -> list[dict]:
    if source.startswith("git:"):
        text = subprocess.run(["git", "--git-dir", source[4:], "show", f"HEAD:data/{name}"], check=True,
                              capture_output=True, text=True).stdout
    else:
        text = (Path(source) / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _first(answer: object) -> str:
    """The answer as a string: RGB gives some answers as lists of spellings (``[["Sep 23, 2013", ...]]``);
    the first spelling is the answer."""
    while isinstance(answer, list):
        answer = answer[0] if answer else ""
    return str(answer).strip()


def part_of(set_name: str, question_id: int) -> str:
    """``held-out`` or ``tuning``, by the stable hash (module docstring)."""
    return "held-out" if uniform(SPLIT_SEED, f"{set_name}:{question_id}") < 0.5 else "tuning"


def write_set(set_name: str, items: list[dict]) -> tuple[int, int]:
    rows, answers = [], io.StringIO()
    w = csv.writer(answers, lineterminator="\n")
    w.writerow(["line", "question_id", "answer", "part"])
    for item in sorted(items, key=lambda x: int(x["id"])):
        qid = int(item["id"])
        right, wrong = _first(item["answer"]), _first(item["fakeanswer"])
        passages = [p.strip() for p in item["positive"] if p.strip()]
        if not right or not wrong or right == wrong or not passages:
            continue
        for label, response in (("right", right), ("wrong", wrong)):
            rows.append({"user_input": item["query"].strip(), "retrieved_contexts": passages, "response": response,
                         "reference": right})
            w.writerow([len(rows), qid, label, part_of(set_name, qid)])
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{set_name}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                           encoding="utf-8")
    (OUT / f"{set_name}.answers.csv").write_text(answers.getvalue(), encoding="utf-8")
    held = sum(1 for line in answers.getvalue().splitlines()[1:] if line.endswith("held-out"))
    return len(rows), held


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    for set_name, file_name in SETS.items():
        n, held = write_set(set_name, _read(argv[0], file_name))
        print(f"{set_name}: {n} rows ({n // 2} questions), {held} held-out rows -> {OUT / set_name}.jsonl")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
