"""The support scorer's rules switched off one at a time, and the ablation table on the frozen parts."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from playground.harness.score import SUPPORT_RULES, support

DATA = Path(os.environ.get("PLAYGROUND_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))

# (rule, claim, context, score with every rule on, score with the rule off), computed by hand, with
# every rule on (kind=None; the kinds' own rule sets are tested in tests/test_score_kinds.py) but rouge,
# which averages every score with ROUGE-1 precision (its own case below):
CASES = [
    # '</s>' removed as a chat-template token; off, it is the path '/s>', an identifier the context lacks
    ("artefacts", "The sky is blue.</s>", "the sky is blue", 1.0, 0.0),
    # content tokens retry, limit, 9, attempt; 9 is missing: exact miss 0.0, else coverage 3/4
    ("numbers", "Retries are limited to 9 attempts.", "Retries are limited to 5 attempts.", 0.0, 0.75),
    # chang, approv, marcus: the name is missing; off, 2 of 3 content tokens present (the entities rule
    # finds no other words in Marcus' place: "approved" ends the context's sentence, so it is no swap)
    ("names", "The change was approved by Marcus.", "The change was approved.", 0.0, 2 / 3),
    # mosco, capit, franc: the sentence-initial 'Moscow' is missing and 'Paris' stands at its place before
    # 'is the capital' (a swap: 0.0); off, 2 of 3 content tokens present
    ("entities", "Moscow is the capital of France.", "Paris is the capital of France.", 0.0, 2 / 3),
    # set, tw-4291, now
    ("identifiers", "Set TW-4291 now.", "Set it now.", 0.0, 2 / 3),
    # the preamble's words are discourse words (dropped either way); with both rules off 2 of 4 remain
    ("preamble", "Based on the passages, the sky is blue.", "the sky is blue", 1.0, 1.0),
    # 'hope this helps' clause: removed; off, 'hope', 'help' and the speaker item 'I' are missing (2 of 5)
    ("clauses", "The sky is blue. I hope this helps!", "the sky is blue", 1.0, 0.4),
    # [2] removed as a citation; off, 2 is a number the context lacks
    ("markers", "The sky is blue [2].", "the sky is blue", 1.0, 0.0),
    # think, sky, blue plus the speaker item 'I': 2 of 4; off, 2 of 3
    ("speaker", "I think the sky is blue.", "the sky is blue", 0.5, 2 / 3),
    # 'passage' is a discourse word: say, sky, blue (2/3); off passag, say, sky, blue (2/4)
    ("discourse", "The passage says the sky is blue.", "the sky is blue", 2 / 3, 0.5),
    # every rule on: the sky is blue all present (1.0); ROUGE-1 tokens i think the sky is blue: 4 of 6
    ("rouge", "I think the sky is blue.", "the sky is blue", (0.5 + 4 / 6) / 2, 0.5),
]


def test_every_rule_is_covered_by_a_case():
    assert sorted(c[0] for c in CASES) == sorted(SUPPORT_RULES)


@pytest.mark.parametrize(("rule", "claim", "context", "on", "off"), CASES)
def test_switching_one_rule_off(rule, claim, context, on, off):
    base = [] if rule == "rouge" else ["rouge"]
    assert support(claim, context, off=base, kind=None) == pytest.approx(on, abs=1e-15)
    assert support(claim, context, off=[*base, rule], kind=None) == pytest.approx(off, abs=1e-15)


def test_preamble_and_discourse_off_together():
    assert support("Based on the passages, the sky is blue.", "the sky is blue", off=["preamble", "discourse"]) == 0.5


def test_speaker_items():
    from playground.harness.score import support_detail

    d = "dialogue"  # the speaker rule is for dialogue only (here without the rouge rule's averaging)
    r = ["rouge"]
    assert support("Is the sky blue?", "the sky is blue", off=r, kind=d) == pytest.approx(2 / 3, abs=1e-15)
    assert support("Do you?", "x", off=r, kind=d) == 0.0  # nothing but a question: nothing attributable
    # without speaker items nothing is left ('do', 'you' are stopwords) and nothing was removed: an empty
    # claim is unverifiable, not supported (it used to score 1.0)
    assert support("Do you?", "x", off=["speaker", *r], kind=d) == 0.0
    assert support_detail("My dog and me, I've seen it", "x", kind=d).speaker_items == ("my", "me", "i've")
    assert support_detail("Use a hammer, i.e. a tool.", "use a hammer tool", kind=d).speaker_items == ()
    assert support("Is the sky blue?", "the sky is blue") == 1.0  # qa: no speaker items


def test_unknown_rule_is_an_error_naming_the_known_ones():
    with pytest.raises(ValueError, match="unknown support rule\\(s\\) stemming \\(known: artefacts, preamble, clauses"):
        support("x", "x", off=["stemming"])


def test_default_is_all_rules_on():
    claim, ctx = "Retries are limited to 9 attempts.", "Retries are limited to 5 attempts."
    assert support(claim, ctx) == support(claim, ctx, off=()) == 0.0


def test_ablation_table_on_both_frozen_parts(monkeypatch):
    monkeypatch.setenv("PLAYGROUND_SHARED_DATA", str(DATA))
    from playground.calibrate.ablation import ablation, ablation_table

    reps = [ablation("ragtruth", n_boot=50), ablation("begin", n_boot=50)]
    t = ablation_table(reps)
    assert list(t["support"][: 1 + len(SUPPORT_RULES)]) == ["all rules"] + [f"without {r}" for r in SUPPORT_RULES]
    assert len(t) == 2 * (1 + len(SUPPORT_RULES)) == 24
    base = t[t["support"] == "all rules"]
    assert list(base["delta_balanced_accuracy"]) == [0.0, 0.0]
    # the exact-number rule is the one that carries RAGTruth out of sample (README ablation table)
    rt = t[t["dataset"] == "RAGTruth"].set_index("support")
    assert rt.loc["without numbers", "delta_balanced_accuracy"] == pytest.approx(
        rt.loc["without numbers", "balanced_accuracy"] - rt.loc["all rules", "balanced_accuracy"], abs=1e-4)
    assert rt.loc["without numbers", "delta_balanced_accuracy"] < 0
    with pytest.raises(ValueError, match="unknown data set"):
        ablation("halueval")
