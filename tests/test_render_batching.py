"""What one toggle sends to the page (ui/render.py, serving/kernels.py): every widget message is one websocket
frame the server relays and the browser applies, so a toggle sends one message per widget whose content changed,
and each widget's changes in one message."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from ipywidgets.widgets import widget as widget_module

from playground.golden import load_dataset
from playground.serving.kernels import WIDGETS_ECHO_ENV, kernel_env
from playground.store import open_store
from playground.ui.session import LabelSession, compute_harness
from playground.ui.views import PlaygroundApp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_fixtures import make_data_root

#: What the page shows about a toggle, in the order it is sent: each widget (by its first CSS class) once.
FIRST_ANSWER = [
    ("pg-claim-0-supported-auto", "update", ("value",)),  # the harness and the key beside your answer
    ("pg-claim-0-evidence", "update", ("value",)),
    ("PageBridge", "custom", ()),  # the acknowledgement: the answer is stored (before the slower redraw)
    ("pg-status", "update", ("value",)),  # "Saved: ..."
    ("pg-rates", "update", ("value",)),
    ("pg-composite", "update", ("value",)),
    ("pg-diagnosis", "update", ("value",)),
    ("pg-agreement", "update", ("value",)),
    ("pg-variants", "update", ("value",)),
    ("pg-case-list", "update", ("_options_labels", "index")),  # the case's line and the selection, together
    ("pg-case-head", "update", ("value",)),  # n/m units labelled
    ("pg-chart", "update", ("value",)),
]


@pytest.fixture
def sent(monkeypatch, tmp_path):
    """Every comm message the page's widgets send, as (first CSS class, method, state keys)."""
    import comm

    log: list[tuple[str, str, dict]] = []

    def publish(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        log.append((self.comm_id, msg_type, data or {}))

    monkeypatch.setattr(comm.DummyComm, "publish_msg", publish)
    monkeypatch.setattr(widget_module, "JUPYTER_WIDGETS_ECHO", False)  # as kernel_env starts a served kernel
    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "harness-cache"))
    return log


def _described(log) -> list[tuple[str, str, tuple[str, ...]]]:
    out = []
    for comm_id, _type, data in log:
        w = widget_module._instances[comm_id]
        name = w._dom_classes[0] if w._dom_classes else type(w).__name__
        out.append((name, data.get("method"), tuple(sorted(data.get("state", {})))))
    return out


def _click(toggle, index: int) -> None:
    """What the browser's click sends: an ``update`` of the toggle's ``index``."""
    toggle._handle_msg({"content": {"data": {"method": "update", "state": {"index": index}, "buffer_paths": []}},
                        "buffers": []})


def test_a_toggle_sends_one_message_per_changed_widget(sent, tmp_path):
    dataset = load_dataset(make_data_root(tmp_path / "data"))
    hits, results = compute_harness(dataset)
    db = tmp_path / "labels.db"
    open_store(db).close()
    app = PlaygroundApp(LabelSession(dataset, open_store(db), harness_results=results, hits=hits),
                        annotator="alice", chart=True)
    toggle = app._rows["claim"][0].toggles["supported"]
    sent.clear()
    _click(toggle, 0)  # yes
    assert _described(sent) == FIRST_ANSWER
    sent.clear()
    _click(toggle, 1)  # no: the evidence and the case's n/m stay as they were
    assert _described(sent) == [m for m in FIRST_ANSWER if m[0] not in ("pg-claim-0-evidence", "pg-case-head")]
    sent.clear()
    _click(toggle, 1)  # the answer already shown: nothing to send
    assert sent == []


def test_served_kernels_send_no_echo_of_a_click():
    assert kernel_env({}, "kid-1", for_pool=True)[WIDGETS_ECHO_ENV] == "0"
    assert kernel_env({}, "kid-1", for_pool=False)[WIDGETS_ECHO_ENV] == "0"
    assert kernel_env({WIDGETS_ECHO_ENV: "1"}, "kid-1", for_pool=False)[WIDGETS_ECHO_ENV] == "1"
