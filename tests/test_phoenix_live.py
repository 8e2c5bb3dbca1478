"""Traces both ways with a real Phoenix: `phoenix serve` on free ports in a temporary working directory.

A traced RAG pipeline's spans are sent with the OpenTelemetry SDK over OTLP/HTTP, with OpenInference's
attribute names (a retriever span with documents and an LLM span under one root per trace).  Then
`playground import traces --phoenix` pulls them, labels go into a real SQLite store, `export traces
--phoenix` pushes them, and the annotations are read back from Phoenix — span annotations through its
client, document annotations through its GraphQL API (its REST API has none).  No mock of Phoenix.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from playground.cli import main
from playground.datasets import open_dataset
from playground.store import open_store
from playground.verdicts import response_units

pytestmark = pytest.mark.slow

_SPEC = importlib.util.spec_from_file_location(
    "send_demo_traces", Path(__file__).resolve().parent.parent / "scripts" / "send_demo_traces.py")
assert _SPEC is not None and _SPEC.loader is not None
demo = importlib.util.module_from_spec(_SPEC)
sys.modules["send_demo_traces"] = demo  # a dataclass looks its module up there
_SPEC.loader.exec_module(demo)
DOCS, Trace, send_traces = demo.DOCS, demo.Trace, demo.send_traces


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory) -> str:
    """A running Phoenix (its own working directory, no telemetry), stopped after the session."""
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc),
           "PHOENIX_HOST": "127.0.0.1", "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = (work / "serve.log").open("wb")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "phoenix"), "serve"], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    try:
        while True:
            if proc.poll() is not None:
                tail = (work / "serve.log").read_text()[-2000:]
                raise RuntimeError(f"phoenix serve exited with {proc.returncode}: {tail}")
            try:
                if httpx.get(f"{url}/v1/projects", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("phoenix serve did not answer within 180 s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="session")
def project(phoenix) -> tuple[str, list[Trace]]:
    return "rag-demo", send_traces(phoenix, "rag-demo")


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_import_pulls_each_trace_as_a_sample_and_lists_the_one_without_a_retriever(phoenix, project, tmp_path,
                                                                                     capsys):
    name, (a, b, c) = project
    db = tmp_path / "l.db"
    code, out, err = run(capsys, "import", "traces", "--phoenix", phoenix, "--project", name, "--dataset", "rag",
                         "--db", db)
    assert (code, err) == (0, "")
    assert out.splitlines()[:4] == [
        f"from {phoenix} project {name} (3 trace(s) in the window)",
        f"dataset 'rag' (traces) imported: 2 samples, 7 units, in sqlite://{db}",
        "  read 8 spans in 3 traces",
        "  1 trace(s) with nothing to label, not imported:"]
    assert out.splitlines()[4] == f"    trace {c.trace_id} (span {c.root}): no retriever span"
    with open_store(db) as store:
        opened = open_dataset("rag", store)
        samples = opened.payload["samples"]
        assert opened.payload["source"]["file"] == f"{phoenix} project {name}"
        assert [s["sample_id"] for s in samples] == [a.trace_id, b.trace_id]  # by start time
        first = samples[0]
        assert first["query"] == "When does the last ferry leave?"
        assert first["response"] == "The last ferry leaves at 11 pm."
        assert first["contexts"] == [DOCS["kb-2"], DOCS["kb-1"], DOCS["kb-4"]]
        assert first["context_ids"] == ["kb-2", "kb-1", "kb-4"]
        assert first["extra"]["documents"] == [[a.retriever, 0, 1.0], [a.retriever, 1, 0.9], [a.retriever, 2, 0.8]]
        assert first["extra"]["response_span_id"] == a.root


def _hash_order(ids: list[str], seed: str) -> list[str]:
    """The reference of --sample: ascending SHA-256 of "seed:trace id" (first 16 hex digits), then the id."""
    return sorted(ids, key=lambda i: (int(hashlib.sha256(f"{seed}:{i}".encode()).hexdigest()[:16], 16), i))


def test_filters_window_span_kind_and_seeded_sample(phoenix, project, tmp_path, capsys):
    name, (a, b, c) = project
    db = tmp_path / "f.db"
    base = ("import", "traces", "--phoenix", phoenix, "--project", name, "--db", db, "--dry-run")
    code, out, _ = run(capsys, *base, "--dataset", "w", "--start", "2026-01-01T10:30:00Z",
                       "--end", "2026-01-01T11:30:00+00:00")
    assert code == 0
    assert out == (f"{phoenix} project {name}: 3 spans in 1 traces (of 1 in the window) — 1 samples, 3 units, "
                   "0 trace(s) skipped; nothing written (--dry-run)\n")
    # the window's end is exclusive: a trace starting exactly at 11:00 is not in [10:00, 11:00)
    code, out, _ = run(capsys, *base, "--dataset", "w", "--start", "2026-01-01T10:00:00", "--end",
                       "2026-01-01T11:00:00")
    assert out.startswith(f"{phoenix} project {name}: 3 spans in 1 traces (of 1 in the window) — 1 samples, 4 units")
    code, out, _ = run(capsys, *base, "--dataset", "k", "--span-kind", "retriever")
    assert out.startswith(f"{phoenix} project {name}: 6 spans in 2 traces (of 3 in the window) — 2 samples")
    for seed in ("0", "7", "ferry"):
        expected = sorted(_hash_order([a.trace_id, b.trace_id, c.trace_id], seed)[:2])
        assert run(capsys, "import", "traces", "--phoenix", phoenix, "--project", name, "--db", db, "--dataset",
                   f"s{seed}", "--sample", "2", "--seed", seed, "--replace")[0] == 0
        with open_store(db) as store:
            got = {s["sample_id"] for s in open_dataset(f"s{seed}", store).payload["samples"]}
        assert got == set(expected) - {c.trace_id}  # c, when drawn, is listed as skipped


def _label(db: Path, a: Trace) -> None:
    """ana labels both traces; the first trace's response fails with a note, its second passage has a comment."""
    with open_store(db) as store:
        opened = open_dataset("rag", store)
        by_case: dict[str, list] = {}
        for u in opened.units():
            by_case.setdefault(u.case_id.split(":")[1], []).append(u)
        for trace_id, units in by_case.items():
            passages = [u for u in units if u.unit_kind == "passage"]
            for u in passages:
                store.set_label("ana", u, "relevant", int(u.text == DOCS["kb-2"] or trace_id != a.trace_id))
            for u in units:
                if u.unit_kind == "claim":
                    store.set_label("ana", u, "supported", 1)
        kb1 = next(u for u in by_case[a.trace_id] if u.text == DOCS["kb-1"])
        store.set_comment("ana", kb1, "about the first ferry, not the last")
        for r in response_units(opened):
            passed = int(not r.case_id.endswith(a.trace_id))
            store.set_label("ana", r, "pass", passed)
            if not passed:
                store.set_comment("ana", r, "right hour, but says nothing about weekends")


_DOCS_QUERY = """query ($id: ID!) { node(id: $id) { ... on Span { documentEvaluations {
  name label score explanation documentPosition annotatorKind } } } }"""


def _documents_in_phoenix(url: str, project: str, span_id: str) -> list[tuple]:
    from phoenix.client import Client

    (span,) = Client(base_url=url).spans.get_spans(project_identifier=project, span_ids=[span_id])
    got = httpx.post(f"{url}/graphql", json={"query": _DOCS_QUERY, "variables": {"id": span["id"]}}).json()
    return sorted((d["documentPosition"], d["name"], d["annotatorKind"], d["label"], d["score"], d["explanation"])
                  for d in got["data"]["node"]["documentEvaluations"])


def test_labels_go_back_as_annotations_read_back_from_phoenix_and_a_second_push_changes_nothing(
        phoenix, project, tmp_path, capsys):
    from phoenix.client import Client

    name, (a, b, _c) = project
    db = tmp_path / "x.db"
    code = run(capsys, "import", "traces", "--phoenix", phoenix, "--project", name, "--dataset", "rag", "--db", db)[0]
    assert code == 0
    _label(db, a)
    code, out, err = run(capsys, "export", "traces", "--dataset", "rag", "--db", db, "--phoenix", phoenix,
                         "--annotator", "ana")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (f"pushed to {phoenix} project {name} (ana): 5 document annotation(s) and "
                                   "6 span annotation(s) written, 0 and 0 already there unchanged")
    assert _documents_in_phoenix(phoenix, name, a.retriever) == [
        (0, "relevance", "HUMAN", "relevant", 1.0, None),
        (1, "relevance", "HUMAN", "irrelevant", 0.0, "about the first ferry, not the last"),
        (2, "relevance", "HUMAN", "irrelevant", 0.0, None)]
    client = Client(base_url=phoenix)
    spans = client.spans.get_span_annotations(span_ids=[a.root, b.root], project_identifier=name)
    got = sorted((s["span_id"], s["name"], s["identifier"], s["annotator_kind"], s["result"]["label"],
                  s["result"]["score"], s["result"]["explanation"]) for s in spans)
    assert got == sorted([
        (a.root, "context_relevance", "ana", "HUMAN", "1/3", 0.333333, "1 of 3 passages labelled relevant by ana"),
        (a.root, "faithfulness", "ana", "HUMAN", "1/1", 1.0, "1 of 1 claims labelled supported by ana"),
        (a.root, "verdict", "ana", "HUMAN", "fail", 0.0, "right hour, but says nothing about weekends"),
        (b.root, "context_relevance", "ana", "HUMAN", "2/2", 1.0, "2 of 2 passages labelled relevant by ana"),
        (b.root, "faithfulness", "ana", "HUMAN", "1/1", 1.0, "1 of 1 claims labelled supported by ana"),
        (b.root, "verdict", "ana", "HUMAN", "pass", 1.0, None)])
    stamps = sorted((s["id"], s["updated_at"]) for s in spans)
    code, out, _ = run(capsys, "export", "traces", "--dataset", "rag", "--db", db, "--phoenix", phoenix,
                       "--annotator", "ana")
    assert code == 0
    assert out.splitlines()[0].endswith("0 document annotation(s) and 0 span annotation(s) written, 5 and 6 already "
                                        "there unchanged")
    again = client.spans.get_span_annotations(span_ids=[a.root, b.root], project_identifier=name)
    assert sorted((s["id"], s["updated_at"]) for s in again) == stamps
    # a changed label is the one annotation written again, in place (same id)
    with open_store(db) as store:
        verdict = next(r for r in response_units(open_dataset("rag", store)) if r.case_id.endswith(b.trace_id))
        store.set_label("ana", verdict, "pass", 0)
    code, out, _ = run(capsys, "export", "traces", "--dataset", "rag", "--db", db, "--phoenix", phoenix,
                       "--annotator", "ana")
    assert out.splitlines()[:2] == [f"pushed to {phoenix} project {name} (ana): 0 document annotation(s) and 1 span "
                                    "annotation(s) written, 5 and 5 already there unchanged", "  span verdict: 1"]
    after = {s["id"]: s for s in client.spans.get_span_annotations(span_ids=[b.root], project_identifier=name)
             if s["name"] == "verdict"}
    assert [(s["result"]["label"], s["result"]["score"]) for s in after.values()] == [("fail", 0.0)]
    assert set(after) <= {i for i, _ in stamps}


def _no_dataset(db: Path) -> bool:
    if not db.exists():
        return True
    with open_store(db) as store:
        return store.dataset("rag") is None


def test_errors_are_one_line_each_and_nothing_is_imported(phoenix, project, tmp_path, capsys):
    name, _ = project
    db = tmp_path / "e.db"
    base = ("import", "traces", "--dataset", "rag", "--db", db, "--project")
    closed = f"http://127.0.0.1:{_free_port()}"
    assert run(capsys, *base, name, "--phoenix", closed) == (
        2, "", f"error: cannot reach Phoenix at {closed}: connection refused\n")
    code, out, err = run(capsys, *base, name, "--phoenix", f"{phoenix}/not-phoenix")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {phoenix}/not-phoenix does not answer as Phoenix") and err.count("\n") == 1
    assert run(capsys, *base, "nope", "--phoenix", phoenix) == (
        1, "", f"error: no project 'nope' in Phoenix at {phoenix} (it has: default, {name})\n")
    assert run(capsys, *base, name, "--phoenix", "localhost:6006") == (
        2, "", "error: not an http(s) URL: 'localhost:6006' (e.g. http://localhost:6006)\n")
    code, _, err = run(capsys, *base, name, "--phoenix", phoenix, "--start", "2030-01-01T00:00:00Z")
    assert (code, err) == (1, f"error: {phoenix} project {name}: no trace in the window (0 spans, 0 traces); "
                              "nothing was imported\n")
    assert _no_dataset(db)


def test_a_span_without_a_trace_id_is_named_and_stops_the_import(phoenix, project):
    from phoenix.client import Client

    from playground.importers.phoenix_live import PhoenixError, PhoenixSource, trace_groups

    name, (a, _b, _c) = project
    spans = Client(base_url=phoenix).spans.get_spans(project_identifier=name, limit=100)
    broken = [dict(s) for s in spans]
    victim = next(s for s in broken if s["context"]["span_id"] == a.llm)
    victim["context"] = {"span_id": a.llm, "trace_id": ""}
    source = PhoenixSource(phoenix, name)
    assert sorted(trace_groups(spans, source)) == sorted({s["context"]["trace_id"] for s in spans})
    with pytest.raises(PhoenixError) as caught:
        trace_groups(broken, source)
    assert str(caught.value) == f"{phoenix} project {name}: span {a.llm} has no trace id; nothing was imported"
    assert caught.value.exit_code == 1


def test_the_harness_scores_go_as_code_annotations_of_a_run_of_this_import(phoenix, project, tmp_path, capsys):
    import csv

    name, (a, _b, _c) = project
    db = tmp_path / "h.db"
    base = ("export", "traces", "--dataset", "rag", "--db", db, "--phoenix", phoenix, "--project", name)
    assert run(capsys, "import", "traces", "--phoenix", phoenix, "--project", name, "--dataset", "rag", "--db", db,
               "--span-kind", "RETRIEVER")[0] == 0
    assert run(capsys, "harness", "run", "--dataset", "rag", "--db", db, "--out", tmp_path / "run", "--quiet")[0] == 0
    code, out, err = run(capsys, *base, "--run", tmp_path / "run")
    assert (code, err) == (0, "")
    assert "  document harness_relevance: 5" in out.splitlines() and "  span harness_verdict: 2" in out.splitlines()
    with (tmp_path / "run" / "units.csv").open() as f:
        units = [r for r in csv.DictReader(f) if r["unit_kind"] == "passage" and r["case_id"].endswith(a.trace_id)]
    with (tmp_path / "run" / "cases.csv").open() as f:
        case = next(r for r in csv.DictReader(f) if r["case_id"].endswith(a.trace_id))
    harness = [d for d in _documents_in_phoenix(phoenix, name, a.retriever) if d[1] == "harness_relevance"]
    assert harness == [(i, "harness_relevance", "CODE", "relevant" if u["value"] == "1" else "irrelevant",
                        float(u["score"]), "harness:default") for i, u in enumerate(units)]
    from phoenix.client import Client

    got = {s["name"]: s for s in Client(base_url=phoenix).spans.get_span_annotations(
        span_ids=[a.root], project_identifier=name) if s["name"].startswith("harness_")}
    assert got["harness_verdict"]["result"]["label"] == case["verdict"]
    assert got["harness_verdict"]["result"]["explanation"] == case["reason"]
    assert got["harness_context_relevance"]["result"]["score"] == float(case["context_relevance"])
    assert {s["identifier"] for s in got.values()} == {"harness:default"}
    assert run(capsys, *base, "--run", tmp_path / "run")[1].splitlines()[0].endswith(
        "0 document annotation(s) and 0 span annotation(s) written, 5 and 8 already there unchanged")
    # a run of another import is refused, naming both revisions
    assert run(capsys, "import", "traces", "--phoenix", phoenix, "--project", name, "--dataset", "rag", "--db", db,
               "--replace")[0] == 0
    code, _, err = run(capsys, *base, "--run", tmp_path / "run")
    assert code == 1 and err.startswith(f"error: {tmp_path / 'run'} scored revision ") and err.count("\n") == 1


def test_project_figures_go_into_the_description_keeping_what_people_wrote(phoenix, project, tmp_path, capsys):
    from phoenix.client import Client
    from statsmodels.stats.proportion import proportion_confint

    def wilson(k: int, n: int) -> str:
        low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
        return f"{k}/{n} = {k / n:.3f} (95% Wilson {low:.3f}–{high:.3f})"

    name, (a, _b, _c) = project
    client = Client(base_url=phoenix)
    client.projects.update(project_name=name, description="Ferry support bot, production traces.")
    db = tmp_path / "d.db"
    assert run(capsys, "import", "traces", "--phoenix", phoenix, "--project", name, "--dataset", "rag", "--db",
               db)[0] == 0
    _label(db, a)
    base = ("export", "traces", "--dataset", "rag", "--db", db, "--phoenix", phoenix, "--annotator", "ana")
    out = run(capsys, *base)[1]
    assert out.splitlines()[-1] == "  project figures (the project's description): written (4 lines)"
    assert client.projects.get(project_name=name)["description"] == "\n".join([
        "Ferry support bot, production traces.", "",
        "--- rag-label-playground figures ---", "dataset rag, labels of ana",
        f"human pass rate: {wilson(1, 2)}",              # a fails, b passes
        f"human context_relevance: {wilson(3, 5)}",      # a: kb-2 of 3; b: both
        f"human faithfulness: {wilson(2, 2)}",
        "--- end of rag-label-playground figures ---"])
    assert run(capsys, *base)[1].splitlines()[-1] == "  project figures (the project's description): unchanged"
    # the consensus of the same labels: the documents are rewritten (who decided changes in their metadata; Phoenix
    # keeps one relevance per document), the span annotations are new ones beside ana's (identifier consensus)
    first = run(capsys, "export", "traces", "--dataset", "rag", "--db", db, "--phoenix", phoenix)[1].splitlines()[0]
    assert first == (f"pushed to {phoenix} project {name} (consensus): 5 document annotation(s) and 6 span "
                     "annotation(s) written, 0 and 0 already there unchanged")
