"""The calibration notebook runs headless end to end; the page's widgets and charts work in-process."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MINI = REPO / "tests" / "data" / "mini"
NOTEBOOK = REPO / "notebooks" / "calibrate.ipynb"


def test_notebook_is_thin_and_stripped():
    import json

    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(code) == 1 and "from playground.ui.calibration import launch" in "".join(code[0]["source"])
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)


@pytest.mark.slow
def test_notebook_executes_headless_on_a_fresh_clone(tmp_path, monkeypatch):
    """Default view with no label store at all: RAGTruth calibration and golden key versus harness."""
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("PLAYGROUND_DB", str(tmp_path / "no-store-yet.db"))
    for var in ("PLAYGROUND_ROOT", "PLAYGROUND_CALIBRATE_RUN", "PLAYGROUND_RAGTRUTH", "PLAYGROUND_READ_ONLY"):
        monkeypatch.delenv(var, raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    stderr = "".join(o.get("text", "") for o in outputs if o.get("name") == "stderr")
    assert "calibrate: page" in stderr and "Traceback" not in stderr
    assert not (tmp_path / "no-store-yet.db").exists()  # the page never creates a store


# --------------------------------------------------------------------------- in-process


@pytest.fixture
def seeded(tmp_path):
    from playground.store import open_store
    from playground.units import load_catalog

    catalog = load_catalog(MINI)
    claims = sorted((u for u in catalog.values() if u.unit_kind == "claim"), key=lambda u: u.unit_id)
    db = tmp_path / "labels.db"
    with open_store(db) as s:
        for i, u in enumerate(claims):
            s.set_label("alice", u, "supported", 1)
            s.set_label("bob", u, "supported", i % 2)
            s.set_label("carol", u, "supported", 1 - i % 2)
    return db, claims


@pytest.mark.slow
def test_page_with_store_and_adjudication(seeded, tmp_path):
    from playground.ui.calibration import CalibrationApp, Sources

    db, claims = seeded
    app = CalibrationApp(Sources(root=str(MINI), db=str(db), ragtruth=str(tmp_path / "none.jsonl")))
    assert "no RAGTruth claim file" in app.ragtruth_box.children[0].value
    assert app.dataset.value == "golden" and app.human.value == "key" and app.auto.value == "harness"
    assert app.dimension.value == "supported" and "Cohen&#x27;s kappa" in app.summary.value
    assert app.confusion_img.value[:4] == b"\x89PNG" and app.rel_img.value[:4] == b"\x89PNG"
    assert "pc-err" not in app.status.value
    assert [v for _, v in app.human.options] == ["key", "consensus", "annotator:alice", "annotator:bob",
                                                 "annotator:carol"]
    app.human.value = "annotator:bob"
    assert "bob versus harness:default" in app.summary.value
    app.dimension.value = "supported"
    app.human.value = "consensus"
    assert app.report.human.kind == "consensus"
    # annotators: agreement tables and a queue (alice 1, bob and carol split: majorities, no ties)
    text = app.annotators_box.children[0].value
    assert "pairwise Cohen" in text and "accuracy against the golden answer key" in text
    rows = app.queue_box.children
    assert len(rows) == len(claims)
    # settling needs a name, then writes the consensus label
    first = claims[0].unit_id
    app.settle(first, "supported", 0)
    assert "type your name" in app.status.value
    app.adjudicator.value = "dana"
    app.settle(first, "supported", 0)
    from playground.store import open_store

    with open_store(db, read_only=True) as s:
        assert [(label.unit_id, label.value) for label in s.labels(annotator="consensus")] == [(first, 0)]
    assert "consensus: 0" in "".join(r.children[0].value for r in app.queue_box.children)


@pytest.mark.slow
def test_page_ppi_share_and_external_scores(seeded, tmp_path):
    from playground.ui.calibration import CalibrationApp, Sources

    db, claims = seeded
    app = CalibrationApp(Sources(root=str(MINI), db=str(db), ragtruth=str(tmp_path / "none.jsonl")))
    app.share.value = 0.5
    assert "what-if" in app.ppi_html.value and app.ppi_img.value[:4] == b"\x89PNG"
    csv = "unit_id,score,label,dimension\n" + "".join(f"{u.unit_id},0.9,1,supported\n" for u in claims)
    app.sources.add_external("tool.csv", csv.encode(), "golden")
    app._busy = True
    app.auto.options = app.sources.auto_options("golden")
    app._busy = False
    app.auto.value = "external:tool"
    assert "external:tool" in app.summary.value
    from playground.calibrate import CalibrationInputError

    with pytest.raises(CalibrationInputError):
        app.sources.add_external("bad.csv", b"unit_id,score\nnope,1\n", "golden")


@pytest.mark.slow
def test_charts_are_png_and_deterministic(tmp_path):
    from playground import calibrate as C
    from playground.harness.config import load_config
    from playground.harness.run import run_harness
    from playground.ui import calibration as UI

    run_harness(load_config(None), tmp_path / "run", root=MINI, progress=False)
    report = C.calibrate(C.key_from_run(tmp_path / "run"), C.auto_from_run(tmp_path / "run"), n_boot=20)
    a = UI.write_charts(report, tmp_path / "a")
    b = UI.write_charts(report, tmp_path / "b")
    assert a and all(p.read_bytes()[:4] == b"\x89PNG" for p in a)
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    html = UI.table_html(report.disagreements())
    assert "<table" in html and ("open case" in html or "(none)" in html)
    assert "&lt;script&gt;" in UI.table_html(__import__("pandas").DataFrame({"x": ["<script>"]}))


def test_page_ragtruth_view():
    from playground.calibrate import default_ragtruth_path
    from playground.ui.calibration import CalibrationApp, Sources

    if not default_ragtruth_path().is_file():
        pytest.skip("shared RAGTruth sample not present")
    app = CalibrationApp(Sources(root=str(MINI), db="/nonexistent/dir/labels.db"))
    head = app.ragtruth_box.children[0].value
    assert "334 claims" in head and "kappa <b>" in head
    app.dataset.value = "ragtruth"
    assert app.human.value == "ragtruth" and app.auto.value == "support" and app.dimension.value == "supported"
    assert "ragtruth-human versus support scorer" in app.summary.value
    assert "grouped by source_id, 23 groups" in app.sweep_html.value
    app.auto.value = "plain"
    assert "plain coverage" in app.summary.value
    assert "No label store yet" in app.annotators_box.children[0].value


@pytest.mark.slow
def test_page_shows_an_imported_datasets_result_table_and_the_labels_needed(tmp_path):
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    from calibration_data import make_labelled

    from playground.ui.calibration import CalibrationApp, Sources

    db, result, _h, _s = make_labelled(tmp_path, 80)
    app = CalibrationApp(Sources(root=str(MINI), db=str(db), ragtruth=str(tmp_path / "none.jsonl"),
                                 run=None), link_base="http://localhost:8866/")
    section = app.result
    assert section.dataset.options == ("qa",)
    section.load("result.jsonl", result.read_bytes())
    assert "context_precision" in section.table.value and "tpr_low" in section.table.value
    assert "draw a random sample first" in section.needed.value
    assert "http://localhost:8866/?dataset=qa&amp;case=qa%3A" in section.disagreements.value
    section.seed.value = "7"
    assert "more labels of the random sample" in section.needed.value
    section.width.value = 0.9
    assert "reached: both intervals are at most 0.9 wide" in section.needed.value
