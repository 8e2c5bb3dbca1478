"""The parts of the Phoenix round trip that need no server: figures, the description block, span JSON, usage errors.

(tests/test_phoenix_live.py runs the whole round trip against a real Phoenix.)
"""
from __future__ import annotations

import re

import pytest

from playground.cli import main
from playground.importers.phoenix_figures import BEGIN, END, _harness_line, merge_description
from playground.importers.phoenix_live import span_json


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_figures_block_is_appended_once_and_replaced_in_place():
    block = f"{BEGIN}\na\n{END}"
    assert merge_description(None, ["a"]) == block
    assert merge_description("   ", ["a"]) == block
    assert merge_description("Bot traces.", ["a"]) == f"Bot traces.\n\n{block}"
    current = f"Bot traces.\n\n{BEGIN}\nold\nlines\n{END}\nOwner: ana"
    assert merge_description(current, ["a"]) == f"Bot traces.\n\n{block}\nOwner: ana"
    assert merge_description(merge_description(current, ["a"]), ["a"]) == merge_description(current, ["a"])
    # an END before BEGIN is not a block: a new one is appended
    odd = f"{END}\n{BEGIN}"
    assert merge_description(odd, ["a"]) == f"{odd}\n\n{block}"


def test_the_harness_line_corrects_with_the_rogan_gladen_estimate():
    # 40 human 'yes' (harness says yes to 36), 60 human 'no' (harness says no to 54), 100 unlabelled (50 yes):
    # p = (36 + 6 + 50) / 200 = 0.46, TPR = TNR = 0.9, so (0.46 + 0.9 - 1) / (0.9 + 0.9 - 1) = 0.45
    rows = [(1, 1)] * 36 + [(0, 1)] * 4 + [(0, 0)] * 54 + [(1, 0)] * 6 + [(1, None)] * 50 + [(0, None)] * 50
    line = _harness_line("faithfulness", rows, "seed")
    match = re.fullmatch(r"harness faithfulness: raw 92/200 = 0\.460, corrected 0\.450 \(95% (\S+)–(\S+); "
                         r"TPR 36/40, TNR 54/60\)", line)
    assert match, line
    low, high = float(match[1]), float(match[2])
    assert 0.30 < low < 0.45 < high < 0.60
    assert _harness_line("faithfulness", rows, "seed") == line  # seeded: the same interval every time


def test_the_harness_line_says_why_there_is_no_corrected_rate():
    assert _harness_line("coverage", [(1, None), (0, None)], "s") == (
        "harness coverage: raw 1/2 = 0.500, no corrected rate (TPR 0/0, TNR 0/0: the record has no human 'yes' or "
        "no human 'no' sample: TPR or TNR is unknown)")
    # TPR + TNR = 1: no better than chance
    chance = [(1, 1), (0, 1), (1, 0), (0, 0)]
    assert _harness_line("coverage", chance, "s").endswith(
        "no corrected rate (TPR 1/2, TNR 1/2: TPR + TNR <= 1: the scorer is no better than chance, nothing to "
        "correct with)")


def test_numbered_document_attributes_become_the_list_the_file_reader_takes():
    span = {"context": {"trace_id": "t", "span_id": "s"}, "name": "retrieve", "span_kind": "RETRIEVER",
            "parent_id": "r", "start_time": "2026-01-01T10:00:00+00:00", "end_time": "2026-01-01T10:00:01+00:00",
            "status_code": "OK", "events": [], "id": "U3Bhbjox",
            "attributes": {"input.value": "q", "retrieval.documents.1.document.content": "b",
                           "retrieval.documents.0.document.content": "a", "retrieval.documents.0.document.id": "d0",
                           "retrieval.documents.3.document.content": "d", "retrieval.documentsX": "kept"}}
    assert span_json(span) == {
        "context": {"trace_id": "t", "span_id": "s"}, "name": "retrieve", "span_kind": "RETRIEVER", "parent_id": "r",
        "start_time": "2026-01-01T10:00:00+00:00", "end_time": "2026-01-01T10:00:01+00:00",
        "attributes": {"input.value": "q", "retrieval.documentsX": "kept", "retrieval.documents": [
            {"document.content": "a", "document.id": "d0"}, {"document.content": "b"}, {},  # a gap stays a gap
            {"document.content": "d"}]}}


@pytest.mark.parametrize(("argv", "message"), [
    (("import", "traces", "--dataset", "x", "--db", "{db}"), "error: give FILE, or --phoenix URL --project P\n"),
    (("import", "traces", "--dataset", "x", "--db", "{db}", "--phoenix", "http://127.0.0.1:9"),
     "error: --phoenix needs --project P (the Phoenix project to pull)\n"),
    (("import", "traces", "--dataset", "x", "--db", "{db}", "--phoenix", "http://127.0.0.1:9", "--project", "p",
      "--start", "2026-01-01T11:00Z", "--end", "2026-01-01T11:00Z"),
     "error: --start 2026-01-01T11:00:00+00:00 is not before --end 2026-01-01T11:00:00+00:00\n"),
    (("export", "traces", "--dataset", "x", "--db", "{db}"), "error: say where to: --out DIR, --phoenix URL or "
     "--langfuse FILE\n"),
    (("export", "traces", "--dataset", "x", "--db", "{db}", "--out", "o", "--run", "r"),
     "error: --run goes with --phoenix\n"),
])
def test_usage_errors_exit_2_before_anything_is_read(argv, message, tmp_path, capsys):
    db = tmp_path / "l.db"
    assert run(capsys, *(a.replace("{db}", str(db)) for a in argv)) == (2, "", message)
    assert not db.exists()
