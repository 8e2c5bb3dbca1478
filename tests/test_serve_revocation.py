"""Revocation through a real server and its store (issue 43.2): carol taken off the roster, her old link is
refused and no label of hers is saved, her open page included; reissuing alice's link kills her old one and
leaves Zoë's working.

``playground serve --roster`` on loopback, spoken to over HTTP and the kernel websocket (no browser); the roster
is changed with ``playground roster``, the server is not restarted; the label store is read afterwards.
"""
from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import websocket
from browser_fixtures import start_server, stop_server, wait_for_log
from serve_clients import open_page, widgets

from playground.cli import main

pytestmark = pytest.mark.slow

STUDENT, INSTRUCTOR, SECRET = "class-key-77aa", "teacher-key-88bb", "roster-secret-revocation-test-0001"
NAMES = ("alice", "carol", "Zoë Martin")


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("PLAYGROUND_SERVE_TOKEN", STUDENT)
    mp.setenv("PLAYGROUND_INSTRUCTOR_TOKEN", INSTRUCTOR)
    mp.setenv("PLAYGROUND_ROSTER_SECRET", SECRET)
    work = tmp_path_factory.mktemp("revocation")
    names = work / "names.txt"
    names.write_text("\n".join(NAMES) + "\n", encoding="utf-8")
    links = work / "links.txt"
    server = start_server(work, "--roster", str(names), "--links-file", str(links), "--preheat", "0")
    mp.undo()
    assert wait_for_log(server.log, "playground: ready", 180), server.log_tail()
    server.names, server.links = names, links  # type: ignore[attr-defined]
    yield server
    stop_server(server.proc)


def _link(srv, name: str) -> str:
    for line in Path(srv.links).read_text(encoding="utf-8").splitlines():
        if line.startswith(f"student link for {name}: "):
            return urlsplit(line.split(": ", 1)[1]).query
    raise AssertionError(f"no link for {name}")


def _labels_by(db: Path) -> dict[str, int]:
    from playground.store import open_store

    with open_store(str(db), create=False, read_only=True) as store:
        counts: dict[str, int] = {}
        for label in store.labels():
            counts[label.annotator] = counts.get(label.annotator, 0) + 1
        return counts


def _status(w) -> str:
    (status,) = w.by_class("pg-status")
    return html.unescape(str(w.states[status]["state"]["value"]))


def _label(w, index: int = 0) -> str:
    said = w.update(w.by_class("pg-toggle")[0], {"index": index})
    return html.unescape(" ".join(str(d.get("state", {}).get("value", "")) for d in said))


def test_carol_taken_off_the_roster_loses_her_link_and_her_open_page(srv):
    old = _link(srv, "carol")
    w = widgets(open_page(srv.url, old, timeout=240))
    assert "Labelling as carol" in _status(w)
    _label(w)
    assert _labels_by(srv.db).get("carol") == 1
    assert main(["roster", "revoke", "carol", "--roster", str(srv.names), "--links-file", str(srv.links)]) == 0
    with pytest.raises((websocket.WebSocketException, OSError, TimeoutError)):
        _label(w, 1)  # her open page: the message is dropped and the websocket closed
    again = open_page(srv.url, old, timeout=60)
    assert again.status == 403 and again.kernel_id is None  # her old link: refused before any kernel starts
    assert _labels_by(srv.db).get("carol") == 1              # nothing saved after the revocation
    assert wait_for_log(srv.log, "refused a student link for 'carol': the student's link is revoked", 30)


def test_reissuing_alices_link_kills_the_old_one_and_leaves_zoes(srv, monkeypatch):
    old, zoe = _link(srv, "alice"), _link(srv, "Zoë Martin")
    monkeypatch.setenv("PLAYGROUND_ROSTER_SECRET", SECRET)
    assert main(["roster", "reissue", "alice", "--roster", str(srv.names), "--links-file", str(srv.links)]) == 0
    new = _link(srv, "alice")
    assert new != old and "gen=2" in new and _link(srv, "Zoë Martin") == zoe
    assert open_page(srv.url, old, timeout=60).status == 403
    for query, name in ((new, "alice"), (zoe, "Zoë Martin")):
        w = widgets(open_page(srv.url, query, timeout=240))
        assert f"Labelling as {name}" in _status(w)
        _label(w)
        w.ws.close()
    counts = _labels_by(srv.db)
    assert counts.get("alice") == 1 and counts.get("Zoë Martin") == 1


def test_a_name_deleted_from_the_roster_by_hand_is_refused(srv):
    """The issue's case: the roster without carol (here Zoë, still live) — edited by hand, nothing restarted."""
    zoe = _link(srv, "Zoë Martin")
    before = _labels_by(srv.db).get("Zoë Martin", 0)
    kept = [line for line in Path(srv.names).read_text(encoding="utf-8").splitlines() if line != "Zoë Martin"]
    Path(srv.names).write_text("".join(line + "\n" for line in kept), encoding="utf-8")  # in place, same inode
    page = open_page(srv.url, zoe, timeout=60)
    assert page.status == 403 and page.kernel_id is None
    assert _labels_by(srv.db).get("Zoë Martin", 0) == before
    assert wait_for_log(srv.log, "refused a student link for 'Zoë Martin': the name is not on the roster", 30)
