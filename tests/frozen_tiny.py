"""Tiny RAGTruth- and BEGIN-format data sets on both sides of the committed frozen split, for the outside-scorer
tests (tests/test_frozen_judge.py, tests/test_frozen_scores.py), with the canned judge verdicts and the hand-made
scores whose figures those tests compute by hand.

Sides: the frozen sources are ids on the committed lists (``playground/calibrate/splits/*_frozen.txt``; a test
checks with ``is_frozen``), the tuning ones ids that are not on them.  :func:`write_shared` writes the files in the
layout of the shared data (``ragtruth/claims.jsonl``, ``ragtruth/validation-sample.jsonl``, ``begin/claims.jsonl``)
for ``PLAYGROUND_SHARED_DATA``.

Each claim row: ``(example id, source, task, text, hallucinated, judge verdict, score)``.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

#: RAGTruth sources: three tuning (not on the list), three frozen (on ragtruth_frozen.txt).
RT_TUNING_SOURCES = ("90001", "90002", "90003")
RT_FROZEN_SOURCES = ("11853", "11893", "11929")

# (response id, source, task, generator, file, [(claim, hallucinated, verdict, score)])
RT_RESPONSES: list[tuple[str, str, str, str, str, list[tuple[str, bool, str, float]]]] = [
    # tuning
    ("901", "90001", "QA", "gpt-4-0613", "claims", [
        ("The museum opens at nine in the morning.", False, "yes", 0.90),
        ("Entry costs forty euros for adults.", True, "no", 0.30),
    ]),
    ("902", "90002", "Summary", "llama-2-7b-chat", "claims", [
        ("The council approved the new bridge.", False, "yes", 0.80),
        ("Construction starts next spring.", False, "yes", 0.70),
    ]),
    ("903", "90003", "QA", "mistral-7B-instruct", "validation", [
        ("The train leaves from platform four.", True, "yes", 0.62),
        ("Tickets can be bought on board.", False, "yes", 0.64),
    ]),
    # frozen
    ("904", "11853", "QA", "gpt-3.5-turbo-0613", "validation", [
        ("The recipe needs two eggs.", False, "yes", 0.99),
        ("It bakes for ninety minutes.", True, "no", 0.10),
        ("The oven is set to 180 degrees.", False, "no", 0.65),
    ]),
    ("905", "11893", "QA", "llama-2-13b-chat", "validation", [
        ("The library lends e-books.", False, "yes", 0.40),
        ("Members may borrow thirty books at once.", True, "yes", 0.65),
    ]),
    ("906", "11929", "Summary", "llama-2-70b-chat", "validation", [
        ("The storm closed three schools.", False, "yes", 0.20),
        ("Power returned after two weeks.", True, "no", 0.50),
        ("Roads reopened on Monday.", False, "yes", 0.80),
    ]),
]

#: BEGIN sources: two tuning, three frozen (on begin_frozen.txt).
BEGIN_TUNING_SOURCES = ("sha1:tune000000000001", "sha1:tune000000000002")
BEGIN_FROZEN_SOURCES = ("sha1:00346a90e6467fc0", "sha1:00435198a5685c6b", "sha1:00eb2a89f47a5e3c")

# (example id, source, corpus, knowledge, previous turn, response, not attributable, model, verdict, score)
BEGIN_ROWS: list[tuple[str, str, str, str, str, str, bool, str, str, float]] = [
    ("begin-t-1", BEGIN_TUNING_SOURCES[0], "wow", "Jazz began in New Orleans.", "Where did jazz start?",
     "jazz began in new orleans", False, "t5", "yes", 0.9),
    ("begin-t-2", BEGIN_TUNING_SOURCES[0], "wow", "Jazz began in New Orleans.", "Where did jazz start?",
     "jazz began in chicago in 1950", True, "gpt2", "no", 0.2),
    ("begin-t-3", BEGIN_TUNING_SOURCES[1], "cmu_dog", "The film was shot in Iceland.", "Seen it?",
     "it was shot in iceland", False, "ctrl", "yes", 0.8),
    ("begin-t-4", BEGIN_TUNING_SOURCES[1], "cmu_dog", "The film was shot in Iceland.", "Seen it?",
     "i loved the ending so much", True, "doha", "yes", 0.6),
    ("begin-f-1", BEGIN_FROZEN_SOURCES[0], "wow", "Tea was first drunk in China.", "Do you like tea?",
     "tea was first drunk in japan", True, "t5", "no", 0.3),
    ("begin-f-2", BEGIN_FROZEN_SOURCES[0], "wow", "Tea was first drunk in China.", "Do you like tea?",
     "green tea is the best tea", True, "gpt2", "yes", 0.7),
    ("begin-f-3", BEGIN_FROZEN_SOURCES[1], "cmu_dog", "The actor won an Oscar in 2001.", "Who starred?",
     "the actor won an oscar in 2001", False, "ctrl", "yes", 0.95),
    ("begin-f-4", BEGIN_FROZEN_SOURCES[2], "topicalchat", "Mars has two moons.", "Space is fun",
     "mars has two moons", False, "doha", "yes", 0.9),
]


def _rt_lines() -> dict[str, list[str]]:
    files: dict[str, list[str]] = {"claims": [], "validation": []}
    for rid, source, task, generator, file, claims in RT_RESPONSES:
        start = 0
        for k, (text, hallucinated, _verdict, _score) in enumerate(claims):
            evidence = [f"Evidence for {text}", "", "Another passage.", ""]
            files[file].append(json.dumps({
                "example_id": f"{rid}:{k}", "source_id": source, "response_id": rid, "claim_index": k,
                "claim_start": start, "claim_end": start + len(text), "claim": text, "label": hallucinated,
                "evidence": evidence, "evidence_mask": [bool(e) for e in evidence], "task_type": task,
                "source_name": "MARCO" if task == "QA" else "CNN/DM", "generator_model": generator,
                "temperature": 0.7, "granularity": "claim", "label_types": ["Evident Conflict"] if hallucinated else [],
                "implicit_true": False, "due_to_null": False}))
            start += len(text) + 1
    return files


def _begin_lines() -> list[str]:
    return [json.dumps({"example_id": eid, "source_id": src, "corpus": corpus, "claim": response,
                        "evidence": [knowledge, message], "label": bad,
                        "label_raw": "Not fully attributable" if bad else "Fully attributable", "model_name": model})
            for eid, src, corpus, knowledge, message, response, bad, model, _v, _s in BEGIN_ROWS]


def write_shared(root: Path) -> Path:
    """The tiny files in the shared-data layout under ``root``; returns ``root``."""
    (root / "ragtruth").mkdir(parents=True, exist_ok=True)
    (root / "begin").mkdir(parents=True, exist_ok=True)
    rt = _rt_lines()
    (root / "ragtruth" / "claims.jsonl").write_text("\n".join(rt["claims"]) + "\n", encoding="utf-8")
    (root / "ragtruth" / "validation-sample.jsonl").write_text("\n".join(rt["validation"]) + "\n", encoding="utf-8")
    (root / "begin" / "claims.jsonl").write_text("\n".join(_begin_lines()) + "\n", encoding="utf-8")
    return root


def rt_claims() -> list[dict[str, Any]]:
    """Every RAGTruth claim: id, source, task, text, hallucinated, verdict, score, frozen."""
    return [{"id": f"{rid}:{k}", "source": source, "task": task, "text": text, "hallucinated": h, "verdict": v,
             "score": s, "generator": generator, "frozen": source in RT_FROZEN_SOURCES}
            for rid, source, task, generator, _file, claims in RT_RESPONSES
            for k, (text, h, v, s) in enumerate(claims)]


def begin_claims() -> list[dict[str, Any]]:
    return [{"id": eid, "source": src, "task": corpus, "text": response, "knowledge": knowledge, "message": message,
             "hallucinated": bad, "verdict": v, "score": s, "frozen": src in BEGIN_FROZEN_SOURCES}
            for eid, src, corpus, knowledge, message, response, bad, _m, v, s in BEGIN_ROWS]


def claim_of(request: dict[str, Any]) -> str:
    """The one claim a judge request numbers (``1. <claim>`` under "## Claims of the response")."""
    user = request["messages"][1]["content"]
    section = user.split("## Claims of the response", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"^1\. (.*)$", section, re.M)
    assert len(found) == 1, section
    return found[0]


def verdict_reply(verdicts: dict[str, str]) -> Any:
    """A double's ``chat_reply``: the canned verdict of the judged claim, as a valid judgement."""

    def reply(request: dict[str, Any]) -> str:
        verdict = verdicts[claim_of(request)]
        return json.dumps({"claims": [{"claim": 1, "supported": verdict, "reason": "canned"}],
                           "faithfulness": 1 if verdict == "yes" else 0, "citation_accuracy": 1,
                           "answer_relevance": 1})

    return reply


def all_verdicts() -> dict[str, str]:
    return {c["text"]: c["verdict"] for c in (*rt_claims(), *begin_claims())}
