"""Issue 36.4: an import records the kind of text or infers it, and says which it chose."""
from __future__ import annotations

import json

from playground.importers.core import Sample
from playground.importers.rows import Place
from playground.importers.text_kind import infer_text_kind, text_kind_choice
from playground.model import Turn


def _s(query: str, history: tuple[Turn, ...] = ()) -> Sample:
    return Sample(place=Place("f.jsonl", "line", 1), query=query, response="r", history=history)


def test_questions_are_qa():
    c = infer_text_kind([_s("Who wrote Pride and Prejudice?"), _s("How long is the wall?")])
    assert (c.kind, c.source) == ("qa", "inferred")
    assert c.reason == ("inferred: of 2 samples 0 are conversations and 0 ask for a summary, fewer than half each; "
                        "--text-kind sets another kind")


def test_speaker_labelled_turns_are_dialogue_at_exactly_half():
    turns = "Apprentice: I love jazz.\nWizard: Louis Armstrong was a jazz trumpeter."
    c = infer_text_kind([_s(turns), _s("What is jazz?")])  # 1 of 2: half is enough
    assert c.kind == "dialogue"
    assert c.line() == ("text kind: dialogue (inferred: 1 of 2 samples are conversations (earlier turns or "
                        "speaker-labelled lines))")
    # one speaker-labelled line is not a conversation; 1 of 3 is less than half
    assert infer_text_kind([_s("User: what is jazz?"), _s("Q"), _s("R")]).kind == "qa"
    assert infer_text_kind([_s(turns), _s("What is jazz?"), _s("Who?")]).kind == "qa"


def test_earlier_turns_are_dialogue():
    hist = (Turn("user", "hi"), Turn("assistant", "hello"))
    assert infer_text_kind([_s("and then?", hist)]).kind == "dialogue"


def test_summary_requests_and_empty_questions_are_summaries():
    c = infer_text_kind([_s("Summarize the following news article."), _s(""), _s("Who?")])
    assert (c.kind, c.reason) == ("summary", "inferred: 2 of 3 samples have no question or ask for a summary")
    assert infer_text_kind([_s("Give me the key points"), _s("What is X?")]).kind == "summary"


def test_the_option_wins_and_no_samples_default_to_qa():
    c = text_kind_choice([_s("Summarize this.")], "qa")
    assert (c.kind, c.source, c.line()) == ("qa", "option", "text kind: qa (set with --text-kind)")
    assert infer_text_kind([]).kind == "qa"


def test_the_cli_records_the_inferred_kind(tmp_path, capsys):
    from playground.cli import main

    data = tmp_path / "dlg.jsonl"
    rows = [{"user_input": "Apprentice: I love jazz.\nWizard: Do you?\nApprentice: Armstrong!",
             "response": "He played.", "retrieved_contexts": ["Louis Armstrong played the trumpet."]}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp_path / "s.db"
    assert main(["import", "ragas", str(data), "--dataset", "dlg", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.endswith("text kind: dialogue (inferred: 1 of 1 samples are conversations (earlier turns or "
                        "speaker-labelled lines))\n")
    from playground.harness.run_dataset import text_kind
    from playground.store import open_store

    with open_store(db) as store:
        stored = store.dataset("dlg")
        assert stored is not None and text_kind(stored.payload) == "dialogue"
