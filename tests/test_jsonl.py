"""playground.jsonl: the one JSON Lines reading every reader of the project shares."""
from __future__ import annotations

import json

import pytest

from playground.begin import BeginError, load_begin
from playground.importers.ragtruth import RagTruthError, load_ragtruth
from playground.jsonl import LineProblems, json_lines, json_value, read_lines, split_lines


def test_lines_split_on_newline_only():
    text = '{"a": "one\u2028two\u2029three\x85four"}\r\n{"b": 2}\n'
    assert split_lines(text) == ['{"a": "one\u2028two\u2029three\x85four"}\r', '{"b": 2}']
    assert split_lines("") == [] and split_lines("x") == ["x"] and split_lines("x\n\n") == ["x", ""]


def test_every_bad_line_is_a_problem_and_the_rest_are_read():
    problems: list[tuple[int, str]] = []
    got = list(json_lines(['{"a": 1}\r', "", "{nope", "[1, 2]", "   "], problems))
    assert got == [(1, {"a": 1}), (4, [1, 2])]
    assert problems == [(2, "empty line"),
                        (3, "invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
                        (5, "empty line")]


def test_the_error_lists_problems_sorted_under_the_path_or_the_kind():
    err = LineProblems([(3, "b"), (1, "a")])
    assert str(err) == "file: 2 problem(s)\n  line 1: a\n  line 3: b" and err.problems == [(1, "a"), (3, "b")]
    assert str(RagTruthError([(0, "no records")])).startswith("RAGTruth claims: 1 problem(s)")
    assert str(BeginError([(2, "x")], "f.jsonl")) == "f.jsonl: 1 problem(s)\n  line 2: x"


def test_bytes_that_are_not_utf8_name_their_line(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": "\xff"}\n')
    with pytest.raises(LineProblems) as info:
        read_lines(f, LineProblems)
    assert info.value.problems == [(3, "not UTF-8 text (invalid start byte at byte 25)")]
    for load, error in ((load_begin, BeginError), (load_ragtruth, RagTruthError)):
        with pytest.raises(error, match="line 3: not UTF-8 text"):
            load(f)


def test_a_ragas_file_with_a_raw_line_separator_in_a_string_imports(tmp_path):
    """json.dumps(ensure_ascii=False) leaves U+2028 raw inside a string; the line is still one line."""
    from playground.importers.core import read_rows

    row = {"user_input": "What is it?", "retrieved_contexts": ["Line one\u2028line two."], "response": "It is one."}
    f = tmp_path / "sep.jsonl"
    f.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    assert "\u2028" in f.read_text(encoding="utf-8")
    problems: list = []
    fmt, rows = read_rows(f, problems)
    assert (fmt, problems, [r.data for r in rows]) == ("jsonl", [], [row])


def test_a_line_nested_too_deep_is_a_problem_not_a_crash(tmp_path):
    assert json_value("[" * 100_000) == (None, "invalid JSON: nested too deep")
    assert json_value("[1, 2") == (None, "invalid JSON: Expecting ',' delimiter (column 6)")
    assert json_value('{"a": [1]}') == ({"a": [1]}, "")
    path = tmp_path / "claims.jsonl"
    path.write_text("[" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(RagTruthError) as info:
        load_ragtruth(path)
    assert info.value.problems == [(1, "invalid JSON: nested too deep")]
