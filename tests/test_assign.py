"""playground.assign: queues with overlap, calibration samples, progress; and ``playground assign``."""
from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from store_fixtures import catalog_of, claim, fact, pg_server, run_cli, store, store_url

from playground.assign import CALIBRATION_QUEUE, draw_calibration_sample, make_assignment, queue_progress
from playground.cli import assign as cli
from playground.store import UNSURE, Assignment, open_store

FIXTURES = (pg_server, store, store_url)  # pytest finds them here; this also marks the imports used

UNITS = [f"u{i:02d}" for i in range(10)]


def sha_rank(ids, seed):
    """The documented order, computed independently: sha256(f"{seed}:{id}"), first 16 hex digits."""
    return sorted(set(ids), key=lambda i: (int(hashlib.sha256(f"{seed}:{i}".encode()).hexdigest()[:16], 16), i))


def h(seed, key):
    return int(hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()[:16], 16)


def test_overlap_equal_to_the_number_of_annotators_gives_everyone_everything_in_ranked_order():
    a = make_assignment(UNITS, ["ann", "bob", "cy"], 3, 7, name="all", dataset="golden")
    order = tuple(sha_rank(UNITS, 7))
    assert a.queues == {"ann": order, "bob": order, "cy": order}
    assert (a.name, a.kind, a.dataset, a.seed, a.overlap) == ("all", "queue", "golden", 7, 3)


def test_two_annotators_one_each_follows_the_rule_by_hand():
    units = ["p", "q", "r", "s"]
    seed = "s1"
    a = make_assignment(units, ["x", "y"], 1, seed, name="n", dataset="d")
    # By hand from the rule: walk the ranked order; the lighter annotator takes the unit, a tie in load
    # goes to the smaller stable_hash(seed, "unit|name").
    load = {"x": 0, "y": 0}
    expect: dict[str, list[str]] = {"x": [], "y": []}
    for u in sha_rank(units, seed):
        who = min(["x", "y"], key=lambda n: (load[n], h(seed, f"{u}|{n}"), n))
        load[who] += 1
        expect[who].append(u)
    assert {k: list(v) for k, v in a.queues.items()} == expect
    assert sorted(len(q) for q in a.queues.values()) == [2, 2]


@pytest.mark.parametrize("n_units, names, overlap, sizes", [
    (10, ["a", "b", "c"], 2, [7, 7, 6]),      # 20 slots over 3: ceil 7, floor 6
    (10, ["a", "b", "c", "d"], 1, [3, 3, 2, 2]),
    (7, ["a", "b"], 2, [7, 7]),
    (1, ["a", "b", "c"], 1, [1, 0, 0]),
])
def test_every_unit_gets_exactly_overlap_annotators_and_loads_differ_by_at_most_one(n_units, names, overlap, sizes):
    units = [f"u{i}" for i in range(n_units)]
    a = make_assignment(units, names, overlap, 3, name="n", dataset="d")
    per_unit = Counter(u for q in a.queues.values() for u in q)
    assert set(per_unit) == set(units) and set(per_unit.values()) == {overlap}
    assert sorted((len(q) for q in a.queues.values()), reverse=True) == sizes
    ranked = sha_rank(units, 3)
    for q in a.queues.values():  # each queue keeps the ranked order
        assert list(q) == [u for u in ranked if u in q]
        assert len(set(q)) == len(q)


def test_deterministic_and_seeded():
    one = make_assignment(UNITS, ["a", "b", "c"], 2, 11, name="n", dataset="d")
    assert make_assignment(list(reversed(UNITS)), ["a", "b", "c"], 2, 11, name="n", dataset="d") == one
    assert make_assignment(UNITS, ["a", "b", "c"], 2, 12, name="n", dataset="d").queues != one.queues


@pytest.mark.parametrize("names, overlap, message", [
    (["a", "b"], 3, r"overlap 3 needs at least 3 annotators, but only 2 were given \(a, b\)"),
    (["a", "b"], 0, "overlap must be a whole number of at least 1, got 0"),
    (["a", "b"], True, "overlap must be a whole number"),
    ([], 1, "at least one annotator"),
    (["a", "a"], 1, "annotator\\(s\\) named twice: a"),
    (["a", "consensus"], 1, "reserved name"),
    (["a", "b\x1bc"], 1, "control or format characters"),
])
def test_bad_requests_raise_one_clear_error(names, overlap, message):
    with pytest.raises(ValueError, match=message):
        make_assignment(UNITS, names, overlap, 1, name="n", dataset="d")


def test_calibration_sample_is_the_ranked_prefix_and_sized_exactly():
    s = draw_calibration_sample(UNITS, 4, 5, name="cal", dataset="golden")
    assert s.kind == "calibration_sample" and s.queues == {CALIBRATION_QUEUE: tuple(sha_rank(UNITS, 5)[:4])}
    assert draw_calibration_sample(UNITS, 10, 5, name="cal", dataset="golden").queues["*"] == tuple(sha_rank(UNITS, 5))
    # as playground.sampling.draw_sample: more than there are gives all of them, 0 gives none
    assert draw_calibration_sample(UNITS, 11, 5, name="cal", dataset="golden").queues["*"] == tuple(sha_rank(UNITS, 5))
    assert draw_calibration_sample(UNITS, 0, 5, name="cal", dataset="golden").queues["*"] == ()
    with pytest.raises(ValueError, match="at least 0, got -1"):
        draw_calibration_sample(UNITS, -1, 5, name="cal", dataset="golden")


def test_assignments_persist_on_both_backends(store):
    a = make_assignment(UNITS, ["a", "b"], 1, "seed-x", name="week 1", dataset="golden")
    saved = store.save_assignment(a)
    assert saved.created_at and store.assignment("week 1") == saved
    assert store.assignment("week 1").seed == "seed-x"  # the seed's type survives
    s = store.save_assignment(draw_calibration_sample(UNITS, 3, 9, name="cal", dataset="golden"))
    assert [x.name for x in store.assignments()] == ["cal", "week 1"] and store.assignment("cal") == s
    assert store.assignment("nope") is None
    replaced = store.save_assignment(make_assignment(UNITS, ["a", "b", "c"], 1, 2, name="week 1", dataset="golden"))
    assert store.assignment("week 1") == replaced and set(replaced.queues) == {"a", "b", "c"}
    with pytest.raises(ValueError, match="kind"):
        store.save_assignment(Assignment("bad", "other", "golden", 1, 1, {}))
    assert store.verify() == []


def test_queue_progress_counts_units_with_every_dimension_answered(store):
    units = [claim(i) for i in range(3)] + [fact(1)]
    catalog = catalog_of(units)
    a = Assignment("q", "queue", "d", 1, 1, {"ann": tuple(u.unit_id for u in units[:3]), "bob": (units[3].unit_id,)})
    store.set_label("ann", units[0], "supported", 1)
    store.set_label("ann", units[0], "correct", UNSURE)   # unsure counts as answered
    store.set_label("ann", units[1], "supported", 0)      # correct missing: not done
    store.set_label("bob", units[0], "supported", 1)      # not bob's queue
    labels = store.current_labels(catalog, include_unsure=True)
    dims = {u.unit_id: u.dimensions for u in units}
    assert [(p.annotator, p.done, p.size) for p in queue_progress(a, labels, dims)] == [("ann", 1, 3), ("bob", 0, 1)]
    cal = Assignment("c", "calibration_sample", "d", 1, 1, {"*": (units[0].unit_id, units[1].unit_id)})
    assert [(p.done, p.size) for p in queue_progress(cal, labels, dims)] == [(1, 2)]


def run(argv, capsys):
    return run_cli(cli, argv, capsys)


def test_cli_makes_shows_and_refuses(tmp_path, capsys, monkeypatch):
    units = [claim(i) for i in range(6)]
    catalog = catalog_of(units)
    monkeypatch.setattr(cli, "dataset_catalog", lambda name, store, root: catalog)
    db = str(tmp_path / "labels.db")
    code, out, err = run(["assign", "--annotators", "ana,ben,cy", "--overlap", "2", "--seed", "7", "--db", db], capsys)
    assert code == 0 and out == "saved assignment queues (golden, seed 7): 6 unit(s), 2 annotator(s) each; " \
                                "queue sizes: ana 4, ben 4, cy 4\n"
    code, out, err = run(["assign", "--annotators", "ana,ben", "--overlap", "2", "--seed", "7", "--db", db], capsys)
    assert code == 1 and "already saved; pass --replace" in err
    code, out, err = run(["assign", "--annotators", "ana,ben", "--overlap", "3", "--seed", "7", "--db", db,
                          "--name", "x"], capsys)
    assert code == 1 and err == "error: overlap 3 needs at least 3 annotators, but only 2 were given (ana, ben)\n"
    code, out, err = run(["assign", "--calibration-sample", "7", "--seed", "1", "--db", db], capsys)
    assert code == 1 and err == "error: a calibration sample of 7 unit(s) was asked for; dataset golden has 6\n"
    code, out, err = run(["assign", "--calibration-sample", "3", "--seed", "1", "--db", db], capsys)
    assert code == 0 and "calibration sample of 3 unit(s)" in out
    with open_store(db) as s:
        q = s.assignment("queues")
        first = catalog[q.queues["ana"][0]]
        for dim in first.dimensions:
            s.set_label("ana", first, dim, 1)
    code, out, err = run(["assign", "show", "--db", db], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("calibration-sample: calibration_sample, dataset golden, seed 1, overlap 1")
    assert "queues: queue, dataset golden, seed 7, overlap 2" in lines[2]
    assert lines[3].split() == ["ana", "1", "/", "4", "done", "(25%)"]
    assert lines[4].split() == ["ben", "0", "/", "4", "done", "(0%)"]
    code, out, err = run(["assign", "--overlap", "2", "--seed", "7", "--db", db], capsys)
    assert code == 2 and "give --annotators" in err
    code, out, err = run(["assign", "--annotators", "a", "--db", db, "--name", "y"], capsys)
    assert code == 1 and "--seed is required" in err
    code, out, err = run(["assign", "show", "--db", str(tmp_path / "none.db")], capsys)
    assert code == 1 and err.startswith("error: no label store at") and not (tmp_path / "none.db").exists()
