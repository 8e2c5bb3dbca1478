"""Lessons (issue 23, must-hold 3): schema 4 on both backends, the 3 -> 4 migration, the units of a lesson, the
``playground lesson`` commands and ``labels export --lesson``."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from store_fixtures import claim, pg_server, raw_backend, run_cli, store, store_url

from playground.cli import labels as cli_labels
from playground.cli import lesson as cli_lesson
from playground.datasets import open_dataset
from playground.golden import passage_unit, response_units
from playground.lessons import LessonError, latest_lesson, lesson_catalog, lesson_units, make_lesson, parse_ids
from playground.store import Lesson, StoreError, open_store
from playground.store.schema import CURRENT_VERSION, v3_ddl

FIXTURES = (pg_server, store, store_url)


@pytest.fixture(scope="module")
def golden():
    return open_dataset(None)


# --- the units of a lesson -------------------------------------------------------------------------------


def test_units_are_per_case_passages_then_each_response_claims_and_facts(golden):
    units = lesson_units(golden, ["GC-0036", "GC-0034"])
    ds = golden.dataset
    expected = []
    for cid in ("GC-0036", "GC-0034"):  # the order given, not sorted
        case = ds.cases[cid]
        expected += [passage_unit(case, p).unit_id for p in golden.passages[cid]]
        for rid in sorted(r.response_id for r in ds.responses_for(cid)):
            expected += [u.unit_id for u in response_units(case, ds.responses[rid])]
    assert [u.unit_id for u in units] == expected
    # GC-0036: 5 passages + 3 responses of 2 claims and 2 facts = 17 units; GC-0034: 5 passages +
    # R1 2+2, R2 2+2, R3 1+2, R4 3+2, R5 3+2 = 26 units
    assert len(lesson_units(golden, ["GC-0036"])) == 17
    assert len(units) == 43
    assert [u.unit_kind for u in units[:7]] == ["passage"] * 5 + ["claim"] * 2


def test_chosen_responses_keep_their_order(golden):
    units = lesson_units(golden, ["GC-0034"], ["GC-0034-R4", "GC-0034-R1"])
    assert len(units) == 5 + 5 + 4
    assert [u.response_id for u in units if u.response_id][::1] == ["GC-0034-R4"] * 5 + ["GC-0034-R1"] * 4


@pytest.mark.parametrize(("cases", "responses", "message"), [
    ([], [], "name at least one case"),
    (["GC-0034", "GC-0034"], [], "case\\(s\\) named twice: GC-0034"),
    (["GC-9999"], [], "no case GC-9999 in the dataset golden \\(66 cases"),
    (["GC-0034"], ["GC-0036-R1"], "response GC-0036-R1 belongs to case GC-0036, which is not in the lesson"),
    (["GC-0034"], ["GC-0034-R9"], "no response GC-0034-R9"),
    (["GC-0034", "GC-0036"], ["GC-0034-R1"], "no response chosen for case\\(s\\) GC-0036"),
])
def test_bad_lessons_are_refused_naming_the_id(golden, cases, responses, message):
    with pytest.raises(LessonError, match=message):
        lesson_units(golden, cases, responses)


def test_parse_ids_and_latest():
    assert parse_ids(" GC-0036, GC-0007 ,,") == ["GC-0036", "GC-0007"]
    assert parse_ids(["GC-1,GC-2", "GC-3"]) == ["GC-1", "GC-2", "GC-3"]
    a = Lesson("a", "golden", ("X",), (), ("u",), "2026-01-02T00:00:00.000000+00:00")
    b = Lesson("b", "golden", ("X",), (), ("u",), "2026-01-01T00:00:00.000000+00:00")
    c = Lesson("c", "other", ("X",), (), ("u",), "2026-01-03T00:00:00.000000+00:00")
    assert latest_lesson([a, b, c], "golden") == a and latest_lesson([a, b, c]) == c
    assert latest_lesson([], "golden") is None


# --- the store (schema 4), both backends ------------------------------------------------------------------


def test_lessons_are_saved_listed_replaced_and_deleted(store, golden):
    week = store.save_lesson(make_lesson("week-1", golden, ["GC-0036"]))
    assert week.created_at and week.units == tuple(u.unit_id for u in lesson_units(golden, ["GC-0036"]))
    store.save_lesson(make_lesson("stale", golden, ["GC-0034"], ["GC-0034-R4"]))
    assert [x.name for x in store.lessons()] == ["stale", "week-1"]          # several lessons in one store
    assert store.lesson("stale").responses == ("GC-0034-R4",) and store.lesson("nope") is None
    with pytest.raises(StoreError, match="a lesson named 'week-1' is already in the label store"):
        store.save_lesson(make_lesson("week-1", golden, ["GC-0034"]))
    assert store.lesson("week-1").cases == ("GC-0036",)                      # nothing written
    store.save_lesson(make_lesson("week-1", golden, ["GC-0034"]), replace=True)
    assert store.lesson("week-1").cases == ("GC-0034",)
    with pytest.raises(Exception, match="has no unit to label"):
        store.save_lesson(Lesson("empty", "golden", (), (), ()))
    store.set_label("ann", claim(1), "supported", 1)
    assert store.delete_lesson("week-1") and not store.delete_lesson("week-1")
    assert [x.name for x in store.lessons()] == ["stale"] and len(store.labels()) == 1


def _v3_store(url: str) -> None:
    b = raw_backend(url)
    u = claim(1)
    ts = b.ts_in("2024-05-01T12:00:01.000000+00:00")

    def tx(cur):
        for stmt in v3_ddl(b.dialect):
            cur.execute(stmt)
        cur.execute("INSERT INTO annotators (annotator_id, name, created_at) VALUES (1, 'ann', ?)", (ts,))
        cur.execute("INSERT INTO events (event_id, batch_id, annotator_id, unit_kind, unit_id, case_id, dimension,"
                    " old_value, new_value, old_text_hash, text_hash, action, undoes, created_at, note) VALUES"
                    " (1, 1, 1, 'claim', ?, 'GC-0001', 'supported', NULL, 2, NULL, ?, 'set', NULL, ?, NULL)",
                    (u.unit_id, u.text_hash, ts))
        cur.execute("INSERT INTO labels (annotator_id, unit_id, dimension, unit_kind, case_id, value, text_hash,"
                    " updated_at, event_id) VALUES (1, ?, 'supported', 'claim', 'GC-0001', 2, ?, ?, 1)",
                    (u.unit_id, u.text_hash, ts))
        cur.execute("INSERT INTO assignments (name, kind, dataset, seed, overlap, queues, created_at) VALUES"
                    " ('q', 'queue', 'golden', '1', 1, '{\"ann\": []}', ?)", (ts,))
        b.reset_sequences(cur)

    b.write(tx)
    b.close()


def test_a_version_3_store_migrates_to_4_keeping_every_row(store_url, golden):
    _v3_store(store_url)
    with open_store(store_url) as s:
        assert s.schema_version == CURRENT_VERSION and s.verify() == []
        assert [(lb.annotator, lb.value) for lb in s.labels(include_unsure=True)] == [("ann", 2)]
        assert [a.name for a in s.assignments()] == ["q"] and s.lessons() == []
        s.save_lesson(make_lesson("week-1", golden, ["GC-0036"]))
        assert s.set_label("ann", claim(1), "supported", 1).event_id == 2
        dump = s.dump()
        assert [r[0] for r in dump["lessons"]] == ["week-1"]
    if not store_url.startswith("postgresql"):
        assert Path(store_url + ".schema3.bak").is_file()
    with open_store(store_url) as s:  # reopening does not migrate again
        assert s.schema_version == CURRENT_VERSION and [x.name for x in s.lessons()] == ["week-1"]


def test_a_copy_keeps_the_lessons(tmp_path, golden):
    with open_store(tmp_path / "a.db") as a, open_store(tmp_path / "b.db") as b:
        a.save_lesson(make_lesson("week-1", golden, ["GC-0036"]))
        counts = b.copy_from(a)
        assert counts["lessons"] == 1 and b.lesson("week-1") == a.lesson("week-1")


def test_lesson_catalog_keeps_lesson_order(golden):
    lesson = make_lesson("x", golden, ["GC-0036", "GC-0034"])
    catalog = golden.catalog()
    scoped = lesson_catalog(lesson, catalog)
    assert list(scoped) == list(lesson.units) and len(scoped) == 43
    assert list(lesson_catalog(lesson, {u: catalog[u] for u in lesson.units[5:]})) == list(lesson.units[5:])


# --- the commands -----------------------------------------------------------------------------------------


def test_lesson_commands(tmp_path, capsys):
    db = str(tmp_path / "labels.db")
    code, out, _ = run_cli(cli_lesson, ["lesson", "create", "week-1", "--cases", "GC-0036,GC-0034", "--db", db],
                           capsys)
    assert code == 0 and out == ("saved lesson week-1 (dataset golden): 2 case(s), 43 unit(s) for every student, "
                                 "in the same order\n")
    code, _, err = run_cli(cli_lesson, ["lesson", "create", "bad", "--cases", "GC-9999", "--db", db], capsys)
    assert code == 1 and err.startswith("error: no case GC-9999 in the dataset golden")
    code, out, _ = run_cli(cli_lesson, ["lesson", "list", "--db", db], capsys)
    assert code == 0 and out.startswith("week-1: dataset golden, 2 case(s) (GC-0036, GC-0034), 43 unit(s), created ")
    with open_store(db) as s:
        lesson = s.lesson("week-1")
        catalog = open_dataset(None).catalog()
        for uid in lesson.units[:7]:  # ann answers 7 units of the lesson; one label outside the lesson
            for d in catalog[uid].dimensions:
                s.set_label("ann", catalog[uid], d, 1)
        outside = next(u for u in catalog.values() if u.case_id == "GC-0001")
        s.set_label("ann", outside, outside.dimensions[0], 0)
    code, out, _ = run_cli(cli_lesson, ["lesson", "show", "week-1", "--db", db], capsys)
    assert code == 0 and "  units (43, in this order):\n      1. passage  GC-0036::" in out
    assert out.endswith("  progress:\n  ann: 7 / 43 in this lesson\n")
    code, _, err = run_cli(cli_labels, ["labels", "export", "--lesson", "week-1", "--db", db,
                                        "--out", str(tmp_path / "x.csv")], capsys)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "x.csv").read_text())))
    # 5 passages (relevant) + 2 claims (supported, correct): 9 rows; the label on GC-0001 is left out
    assert code == 0 and len(rows) == 9 and {r["case_id"] for r in rows} == {"GC-0036"}
    code, _, err = run_cli(cli_labels, ["labels", "export", "--lesson", "nope", "--db", db], capsys)
    assert code == 1 and "no lesson named 'nope' (known: week-1)" in err
    code, out, _ = run_cli(cli_lesson, ["lesson", "delete", "week-1", "--db", db], capsys)
    assert code == 0 and out == "deleted lesson week-1 (its labels are kept)\n"
    code, _, err = run_cli(cli_lesson, ["lesson", "show", "week-1", "--db", db], capsys)
    assert code == 1 and err == "error: no lesson named week-1 (known: none)\n"


# --- the page's core: every student follows the lesson, progress against it -----------------------------


@pytest.fixture(scope="module")
def shipped_harness():
    from playground.golden import load_dataset
    from playground.ui.session import compute_harness

    dataset = load_dataset()
    hits, results = compute_harness(dataset)
    return dataset, hits, results


def test_every_student_follows_the_lesson_and_progress_reads_against_it(tmp_path, golden, shipped_harness):
    from playground.ui.session import LabelSession, SessionError

    dataset, hits, results = shipped_harness
    db = tmp_path / "labels.db"
    with open_store(db) as s:
        s.save_lesson(make_lesson("week-1", golden, ["GC-0036"]))
    pages = [LabelSession(dataset, open_store(db), annotator=who, harness_results=results, hits=hits)
             for who in ("ana", "ben")]
    for page in pages:
        assert page.use_queue() == "week-1" and page.queue_lesson
        assert page.queue == [("GC-0036", "GC-0036-R1"), ("GC-0036", "GC-0036-R2"), ("GC-0036", "GC-0036-R3")]
    assert pages[0].queue_units == pages[1].queue_units == list(pages[0].store.lesson("week-1").units)
    ana = pages[0]
    for uid in ana.queue_units[:7]:  # the 5 passages and both claims of R1, every dimension
        for d in ana.catalog[uid].dimensions:
            ana.set_label(uid, d, 1)
    p = ana.queue_progress()
    assert (p.labelled_units, p.total_units) == (7, 17)
    ana.lesson_name = "nope"
    with pytest.raises(SessionError, match="no lesson named 'nope' for the dataset golden \\(known: week-1\\)"):
        ana.use_queue()
    for page in pages:
        page.store.close()


def test_a_lesson_over_an_imported_dataset(tmp_path, capsys):
    from playground.calibrate.room_grid import answer_key_values
    from playground.importers.load import import_dataset

    fixtures = Path(__file__).resolve().parent / "fixtures"
    db = str(tmp_path / "labels.db")
    with open_store(db) as s:
        import_dataset(fixtures / "deepeval_goldens.json", "deepeval", "alpha", s)
        od = open_dataset("alpha", s)
        first = sorted(od.dataset.cases)[0]
        units = lesson_units(od, [first])
        case_units = [u for u in od.units() if u.case_id == first]
        assert [u.unit_id for u in units] == [u.unit_id for u in case_units]  # the page's order for that case
        assert answer_key_values(od, units) == {}  # an import has no authored key: the room says so
    code, out, _ = run_cli(cli_lesson, ["lesson", "create", "imp", "--cases", first, "--dataset", "alpha",
                                        "--db", db], capsys)
    assert code == 0 and out.startswith(f"saved lesson imp (dataset alpha): 1 case(s), {len(units)} unit(s)")
