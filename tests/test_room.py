"""The instructor's room: figures over plain label rows (hand-computed), and its door to a real SQLite store."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import store_fixtures as sf
from store_fixtures import catalog_of, claim, fact

from playground.calibrate import human_from_labels
from playground.calibrate.room import (
    Adjudication,
    LabelRow,
    Room,
    RoomState,
    RoomStore,
    UnitComment,
    annotator_progress,
    dimension_agreement,
    key_accuracy,
    latest_queues,
    latest_sample,
    make_room_assignment,
    make_room_sample,
    sample_coverage,
    teaching_moments,
    unit_notes,
    vote_split,
)
from playground.sampling import draw_sample, ranked
from playground.store import UNSURE, open_store

U = [claim(i) for i in range(1, 5)]
F = fact(1)
CATALOG = catalog_of([*U, F])
IDS = [u.unit_id for u in U]

# supported: a 1 1 0 0 · b 1 0 0 0 · c 1 1 0 - ; correct on u1: a yes, b no, c unsure
SUPPORTED = {"a": (1, 1, 0, 0), "b": (1, 0, 0, 0), "c": (1, 1, 0, None)}


def rows() -> list[LabelRow]:
    out = [LabelRow(a, IDS[i], "supported", v)
           for a, vs in SUPPORTED.items() for i, v in enumerate(vs) if v is not None]
    out += [LabelRow("a", IDS[0], "correct", 1), LabelRow("b", IDS[0], "correct", 0),
            LabelRow("c", IDS[0], "correct", UNSURE)]
    return out


def test_pairwise_kappa_fleiss_and_alpha_by_hand():
    ag = dimension_agreement(RoomState.from_rows(rows()), "supported")
    assert ag.annotators == ("a", "b", "c")
    assert (ag.n_items, ag.n_shared) == (4, 4)
    pairs = {(p.annotator_a, p.annotator_b): p for p in ag.pairs}
    # a-b: 3/4 agree; p_yes .5 and .25 -> p_e = .5; kappa = (.75 - .5) / .5
    assert pairs[("a", "b")].n_shared == 4
    assert pairs[("a", "b")].agreement == pytest.approx(0.75)
    assert pairs[("a", "b")].kappa == pytest.approx(0.5)
    # a-c on u1..u3: identical
    assert pairs[("a", "c")].kappa == pytest.approx(1.0)
    # b-c on u1..u3: 2/3 agree; p_e = 1/3*2/3 + 2/3*1/3 = 4/9; kappa = (2/3 - 4/9) / (5/9) = 0.4
    assert pairs[("b", "c")].n_shared == 3
    assert pairs[("b", "c")].kappa == pytest.approx(0.4)
    # Fleiss & Cuzick (1979) with 3, 3, 3, 2 raters: x = 3, 2, 0, 0; N = 4, n_bar = 11/4, p = 5/11;
    # sum x(n - x)/n = 2/3; kappa = 1 - (2/3) / (4 * 7/4 * 30/121) = 1 - 242/630 = 194/315
    assert ag.fleiss == pytest.approx(194 / 315)
    # Krippendorff: o_01 = 1 (unit 2: 1*2/(3-1)), n = 11, n_0 = 6, n_1 = 5: 1 - 10 * 1 / 30
    assert ag.krippendorff == pytest.approx(2 / 3)


def test_unsure_answers_never_enter_agreement():
    ag = dimension_agreement(RoomState.from_rows(rows()), "correct")
    assert ag.annotators == ("a", "b")  # c was unsure
    assert ag.pairs[0].n_shared == 1 and ag.pairs[0].kappa == 0.0 and "one class" in ag.pairs[0].reason
    assert ag.pairs[0].agreement == 0.0
    # one unit, one yes and one no: P = 0, P_e = 1/2 -> Fleiss -1; alpha = 1 - (2 - 1) * 1 / (1 * 1) = 0
    assert ag.fleiss == pytest.approx(-1.0)
    assert ag.krippendorff == pytest.approx(0.0)


def test_pair_without_shared_units_is_left_out():
    state = RoomState.from_rows([LabelRow("a", IDS[0], "supported", 1), LabelRow("b", IDS[1], "supported", 0)])
    ag = dimension_agreement(state, "supported")
    assert ag.pairs == () and ag.n_shared == 0 and ag.n_items == 2
    assert ag.fleiss is None and ag.krippendorff is None


def test_incremental_agreement_equals_the_full_computation():
    from playground.calibrate.room import dimension_agreement as full
    from playground.calibrate.room import update_agreement
    from playground.sampling import stable_hash

    state = RoomState.from_rows(rows())
    state.changed = {}
    current = full(state, "supported")
    names = ["a", "b", "c", "d", "e"]
    for step in range(60):  # seeded answers, clears and unsure ones by five annotators
        h = stable_hash(7, str(step))
        who, unit, pick = names[h % 5], IDS[(h // 5) % 4], (h // 20) % 4
        state.set_vote(who, unit, "supported", (1, 0, UNSURE, None)[pick])
        if step % 3 == 2:
            changed, state.changed = state.changed, {}
            current = update_agreement(state, "supported", current, changed.get("supported", set()))
            assert current == full(state, "supported"), step


def test_vote_split_text():
    assert vote_split(3, 2) == "3 yes · 2 no"
    assert vote_split(2, 2) == "tie: 2 yes · 2 no"
    assert vote_split(1, 1, 1) == "tie: 1 yes · 1 no · 1 unsure"


def test_teaching_moments_most_divided_first_ties_with_their_split():
    state = RoomState.from_rows(rows())
    state.comments[IDS[0]] = (UnitComment("b", "the passage says 30 s"),)
    moments = teaching_moments(state, CATALOG)
    assert [(m.unit_id, m.dimension) for m in moments] == [(IDS[0], "correct"), (IDS[1], "supported")]
    tie, two_one = moments
    assert tie.status == "tie" and tie.consensus is None
    assert tie.split == "tie: 1 yes · 1 no · 1 unsure" and tie.unsure == 1
    assert tie.votes == (("a", 1), ("b", 0), ("c", UNSURE))
    assert tie.comments == (UnitComment("b", "the passage says 30 s"),)
    assert tie.text == U[0].text and tie.case_id == U[0].case_id and tie.unit_kind == "claim"
    assert two_one.split == "2 yes · 1 no" and two_one.status == "majority" and two_one.consensus == 1
    # adjudicated: it moves after every open one and carries the settled value
    state.adjudications[(IDS[0], "correct")] = Adjudication(0, "prof")
    moments = teaching_moments(state, CATALOG)
    assert [m.unit_id for m in moments] == [IDS[1], IDS[0]]
    assert moments[1].status == "adjudicated" and moments[1].consensus == 0
    assert teaching_moments(state, CATALOG, limit=1) == moments[:1]
    assert [m.dimension for m in teaching_moments(state, CATALOG, dimension="correct")] == ["correct"]


def test_more_votes_first_at_equal_division():
    # u1: 2 yes 2 no; u2: 1 yes 1 no -> both ties, the bigger one first; u3: unanimous -> not a moment
    r = [LabelRow(a, IDS[0], "supported", v) for a, v in zip("abcd", (1, 1, 0, 0), strict=True)]
    r += [LabelRow(a, IDS[1], "supported", v) for a, v in zip("ab", (0, 1), strict=True)]
    r += [LabelRow(a, IDS[2], "supported", 1) for a in "abc"]
    moments = teaching_moments(RoomState.from_rows(r))
    assert [(m.unit_id, m.split) for m in moments] == [(IDS[0], "tie: 2 yes · 2 no"), (IDS[1], "tie: 1 yes · 1 no")]


def test_unit_notes_most_unsure_first_then_comments():
    state = RoomState.from_rows(rows())  # c unsure on u1 correct
    state.set_vote("a", IDS[2], "correct", UNSURE)
    state.set_vote("b", IDS[2], "correct", UNSURE)
    state.set_vote("b", IDS[2], "supported", UNSURE)  # b's supported answer on u3 becomes unsure
    state.comments[F.unit_id] = (UnitComment("a", "is this fact in the answer?"),)
    notes = unit_notes(state, CATALOG)
    assert [(n.unit_id, n.unsure, n.unsure_total) for n in notes] == [
        (IDS[2], (("supported", 1), ("correct", 2)), 3), (IDS[0], (("correct", 1),), 1), (F.unit_id, (), 0)]
    assert notes[2].comments == (UnitComment("a", "is this fact in the answer?"),) and notes[2].unit_kind == "fact"
    assert unit_notes(state, CATALOG, limit=1) == notes[:1]
    assert unit_notes(RoomState.from_rows([LabelRow("a", IDS[0], "supported", 1)])) == []


def test_progress_against_dataset_and_queue_never_zero_or_reserved():
    state = RoomState.from_rows(rows())
    state.set_vote("consensus", IDS[0], "supported", 1)
    state.set_vote("harness", IDS[0], "supported", 0)
    state.set_vote("dora", IDS[0], "supported", 1)
    state.set_vote("dora", IDS[0], "supported", None)  # set then cleared: no answer left
    progress = annotator_progress(state, CATALOG)
    assert [(p.annotator, p.answered, p.unsure, p.units_done, p.units_total, p.queued) for p in progress] == [
        ("a", 5, 0, 1, 5, False), ("b", 5, 0, 1, 5, False), ("c", 4, 1, 1, 5, False)]
    queued = annotator_progress(state, CATALOG, {"a": (IDS[0], IDS[1]), "zed": (IDS[2],)})
    assert (queued[0].units_done, queued[0].units_total, queued[0].queued) == (1, 2, True)
    assert queued[0].fraction == 0.5
    assert [p.unsure_by_dimension for p in progress] == [(), (), (("correct", 1),)]
    assert [p.annotator for p in queued] == ["a", "b", "c"]  # zed has a queue but no answer


def test_accuracy_against_the_key():
    key = human_from_labels([{"unit_id": IDS[i], "unit_kind": "claim", "dimension": "supported", "value": v}
                             for i, v in enumerate((1, 1, 0))], "answer key", "key")
    rows_ = {(r["annotator"], r["dimension"]): r for r in key_accuracy(RoomState.from_rows(rows()), key)}
    assert sorted(rows_) == [("a", "supported"), ("b", "supported"), ("c", "supported")]
    assert (rows_[("a", "supported")]["correct"], rows_[("a", "supported")]["n"]) == (3, 3)
    assert (rows_[("b", "supported")]["correct"], rows_[("b", "supported")]["accuracy"]) == (2, 0.6667)
    assert key_accuracy(RoomState.from_rows(rows()), None) == []


def test_bad_answer_is_refused():
    with pytest.raises(ValueError, match=r"a: .* supported: answer must be 1, 0 or unsure, got 5"):
        RoomState().set_vote("a", IDS[0], "supported", 5)


class _Assignment:
    def __init__(self, name, kind, dataset, created_at, queues=None):
        self.name, self.kind, self.dataset, self.created_at = name, kind, dataset, created_at
        self.queues = queues or {}


def test_latest_queue_assignment():
    found = latest_queues([_Assignment("x", "queue", "golden", "2026-01-02"),
                           _Assignment("y", "queue", "golden", "2026-01-01"),
                           _Assignment("s", "calibration_sample", "golden", "2026-01-03"),
                           _Assignment("z", "queue", "other", "2026-01-04")], "golden")
    assert found.name == "x"
    assert latest_queues([], "golden") is None


# --------------------------------------------------------------------------- a real store


# SQLite and PostgreSQL (a throwaway cluster; see tests/store_fixtures.py)
pg_server, store_url, store = sf.pg_server, sf.store_url, sf.store


def test_room_store_polls_only_new_events_and_drops_stale(store):
    for a, vs in SUPPORTED.items():
        for i, v in enumerate(vs):
            if v is not None:
                store.set_label(a, U[i], "supported", v)
    room = Room(RoomStore(store, CATALOG))
    first = room.version
    assert room.agreement["supported"].fleiss == pytest.approx(194 / 315)
    assert room.refresh() is False and room.version == first  # nothing new: nothing recomputed
    store.set_label("b", U[1], "supported", 1)  # b changes her mind: a-b now 4/4
    assert room.refresh() is True
    pair = {(p.annotator_a, p.annotator_b): p for p in room.agreement["supported"].pairs}[("a", "b")]
    assert pair.agreement == 1.0
    # a label on text that changed since is stale: it does not vote
    changed = {**CATALOG, U[3].unit_id: type(U[3])(**{**U[3].__dict__, "text_hash": "0" * 12})}
    stale_room = Room(RoomStore(store, changed))
    assert U[3].unit_id not in {u for (u, _d) in stale_room.state.votes}
    # events on units of another dataset are skipped
    other = claim(99)
    store.set_label("a", other, "supported", 1)
    before = room.state.last_event_id
    room.refresh()
    assert other.unit_id not in {u for (u, _d) in room.state.votes}
    assert room.state.last_event_id == before + 1


def test_room_adjudicates_and_the_tie_becomes_the_consensus(store):
    store.set_label("a", U[0], "supported", 1)
    store.set_label("b", U[0], "supported", 0)
    room = Room(RoomStore(store, CATALOG))
    [m], open_, settled = room.moments()
    assert (m.status, m.split, open_, settled) == ("tie", "tie: 1 yes · 1 no", 1, 0)
    with pytest.raises(ValueError, match="reserved"):
        room.source.adjudicate(U[0].unit_id, "supported", 1, "consensus")
    with pytest.raises(ValueError, match="give your name"):
        room.source.adjudicate(U[0].unit_id, "supported", 1, " ")
    room.source.adjudicate(U[0].unit_id, "supported", 1, "prof")
    assert room.refresh() is True
    [m], open_, settled = room.moments()
    assert (m.status, m.consensus, m.adjudication, open_, settled) == ("adjudicated", 1, Adjudication(1, "prof"), 0, 1)
    assert m.split == "tie: 1 yes · 1 no"  # the split stays visible
    # the students' labels are untouched and the room cannot set one
    assert sorted((lab.annotator, lab.value) for lab in store.labels(unit_ids=[U[0].unit_id])
                  if lab.annotator in ("a", "b")) == [("a", 1), ("b", 0)]
    assert not hasattr(room.source, "set_label")
    # withdrawn: the tie is open again
    room.source.adjudicate(U[0].unit_id, "supported", None, "prof")
    room.refresh()
    assert room.moments()[0][0].status == "tie"
    # a fresh room sees the same as the incremental one
    assert Room(RoomStore(store, CATALOG)).moments() == room.moments()


def test_assignment_from_the_room_is_made_over_every_unit_and_saved(store):
    source = RoomStore(store, CATALOG, dataset="golden")
    out = make_room_assignment(source, [" a", "b ", ""], 2, "7", " week 1 ")
    # overlap 2 with two annotators: each has every unit, in the seed's ranked order
    order = tuple(ranked(list(CATALOG), "7"))
    assert (out.name, out.kind, out.dataset, out.seed, out.overlap) == ("week 1", "queue", "golden", "7", 2)
    assert out.queues == {"a": order, "b": order}
    assert [a.name for a in store.assignments()] == ["week 1"] and source.assignments()[0].queues == out.queues
    with pytest.raises(ValueError, match="'harness' is a reserved name"):  # the store's one rule for names
        make_room_assignment(source, ["a", "harness"], 1, 1, "x")
    with pytest.raises(ValueError, match="at least one annotator"):
        make_room_assignment(source, [" "], 1, 1, "x")
    with pytest.raises(ValueError, match="overlap 3 needs at least 3 annotators"):
        make_room_assignment(source, ["a", "b"], 3, 1, "x")
    assert [a.name for a in store.assignments()] == ["week 1"]  # nothing saved on an error


# --------------------------------------------------------------------------- the page's widgets (no browser)


@pytest.fixture(scope="module")
def hostile_root(tmp_path_factory):
    from browser_fixtures import make_data_root

    return make_data_root(tmp_path_factory.mktemp("room") / "data")


def walk(widget):
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from walk(child)


def find(app, cls: str):
    found = [w for w in walk(app.widget) if cls in set(w._dom_classes)]
    assert found, f"no widget with class {cls}"
    return found


def test_page_escapes_text_shows_split_and_adjudicates(hostile_root, tmp_path):
    from browser_fixtures import XSS_CLAIMS

    from playground.ui.room import RoomApp, open_room

    db = tmp_path / "labels.db"
    open_store(db).close()
    room, note = open_room(str(hostile_root), str(db))
    assert note == ""
    hostile = next(u for u in room.source.catalog.values() if u.text == XSS_CLAIMS[0])
    with open_store(db) as s:
        s.set_label("alice", hostile, "supported", 1)
        s.set_label("bob", hostile, "supported", 0)
    app = RoomApp(room, adjudicator="prof", interval=1, link_base="http://host:8866/")
    assert "No disagreement yet" in app.moments.children[0].value
    assert app.refresh() is True
    [row] = app.rows
    text = row.info.value
    assert "tie: 1 yes · 1 no" in text and "consensus: none (tie)" in text
    assert "<img" not in text and "&lt;img src=x onerror=" in text  # shown as text, never markup
    assert f"href='http://host:8866/?case={hostile.case_id}'" in text
    assert app.assign_annotators.value == "alice, bob"  # follows the annotators until edited
    app.assign_annotators.value = "alice"
    with open_store(db) as s:
        s.set_label("carol", hostile, "supported", 1)
    app.refresh()
    assert app.assign_annotators.value == "alice"
    assert "2 yes · 1 no" in app.rows[0].info.value
    assert "showing 1 of 1 disagreement(s): 1 open, 0 adjudicated" in app.moment_count.value
    app.moment_dimension.value = "covered"
    assert app.rows == [] and "showing 0 of 0" in app.moment_count.value
    app.moment_dimension.value = ""
    assert "alice" in find(app, "pr-progress")[0].value and "bob" in app.progress.value
    assert "consensus" not in app.progress.value
    assert "Nobody" not in app.progress.value
    [row] = app.rows
    first_row = row
    row.yes.click()
    assert app.rows[0] is first_row  # the same widgets, updated in place
    assert f"{hostile.case_id} faithfulness: settled as yes by prof." in app.status.value
    [row] = app.rows
    assert "consensus: yes (adjudicated by prof)" in row.info.value
    assert row.withdraw.disabled is False
    # unsure answers and comments are shown to whoever adjudicates
    assert "No unsure answer" in app.notes.value
    app.room.state.set_vote("dan", hostile.unit_id, "correct", UNSURE)
    app.room.state.comments[hostile.unit_id] = (UnitComment("dan", "<b>not sure</b>"),)
    app.render()
    assert "faithfulness" not in app.notes.value and "correctness: 1" in app.notes.value
    assert "<td>dan</td><td>1</td><td>1 <span class='pr-muted'>(correctness 1)</span>" in app.progress.value
    assert "dan: &lt;b&gt;not sure&lt;/b&gt;" in app.notes.value
    # no name: one clear message, nothing written
    app.adjudicator.value = ""
    before = room.state.last_event_id
    row.no.click()
    assert "give your name" in app.status.value
    assert app.refresh() is False and room.state.last_event_id == before
    # a quiet tick sends nothing to the page (kernel messages would keep the idle cull from ending the room)
    import time

    stamp = app.updated.value
    time.sleep(1.1)
    assert app.refresh() is False and app.updated.value == stamp


def test_page_makes_an_assignment_and_shows_queue_sizes(hostile_root, tmp_path):
    import playground.ui.room as page

    db = tmp_path / "labels.db"
    open_store(db).close()
    room, _ = open_room_for(hostile_root, db)
    app = page.RoomApp(room, interval=1)
    app.assign_annotators.value = "ann, ben"
    app.assign_overlap.value = 1
    app.assign_seed.value = "42"
    app.assign_go.click()
    with open_store(db) as other:  # saved in the store, for every kernel
        [a] = other.assignments()
    assert (a.name, a.overlap, a.seed, a.dataset) == ("room-1", 1, 42, "golden")
    app.render()
    assert "Queues from the assignment room-1 (overlap 1, seed 42)." in app.progress.value
    n = len(room.source.catalog)
    assert f"{n} units" in app.assign_result.value
    # overlap 1 over two annotators: the loads differ by at most one (playground.assign)
    assert sorted(len(q) for q in a.queues.values()) == [n // 2, n - n // 2]
    assert f"<td>ann</td><td>{len(a.queues['ann'])}</td>" in app.assign_result.value
    app.assign_overlap.value = 1
    app.assign_annotators.value = "harness"
    app.assign_go.click()
    assert "reserved name" in app.status.value and len(room.source.assignments()) == 1
    assert "No calibration sample drawn" in app.sample.value
    app.sample_n.value = 4
    app.sample_go.click()
    sample = room.source.assignments()[-1]
    assert sample.kind == "calibration_sample" and sample.queues["*"] == tuple(draw_sample(list(room.source.catalog),
                                                                                          4, 42))
    assert "Calibration sample <b>sample-2</b> (seed 42): 4 units, 0 labelled" in app.sample.value


def open_room_for(root, db):
    from playground.ui.room import open_room

    return open_room(str(root), str(db))


def test_timer_refreshes_by_itself(hostile_root, tmp_path):
    import time

    from playground.ui.room import RoomApp

    db = tmp_path / "labels.db"
    open_store(db).close()
    room, _ = open_room_for(hostile_root, db)
    app = RoomApp(room, interval=0.5)
    app.start()  # no running event loop here: a daemon thread
    try:
        unit = next(u for u in room.source.catalog.values() if u.unit_kind == "passage")
        with open_store(db) as s:
            s.set_label("alice", unit, "relevant", 1)
            s.set_label("bob", unit, "relevant", 0)
        deadline = time.monotonic() + 10
        while not (app.rows and app.ticks) and time.monotonic() < deadline:  # rows are drawn before the count
            time.sleep(0.1)
        assert [r.moment.split for r in app.rows] == ["tie: 1 yes · 1 no"]
        assert app.ticks >= 1
    finally:
        app.stop()


def test_notebook_is_a_few_lines_without_outputs():
    import json

    nb = json.loads((Path(__file__).resolve().parent.parent / "notebooks" / "room.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(code) == 1 and all(not c["outputs"] and c["execution_count"] is None for c in code)
    assert "from playground.ui.room import launch" in "".join(code[0]["source"])


def test_calibration_sample_from_the_room(store):
    source = RoomStore(store, CATALOG, dataset="golden")
    sample = make_room_sample(source, 3, 5, " s1 ")
    # the contract: playground.sampling.draw_sample(unit_ids, n, seed), the single queue under "*"
    assert (sample.name, sample.kind, sample.dataset, sample.seed) == ("s1", "calibration_sample", "golden", 5)
    assert sample.queues == {"*": tuple(draw_sample(list(CATALOG), 3, 5))} and len(sample.queues["*"]) == 3
    assert [(a.name, a.queues) for a in store.assignments()] == [("s1", sample.queues)]
    assert latest_sample([sample, _Assignment("q", "queue", "golden", "2026-01-09")], "golden") is sample
    for bad in (0, True, "3"):
        with pytest.raises(ValueError, match="at least 1 unit"):
            make_room_sample(source, bad, 5, "s")
    assert len(store.assignments()) == 1


def test_the_labelled_prefix_of_a_calibration_sample():
    order = (F.unit_id, IDS[3], IDS[2])  # a sample in ranked order, written by hand
    # F unanswered -> prefix 0; u4 and u3 have yes/no answers in rows()
    state = RoomState.from_rows(rows())
    assert sample_coverage(state, order) == (2, 0)
    state.set_vote("a", F.unit_id, "covered", 1)
    assert sample_coverage(state, order) == (3, 3)
    state.set_vote("a", F.unit_id, "covered", UNSURE)  # unsure is no label for an estimate
    assert sample_coverage(state, order) == (2, 0)


def test_room_says_when_its_sqlite_file_was_replaced(tmp_path):
    import shutil

    from playground.store import StoreError

    db = tmp_path / "labels.db"
    with open_store(db) as s:
        s.set_label("a", U[0], "supported", 1)
    store = open_store(db)
    try:
        room = Room(RoomStore(store, CATALOG))
        assert room.refresh() is False
        shutil.copy(db, tmp_path / "copy.db")
        (tmp_path / "copy.db").replace(db)  # a restore from a backup: same name, another file
        with pytest.raises(StoreError, match="was deleted or replaced since this page opened it; reload the page"):
            room.refresh()
        db.unlink()
        with pytest.raises(StoreError, match="deleted or replaced"):
            room.refresh()
        from playground.ui.room import RoomApp

        app = RoomApp(room, interval=1)
        app._task = "running"
        app._tick()  # the page says it once and its timer stops
        assert "reload the page" in app.status.value and app._task is None and app._stop.is_set()
    finally:
        store.close()


def test_room_on_a_store_it_cannot_write_shows_everything_and_turns_writes_off(hostile_root, tmp_path, monkeypatch):
    import playground.store as store_pkg
    from playground.ui.room import RoomApp, open_room

    db = tmp_path / "labels.db"
    open_store(db).close()
    real = store_pkg.open_store

    def no_writes(url=None, *, read_only=False, **kw):
        if not read_only:
            raise store_pkg.StoreError("attempt to write a readonly database")
        return real(url, read_only=True, **kw)

    monkeypatch.setattr(store_pkg, "open_store", no_writes)
    room, note = open_room(str(hostile_root), str(db))
    assert note == ("The store cannot be written (attempt to write a readonly database); "
                    "adjudication and assignment are off.")
    monkeypatch.setattr(store_pkg, "open_store", real)
    unit = next(iter(room.source.catalog.values()))
    with open_store(db) as s:
        s.set_label("alice", unit, unit.dimensions[0], 1)
        s.set_label("bob", unit, unit.dimensions[0], 0)
    app = RoomApp(room, adjudicator="prof", note=note)
    assert app.refresh() is True
    [row] = app.rows
    assert row.yes.disabled and row.no.disabled and row.withdraw.disabled
    assert app.assign_go.disabled and app.sample_go.disabled
    assert "adjudication and assignment are off" in app.status.value


def test_room_reads_unsure_answers_comments_and_adjudications_from_the_store(store):
    store.set_label("a", U[0], "supported", 1)
    store.set_label("b", U[0], "supported", 0)
    store.set_label("c", U[0], "supported", UNSURE)
    store.set_comment("c", U[0], "which passage says so?")
    room = Room(RoomStore(store, CATALOG))
    [m], _open, _settled = room.moments()
    assert (m.split, m.comments) == ("tie: 1 yes · 1 no · 1 unsure", (UnitComment("c", "which passage says so?"),))
    room.source.adjudicate(U[0].unit_id, "supported", 0, "prof")
    store.set_comment("a", U[0], "I misread it")
    assert room.refresh() is True
    [m], open_, settled = room.moments()
    assert (m.status, m.consensus, m.adjudication, open_, settled) == ("adjudicated", 0, Adjudication(0, "prof"), 0, 1)
    assert [c.annotator for c in m.comments] == ["a", "c"]
    # the adjudicator is no voter and no annotator; progress never lists them
    assert room.state.annotators() == ["a", "b", "c"]
    assert [p.annotator for p in room.progress()] == ["a", "b", "c"]
    store.set_comment("c", U[0], "")  # a comment removed is gone from the room at the next refresh
    room.refresh()
    assert [c.annotator for c in room.moments()[0][0].comments] == ["a"]
    room.source.adjudicate(U[0].unit_id, "supported", None, "prof")
    room.refresh()
    assert room.moments()[0][0].status == "tie"


# --- the projector view (issue 23) ---------------------------------------------------------------------------


def test_unit_grid_counts_votes_key_and_match_by_hand():
    from playground.calibrate.room_grid import unit_grid

    state = RoomState.from_rows([LabelRow("a", IDS[0], "supported", 1), LabelRow("b", IDS[0], "supported", 0),
                                 LabelRow("c", IDS[0], "supported", 1), LabelRow("d", IDS[0], "supported", UNSURE),
                                 LabelRow("a", F.unit_id, "covered", 0)])
    grid = unit_grid(state, catalog_of([U[0], F]), {(IDS[0], "supported"): 1, (F.unit_id, "covered"): 1})
    [(u0, [sup, cor]), (f, [cov])] = grid
    assert (u0.unit_id, f.unit_id) == (IDS[0], F.unit_id)
    # supported: 2 yes, 1 no, 1 unsure; key yes -> 2 of 3 yes/no votes match; divided
    assert (sup.yes, sup.no, sup.unsure, sup.key, sup.matching, sup.accuracy, sup.divided) == (2, 1, 1, 1, 2, 2 / 3,
                                                                                               True)
    assert (cor.yes, cor.no, cor.key, cor.accuracy, cor.divided) == (0, 0, None, None, False)  # no vote, no key
    assert (cov.matching, cov.accuracy, cov.divided) == (0, 0.0, False)


@pytest.mark.parametrize(("yes", "no", "divided"), [(1, 3, True), (1, 4, False), (7, 21, True), (2, 25, False),
                                                    (3, 0, False), (2, 2, True)])
def test_a_divided_vote_has_a_quarter_on_its_smaller_side(yes, no, divided):
    from playground.calibrate.room_grid import GridCell

    assert GridCell("u", "supported", yes, no, 0, None, 0).divided is divided


def test_agreement_summary_lists_the_lowest_pairs_first():
    from playground.calibrate.room_grid import agreement_summary
    from playground.ui.room_html import summary_html

    # a and b agree on all four units, c disagrees with both on one of them
    labels = {"a": [1, 0, 1, 0], "b": [1, 0, 1, 0], "c": [1, 0, 0, 0]}
    state = RoomState.from_rows([LabelRow(who, IDS[i], "supported", v) for who, vs in labels.items()
                                 for i, v in enumerate(vs)])
    ag = {"supported": dimension_agreement(state, "supported")}
    [s] = agreement_summary(ag, lowest=2)
    # Cohen's kappa a-c: p_o = 3/4, p_e = (1/2)(1/4) + (1/2)(3/4) = 1/2 -> kappa = (3/4 - 1/2) / (1/2) = 0.5
    assert [(p.annotator_a, p.annotator_b, round(p.kappa, 6)) for p in s.lowest] == [("a", "c", 0.5),
                                                                                     ("b", "c", 0.5)]
    assert (s.annotators, s.pairs) == (3, 3)
    text = summary_html([s])
    assert "a – c 0.50, b – c 0.50" in text and "<td>3</td>" in text


def test_join_link_and_qr_code():
    from playground.ui.room_html import join_html, join_url

    assert join_url(None, "week-1") is None
    assert join_url("http://host:8866/voila/render/playground.ipynb", "week 1") == (
        "http://host:8866/voila/render/playground.ipynb?lesson=week%201")
    assert join_url("http://host/?token=x", "w") == "http://host/?token=x&lesson=w"
    html_ = join_html("http://host:8866/?lesson=w")
    assert "<div class='pr-join-link'>http://host:8866/?lesson=w</div>" in html_ and "<svg" in html_
    assert "playground serve" in join_html(None) and "/" not in join_html(None).split("code>")[0][-40:]


def test_a_lesson_room_scopes_everything_and_shows_the_key_beside_a_divided_vote(tmp_path):
    from playground.datasets import open_dataset
    from playground.lessons import make_lesson
    from playground.ui.room import RoomApp, open_room

    db = tmp_path / "labels.db"
    od = open_dataset(None)
    with open_store(db) as s:
        s.save_lesson(make_lesson("week-1", od, ["GC-0036"]))
        s.save_lesson(make_lesson("other", od, ["GC-0034"], ["GC-0034-R4"]))  # the newest: the default
    room, _ = open_room(None, str(db), None, "week-1")
    assert room.lesson.name == "week-1" and list(room.source.catalog) == list(room.lesson.units)
    assert len(room.source.catalog) == 17
    first = room.source.catalog[room.lesson.units[0]]  # the stale $0.80 overage section: relevant by the key
    outside = next(u for u in od.catalog().values() if u.case_id == "GC-0001")
    with open_store(db) as s:
        for who, v in (("ana", 1), ("ben", 0), ("cy", 1)):
            s.set_label(who, first, "relevant", v)
            s.set_label(who, outside, outside.dimensions[0], 1 - v)  # outside the lesson: never counted
    app = RoomApp(room, adjudicator="prof", link_base="http://host:8866/")
    app.refresh()
    [row] = app.rows
    # the room opens with the key hidden (issue 42.5): no key beside the vote, none in the grid, until ticked
    assert app.show_key.value is False and "2 yes · 1 no" in row.info.value
    assert "answer key" not in row.info.value and "<td class='pr-key'>yes</td>" not in app.grid.value
    assert "match it" not in row.info.value
    app.show_key.value = True
    assert "answer key: yes</span>" in row.info.value and "2 of 3 match it" in row.info.value
    app.show_key.value = False  # and hidden again
    assert "answer key" not in row.info.value and "<td class='pr-key'>yes</td>" not in app.grid.value
    app.show_key.value = True
    assert "answer key: yes</span>" in row.info.value and "<td class='pr-key'>yes</td>" in app.grid.value
    # each answered the one dimension of one passage: 1 of the 17 units done, 1/17 = 6%
    assert "<b>3</b> labelling · <b>0</b> finished · median 6% done" in app.progress.value
    assert "<td>1 / 17 of the lesson</td>" in app.progress.value
    assert "<div class='pr-join-link'>http://host:8866/?lesson=week-1</div>" in app.join.value
    assert str(db) not in str([w.value for w in (app.join, app.updated, app.status)])
    header = app.widget.children[1].children[0].value
    assert "lesson <b>week-1</b> · GC-0036 · 17 units" in header and str(db) not in header
    assert app.grid.value.count("<tr class='pr-cell") == 5 + 3 * (2 * 2 + 2)  # 5 passages, 3 x (2 claims x 2, 2 facts)
    assert app.grid.value.count("pr-cell pr-divided") == 1
    default, _ = open_room(None, str(db))
    assert default.lesson.name == "other" and len(default.source.catalog) == 5 + 5
    whole, _ = open_room(None, str(db), None, "-")
    assert whole.lesson is None and len(whole.source.catalog) == len(od.catalog())
    with pytest.raises(Exception, match="no lesson named 'nope'"):
        open_room(None, str(db), None, "nope")
    # a lesson made from the room
    app.lesson_name.value = "from-room"
    app.lesson_cases.value = "GC-0007, GC-0036"
    app.lesson_go.click()
    assert "Lesson from-room saved: 2 case(s)" in app.lesson_result.value
    assert "http://host:8866/?lesson=from-room" in app.lesson_result.value
    with open_store(db) as s:
        assert s.lesson("from-room").cases == ("GC-0007", "GC-0036")
    app.lesson_cases.value = "GC-9999"
    app.lesson_name.value = "bad"
    app.lesson_go.click()
    assert "no case GC-9999" in app.status.value
    for r in (room, default, whole):
        r.source._store.close()


def test_pair_kappa_counts_the_table_as_cohens_kappa_does():
    """The reference: playground.stats.cohens_kappa over the paired lists of shared units."""
    from playground.calibrate.room import pair_kappa
    from playground.sampling import stable_hash
    from playground.stats import cohens_kappa

    for seed in range(40):
        a = {f"u{i}": stable_hash(seed, f"a{i}") % 2 for i in range(30) if stable_hash(seed, f"x{i}") % 4}
        b = {f"u{i}": stable_hash(seed, f"b{i}") % 2 for i in range(30) if stable_hash(seed, f"y{i}") % 3}
        shared = sorted(a.keys() & b.keys())
        ref = cohens_kappa([a[u] for u in shared], [b[u] for u in shared])
        for x, y, ia, ib in (("ann", "bob", a, b), ("bob", "ann", b, a)):
            got = pair_kappa(x, y, ia, ib)
            assert (got.annotator_a, got.n_shared, got.agreement, got.kappa, got.low, got.high) == (
                "ann", len(shared), ref.agreement, ref.kappa, ref.low, ref.high)
    assert pair_kappa("a", "b", {"u1": 1}, {"u2": 0}) is None


def test_a_class_vote_folds_who_said_what_but_keeps_the_split_and_the_key():
    from playground.calibrate.room import TeachingMoment
    from playground.ui.room_html import moment_html

    votes = [("a", 1), ("b", 0), ("c", 1)]
    few = TeachingMoment(IDS[0], "supported", "claim", "GC-0001", "t", 2, 1, 0, tuple(votes), (), None)
    assert "a: yes, b: no, c: yes" in moment_html(few) and "pr-who" not in moment_html(few)
    many = TeachingMoment(IDS[0], "supported", "claim", "GC-0001", "t", 3, 3, 1,
                          tuple((f"s{i}", v) for i, v in enumerate([1, 0, 1, 0, 1, 0, UNSURE])), (), None)
    text = moment_html(many, None, 0)
    assert ("<details class='pr-who'><summary>who said what (7) · <span class='pr-unsure'>1 unsure</span>"
            "</summary>s0: yes, s1: no") in text
    assert "tie: 3 yes · 3 no · 1 unsure" in text and "answer key: no</span>" in text and "3 of 6 match it" in text
