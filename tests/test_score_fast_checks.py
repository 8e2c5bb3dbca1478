"""The written-out pre-checks of textnorm and of the clause rule say what their trigger tuples say."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from playground.harness import clauses, textnorm

_PIECES = [*textnorm._TRIGGERS, *clauses._TRIGGERS, "a", " ", "I", "N", "S", "T", "]", "(", ":", "/", "w", ".", "é",
           "\u2019", "n", "o", "t", "\n"]


def test_every_trigger_alone_is_caught():
    for t in textnorm._TRIGGERS:
        assert textnorm._may_need(f"x {t} y"), t
    for t in clauses._TRIGGERS:
        assert clauses._may_trigger(f"x {t} y"), t
    assert not textnorm._may_need("A clean answer, with [3] a citation: 5 days.")
    assert textnorm._may_need("caf\u00e9")  # not ASCII
    assert not clauses._may_trigger("the plan lasts 5 days.")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_the_written_out_checks_equal_the_tuples(text):
    assert textnorm._may_need(text) == (not text.isascii() or any(t in text for t in textnorm._TRIGGERS))
    assert clauses._may_trigger(text) == any(t in text for t in clauses._TRIGGERS)
