"""The playground's widgets (without a browser), the notebook, the chart and the ``serve`` command."""
from __future__ import annotations

import base64
import re
import socket
import sys
from pathlib import Path

import ipywidgets as W
import pytest

from playground.cli import main
from playground.cli.serve import notebook_path
from playground.golden import load_dataset
from playground.metrics import DIMENSION_ORDER
from playground.store import open_store
from playground.ui import launch, query_params
from playground.ui.session import LabelSession, compute_harness
from playground.ui.views import PlaygroundApp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_fixtures import IMG, XSS_CLAIMS, XSS_QUERY, make_data_root

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = make_data_root(tmp_path_factory.mktemp("hostile") / "data")
    dataset = load_dataset(root)
    hits, results = compute_harness(dataset)
    return root, dataset, hits, results


def app_for(hostile, db, annotator="alice", read_only=False, **kw) -> PlaygroundApp:
    _, dataset, hits, results = hostile
    session = LabelSession(dataset, open_store(db, read_only=read_only), harness_results=results, hits=hits)
    return PlaygroundApp(session, annotator=annotator, chart=kw.pop("chart", False), **kw)


@pytest.fixture
def db(tmp_path):
    return tmp_path / "labels.db"


def walk(widget):
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from walk(child)


def classes(widget) -> set[str]:
    return set(widget._dom_classes)


def find(app: PlaygroundApp, cls: str):
    found = [w for w in walk(app.widget) if cls in classes(w)]
    assert found, f"no widget with class {cls}"
    return found[0]


def click(app, row_kind, index, dim, choice):
    app._rows[row_kind][index].toggles[dim].value = choice


# --- text is text -------------------------------------------------------------------------------------


def test_hostile_text_is_escaped_in_every_html_widget(hostile, db):
    app = app_for(hostile, db)
    app.session.go_to("GC-0003")
    app.render_all()
    click(app, "claim", 0, "supported", "yes")
    htmls = [w.value for w in walk(app.widget) if isinstance(w, W.HTML) and "<style>" not in w.value]
    joined = "\n".join(htmls)
    assert "<img" not in joined and "<script" not in joined
    assert "&lt;img src=x onerror=&quot;window.__xss=1&quot;&gt;" in joined
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in joined
    # the question and both claims are on the page, as text
    for text in (XSS_QUERY, *XSS_CLAIMS):
        assert __import__("html").escape(text) in joined
    # option labels are rendered as text by ipywidgets: the raw text may stay raw there
    assert any(IMG[:10] in label for label, _ in app.case_list.options)


def test_every_stable_class_is_present(hostile, db):
    app = app_for(hostile, db)
    for cls in ("pg-annotator", "pg-annotator-go", "pg-progress", "pg-undo", "pg-refresh", "pg-status",
                "pg-case-list", "pg-next", "pg-prev", "pg-next-unlabelled", "pg-scenario", "pg-question",
                "pg-passage-0-relevant", "pg-claim-0-supported", "pg-claim-0-correct", "pg-fact-0-covered",
                "pg-claim-0-supported-auto", "pg-rates", "pg-chart", "pg-composite", "pg-diagnosis",
                "pg-agreement", "pg-export-csv", "pg-export-jsonl", "pg-download", "pg-reveal",
                *(f"pg-weight-{d}" for d in DIMENSION_ORDER), *(f"pg-gate-{d}" for d in DIMENSION_ORDER)):
        find(app, cls)
    assert 'class="pg-rate-faithfulness"' in app.rates.value


# --- labelling through the widgets ------------------------------------------------------------------------


def test_toggle_saves_and_updates_rates_status_and_list(hostile, db):
    app = app_for(hostile, db)
    assert "no data" in _row(app.rates.value, "faithfulness")
    click(app, "claim", 0, "supported", "no")
    assert "0%" in _row(app.rates.value, "faithfulness") and "[0%–79%]" in _row(app.rates.value, "faithfulness")
    assert "Saved: claim 1 of GC-0001" in app.status.value
    with open_store(db) as store:
        assert [l.value for l in store.labels(annotator="alice")] == [0]
    assert app.case_list.options[0][0].startswith("◐ GC-0001")
    # the harness is revealed beside the toggle once labelled, and only there
    assert "harness: <b>" in app._rows["claim"][0].autos["supported"].value
    assert "hidden until you label" in app._rows["claim"][0].autos["correct"].value
    click(app, "claim", 0, "supported", "yes")
    assert "100%" in _row(app.rates.value, "faithfulness")
    click(app, "claim", 0, "supported", "clear")
    assert app._rows["claim"][0].toggles["supported"].value is None
    assert "no data" in _row(app.rates.value, "faithfulness")


def test_undo_button_reverts_and_goes_to_the_unit(hostile, db):
    app = app_for(hostile, db)
    click(app, "passage", 0, "relevant", "yes")
    app.next_b.click()
    assert app.session.case_id == "GC-0002"
    app.undo_b.click()
    assert app.session.case_id == "GC-0001"
    assert app._rows["passage"][0].toggles["relevant"].value is None
    assert "Undone: passage 1 of GC-0001" in app.status.value
    app.undo_b.click()
    assert "Nothing to undo" in app.status.value


def test_weights_show_normalised_shares_and_move_the_composite(hostile, db):
    app = app_for(hostile, db)
    click(app, "passage", 0, "relevant", "yes")
    click(app, "claim", 0, "supported", "no")
    assert "0.50" in app.composite.value
    assert app.shares["faithfulness"].value == "25%"
    app.weights["faithfulness"].value = 0.0
    assert app.shares["faithfulness"].value == "0%" and app.shares["coverage"].value == "33%"
    assert re.search(r"this case: <b[^>]*>1\.00</b>", app.composite.value)
    app.gate_on["context_relevance"].value = True
    app.gate_floor["context_relevance"].value = 1.0
    assert "GATED" not in app.composite.value  # 100% >= 1.0
    app.gate_on["faithfulness"].value = True
    assert "GATED" in app.composite.value
    for d in DIMENSION_ORDER:
        app.weights[d].value = 0.0
    assert "every weight is 0" in app.composite.value


def test_filters_navigation_and_scenarios(hostile, db):
    app = app_for(hostile, db)
    app.f_type.value = "cross_tenant"
    assert [cid for _, cid in app.case_list.options] == ["GC-0002"]
    app.f_type.value = "__all__"
    assert len(app.case_list.options) == 3
    app.case_list.value = "GC-0003"
    assert app.session.case_id == "GC-0003" and "GC-0003" in app.case_head.value
    app.prev_b.click()
    assert app.session.case_id == "GC-0002"
    app.prev_b.click()
    app.prev_b.click()
    assert "No more cases" in app.status.value
    assert app.scenario.options == (("grounded correct", "GC-0001-R1"), ("confident hallucination", "GC-0001-R2"))
    app.scenario.value = "GC-0001-R2"
    assert app.session.response_id == "GC-0001-R2"
    assert app._rows["claim"][1].box.layout.display is None  # R2 has two claims
    app.scenario.value = "GC-0001-R1"
    assert app._rows["claim"][1].box.layout.display == "none"
    app.next_u.click()
    assert (app.session.case_id, app.session.response_id) == ("GC-0001", "GC-0001-R2")


def test_reveal_checkbox_shows_the_harness_before_labelling(hostile, db):
    app = app_for(hostile, db)
    auto = app._rows["claim"][0].autos["supported"]
    assert "hidden" in auto.value
    app.reveal.value = True
    assert "harness: <b>" in auto.value
    assert "Harness decision:" in app.decision.value


def test_export_link_holds_the_labels(hostile, db):
    app = app_for(hostile, db)
    click(app, "claim", 0, "supported", "no")
    app.export_csv.click()
    m = re.search(r"base64,([A-Za-z0-9+/=]+)", app.download.value)
    text = base64.b64decode(m.group(1)).decode()
    assert text.splitlines()[0] == "annotator,unit_kind,unit_id,dimension,value"
    assert text.splitlines()[1].startswith("alice,claim,GC-0001-R1:c0:")
    assert "download='labels-alice.csv'" in app.download.value
    app.export_jsonl.click()
    assert "labels-alice.jsonl" in app.download.value


def test_no_name_no_toggles_and_bad_names_get_a_message(hostile, db):
    app = app_for(hostile, db, annotator=None)
    assert app._rows["claim"][0].toggles["supported"].disabled
    app.name.value = "consensus"
    assert "reserved" in app.status.value and "pg-status-err" in app.status.value
    app.name.value = "  Ann   Lee "
    assert app.session.annotator == "Ann Lee" and app.name.value == "Ann Lee"
    assert not app._rows["claim"][0].toggles["supported"].disabled
    assert "?annotator=Ann%20Lee" in app.bookmark.value


def test_hostile_names_are_escaped(hostile, db):
    app = app_for(hostile, db, annotator=None)
    app.name.value = '<img src=x onerror="alert(1)">'
    assert "<img" not in app.bookmark.value and "<img" not in app.status.value and "<img" not in app.progress.value
    assert "%3Cimg" in app.bookmark.value


def test_welcome_back_loads_earlier_labels(hostile, db):
    app = app_for(hostile, db)
    click(app, "claim", 0, "supported", "no")
    again = app_for(hostile, db)
    assert "Welcome back, alice: 1 label loaded" in again.status.value
    assert again._rows["claim"][0].toggles["supported"].value == "no"


def test_a_read_only_dashboard(hostile, db):
    app_for(hostile, db, annotator="alice")._rows["claim"][0].toggles["supported"].value = "no"
    app = app_for(hostile, db, annotator=None, read_only=True)
    assert app.name is None and app.session.annotator is None
    assert app._rows["claim"][0].toggles["supported"].disabled
    assert app._rows["claim"][0].toggles["supported"].value == "no"  # consensus of one
    assert "consensus" in app.progress.value
    assert "<td>alice</td><td class='pg-num'>0/" in app.roster.value
    app.viewer.value = "alice"
    assert app.session.annotator == "alice"
    app.refresh_b.click()
    assert "Reloaded" in app.status.value


def test_store_errors_become_messages(hostile, db, monkeypatch):
    from playground.store import StoreBusyError

    app = app_for(hostile, db)

    def busy(*a, **k):
        raise StoreBusyError("locked")

    monkeypatch.setattr(app.session.store, "set_label", busy)
    click(app, "claim", 0, "supported", "no")
    assert "busy" in app.status.value and "pg-status-err" in app.status.value
    assert app._rows["claim"][0].toggles["supported"].value is None  # shows what is stored


def test_the_chart_renders_png(hostile, db):
    app = app_for(hostile, db, chart=True)
    click(app, "claim", 0, "supported", "no")
    assert app.chart_img.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert app.timings["chart"] < 1.0


def _row(table: str, dim: str) -> str:
    m = re.search(rf'<tr class="pg-rate-{dim}">(.*?)</tr>', table)
    return re.sub(r"<[^>]+>", " ", m.group(1))


# --- launch: environment and URL ---------------------------------------------------------------------------


def test_launch_reads_the_environment_and_the_query_string(hostile, db, monkeypatch):
    root = hostile[0]
    monkeypatch.setenv("PLAYGROUND_ROOT", str(root))
    monkeypatch.setenv("PLAYGROUND_DB", str(db))
    monkeypatch.delenv("PLAYGROUND_READ_ONLY", raising=False)
    monkeypatch.delenv("VOILA_PREHEAT", raising=False)
    monkeypatch.setenv("QUERY_STRING", "annotator=Zo%C3%AB&reveal=1")
    assert query_params() == {"annotator": "Zoë", "reveal": "1"}
    app = launch(display=False)
    assert app.session.annotator == "Zoë" and app.session.reveal_all
    assert app.name.value == "Zoë"
    monkeypatch.setenv("QUERY_STRING", "annotator=consensus")
    app = launch(display=False)
    assert app.session.annotator is None and "reserved" in app.status.value and app.name.value == ""
    monkeypatch.setenv("QUERY_STRING", "annotator=alice&case=GC-0001&response=GC-0001-R2")
    app = launch(display=False)
    assert (app.session.case_id, app.session.response_id) == ("GC-0001", "GC-0001-R2")
    assert app.scenario.value == "GC-0001-R2"
    monkeypatch.setenv("QUERY_STRING", "annotator=alice&case=GC-9999")
    app = launch(display=False)
    assert app.session.case_id == "GC-0001" and "GC-9999" in app.status.value
    monkeypatch.setenv("QUERY_STRING", "")
    monkeypatch.setenv("JUPYTERHUB_USER", "hubuser")
    assert launch(display=False).session.annotator == "hubuser"


def test_launch_shows_data_problems_instead_of_crashing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLAYGROUND_ROOT", str(tmp_path))
    monkeypatch.setenv("PLAYGROUND_DB", str(tmp_path / "x.db"))
    assert launch(display=False) is None


# --- the notebook -----------------------------------------------------------------------------------------------


def test_the_notebook_is_a_few_lines_without_outputs():
    import nbformat

    nb = nbformat.read(notebook_path("playground"), as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert len(code) == 1 and len(code[0].source.splitlines()) <= 6
    assert "launch()" in code[0].source
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)


@pytest.mark.slow
def test_the_notebook_runs_in_a_kernel(hostile, db, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("PLAYGROUND_ROOT", str(hostile[0]))
    monkeypatch.setenv("PLAYGROUND_DB", str(db))
    monkeypatch.setenv("QUERY_STRING", "annotator=kernel-test")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    nb = nbformat.read(notebook_path("playground"), as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(REPO / "notebooks")}}
                   ).execute()
    outputs = nb.cells[0].outputs
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs), outputs
    assert not any(o.get("output_type") == "error" for o in outputs)


# --- playground serve --------------------------------------------------------------------------------------------


# (the command line and --print-command are tested in tests/test_serve.py)


def test_serve_refuses_bad_input(capsys, tmp_path):
    assert main(["serve", "--root", str(tmp_path)]) == 1
    assert "no corpus/ folder" in capsys.readouterr().err
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["serve", "--port", str(port), "--db", str(tmp_path / "x.db")]) == 1
    assert "in use" in capsys.readouterr().err
    assert main(["serve", "--read-only", "--db", str(tmp_path / "missing.db"), "--port", "1"]) == 1


def test_serve_help_documents_identity_and_shared_deployments(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    assert "not authentication" in " ".join(out.replace("NOT", "not").split())
    assert "postgresql://" in out and "JupyterHub" in out and "--read-only" in out and "--cull-idle" in out


# --- the browser tests' skip rule -------------------------------------------------------------------------------


def test_browser_tests_skip_without_chromium_unless_required(monkeypatch, tmp_path):
    import browser_fixtures

    monkeypatch.setattr(browser_fixtures, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.delenv("PLAYGROUND_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Chromium"):
        browser_fixtures.need_chromium()
    monkeypatch.setenv("PLAYGROUND_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="no Chromium"):
        browser_fixtures.need_chromium()
