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
from playground.ui.session import LabelSession, SessionError, compute_harness
from playground.ui.views import PlaygroundApp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_fixtures import XSS_CLAIMS, XSS_QUERY, make_data_root

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def kept_harness_in_tmp(tmp_path, monkeypatch):
    """Kernels keep the harness's results on disk (playground.ui.harness_cache): never in the user's cache here."""
    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "harness-cache"))


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
    """A label store that exists, as ``playground serve`` leaves it before any page opens."""
    path = tmp_path / "labels.db"
    open_store(path).close()
    return path


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
    for text in (XSS_QUERY, *XSS_CLAIMS):  # markdown leaves quotes in text as they are: both spellings are text
        assert __import__("html").escape(text, quote=False) in joined.replace("&quot;", '"')
    # option labels are rendered as text by ipywidgets: the raw text may stay raw there
    # (the list shows the question's first words, cut at a word boundary: taken from the raw text, not escaped)
    label = next(label for label, cid in app.case_list.options if cid == "GC-0003")
    assert label.endswith("…") and XSS_QUERY.startswith(label.split(" · ", 1)[1][:-1])


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
        assert [lb.value for lb in store.labels(annotator="alice")] == [0]
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
    # blind: neutral names until a response is fully labelled
    assert app.scenario.options == (("Response 1", "GC-0001-R1"), ("Response 2", "GC-0001-R2"))
    app.scenario.value = "GC-0001-R2"
    assert app.session.response_id == "GC-0001-R2"
    assert app._rows["claim"][1].box.layout.display is None  # R2 has two claims
    app.scenario.value = "GC-0001-R1"
    assert app._rows["claim"][1].box.layout.display == "none"
    app.next_u.click()  # the view on screen still has everything to label: it is not skipped
    assert (app.session.case_id, app.session.response_id) == ("GC-0001", "GC-0001-R1")
    assert "still unlabelled" in app.status.value


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
    assert text.splitlines()[0] == "case_id,response_id,unit_kind,unit_id,text,dimension,value,comment,annotator,time"
    assert text.splitlines()[1].startswith("GC-0001,GC-0001-R1,claim,GC-0001-R1:c0:")
    assert ",supported,0,,alice," in text.splitlines()[1]
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


def test_the_chart_is_an_svg_with_the_rates(hostile, db):
    import xml.etree.ElementTree as ET

    app = app_for(hostile, db, chart=True)
    svg = app.chart.value
    assert svg.startswith("<svg") and svg.count("no data") == 8  # four dimensions, two series
    click(app, "claim", 0, "supported", "no")
    root = ET.fromstring(app.chart.value)  # well-formed
    ns = "{http://www.w3.org/2000/svg}"
    dots = [(c.get("cx"), c.get("fill")) for c in root.iter(f"{ns}circle")]
    # faithfulness 0% for this case (blue) and all labelled (orange): x = 150 + 0 * 350; plus the two legend dots
    assert dots[:2] == [("150.0", "#0072B2"), ("150.0", "#E69F00")] and len(dots) == 4
    assert app.chart.value.count("no data") == 6
    assert 'viewBox="0 0 520 ' in app.chart.value


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


def test_a_preheated_kernel_builds_the_page_before_its_request_and_ends_as_a_direct_one(hostile, db, monkeypatch):
    """With VOILA_PREHEAT the widgets exist before the request is waited for; the link then fills them in,
    and the page equals the one built with the query string known from the start."""
    import playground.ui.request as request

    monkeypatch.setenv("PLAYGROUND_ROOT", str(hostile[0]))
    monkeypatch.setenv("PLAYGROUND_DB", str(db))
    monkeypatch.delenv("PLAYGROUND_READ_ONLY", raising=False)
    link = "annotator=alice&case=GC-0001&response=GC-0001-R2&weights=faithfulness:0.5&gates=coverage:0.6&reveal=1"
    monkeypatch.delenv("VOILA_PREHEAT", raising=False)
    monkeypatch.setenv("QUERY_STRING", link)
    direct = launch(display=False)

    built: list[PlaygroundApp] = []
    original = PlaygroundApp.__init__

    def counting(self, *args, **kwargs):
        built.append(self)
        original(self, *args, **kwargs)

    def claimed(*_args, **_kwargs):
        assert len(built) == 1 and built[0].session.annotator is None  # built, not yet anyone's
        monkeypatch.setenv("QUERY_STRING", link)
        return True

    monkeypatch.setattr(PlaygroundApp, "__init__", counting)
    monkeypatch.setattr(request, "wait_for_request", claimed)
    monkeypatch.setenv("VOILA_PREHEAT", "True")
    monkeypatch.delenv("QUERY_STRING")
    pooled = launch(display=False)
    assert built == [pooled]
    for app in (direct, pooled):
        s = app.session
        assert (s.annotator, s.case_id, s.response_id, s.reveal_all) == ("alice", "GC-0001", "GC-0001-R2", True)
        assert s.gates == {"coverage": 0.6} and s.weights["faithfulness"] == 0.5
        assert app.weights["faithfulness"].value == 0.5 and app.gate_on["coverage"].value is True
        assert app.gate_floor["coverage"].value == 0.6 and app.gate_on["faithfulness"].value is False
        assert app.reveal.value is True and app.scenario.value == "GC-0001-R2" and app.name.value == "alice"
    assert pooled.rates.value == direct.rates.value
    assert (direct.renders, pooled.renders) == (1, 2)  # drawn once; the pooled page once before, once after
    assert pooled.bridge.query == direct.bridge.query
    assert "weights=" in pooled.bridge.query and "reveal=1" in pooled.bridge.query


@pytest.mark.parametrize(("query", "annotator"), [
    ("annotator=alice", "alice"),          # start() draws it
    ("", None),                            # nobody: drawn for the link's view
    ("annotator=consensus", None),         # a reserved name is refused: still drawn, once
])
def test_launch_draws_the_page_once(hostile, db, monkeypatch, query, annotator):
    monkeypatch.setenv("PLAYGROUND_ROOT", str(hostile[0]))
    monkeypatch.setenv("PLAYGROUND_DB", str(db))
    monkeypatch.delenv("PLAYGROUND_READ_ONLY", raising=False)
    monkeypatch.delenv("VOILA_PREHEAT", raising=False)
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    monkeypatch.setenv("QUERY_STRING", query)
    app = launch(display=False)
    assert app.renders == 1 and app.session.annotator == annotator
    assert app.case_list.options and app.rates.value  # the list and the figures are there


def test_a_page_never_creates_a_store(hostile, tmp_path, monkeypatch):
    missing = tmp_path / "deleted.db"
    monkeypatch.setenv("PLAYGROUND_ROOT", str(hostile[0]))
    monkeypatch.setenv("PLAYGROUND_DB", str(missing))
    monkeypatch.delenv("VOILA_PREHEAT", raising=False)
    monkeypatch.setenv("QUERY_STRING", "annotator=alice")
    assert launch(display=False) is None  # the error is shown on the page instead
    assert not missing.exists()
    monkeypatch.setenv("QUERY_STRING", "")


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


# --- keys, URL, connection, store gone (the page's safety) ----------------------------------------------------


def test_the_bridge_answers_pings_acknowledges_toggles_and_forwards_keys(hostile, db, monkeypatch):
    app = app_for(hostile, db)
    sent = []
    monkeypatch.setattr(app.bridge, "send", lambda content, buffers=None: sent.append(content))
    app.bridge._on_msg(app.bridge, {"type": "ping", "n": 7}, [])
    assert sent == [{"type": "pong", "n": 7}]
    click(app, "claim", 0, "supported", "no")
    assert {"type": "ack", "toggle": "pg-claim-0-supported"} in sent
    app.bridge._on_msg(app.bridge, {"type": "next_response"}, [])  # the key s
    assert app.session.response_id == "GC-0001-R2"
    app.bridge._on_msg(app.bridge, {"type": "hint", "text": "<b>x</b>"}, [])
    assert "&lt;b&gt;x&lt;/b&gt;" in app.status.value
    app.bridge._on_msg(app.bridge, "not a dict", [])  # ignored
    from playground.ui.bridge import ESM, KEYMAP

    assert "export default" in ESM and "history.replaceState" in ESM
    assert [k for k, _ in KEYMAP][:6] == ["j / ↓", "k / ↑", "y / 1", "n / 2", "u / 3", "c / 0"]


def test_the_url_follows_the_view(hostile, db):
    app = app_for(hostile, db)
    assert app.bridge.query == "?annotator=alice&case=GC-0001&response=GC-0001-R1"
    app.next_b.click()
    assert app.bridge.query == "?annotator=alice&case=GC-0002&response=GC-0002-R1"
    app.weights["faithfulness"].value = 0.5
    app.gate_on["coverage"].value = True
    app.reveal.value = True
    assert app.bridge.query == ("?annotator=alice&case=GC-0002&response=GC-0002-R1&weights=context_relevance%3A0.25"
                                "%2Cfaithfulness%3A0.5%2Ccorrectness%3A0.25%2Ccoverage%3A0.25&gates=coverage%3A0.7"
                                "&reveal=1")


def test_launch_applies_weights_gates_and_names_bad_ones(hostile, db, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_ROOT", str(hostile[0]))
    monkeypatch.setenv("PLAYGROUND_DB", str(db))
    monkeypatch.delenv("PLAYGROUND_READ_ONLY", raising=False)
    monkeypatch.delenv("VOILA_PREHEAT", raising=False)
    monkeypatch.delenv("PLAYGROUND_DATASET", raising=False)
    monkeypatch.setenv("QUERY_STRING", "annotator=alice&case=GC-0002&weights=faithfulness:0&gates=coverage:0.5")
    app = launch(display=False)
    assert app.session.case_id == "GC-0002" and app.session.weights["faithfulness"] == 0.0
    assert app.session.gates == {"coverage": 0.5} and app.gate_on["coverage"].value
    assert app.gate_floor["coverage"].value == 0.5 and app.shares["faithfulness"].value == "0%"
    monkeypatch.setenv("QUERY_STRING", "annotator=alice&weights=faithfulness:-2&gates=bogus:1")
    app = launch(display=False)
    said = __import__("html").unescape(app.status.value)
    assert "faithfulness: -2 is out of range" in said and "'bogus:1'" in said
    assert app.session.weights["faithfulness"] == 0.25 and app.session.gates == {}
    monkeypatch.setenv("QUERY_STRING", "")


def test_a_store_that_disappears_stops_the_page(hostile, db):
    """The SQLite file deleted under a running page: the store's StoreGoneError stops it, nothing more is saved."""
    app = app_for(hostile, db)
    click(app, "passage", 0, "relevant", "yes")
    for path in db.parent.glob(db.name + "*"):  # the database and its -wal/-shm files
        path.unlink()
    click(app, "claim", 0, "supported", "no")
    assert app.stopped and "pg-stopped" in app.status.value and "NOT saved" in app.status.value
    assert not db.exists()  # no fresh empty store was created in its place
    row = app._rows["claim"][0]
    assert row.toggles["supported"].value is None  # nothing looks set that was not written
    assert all(t.disabled for rows in app._rows.values() for r in rows for t in r.toggles.values())
    assert app.undo_b.disabled and app.export_csv.disabled
    app.say("Saved: something")  # later messages never hide the warning
    assert "pg-stopped" in app.status.value


# --- blind mode, evidence -------------------------------------------------------------------------------------


def test_blind_mode_hides_variants_and_verdicts_until_the_response_is_labelled(hostile, db):
    app = app_for(hostile, db)
    assert app.f_verdict.layout.display == "none"
    assert "grounded" not in app.scenario_note.value and "Response 1" in app.scenario_note.value
    assert "grounded" not in app.variants.value and "Response 2" in app.variants.value
    assert app._rows["claim"][0].evidence.value == ""
    for rows in app._rows.values():
        for r in rows:
            if r.unit_id is not None and r.box.layout.display is None:
                for dim in r.toggles:
                    r.toggles[dim].value = "yes"
    assert app.scenario.options[0] == ("Response 1 · grounded correct", "GC-0001-R1")
    assert app.scenario.options[1] == ("Response 2", "GC-0001-R2")  # not labelled yet: still neutral
    assert "Harness decision:" in app.decision.value
    assert "matched in the passages" in app._rows["claim"][0].evidence.value
    app.reveal.value = True
    assert app.f_verdict.layout.display is None
    assert app.scenario.options[1] == ("Response 2 · confident hallucination", "GC-0001-R2")


def test_the_response_marks_its_claims(hostile, db):
    app = app_for(hostile, db)
    app.scenario.value = "GC-0001-R2"
    html = app.response_text.value
    assert html.count("<mark class=\"pg-mark") == 2 and 'pg-mark-1"' in html


# --- comments, queues, datasets (store API of CONTRACTS.md) ---------------------------------------------------


def store_app(hostile, db, annotator="alice"):
    """The page on the real SQLite store (comments, assignments and datasets are the store's own)."""
    _, dataset, hits, results = hostile
    store = open_store(db)
    session = LabelSession(dataset, store, harness_results=results, hits=hits)
    return PlaygroundApp(session, annotator=annotator, chart=False), store


def test_a_comment_per_unit_is_saved_shown_and_exported(hostile, db):
    app, store = store_app(hostile, db)
    row = app._rows["claim"][0]
    row.comment.value = "the number is in passage 2"
    assert "Comment saved on claim 1 of GC-0001" in app.status.value
    assert [c.text for c in store.comments(annotator="alice")] == ["the number is in passage 2"]
    _, text, n = app.session.export_text("csv")
    assert n == 1 and ",,the number is in passage 2,alice," in text.splitlines()[1]  # a comment without a label
    row.toggles["supported"].value = "no"
    _, text, n = app.session.export_text("csv")
    assert n == 1 and ",supported,0,the number is in passage 2,alice," in text.splitlines()[1]
    again, _ = store_app(hostile, db)  # another kernel on the same file
    assert again._rows["claim"][0].comment.value == "the number is in passage 2"
    row.comment.value = ""
    assert "Comment removed" in app.status.value


def test_next_and_next_unlabelled_follow_the_annotators_queue(hostile, db):
    from playground.store import Assignment

    app, store = store_app(hostile, db, annotator=None)
    s = app.session
    r2 = s._response_units["GC-0001-R2"][0]
    gc3 = s._case_units["GC-0003"][0]
    store.save_assignment(Assignment(name="week1", kind="queue", dataset="golden", seed=1, overlap=1,
                                     queues={"alice": (gc3, r2), "bob": ()}))
    app.name.value = "alice"
    assert "Following your queue from the assignment 'week1'" in __import__("html").unescape(app.status.value)
    assert s.queue == [("GC-0003", "GC-0003-R1"), ("GC-0001", "GC-0001-R2")]
    assert (s.case_id, s.response_id) == ("GC-0003", "GC-0003-R1")  # the queue's first view with work left
    assert "0 / 2" in app.queue_note.value
    app.next_b.click()
    assert (s.case_id, s.response_id) == ("GC-0001", "GC-0001-R2")
    app.next_b.click()
    assert "No more cases in that direction in your queue" in app.status.value
    s.go_to("GC-0003", "GC-0003-R1")
    for dim in s.catalog[gc3].dimensions:
        s.set_label(gc3, dim, 1)
    app.render_all()
    assert "1 / 2" in app.queue_note.value
    app.next_u.click()  # GC-0003-R1 still has units outside the queue: a view is judged as a whole
    assert (s.case_id, s.response_id) == ("GC-0003", "GC-0003-R1")


def test_a_calibration_sample_is_walked_in_its_order(hostile, db):
    from playground.store import Assignment

    app, store = store_app(hostile, db, annotator=None)
    s = app.session
    units = [s._response_units["GC-0002-R1"][0], s._case_units["GC-0001"][0]]
    store.save_assignment(Assignment(name="cal", kind="calibration_sample", dataset="golden", seed=3,
                                     overlap=1, queues={"*": tuple(units)}))
    app.start("carol", "cal")
    assert s.queue == [("GC-0002", "GC-0002-R1"), ("GC-0001", "GC-0001-R1")] and s.queue_sample
    assert "calibration sample" in app.queue_note.value and "sample=cal" in app.bridge.query
    with pytest.raises(SessionError, match="no calibration sample named 'nope' \\(known: cal\\)"):
        s.use_queue("nope")


def test_the_dataset_picker_opens_another_dataset(hostile, db):
    """A RAGAS file imported into the store (playground.importers) is offered and opened with its own contexts."""
    from playground.importers.load import import_dataset

    import_dataset(REPO / "tests" / "fixtures" / "ragas_single.jsonl", "ragas", "demo", open_store(db))
    app = app_for(hostile, db)
    assert app.dataset_pick is not None and list(app.dataset_pick.options) == ["golden", "demo"]
    app.dataset_pick.value = "demo"
    s = app.session
    assert s.dataset_name == "demo" and s.annotator == "alice" and len(s.case_ids) == 3
    assert "dataset=demo" in app.bridge.query and "Dataset demo: 3 cases" in app.status.value
    webhooks = next(c for c in s.case_ids if s.dataset.cases[c].query == "How many times are failed webhooks retried?")
    s.go_to(webhooks)
    app.render_all()
    # the file's contexts, in order, not retrieval's passages
    assert [v.unit.text for v in s.view_units("passage")] == [
        "Failed webhook deliveries are retried 5 times with exponential backoff.",
        "Webhooks are signed with an HMAC-SHA256 header."]
    click(app, "passage", 0, "relevant", "yes")
    assert app.session.label(app._rows["passage"][0].unit_id, "relevant") == 1


@pytest.mark.parametrize(("count", "at", "window"), [
    (66, 40, (0, 66)),          # the shipped set: the whole list
    (200, 199, (0, 200)),       # exactly the window's size: still the whole list
    (201, 0, (0, 200)),         # one more: a window, held at the start
    (201, 200, (1, 201)),       # ... and at the end
    (10_000, 5_000, (4_900, 5_100)),   # the case in the middle (at - 100)
    (10_000, 99, (0, 200)),
    (10_000, 100, (0, 200)),    # exactly at - size // 2 = 0
    (10_000, 101, (1, 201)),
    (10_000, 9_999, (9_800, 10_000)),
])
def test_the_case_list_is_a_window_around_the_case_on_screen(count, at, window):
    from playground.ui.views import LIST_WINDOW, list_window

    assert LIST_WINDOW == 200
    assert list_window(count, at) == window
    start, stop = window
    assert start <= at < stop or count == 0


def test_beside_the_toggle_your_answer_is_compared_by_name_with_the_harness_and_the_key(hostile, db):
    """Issue 23.7: "your no: ≠ harness, = key" — never "key: yes ≠ you", which read as if the key disagreed."""
    app = app_for(hostile, db)
    s = app.session
    row = app._rows["claim"][0]
    uid = row.unit_id
    for choice, mine in (("no", 0), ("yes", 1)):
        click(app, "claim", 0, "supported", choice)
        auto, key = s.auto[(uid, "supported")], s.key[(uid, "supported")]
        shown = row.autos["supported"].value
        harness = "≠ harness" if auto != mine else "= harness"
        against_key = "≠ key" if key != mine else "= key"
        assert f"your {choice}: <span class='pg-{'differ' if auto != mine else 'agree'}'>{harness}</span>" in shown
        assert f"<span class='pg-{'differ' if key != mine else 'agree'}'>{against_key}</span>" in shown
        assert "≠ you" not in shown
    click(app, "claim", 0, "supported", "unsure")  # unsure is no answer to compare: no marks
    assert "your " not in row.autos["supported"].value and "harness: <b>" in row.autos["supported"].value


def test_no_import_circle_in_the_page_type_only_imports_included():
    """Issue 40.1: the page's parts (rows, panels, the verdict panel, the render and action mixins) take the page
    as a type they can import (``page_state.PageState``, or a small protocol of their own), never as
    ``views.PlaygroundApp``: nothing in ui/ imports views but the package's face, and ui/ has no circle."""
    from pathlib import Path

    from import_circles import circle, folder_imports

    ui = Path(__file__).resolve().parent.parent / "playground" / "ui"
    graph = folder_imports(ui, "playground.ui")
    assert circle(graph) is None, "import circle: " + " -> ".join(circle(graph) or [])
    assert sorted(m for m, targets in graph.items() if "views" in targets) == []
