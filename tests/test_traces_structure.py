"""The trees of ``import traces`` at scale (issue 43, must-hold 1): linear, one message per cycle, bounds.

A 1,000-span cycle is one problem naming its first 5 members and its size (it used to be the whole
cycle once per member: 20 MB of errors); a parent chain of 20,000 spans imports in the fast suite
(the walk of every span to its root took 914 s at 100,001; the big sizes are in
bench/bench_traces.py); a 50,000,000-character document and 1,000,002 spans are refused at the
real limits, the second before its samples are made.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from playground import limits
from playground.cli import main
from playground.errors import DataError, Problem
from playground.importers.traces import NAMED, prepare_traces, read_traces
from playground.store import open_store

TRACE = "7" * 32


def sid(i: int) -> str:
    return f"{i:016x}"


def flat(trace: str, span: str, parent: str | None, kind: str = "CHAIN", **attrs: object) -> str:
    """One span as a Phoenix dataframe row in JSON Lines (flat column names)."""
    return json.dumps({"context.trace_id": trace, "context.span_id": span, "parent_id": parent, "span_kind": kind,
                       **{f"attributes.{k.replace('_', '.')}": v for k, v in attrs.items()}})


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def problems_of(path: Path) -> list[tuple[int | None, str, str]]:
    with pytest.raises(DataError) as err:
        prepare_traces(path, "x")
    return [(p.line, p.where, p.message) for p in err.value.problems]


def test_a_cycle_of_1000_spans_is_one_problem_naming_five_members_and_the_count(tmp_path):
    order = list(range(1000))
    random.Random(43).shuffle(order)  # the file's order does not choose the span the problem names
    lines = [flat(TRACE, sid(i), sid((i + 1) % 1000)) for i in order]  # i's parent is i + 1: 0 -> 1 -> ... -> 0
    first = order.index(0) + 1
    assert NAMED == 5
    assert problems_of(write(tmp_path / "spans.jsonl", lines)) == [
        (first, f"trace {TRACE} span {sid(0)}", "parent ids form a cycle of 1,000 spans: "
         f"{sid(0)} -> {sid(1)} -> {sid(2)} -> {sid(3)} -> {sid(4)} -> … (995 more)")]


def test_cycles_at_the_naming_edge_a_self_parent_and_spans_hanging_from_a_cycle(tmp_path):
    traces = ["1" * 32, "2" * 32, "3" * 32]
    lines = [flat(traces[0], sid(i), sid((i + 1) % 5)) for i in range(5)]  # 5 members: all named, closed
    lines += [flat(traces[1], sid(10 + i), sid(10 + (i + 1) % 6)) for i in range(6)]  # 6: five and "1 more"
    lines += [flat(traces[1], sid(30), sid(30))]  # a second cycle in the same trace: its own problem
    lines += [flat(traces[2], sid(20), None), flat(traces[2], sid(21), sid(20)),  # a tree beside a cycle,
              flat(traces[2], sid(23), sid(22)), flat(traces[2], sid(22), sid(23)),  # and a span hanging
              flat(traces[2], sid(24), sid(23))]  # from the cycle, which is not listed
    assert problems_of(write(tmp_path / "spans.jsonl", lines)) == [
        (1, f"trace {traces[0]} span {sid(0)}", "parent ids form a cycle of 5 spans: "
         f"{sid(0)} -> {sid(1)} -> {sid(2)} -> {sid(3)} -> {sid(4)} -> {sid(0)}"),
        (6, f"trace {traces[1]} span {sid(10)}", "parent ids form a cycle of 6 spans: "
         f"{sid(10)} -> {sid(11)} -> {sid(12)} -> {sid(13)} -> {sid(14)} -> … (1 more)"),
        (12, f"trace {traces[1]} span {sid(30)}", f"parent ids form a cycle of 1 span: {sid(30)} -> {sid(30)}"),
        (16, f"trace {traces[2]} span {sid(22)}", f"parent ids form a cycle of 2 spans: {sid(22)} -> {sid(23)} -> "
         f"{sid(22)}"),
    ]


def test_many_roots_are_named_as_cycles_are(tmp_path):
    lines = [flat(TRACE, sid(i), None, input_value="Q?", output_value="A.") for i in range(7)]
    assert problems_of(write(tmp_path / "spans.jsonl", lines)) == [
        (2, f"trace {TRACE} span {sid(1)}", f"two final outputs: 7 root spans ({sid(0)}, {sid(1)}, {sid(2)}, "
         f"{sid(3)}, {sid(4)}, … (2 more))")]


def chain(n: int) -> list[str]:
    """One trace: a root with the question and answer, then a parent chain of ``n - 1`` spans, the last
    a retriever; written deepest first (every parent comes after its child)."""
    lines = [flat(TRACE, sid(0), None, input_value="Where is the pier?", output_value="North.")]
    lines += [flat(TRACE, sid(i), sid(i - 1)) for i in range(1, n - 1)]
    lines.append(flat(TRACE, sid(n - 1), sid(n - 2), "RETRIEVER",
                      retrieval_documents=[{"document.id": "kb-1", "document.content": "The pier is north."}]))
    return lines[::-1]


def test_a_parent_chain_of_20000_spans_imports(tmp_path):
    db = tmp_path / "l.db"
    path = write(tmp_path / "chain.jsonl", chain(20_000))
    assert main(["import", "traces", str(path), "--dataset", "chain", "--db", str(db)]) == 0
    with open_store(db) as store:
        (info,) = store.datasets()
    assert (info.name, info.cases) == ("chain", 1)
    problems: list[Problem] = []
    read = read_traces(path, problems)
    assert (problems, read.spans, read.traces) == ([], 20_000, 1)
    (sample,) = read.samples
    assert (sample.query, sample.contexts, sample.response) == ("Where is the pier?", ("The pier is north.",),
                                                                "North.")


def test_a_document_of_50_million_characters_is_refused_naming_trace_span_and_field(tmp_path, capsys):
    root, retriever = sid(1), sid(2)
    lines = [flat(TRACE, root, None, input_value="Q?", output_value="A."),
             flat(TRACE, retriever, root, "RETRIEVER",
                  retrieval_documents=[{"document.id": "d", "document.content": "x" * 50_000_000}])]
    path = write(tmp_path / "big.jsonl", lines)
    db = tmp_path / "l.db"
    with open_store(db):
        pass
    assert main(["import", "traces", str(path), "--dataset", "x", "--db", str(db)]) == 1
    assert capsys.readouterr().err == (
        f"{path}: not a usable span file; nothing was imported: 1 problem(s)\n"
        f"  big.jsonl:2 [trace {TRACE} span {retriever}, attributes.retrieval.documents[0].document.content]: "
        "a cell of 50,000,000 characters, longer than the limit of 1,000,000\n")
    with open_store(db) as store:
        assert store.datasets() == []


@pytest.mark.slow
def test_1000002_spans_are_refused_at_the_trace_that_passes_the_sample_limit_before_any_sample(tmp_path):
    assert limits.MAX_ROWS == 200_000
    path = tmp_path / "many.jsonl"
    with path.open("w", encoding="utf-8") as fh:  # 333,334 traces of 3 spans: a root and two children
        for t in range(333_334):
            trace = f"{t:032x}"
            fh.write(flat(trace, sid(3 * t), None) + "\n")
            fh.write(flat(trace, sid(3 * t + 1), sid(3 * t)) + "\n")
            fh.write(flat(trace, sid(3 * t + 2), sid(3 * t)) + "\n")
    problems: list[Problem] = []
    read = read_traces(path, problems)
    # the first span of trace 200,001 is span 600,001: the reading stops there, no trace assembled
    assert (read.spans, read.traces, read.samples) == (600_001, 200_000, [])
    assert [str(p) for p in problems] == [
        "many.jsonl:600001: 200,001 traces or more, more samples than the limit of 200,000 (one a trace; at most "
        "256 MiB of text, 200,000 rows, 1,000,000 characters per cell and 32 levels of nesting per file): split it"]


def session(n: int) -> list[str]:
    """``n`` traces of one session, each a root with a question and an answer of 5,000 characters and a
    retriever: the history of trace k holds the 10,000 characters of each of the k - 1 before it."""
    lines = []
    for t in range(n):
        trace, root = f"{t + 1:032x}", sid(2 * t)
        lines.append(flat(trace, root, None, input_value="q" * 5000, output_value="a" * 5000, session_id="s1"))
        lines.append(flat(trace, sid(2 * t + 1), root, "RETRIEVER",
                          retrieval_documents=[{"document.id": "d", "document.content": "Text."}]))
    return lines


def test_a_session_whose_histories_pass_the_text_limit_is_refused(tmp_path):
    """n traces hold 10,000 * n * (n - 1) / 2 characters of history: 232 traces 267,960,000, within
    268,435,456 (256 MiB); 233 traces 270,280,000, beyond — refused at the 233rd sample."""
    assert limits.MAX_FILE_BYTES == 268_435_456
    problems: list[Problem] = []
    read = read_traces(write(tmp_path / "ok.jsonl", session(232)), problems)
    assert problems == [] and len(read.samples) == 232
    assert sum(len(t.content) for s in read.samples for t in s.history) == 267_960_000
    problems = []
    read = read_traces(write(tmp_path / "long.jsonl", session(233)), problems)
    assert read.samples == []
    assert [str(p) for p in problems] == [
        "long.jsonl [session s1]: the histories of the samples come to more than 268,435,456 characters, larger "
        "than the limit (at most 256 MiB of text, 200,000 rows, 1,000,000 characters per cell and 32 levels of "
        "nesting per file): split the session"]


def test_a_fifo_is_refused_as_not_a_regular_file_without_waiting(tmp_path, capsys):
    import os

    fifo = tmp_path / "spans.jsonl"
    os.mkfifo(fifo)
    assert main(["import", "traces", str(fifo), "--dataset", "x", "--db", str(tmp_path / "l.db")]) == 1
    assert capsys.readouterr().err == (f"error: {fifo}: not a regular file (a pipe, device, socket or folder): "
                                       "give a file\n")
    assert not (tmp_path / "l.db").exists()
    assert main(["import", "traces", str(tmp_path / "none.jsonl"), "--dataset", "x"]) == 1
    assert capsys.readouterr().err == f"error: no such file: {tmp_path / 'none.jsonl'}\n"
