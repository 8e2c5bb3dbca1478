"""RAGAS, DeepEval and table imports: formats (files written by the real libraries), ids, all or nothing."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import store_fixtures as sf

from playground.datasets import open_dataset
from playground.errors import DataError
from playground.importers.load import import_dataset, payload_units, prepare
from playground.importers.table import parse_map
from playground.store import open_store

# pytest fixtures, used by name as test arguments (assigned, not imported, so a test argument is no redefinition)
pg_server = sf.pg_server
store = sf.store
store_url = sf.store_url

FIX = Path(__file__).resolve().parent / "fixtures"
Q1 = "How many times are failed webhooks retried?"
Q2 = "What does the Pro plan cost?"
Q3 = "Is there a free trial?"


def content_id(history: list, query: str) -> str:
    """The documented rule: 'h' + 10 hex digits of SHA-256 over [[role, content]..., query] as JSON."""
    return "h" + hashlib.sha256(json.dumps([*history, query], ensure_ascii=False).encode()).hexdigest()[:10]


def cli(*argv) -> int:
    from playground.cli import main

    return main([str(a) for a in argv])


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(tmp_path: Path, rows: list, name: str = "data.jsonl") -> Path:
    return write(tmp_path, name, "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


# --------------------------------------------------------------------------- good files


@pytest.mark.parametrize("fixture", ["ragas_single.jsonl", "ragas_single.csv", "ragas_single.parquet"])
def test_ragas_single_turn_in_every_format(fixture):
    payload = prepare(FIX / fixture, "ragas", "demo")
    samples = payload["samples"]
    assert [s["query"] for s in samples] == [Q1, Q2, Q3]
    assert [s["case_id"] for s in samples] == [f"demo:{content_id([], q)}" for q in (Q1, Q2, Q3)]
    assert samples[0]["contexts"] == ["Failed webhook deliveries are retried 5 times with exponential backoff.",
                                      "Webhooks are signed with an HMAC-SHA256 header."]
    assert samples[0]["context_ids"] == ["kb-12", "kb-40"]
    # a context with commas, quotes and a pipe survives the CSV list repr
    assert samples[1]["contexts"][2] == 'All plans include email support, with commas, "quotes" and a | pipe.'
    # the reference split into facts; no reference, no facts
    assert samples[1]["facts"] == ["The Pro plan costs $49 per month.", "It is billed annually."]
    assert samples[2]["facts"] == [] and samples[2]["reference"] == ""
    # 2 passages + 2 claims + 1 fact; 3 + 1 + 2; 1 + 2 + 0
    assert payload["summary"] == {"cases": 3, "units": 14}
    units = payload_units(payload)
    kinds = [(u.unit_kind, u.case_id) for u in units]
    c1 = f"demo:{content_id([], Q1)}"
    assert kinds.count(("passage", c1)) == 2 and kinds.count(("claim", c1)) == 2 and kinds.count(("fact", c1)) == 1
    first = next(u for u in units if u.case_id == c1 and u.unit_kind == "passage")
    digest = hashlib.sha256(samples[0]["contexts"][0].encode()).hexdigest()[:8]
    assert first.unit_id == f"{c1}::demo/kb-12#1@{digest}"
    claim_ids = [u.unit_id for u in units if u.case_id == c1 and u.unit_kind == "claim"]
    assert claim_ids[0].startswith(f"{c1}/R:c0:") and claim_ids[1].startswith(f"{c1}/R:c1:")
    assert [u.unit_id for u in units if u.case_id == c1 and u.unit_kind == "fact"] == [f"{c1}/R::F1"]


def test_the_three_ragas_formats_give_the_same_units():
    units = [payload_units(prepare(FIX / f, "ragas", "demo")) for f in
             ("ragas_single.jsonl", "ragas_single.csv", "ragas_single.parquet")]
    assert units[0] == units[1] == units[2]


def test_ragas_multi_turn_is_history_plus_the_last_human_turn():
    payload = prepare(FIX / "ragas_multi.jsonl", "ragas", "chat")
    first, second = payload["samples"]
    assert first["history"] == [["user", "I use the Pro plan."], ["assistant", "Noted: you are on Pro."]]
    assert first["query"] == "How long is my log retention?"
    assert first["response"] == "Pro keeps logs for 30 days. Older logs are deleted."
    assert first["case_id"] == "chat:" + content_id(first["history"], first["query"])
    assert second["history"] == [] and second["query"] == "Can I rotate my API secret?"
    assert first["extra"]["messages"][0] == {"content": "I use the Pro plan.", "type": "human"}
    ds = open_dataset_from(payload)
    assert ds.dataset.cases[first["case_id"]].case_type == "multi_turn"
    assert ds.dataset.cases[second["case_id"]].case_type == "normal"


def test_ragas_multi_turn_csv_equals_its_jsonl():
    assert (payload_units(prepare(FIX / "ragas_multi.csv", "ragas", "chat"))
            == payload_units(prepare(FIX / "ragas_multi.jsonl", "ragas", "chat")))


def open_dataset_from(payload):
    from playground.importers.core import build_dataset

    return type("D", (), {"dataset": build_dataset(payload, Path("."))[0]})


@pytest.mark.parametrize("fixture", ["deepeval_goldens.json", "deepeval_goldens.jsonl", "deepeval_goldens.csv"])
def test_deepeval_save_as_in_every_format(fixture):
    samples = prepare(FIX / fixture, "deepeval", "de")["samples"]
    assert [s["case_id"] for s in samples] == ["de:trace-1", "de:trace-2", "de:trace-3"]
    assert [s["query"] for s in samples] == [Q1, Q2, Q3]
    assert samples[0]["reference"] == "Webhooks are retried 5 times with exponential backoff."
    assert samples[0]["contexts"] == ["Failed webhook deliveries are retried 5 times with exponential backoff.",
                                      "Webhooks are signed with an HMAC-SHA256 header."]
    assert samples[0]["extra"] == {"additional_metadata": {"id": "trace-1"}}
    pro = samples[1]["contexts"]
    if fixture.endswith(".json"):
        assert len(pro) == 3  # JSON keeps the lists
    else:
        # save_as joins with "|" in JSONL and CSV: the context holding a pipe comes back as two (documented)
        assert pro[2:] == ['All plans include email support, with commas, "quotes" and a ', " pipe."]


def test_table_with_a_column_map(tmp_path):
    path = jsonl(tmp_path, [
        {"q": "Where is the log?", "docs": ["Logs live in /var/log."], "output": "In /var/log.", "gold": "In /var/log.",
         "trace_id": "t-1", "turns": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]},
        {"q": "Which port?", "docs": [], "output": "Port 8866.", "trace_id": 7},
    ])
    mapping = parse_map("question=q,contexts=docs,answer=output,reference=gold,id=trace_id,history=turns")
    samples = prepare(path, "table", "logs", mapping=mapping)["samples"]
    assert [s["case_id"] for s in samples] == ["logs:t-1", "logs:7"]
    assert samples[0]["history"] == [["user", "Hi"], ["assistant", "Hello"]]
    assert samples[0]["facts"] == ["In /var/log."] and samples[1]["contexts"] == []


def test_parse_map_rejects_unknown_fields():
    with pytest.raises(ValueError, match=r"unknown field 'questoin'.*'x' is not FIELD=COLUMN"):
        parse_map("questoin=q,x")


# --------------------------------------------------------------------------- bad files: every problem, nothing written


def problems_of(path: Path, kind: str = "ragas", mapping=None) -> list[str]:
    with pytest.raises(DataError) as err:
        prepare(path, kind, "bad", mapping=mapping)
    return [str(p) for p in err.value.problems]


def test_every_problem_is_listed_with_line_and_field(tmp_path):
    good = {"user_input": "Q?", "response": "A.", "retrieved_contexts": ["c"]}
    path = jsonl(tmp_path, [
        good,
        '{"user_input": "broken',
        {**good, "retrieved_contexts": "not a list"},
        {**good, "response": ""},
        {**good, "id": "s1"},
        {**good, "id": "s1", "user_input": "Other?"},
        {**good, "retrieved_contexts": ["fine", 3.5]},
        [1, 2],
    ])
    assert problems_of(path) == [
        "data.jsonl:2: invalid JSON: Unterminated string starting at (column 16)",
        "data.jsonl:3 [retrieved_contexts]: must be a list of strings, got text",
        "data.jsonl:4 [response]: empty",
        "data.jsonl:6 [id]: duplicate sample id 's1' (first at line 5)",
        "data.jsonl:7 [retrieved_contexts]: item 2 must be a string, got float",
        "data.jsonl:8: expected a JSON object, got list",
    ]


def test_csv_and_parquet_places(tmp_path):
    import pandas as pd

    csv_path = write(tmp_path, "data.csv", 'user_input,response,retrieved_contexts\nQ?,A.,"[\'c\']"\n'
                     'Q2?,,"[\'c\']"\n"multi\nline?",A.,[oops\n')
    assert problems_of(csv_path) == [
        "data.csv:3 [response]: missing or empty",
        "data.csv:4 [retrieved_contexts]: not a list: the cell starts with '[' but is no list literal",
    ]
    pq_path = tmp_path / "data.parquet"
    pd.DataFrame([{"user_input": "Q?", "response": "A."}, {"user_input": "Q2?", "response": None}]).to_parquet(pq_path)
    assert problems_of(pq_path) == ["data.parquet [row 2, response]: missing or empty"]


def test_a_file_of_another_format_is_named(tmp_path):
    assert problems_of(FIX / "deepeval_goldens.json", "ragas") == [
        "deepeval_goldens.json: this looks like a DeepEval dataset (input, actual_output…): "
        "use `playground import deepeval`"]
    assert problems_of(FIX / "ragas_single.jsonl", "deepeval") == [
        "ragas_single.jsonl: this looks like a RAGAS dataset (user_input…): use `playground import ragas`"]
    ragtruth = jsonl(tmp_path, [{"claim": "x", "label": False, "context": ["e"]}])
    assert problems_of(ragtruth) == [
        "data.jsonl: this looks like a RAGTruth claim file: use `playground import ragtruth`"]
    with pytest.raises(ValueError, match=r"unsupported file type '\.txt'"):
        prepare(write(tmp_path, "x.txt", "hi"), "ragas", "bad")


def test_a_missing_mapped_column_is_one_problem(tmp_path):
    path = jsonl(tmp_path, [{"q": "Q?", "out": "A."}])
    assert problems_of(path, "table", {"question": "q", "answer": "output"}) == [
        "data.jsonl: no column for answer (column 'output'); the file has columns out, q — "
        "map them with --map FIELD=COLUMN"]


def test_multi_turn_without_an_answer(tmp_path):
    path = jsonl(tmp_path, [{"user_input": [{"content": "Hi", "type": "human"}]}])
    assert problems_of(path) == [
        "data.jsonl:1 [user_input]: no AI message after the last human message: nothing to label"]


def test_dataset_names_are_checked():
    with pytest.raises(ValueError, match="not usable"):
        prepare(FIX / "ragas_single.jsonl", "ragas", "golden")
    with pytest.raises(ValueError, match="not usable"):
        prepare(FIX / "ragas_single.jsonl", "ragas", "Has Space")


# --------------------------------------------------------------------------- the store: one transaction


def test_import_stores_the_dataset_and_open_dataset_reads_it(store):
    result = import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store)
    assert (result.cases, result.units, result.replaced, result.unchanged) == (3, 14, False, False)
    info = store.datasets()
    assert [(d.name, d.kind, d.cases, d.units) for d in info] == [("demo", "ragas", 3, 14)]
    opened = open_dataset("demo", store)
    assert opened.kind == "ragas"
    assert opened.units() == payload_units(prepare(FIX / "ragas_single.jsonl", "ragas", "demo"))
    again = import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store)
    assert again.unchanged and store.datasets()[0].sha256 == info[0].sha256


def test_a_failing_label_write_leaves_no_dataset(store, monkeypatch, tmp_path):
    from playground.store import label_writes

    units = payload_units(prepare(FIX / "ragas_single.jsonl", "ragas", "demo"))
    table = write(tmp_path, "labels.csv", f"annotator,unit_id,dimension,value\nann,{units[0].unit_id},relevant,1\n")
    before = store.dump()
    monkeypatch.setattr(label_writes, "UPSERT_LABEL", "INSERT INTO no_such_table VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    with pytest.raises(Exception, match="no_such_table"):
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store, labels=table)
    assert store.datasets() == [] and store.dump() == before


def test_two_datasets_never_collide_and_a_name_is_not_overwritten(tmp_path):
    with open_store(tmp_path / "l.db") as st:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "a", st)
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "b", st)
        ua, ub = open_dataset("a", st).catalog(), open_dataset("b", st).catalog()
        assert len(ua) == len(ub) == 14 and not set(ua) & set(ub)
        with pytest.raises(Exception, match=r"already in the label store .* with other content"):
            import_dataset(FIX / "ragas_multi.jsonl", "ragas", "a", st)
        assert open_dataset("a", st).catalog() == ua


def test_reimporting_a_changed_file_keeps_labels_and_marks_them_stale(tmp_path):
    rows = [json.loads(line) for line in (FIX / "ragas_single.jsonl").read_text().splitlines()]
    with open_store(tmp_path / "l.db") as st:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", st)
        catalog = open_dataset("demo", st).catalog()
        for unit in catalog.values():
            st.set_label("ann", unit, unit.dimensions[0], 1)
        rows[0]["response"] = "Failed webhooks are retried 9 times. The delay doubles after each attempt."
        changed = jsonl(tmp_path, rows)
        result = import_dataset(changed, "ragas", "demo", st, replace=True)
        assert result.replaced
        new = open_dataset("demo", st).catalog()
        stale = st.stale(new)
        assert len(st.labels(annotator="ann")) == 14  # every label kept
        # the changed first claim (new id: orphaned) and the fact judged against the changed response (changed)
        assert sorted((s.unit_kind, s.reason) for s in stale) == [("claim", "orphaned"), ("fact", "changed")]
        assert result.stale == 2
        assert "(`playground labels stats --dataset demo` lists them)" in result.summary()
        assert len(st.current_labels(new, annotator="ann")) == 12


def test_cli_import_and_errors(tmp_path, capsys):
    db = tmp_path / "l.db"
    assert cli("import", "ragas", FIX / "ragas_single.csv", "--dataset", "demo", "--db", db) == 0
    assert "dataset 'demo' (ragas) imported: 3 samples, 14 units" in capsys.readouterr().out
    bad = jsonl(tmp_path, [{"user_input": "Q?", "response": ""}])
    assert cli("import", "ragas", bad, "--dataset", "x", "--db", tmp_path / "new.db") == 1
    err = capsys.readouterr().err
    assert "data.jsonl:1 [response]: empty" in err and "nothing was imported" in err
    assert not (tmp_path / "new.db").exists()
    assert cli("import", "table", FIX / "ragas_single.jsonl", "--dataset", "t", "--map", "question=user_input,"
               "answer=response,contexts=retrieved_contexts", "--db", db, "--dry-run") == 0
    assert "valid table file — 3 samples, 14 units; nothing written" in capsys.readouterr().out


def test_a_label_table_comes_in_with_the_dataset_or_not_at_all(tmp_path):
    with open_store(tmp_path / "l.db") as st:
        result = import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", st,
                                labels=FIX / "ragas_single.labels.csv")
        assert result.labels == 17 and len(st.labels(annotator="alice")) == 17
        catalog = open_dataset("demo", st).catalog()
    first = sorted(u for u, unit in catalog.items() if unit.unit_kind == "passage")[0]
    bad = write(tmp_path, "bad.csv", "annotator,unit_id,dimension,value\n"
                f"bob,{first},relevant,2\nbob,nope,relevant,1\nbob,{first},covered,1\n,{first},relevant,1\n")
    with open_store(tmp_path / "m.db") as st:
        with pytest.raises(DataError) as err:
            import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", st, labels=bad)
        assert st.datasets() == [] and st.labels() == []
    assert [str(p) for p in err.value.problems] == [
        "bad.csv:2 [value]: value must be 1 or 0, got '2'",
        "bad.csv:3 [unit_id]: unknown unit 'nope' (not in this dataset)",
        "bad.csv:4 [dimension]: a passage takes relevant, not 'covered'",
        "bad.csv:5 [annotator]: missing or empty",
    ]


def test_consensus_rows_of_a_label_table_are_refused_without_a_history(tmp_path):
    """`export` writes consensus rows by default; alone (no history in the dataset file) they are no person's labels."""
    with open_store(tmp_path / "l.db") as st:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", st)
        first = sorted(u for u, unit in open_dataset("demo", st).catalog().items() if unit.unit_kind == "passage")[0]
    table = write(tmp_path, "t.csv", f"annotator,unit_id,dimension,value\nconsensus,{first},relevant,1\n")
    with open_store(tmp_path / "m.db") as st:
        with pytest.raises(DataError) as err:
            import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", st, labels=table)
        assert st.datasets() == []
    assert [str(p) for p in err.value.problems] == [
        "t.csv:2 [annotator]: 'consensus' labels are derived, not a person's (import the export file itself: it "
        "carries the label history, adjudications included)"]
