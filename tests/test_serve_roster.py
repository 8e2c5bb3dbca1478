"""``playground serve --roster`` (issue 29.1): one signed link per student; a student's page labels under its
link's name only, whatever the page is sent.

Real servers on loopback, spoken to over HTTP and the kernel websocket protocol (no browser, no buttons): the
page's widget messages are sent as the page's JavaScript sends them, and the label store is read afterwards.
"""
from __future__ import annotations

import dataclasses
import html
import stat
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from browser_fixtures import start_server, stop_server, wait_for_log
from serve_clients import open_page, widgets

pytestmark = pytest.mark.slow

STUDENT, INSTRUCTOR = "class-key-4b1d", "teacher-key-8e2f"
NAMES = ("alice", "Zoë Martin", "carol")


def _start(tmp_path_factory, name: str, *extra: str):
    mp = pytest.MonkeyPatch()
    mp.setenv("PLAYGROUND_SERVE_TOKEN", STUDENT)
    mp.setenv("PLAYGROUND_INSTRUCTOR_TOKEN", INSTRUCTOR)
    mp.delenv("PLAYGROUND_ROSTER_SECRET", raising=False)
    work = tmp_path_factory.mktemp(name)
    roster = work / "names.txt"
    roster.write_text("\n".join(NAMES) + "\n", encoding="utf-8")
    links = tmp_path_factory.mktemp(name + "-links") / "links.txt"
    srv = start_server(work, "--roster", str(roster), "--links-file", str(links), *extra)
    mp.undo()
    assert wait_for_log(srv.log, "playground: ready", 180), srv.log_tail()
    srv.links = links  # type: ignore[attr-defined]
    srv.student = {line.split(": ", 1)[0].removeprefix("student link for "): urlsplit(line.split(": ", 1)[1]).query
                   for line in links.read_text(encoding="utf-8").splitlines() if line.startswith("student link")}
    return srv


@pytest.fixture(scope="module")
def pooled(tmp_path_factory):
    """With a pool of one: a page claims a preheated kernel (its name arrives over the request handshake)."""
    srv = _start(tmp_path_factory, "roster-pooled", "--preheat", "1")
    yield srv
    stop_server(srv.proc)


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """No pool: every page starts its own kernel (its name arrives in the kernel's environment)."""
    srv = _start(tmp_path_factory, "roster-cold", "--preheat", "0")
    yield srv
    stop_server(srv.proc)


def _status(w) -> str:
    (status,) = w.by_class("pg-status")
    return html.unescape(str(w.states[status]["state"]["value"]))


def _said(messages: list[dict]) -> str:
    """The widget values the kernel sent back after a message (the status line among them)."""
    return html.unescape(" ".join(str(d.get("state", {}).get("value", "")) for d in messages))


def _name_box(w) -> dict:
    (box,) = w.by_class("pg-annotator")
    return w.states[box]["state"]


def _labels_by(db: Path) -> dict[str, int]:
    from playground.store import open_store

    with open_store(str(db), create=False, read_only=True) as store:
        counts: dict[str, int] = {}
        for label in store.labels():
            counts[label.annotator] = counts.get(label.annotator, 0) + 1
        return counts


def _label_first(w) -> str:
    toggle = w.by_class("pg-toggle")[0]
    return _said(w.update(toggle, {"index": 0}))  # "yes", as a click sends it


def test_the_links_file_holds_a_signed_link_per_student_and_the_log_none(pooled):
    text = pooled.links.read_text(encoding="utf-8")
    assert stat.S_IMODE(pooled.links.stat().st_mode) == 0o600
    assert set(pooled.student) == set(NAMES) and text.splitlines()[0].startswith("instructor link")
    assert "join link" not in text  # the class-wide link labels under no name: not given out
    sigs = [q.rsplit("sig=", 1)[1] for q in pooled.student.values()]
    assert len(set(sigs)) == 3 and all(len(s) == 32 for s in sigs)
    log = pooled.log.read_text(errors="replace")
    assert "(3 student links)" in log
    assert STUDENT not in log and INSTRUCTOR not in log and not any(s in log for s in sigs)


def test_a_students_link_labels_under_its_own_name(pooled):
    page = open_page(pooled.url, pooled.student["alice"], timeout=180)
    w = widgets(page)
    assert _name_box(w)["value"] == "alice" and _name_box(w)["disabled"] is True
    assert "Labelling as alice" in _status(w)
    _label_first(w)
    w.ws.close()
    assert _labels_by(pooled.db).get("alice") == 1


def test_a_name_changed_in_the_link_is_refused(pooled):
    edited = pooled.student["alice"].replace("annotator=alice", "annotator=carol")
    w = widgets(open_page(pooled.url, edited, timeout=180))
    assert "not opened with a valid one" in _status(w) and _name_box(w)["value"] == ""
    _label_first(w)
    w.ws.close()
    assert "carol" not in _labels_by(pooled.db)


def test_the_class_key_alone_labels_under_no_name(pooled):
    w = widgets(open_page(pooled.url, f"token={STUDENT}&annotator=carol", timeout=180))
    assert "not opened with a valid one" in _status(w)
    (box,) = w.by_class("pg-annotator")
    said = w.update(box, {"value": "carol"})  # typing the name into the box, over the protocol
    assert "Labelling as carol" not in _said(said)  # the status keeps its refusal (unchanged: nothing sent)
    said = w.update(w.by_class("pg-toggle")[0], {"index": 0})
    assert "Saved" not in _said(said)
    w.ws.close()
    assert "carol" not in _labels_by(pooled.db)


def test_switching_to_another_students_name_is_refused_in_the_kernel(pooled):
    before = _labels_by(pooled.db)
    page = open_page(pooled.url, pooled.student["Zoë Martin"], timeout=180)
    w = widgets(page)
    (go,) = w.by_class("pg-annotator-go")
    (box,) = w.by_class("pg-annotator")
    w.click(go)  # "Switch name": the box opens
    said = w.update(box, {"value": "alice", "disabled": False})
    assert "opened with Zoë Martin's link, so it labels as Zoë Martin only, not as alice" in _said(said)
    _label_first(w)  # still labelling, as Zoë Martin
    w.ws.close()
    after = _labels_by(pooled.db)
    assert after.get("Zoë Martin") == 1 and after.get("alice") == before.get("alice")


def test_the_browsers_cookie_keeps_the_name_and_refuses_another(pooled):
    first = open_page(pooled.url, pooled.student["carol"], timeout=180)
    cookie = {"Cookie": first.cookie_header()}
    def reopen(query: str):  # the same browser: its login cookie, no key and no signature in the address
        page = open_page(pooled.url, query, timeout=180, headers=cookie)
        return widgets(dataclasses.replace(page, cookies=first.cookies))

    again = reopen("annotator=carol")  # a reload, a bookmark
    assert "carol" in _status(again) and _name_box(again)["value"] == "carol"
    again.ws.close()
    other = reopen("annotator=alice")
    assert "opened with carol's link" in _status(other)
    other.ws.close()


def test_the_instructor_is_not_bound(pooled):
    w = widgets(open_page(pooled.url, f"token={INSTRUCTOR}&annotator=teacher", timeout=180))
    assert "Labelling as teacher" in _status(w)
    w.ws.close()


def test_a_cold_kernel_is_bound_the_same_way(cold):
    w = widgets(open_page(cold.url, cold.student["alice"], timeout=180))
    assert _name_box(w)["value"] == "alice" and "Labelling as alice" in _status(w)
    (go,) = w.by_class("pg-annotator-go")
    (box,) = w.by_class("pg-annotator")
    w.click(go)
    said = w.update(box, {"value": "carol", "disabled": False})
    assert "labels as alice only, not as carol" in _said(said)
    w.ws.close()
    w = widgets(open_page(cold.url, f"token={STUDENT}&annotator=carol", timeout=180))
    assert "not opened with a valid one" in _status(w)
    w.ws.close()


def test_code_sent_to_a_kernel_is_not_run(pooled, tmp_path):
    """A student's own kernel socket takes widget messages only: an ``execute_request`` (code that would write
    a file, or label under any name) is dropped by the server (Voila's ``allowed_message_types``), so the
    kernel-side checks of role and name cannot be stepped around by sending code."""
    from serve_clients import _message, v1_frame

    marker = tmp_path / "ran"
    w = widgets(open_page(pooled.url, pooled.student["carol"], timeout=180))
    code = f"open({str(marker)!r}, 'w').write('x')"
    w.ws.send_binary(v1_frame("shell", _message("execute_request", {  # type: ignore[attr-defined]
        "code": code, "silent": False, "store_history": False, "user_expressions": {}, "allow_stdin": False,
        "stop_on_error": True}, w.session)))
    _label_first(w)  # answered after the execute_request would have run: the shell channel is in order
    w.ws.close()
    assert not marker.exists()
    assert 'Received message of type "execute_request", which is not allowed' in pooled.log.read_text(errors="replace")
