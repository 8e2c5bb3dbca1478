"""The room's failure modes (pooled and per student, scoped to the lesson) and "how many labels" sections."""
from __future__ import annotations

import pytest

from playground.calibrate.room import make_room_sample
from playground.calibrate.room_needed import harness_labels, needed_rows, sample_consensus
from playground.golden import load_dataset
from playground.lessons import make_lesson
from playground.store import open_store
from playground.verdicts import response_unit


@pytest.fixture
def room_db(mini_root, tmp_path):
    db = tmp_path / "labels.db"
    open_store(db).close()
    return mini_root, db


def _unit(root, rid):
    r = load_dataset(root).responses[rid]
    return response_unit(r.case_id, r.response_id, r.text)


def _app(root, db, lesson=None):
    from playground.ui.room import RoomApp, open_room

    room, _note = open_room(str(root), str(db), lesson=lesson)
    return RoomApp(room, interval=1)


def test_failure_modes_pooled_and_per_student(room_db):
    root, db = room_db
    app = _app(root, db, "-")
    assert "0/0" in app.analysis.failures.value  # nothing judged yet: the pass row reads 0/0
    hallucinated = _unit(root, "GC-0001-R2")
    with open_store(db) as s:
        s.set_label("alice", hallucinated, "pass", 0)
        s.set_tags("alice", hallucinated, ["hallucination"])
        s.set_label("bob", hallucinated, "pass", 0)
        s.set_label("bob", _unit(root, "GC-0001-R1"), "pass", 1)
    assert app.refresh() is True
    html = app.analysis.failures.value
    # pooled: 2 responses judged, 1 tagged hallucination (Wilson 95% of 1/2: [9.5%, 90.5%]); pass 1 of 2
    assert "<tr class='pg-fm-hallucination'><td>hallucination</td><td class='pg-num'>1/2</td>" in html
    assert "50% [9–91%]" in html
    # per student: alice 1 of 1 judged, bob 0 of 2
    assert "<td>alice</td><td>hallucination</td><td class='pg-num'>1/1</td>" in html
    assert "<td>bob</td><td>hallucination</td><td class='pg-num'>0/2</td>" in html
    # four verdict/tag events were seen; a label of the four dimensions does not count the modes again
    assert app.room.state.verdict_events == 4
    claim = next(u for u in app.room.source.catalog.values() if u.unit_kind == "claim")
    app.analysis.failures.value = "not recounted"
    with open_store(db) as s:
        s.set_label("carol", claim, "supported", 1)
    assert app.refresh() is True and app.analysis.failures.value == "not recounted"
    with open_store(db) as s:
        s.set_tags("bob", hallucinated, ["hallucination"])
    assert app.refresh() is True and "<td>bob</td><td>hallucination</td><td class='pg-num'>1/2</td>" in \
        app.analysis.failures.value


def test_failure_modes_are_scoped_to_the_lesson(room_db):
    root, db = room_db
    from playground.datasets import open_dataset

    with open_store(db) as s:
        s.save_lesson(make_lesson("abstain", open_dataset(None, s, str(root)), ["GC-0002"]))
        s.set_label("alice", _unit(root, "GC-0001-R2"), "pass", 0)
        s.set_tags("alice", _unit(root, "GC-0001-R2"), ["hallucination"])
        s.set_label("alice", _unit(root, "GC-0002-R1"), "pass", 1)
    html = _app(root, db).analysis.failures.value  # the newest lesson: GC-0002 only
    assert "<td class='pg-num'>1/1</td>" in html and "pg-fm-hallucination'><td>hallucination</td><td " \
        "class='pg-num'>0/1</td>" in html


def test_labels_needed_from_the_calibration_sample(room_db):
    root, db = room_db
    app = _app(root, db, "-")
    assert "pr-needed-none" in app.analysis.needed.value
    room = app.room
    sample = make_room_sample(room.source, 6, 3, "s1")
    units = list(sample.queues["*"])
    catalog = room.source.catalog
    with open_store(db) as s:
        for who in ("alice", "bob"):
            for uid in units:
                unit = catalog[uid]
                for dim in unit.dimensions:
                    s.set_label(who, unit, dim, 1 if who == "alice" or dim != "correct" else 0)
    app.refresh()
    app.analysis.width.value = 0.9
    html = app.analysis.needed.value
    assert "Calibration sample s1 (6 units)" in html and "target width 0.9" in html
    # the figures are those of room_needed on the class's consensus and the harness's labels
    from playground.ui.room_analysis import harness_results

    consensus = sample_consensus(room.state.votes, {}, units)
    auto = harness_labels(harness_results(room.open_dataset, sorted({catalog[u].case_id for u in units})))
    for row in needed_rows(consensus, {"harness": auto}, 0.9):
        assert f"pr-needed-harness-{row.dimension}" in html
        assert row.text.replace("“", "") in html.replace("&quot;", '"').replace("&#x27;", "'")
    # correct: alice yes, bob no on every claim -> ties, no consensus, nothing to compare
    correct = next(r for r in needed_rows(consensus, {"harness": auto}, 0.9) if r.dimension == "correct")
    assert correct.need is None and correct.n == 0
