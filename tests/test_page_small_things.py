"""Small things of the page: a trace's short id in the case list, and no "correct?" asked without a reference."""
from __future__ import annotations

import pytest
from test_session_lazy import write_samples

from playground.datasets import open_dataset
from playground.importers.load import import_dataset
from playground.store import open_store
from playground.ui.formats import interval, num, pct
from playground.ui.render import short_id
from playground.ui.session import SessionError, session_for_dataset, unit_counts
from playground.ui.views import PlaygroundApp


@pytest.fixture(autouse=True)
def kept_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "cache"))


def test_a_trace_id_is_shown_by_its_first_ten_hex_digits():
    assert short_id("traces:4bf92f3577b34da6a3ce929d0e0e4736") == "4bf92f3577"
    assert short_id("t:123e4567-e89b-12d3-a456-426614174000") == "123e4567e8"  # a UUID, dashes dropped
    # the boundary: 17 hex digits are shortened, 16 are shown whole; a hash id (h + 10 hex) stays as it is
    assert short_id("x:0123456789abcdef0") == "0123456789"
    assert short_id("x:0123456789abcdef") == "0123456789abcdef"
    assert short_id("halu_jsonl:h0002640e49") == "h0002640e49" and short_id("GC-0003") == "GC-0003"
    assert short_id("x:not-hex-but-quite-long-id") == "not-hex-but-quite-long-id"


def test_formats_shared_by_the_page_and_the_room():
    assert pct(0.6) == "60%" and pct(None) == "–" and pct(0.1234, 1) == "12.3%"
    assert num(0.4567) == "0.46" and num(None) == "–"
    assert interval(0.6, 0.231, 0.882) == "60% [23–88%]" and interval(None, None, None) == "–"


@pytest.fixture
def no_reference(tmp_path):
    store = open_store(tmp_path / "labels.db")
    import_dataset(write_samples(tmp_path / "s.jsonl", 4), "ragas", "mixed", store)
    opened = open_dataset("mixed", store)
    yield opened, store
    store.close()


def test_a_claim_without_a_reference_asks_only_supported(no_reference):
    opened, store = no_reference
    session = session_for_dataset(opened, store)
    session.set_annotator("ann")
    with_ref = [c for c in sorted(opened.dataset.cases) if opened.dataset.cases[c].reference_answer.strip()]
    without = [c for c in sorted(opened.dataset.cases) if c not in with_ref]
    assert len(with_ref) == 2 and len(without) == 2
    session.go_to(without[0])
    claims = session.view_units("claim")
    assert claims and all(v.unit.dimensions == ("supported",) for v in claims)
    with pytest.raises(SessionError):
        session.set_label(claims[0].unit.unit_id, "correct", 1)
    session.go_to(with_ref[0])
    assert all(v.unit.dimensions == ("supported", "correct") for v in session.view_units("claim"))
    # counted without building equals what the built cases hold: pairs leave "correct" out without a reference
    session.build_all()
    counts = unit_counts(opened.dataset, opened.passages)
    for cid in opened.dataset.cases:
        built = [u for u in session.catalog.values() if u.case_id == cid]
        assert counts[cid] == [len(built), sum(len(u.dimensions) for u in built)]


def test_the_page_says_why_correct_is_not_asked(no_reference):
    opened, store = no_reference
    session = session_for_dataset(opened, store)
    without = next(c for c in sorted(opened.dataset.cases) if not opened.dataset.cases[c].reference_answer.strip())
    app = PlaygroundApp(session, annotator="ann", chart=False)
    app.go(without)
    assert "no reference answer, so “correct” is not asked" in app.response_text.value
    assert "correct against the reference?" not in app.response_text.value
    assert "pg-no-reference" in app.reference.value
    row = app._rows["claim"][0]
    assert row.lines["correct"].layout.display == "none" and row.lines["supported"].layout.display is None
    with_ref = next(c for c in sorted(opened.dataset.cases) if c != without
                    and opened.dataset.cases[c].reference_answer.strip())
    app.go(with_ref)
    assert "correct against the reference?" in app.response_text.value
    assert app._rows["claim"][0].lines["correct"].layout.display is None
