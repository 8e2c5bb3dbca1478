"""``playground lesson grades``: each student against the key, read back as Canvas's and Moodle's importers would."""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

import pytest
from store_fixtures import run_cli

from playground.calibrate.room_grid import answer_key_values
from playground.cli import lesson as cli_lesson
from playground.datasets import open_dataset
from playground.grades import CANVAS_IDENTITY, GradeError, canvas_csv, lesson_grades, moodle_csv
from playground.lessons import lesson_catalog, make_lesson
from playground.store import UNSURE, open_store

NUMBER = re.compile(r"^\d+\.\d{2}$")  # the files' numbers: "." decimal point, two decimals, no thousands separator


@dataclass(frozen=True)
class L:
    annotator: str
    unit_id: str
    dimension: str
    value: int


KEY = {("u1", "supported"): 1, ("u2", "supported"): 0, ("u3", "supported"): 1, ("u1", "correct"): 1,
       ("p1", "relevant"): 0}


def test_scores_by_hand():
    labels = [L("ben", "u1", "supported", 1), L("ben", "u2", "supported", 1), L("ben", "u3", "supported", UNSURE),
              L("ben", "p1", "relevant", 0), L("ben", "zz", "supported", 1),  # zz: not keyed, not counted
              L("consensus", "u1", "supported", 1), L("Ana", "u1", "correct", 0)]
    ana, ben = lesson_grades("w", KEY, labels)  # sorted by case-folded name; consensus is not a student
    assert (ana.annotator, ben.annotator) == ("Ana", "ben")
    # dimension order: relevant, supported, correct (the page's order); covered has no key here
    assert [d.dimension for d in ben.dimensions] == ["relevant", "supported", "correct"]
    rel, sup, cor = ben.dimensions
    assert (rel.keyed, rel.answered, rel.correct, rel.score) == (1, 1, 1, 100.0)
    # supported: u1 right, u2 wrong, u3 unsure (answered, never right): 1 of 3 keyed = 33.33
    assert (sup.keyed, sup.answered, sup.correct, sup.score) == (3, 3, 1, 33.33)
    assert (cor.keyed, cor.answered, cor.correct, cor.score) == (1, 0, 0, 0.0)
    # overall: 2 right of 5 keyed items = 40.00 (not the mean of 100, 33.33 and 0)
    assert (ben.keyed, ben.answered, ben.correct, ben.overall) == (5, 4, 2, 40.0)
    assert (ana.answered, ana.correct, ana.overall) == (1, 0, 0.0)


def test_rounding_is_half_up_at_two_decimals():
    key = {(f"u{i}", "supported"): 1 for i in range(8)}
    (g,) = lesson_grades("w", key, [L("a", "u0", "supported", 1)])
    assert g.overall == 12.5  # 1/8 exactly
    key = {(f"u{i}", "supported"): 1 for i in range(3)}
    (g,) = lesson_grades("w", key, [L("a", "u0", "supported", 1), L("a", "u1", "supported", 1)])
    assert g.overall == 66.67  # 66.666... up
    key = {(f"u{i}", "supported"): 1 for i in range(400)}
    (g,) = lesson_grades("w", key, [L("a", f"u{i}", "supported", 1) for i in range(1)])
    assert g.overall == 0.25  # 100/400 exactly; 0.125 would round half-up to 0.13
    key = {(f"u{i}", "supported"): 1 for i in range(800)}
    (g,) = lesson_grades("w", key, [L("a", "u0", "supported", 1)])
    assert g.overall == 0.13  # 0.125 -> 0.13 (half-up, not banker's 0.12)


def test_a_lesson_without_a_key_has_no_grades():
    with pytest.raises(GradeError, match="lesson w: none of its units has an answer key"):
        lesson_grades("w", {}, [L("a", "u1", "supported", 1)])


@pytest.fixture
def graded_store(tmp_path):
    """Lesson week-1 (GC-0036: 17 units, 23 keyed items: relevant 5, supported 6, correct 6, covered 6);
    Zoë answers every keyed item as the key says; ben answers each dimension's first keyed item against it
    and nothing else; 'consensus' labels too (not a student)."""
    golden = open_dataset(None)
    db = tmp_path / "labels.db"
    with open_store(db) as store:
        lesson = store.save_lesson(make_lesson("week-1", golden, ["GC-0036"]))
        units = lesson_catalog(lesson, golden.catalog())
        key = answer_key_values(golden, list(units.values()))
        firsts = {}
        for (uid, dim), value in sorted(key.items()):
            store.set_label("Zoë", units[uid], dim, value)
            store.adjudicate(units[uid], dim, 1 - value, "teacher")
            if dim not in firsts:
                firsts[dim] = uid
                store.set_label("ben", units[uid], dim, 1 - value)
    return db, key


def _canvas_import(data: bytes) -> tuple[list[str], list[str], list[list[str]]]:
    """Read a file as Canvas's gradebook import does: UTF-8, RFC 4180, header, "Points Possible", students."""
    text = data.decode("utf-8")  # strict: a byte that is not UTF-8 raises
    assert not text.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    return rows[0], rows[1], rows[2:]


def test_canvas_file_reads_back_as_canvas_imports_it(graded_store, tmp_path, capsys):
    db, key = graded_store
    out = tmp_path / "canvas.csv"
    code, printed, err = run_cli(cli_lesson, ["lesson", "grades", "week-1", "--db", str(db), "--format", "canvas",
                                              "--out", str(out), "--section", "Section A"], capsys)
    assert code == 0, err
    data = out.read_bytes()
    assert b"\r\n" in data and data.endswith(b"\r\n")
    header, points, students = _canvas_import(data)
    assert header == [*CANVAS_IDENTITY, "week-1 overall", "week-1 relevant", "week-1 supported",
                      "week-1 correct", "week-1 covered", "week-1 answered"]
    assert points == ["Points Possible", "", "", "", "", "100.00", "100.00", "100.00", "100.00", "100.00",
                      "23.00"]
    assert len(key) == 23
    assert [r[0] for r in students] == ["ben", "Zoë"]  # one row per student, sorted; consensus left out
    ben, zoe = students
    assert ben[:5] == ["ben", "", "", "ben", "Section A"] and zoe[3] == "Zoë"
    # ben: 0 right of 23, 4 answered; Zoë: all 23 right
    assert ben[5:] == ["0.00", "0.00", "0.00", "0.00", "0.00", "4"]
    assert zoe[5:] == ["100.00", "100.00", "100.00", "100.00", "100.00", "23"]
    assert all(NUMBER.match(v) for r in students for v in r[5:10])
    assert "wrote" in printed and "2 student(s)" in printed and "ben: overall 0.00" in printed


def test_moodle_file_reads_back_as_moodle_imports_it(graded_store, tmp_path, capsys):
    db, _key = graded_store
    out = tmp_path / "moodle.csv"
    code, _printed, err = run_cli(cli_lesson, ["lesson", "grades", "week-1", "--db", str(db), "--format",
                                               "moodle", "--out", str(out)], capsys)
    assert code == 0, err
    # Moodle's csv_import_reader: the chosen encoding (UTF-8), a separator (comma), the first row the header
    rows = list(csv.reader(io.StringIO(out.read_bytes().decode("utf-8"), newline=""), delimiter=","))
    assert rows[0] == ["Username", "week-1 overall", "week-1 relevant", "week-1 supported", "week-1 correct",
                       "week-1 covered", "week-1 answered"]
    assert len(rows) == 3 and [r[0] for r in rows[1:]] == ["ben", "Zoë"]
    assert rows[2][1:] == ["100.00", "100.00", "100.00", "100.00", "100.00", "23"]
    assert all(float(v) == float(v.replace(",", "")) and NUMBER.match(v) for r in rows[1:] for v in r[1:6])


def test_moodle_identifies_by_email_when_every_student_is_an_address():
    g = lesson_grades("w", KEY, [L("a@x.org", "u1", "supported", 1), L("b@x.org", "u1", "supported", 0)])
    assert moodle_csv("w", g).splitlines()[0].startswith("Email address,")
    assert canvas_csv("w", g).splitlines()[2].startswith("a@x.org,,,a@x.org,")


def test_grades_needs_its_options_and_a_known_lesson(graded_store, tmp_path, capsys):
    db, _key = graded_store
    code, _o, err = run_cli(cli_lesson, ["lesson", "grades", "week-1", "--db", str(db)], capsys)
    assert code == 2 and "needs --format canvas|moodle and --out FILE" in err
    code, _o, err = run_cli(cli_lesson, ["lesson", "grades", "week-9", "--db", str(db), "--format", "moodle",
                                         "--out", str(tmp_path / "x.csv")], capsys)
    assert code == 1 and "no lesson named week-9 (known: week-1)" in err
    assert not (tmp_path / "x.csv").exists()


def test_a_changed_answer_counts_as_the_last_one(graded_store):
    db, key = graded_store
    from playground.grades import grades_of_lesson

    golden = open_dataset(None)
    with open_store(db) as store:
        lesson, before = grades_of_lesson(store, "week-1")
        uid, dim = sorted(key)[0]
        store.set_label("Zoë", lesson_catalog(lesson, golden.catalog())[uid], dim, 1 - key[(uid, dim)])
        _l, after = grades_of_lesson(store, "week-1")
    zoe = {g.annotator: g for g in after}["Zoë"]
    assert {g.annotator: g for g in before}["Zoë"].overall == 100.0
    assert (zoe.correct, zoe.answered, zoe.overall) == (22, 23, 95.65)  # 22/23 = 95.652...


def test_an_empty_class_writes_the_header_and_no_student():
    assert canvas_csv("w", []).splitlines() == [",".join([*CANVAS_IDENTITY, "w overall", "w answered"]),
                                               "Points Possible,,,,,100.00,0.00"]
    assert moodle_csv("w", []).splitlines() == ["Username,w overall,w answered"]


def test_the_instructors_guide_example(tmp_path, capsys):
    """docs/instructor.md quotes what `lesson grades` printed and wrote: label as it says (ana every keyed item
    as the key; ben the i-th item in key order when i % 3 != 0, against the key when i % 4 == 0), run the
    command, and compare every line of the two quoted blocks."""
    from pathlib import Path

    golden = open_dataset(None)
    db = tmp_path / "labels.db"
    with open_store(db) as store:
        lesson = store.save_lesson(make_lesson("week-1", golden, ["GC-0036"]))
        units = lesson_catalog(lesson, golden.catalog())
        key = answer_key_values(golden, list(units.values()))
        for i, ((uid, dim), value) in enumerate(sorted(key.items())):
            store.set_label("ana", units[uid], dim, value)
            if i % 3:
                store.set_label("ben", units[uid], dim, value if i % 4 else 1 - value)
    out = tmp_path / "week-1-canvas.csv"
    code, printed, err = run_cli(cli_lesson, ["lesson", "grades", "week-1", "--db", str(db), "--format", "canvas",
                                              "--out", str(out)], capsys)
    assert code == 0, err
    doc = (Path(__file__).resolve().parent.parent / "docs" / "instructor.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Grades for Canvas or Moodle"):doc.index("The rules (`playground/grades.py`)")]
    # the output block, then the file (tagged ``text``: printed for lesson week-1, not by the block above them)
    blocks = [b.removeprefix("text").strip().splitlines() for b in section.split("```")[3::2]]
    printed_lines = printed.splitlines()
    printed_lines[0] = printed_lines[0].replace(str(out), "week-1-canvas.csv")
    assert blocks[0] == printed_lines
    assert blocks[1] == out.read_text(encoding="utf-8").splitlines()
