"""``playground serve`` for a class of strangers (issue 29): every route refuses without a key, the kernels'
request handshake needs the kernel's own key, the key stays secret, roles are checked in the kernel.

Real servers on loopback, spoken to over HTTP and the kernel websocket protocol (no browser, no buttons).
"""
from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest
import websocket
from browser_fixtures import REPO, start_server, stop_server, wait_for_log
from serve_clients import V1, open_page, wait_until, widgets

from playground.serving import auth

pytestmark = pytest.mark.slow

STUDENT, INSTRUCTOR, OBSERVER = "student-key-7f3a", "instructor-key-91c2", "observer-key-5d0e"
KEYS = {"PLAYGROUND_SERVE_TOKEN": STUDENT, "PLAYGROUND_INSTRUCTOR_TOKEN": INSTRUCTOR,
        "PLAYGROUND_OBSERVER_TOKEN": OBSERVER}
#: A kernel id nobody holds.
MADE_UP = "00000000-0000-4000-8000-000000000000"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def http(url: str, method: str = "GET", headers: dict[str, str] | None = None, data: bytes | None = None):
    """``(status, headers, body)`` of one request, redirects not followed."""
    opener = urllib.request.build_opener(_NoRedirect)
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    try:
        with opener.open(req, timeout=60) as resp:
            return resp.status, resp.headers, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode("utf-8", "replace")


def ws_status(url: str, headers: list[str] | None = None) -> int:
    """The HTTP status a websocket upgrade gets (101 if it was accepted)."""
    try:
        conn = websocket.create_connection(url, timeout=30, header=headers or [], subprotocols=[V1])
    except websocket.WebSocketBadStatusException as exc:
        return int(exc.status_code)
    conn.close()
    return 101


def served_routes() -> list[tuple[str, str]]:
    """``(pattern, handler name)`` of every route the serving app mounts, built as ``playground serve`` builds
    them (with a pool, so that Voila's request handshake is among them)."""
    from playground.serving.app import PlaygroundVoila

    auth.take_keys({"PLAYGROUND_SERVE_TOKEN": "x"})
    app = PlaygroundVoila()
    app.initialize([str(REPO / "notebooks" / "playground.ipynb"), "--preheat_kernel=True", "--pool_size=1",
                    "--no-browser", "--Voila.identity_provider_class=playground.serving.auth.RoleIdentityProvider",
                    "--VoilaConfiguration.multi_kernel_manager_class="
                    "playground.serving.kernels.GuardedKernelManager"])
    app.init_settings()
    return [(str(spec[0]), spec[1].__name__) for spec in app.init_handlers()]


#: For each route, a concrete address to try (``{kid}``: a real kernel's id) and whether it is a websocket.
PROBES = {
    "/playground/icons/(.*)": ["playground/icons/css/all.min.css"],
    "/playground/api/status": ["playground/api/status"],
    "/playground/api/queue": ["playground/api/queue"],
    r"/api/kernels/(?P<kernel_id>\w+-\w+-\w+-\w+-\w+)": ["api/kernels/{kid}"],
    r"/api/kernels/(?P<kernel_id>\w+-\w+-\w+-\w+-\w+)/channels": ["ws:api/kernels/{kid}/channels"],
    "/voila/templates/(.*)": ["voila/templates/lab/static/index.css"],
    "/voila/static/(.*)": ["voila/static/voila.js"],
    "/voila/api/themes/(.*)": ["voila/api/themes/@jupyterlab/theme-light-extension/index.css"],
    "/voila/api/shutdown/(.*)": ["POST:voila/api/shutdown/{kid}"],
    "/login": [],  # the one public page: it says to ask for the class link (checked below)
    "/logout": ["logout"],
    r"/voila/query/(?P<kernel_id>\w+-\w+-\w+-\w+-\w+)": ["ws:voila/query/{kid}", "ws:voila/query/" + MADE_UP],
    "/voila/labextensions/(.*)": ["voila/labextensions/@jupyter-widgets/jupyterlab-manager/package.json"],
    "/voila/files/(.*)": ["voila/files/playground.ipynb"],
    "/(.*)": ["", "?annotator=eve", "?token=wrong-key"],
}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    for k, v in KEYS.items():
        mp.setenv(k, v)
    links = tmp_path_factory.mktemp("links") / "links.txt"
    srv = start_server(tmp_path_factory.mktemp("keyed"), "--preheat", "1", "--links-file", str(links))
    mp.undo()
    srv.links = links  # type: ignore[attr-defined]
    assert wait_until(lambda: status_with_key(srv.url)["pool_ready"] == 1, 120)
    assert wait_for_log(srv.log, "playground: ready", 120)  # the links are written once the pool is full
    yield srv
    stop_server(srv.proc)


def status_with_key(base: str) -> dict:
    import json

    code, _h, body = http(base + "playground/api/status", headers={"Authorization": f"token {INSTRUCTOR}"})
    assert code == 200, body
    return json.loads(body)


def test_every_route_refuses_without_a_key(keyed):
    routes = served_routes()
    assert {p for p, _ in routes} == set(PROBES), "a route was added: give it a probe here"
    page = open_page(keyed.url, f"token={INSTRUCTOR}&annotator=owner")
    assert page.status == 200 and page.kernel_id
    tried = 0
    for pattern, handler in routes:
        for probe in PROBES[pattern]:
            target = probe.format(kid=page.kernel_id)
            if target.startswith("ws:"):
                url = keyed.url.replace("http://", "ws://") + target[3:]
                got = ws_status(url)
                assert got in (401, 403), (pattern, handler, target, got)
                got = ws_status(url + "?token=wrong-key")
                assert got in (401, 403), (pattern, handler, target, got)
            else:
                method, _, path = target.rpartition(":") if target.startswith("POST:") else ("GET", "", target)
                code, headers, body = http(keyed.url + path, method=method, data=b"" if method == "POST" else None)
                refused = code in (401, 403) or (code in (301, 302) and "/login" in headers.get("Location", ""))
                assert refused, (pattern, handler, target, code, body[:200])
                assert headers.get("Referrer-Policy") == "no-referrer", (pattern, target)
            tried += 1
    assert tried == sum(len(v) for v in PROBES.values())
    # the page's kernel is untouched by all of it
    assert page.kernel_id in http(keyed.url + f"api/kernels/{page.kernel_id}",
                                  headers={"Authorization": f"token {INSTRUCTOR}"})[2]


def test_with_the_key_the_static_routes_answer(keyed):
    """The guard on the static routes lets a page with the key load them (the login cookie)."""
    page = open_page(keyed.url, f"token={STUDENT}&annotator=static")
    assert page.status == 200
    req = urllib.request.Request(keyed.url + "voila/static/voila.js", headers={"Cookie": page.cookie_header()})
    with urllib.request.urlopen(req, timeout=60) as resp:
        assert resp.status == 200 and resp.headers["Referrer-Policy"] == "no-referrer"


def test_the_login_page_says_ask_your_instructor_and_takes_no_password(keyed):
    for method in ("GET", "POST"):
        code, headers, body = http(keyed.url + "login", method=method, data=b"password=x" if method == "POST" else None)
        assert code == 403, (method, code)
        assert "ask your instructor for the class link" in body.lower()
        assert "<form" not in body.lower() and "password" not in body.lower()
        assert headers["Referrer-Policy"] == "no-referrer"


def test_the_key_stays_secret(keyed):
    page = open_page(keyed.url, f"token={STUDENT}&annotator=quiet")
    assert page.status == 200 and "VBox(" not in page.html
    assert "history.replaceState" in page.html and 'searchParams.delete("token")' in page.html
    for missing in ("voila/files/nothing-here.ipynb", "api/kernels/" + MADE_UP):
        code, _h, body = http(keyed.url + missing, headers={"Authorization": f"token {STUDENT}"})
        assert code in (404, 500), (missing, code, body[:600])  # Voila answers 500 for a missing file
        assert str(REPO) not in body and str(keyed.root) not in body and "/tmp/" not in body, body[:300]
    log = keyed.log.read_text(errors="replace")
    for key in KEYS.values():
        assert key not in log  # --links-file: the keys are in the file only
    assert keyed.links.read_text().count("?token=") == 2
    assert keyed.links.stat().st_mode & 0o077 == 0


def test_a_listener_on_the_handshake_neither_stalls_nor_overhears_a_page(keyed):
    """Issue 29: connections to made-up kernel ids, and to the pooled kernel's id with the class key, are
    refused before the upgrade; the next student's page opens from the pool with its own request."""
    base = keyed.url.replace("http://", "ws://")
    assert wait_until(lambda: status_with_key(keyed.url)["pool_ready"] == 1, 120)
    for _ in range(2):
        assert ws_status(base + "voila/query/" + MADE_UP) == 403
    victim = open_page(keyed.url, f"token={STUDENT}&annotator=victim-student", timeout=120)
    assert victim.status == 200 and victim.kernel_id
    assert ws_status(base + f"voila/query/{victim.kernel_id}", [f"Authorization: token {STUDENT}"]) == 403
    assert wait_for_log(keyed.log, "page for 'victim-student' built", 60)
    assert "refused a request-info connection without its kernel's key" in keyed.log.read_text()


def _room(tmp_path_factory, name: str):
    mp = pytest.MonkeyPatch()
    for k, v in KEYS.items():
        mp.setenv(k, v)
    from playground.store import open_store

    work = tmp_path_factory.mktemp(name)
    with open_store(str(work / "labels.db"), create=True):
        pass
    srv = start_server(work, "--read-only", "--links-file", str(tmp_path_factory.mktemp(name + "-links") / "links.txt"))
    mp.undo()
    return srv


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    srv = _room(tmp_path_factory, "room")
    yield srv
    stop_server(srv.proc)


def _assignments(db: Path) -> int:
    from playground.store import open_store

    with open_store(str(db), create=False, read_only=True) as store:
        return len(list(store.assignments()))


def _assign(srv, key: str) -> list[dict]:
    page = open_page(srv.url, f"token={key}", timeout=180)
    assert page.status == 200 and page.kernel_id
    w = widgets(page)
    (names,) = w.by_class("pr-assign-annotators")
    (overlap,) = w.by_class("pr-assign-overlap")
    (go,) = w.by_class("pr-assign-go")
    w.update(names, {"value": "alice, bob"})
    w.update(overlap, {"value": 1})
    said = w.click(go)
    w.ws.close()
    return said


def test_the_room_refuses_the_class_key(room):
    page = open_page(room.url, f"token={STUDENT}")
    assert page.kernel_id is None and "ask your instructor for the class link" in page.html.lower()
    st = status_with_key(room.url)
    assert st["pool_ready"] == 0 and st["max_kernels"] == 4  # one viewer: no pool
    log = room.log.read_text(errors="replace")
    assert "labels in sqlite" not in log and str(room.db) not in log  # the room prints no filesystem path


def test_an_observer_cannot_assign_even_by_sending_the_click(room):
    before = _assignments(room.db)
    said = _assign(room, OBSERVER)
    assert _assignments(room.db) == before
    text = " ".join(str(d.get("state", {}).get("value", "")) for d in said)
    assert "only the instructor" in text


def test_the_instructor_assigns(room):
    before = _assignments(room.db)
    _assign(room, INSTRUCTOR)
    assert _assignments(room.db) == before + 1


def test_a_students_page_offers_no_one_elses_labels(keyed):
    page = open_page(keyed.url, f"token={STUDENT}&annotator=sam", timeout=180)
    w = widgets(page)
    (scope,) = w.by_class("pg-export-scope")
    labels = w.states[scope]["state"]["_options_labels"]
    assert labels == ["my labels", "consensus"]
    w.ws.close()
    teacher = widgets(open_page(keyed.url, f"token={INSTRUCTOR}&annotator=teacher", timeout=180))
    (scope,) = teacher.by_class("pg-export-scope")
    assert teacher.states[scope]["state"]["_options_labels"] == ["my labels", "all annotators", "consensus"]
    teacher.ws.close()


def test_one_address_holds_no_more_than_its_share(tmp_path):
    """Issue 29: one holder of the join link cannot take every kernel: --max-per-address 2 on a cap of 6."""
    srv = start_server(tmp_path, "--max-kernels", "6", "--max-per-address", "2")
    try:
        first, second = (open_page(srv.url, f"annotator=a{i}", timeout=180) for i in range(2))
        assert first.kernel_id and second.kernel_id
        third = open_page(srv.url, "annotator=a2", timeout=180)
        assert third.status == 429 and third.kernel_id is None
        assert "your network address already holds 2 pages here" in third.html
        http(srv.url + f"voila/api/shutdown/{first.kernel_id}", "POST",
             {"Cookie": first.cookie_header()}, f"_xsrf={first.xsrf()}".encode())
        assert wait_until(lambda: open_page(srv.url, "annotator=a3", timeout=180).kernel_id, 60)  # a place freed
    finally:
        stop_server(srv.proc)


def test_a_bad_widget_message_sends_back_no_server_path(keyed):
    """Issue 29: a message with an index out of range is refused, and nothing sent back names a server file."""
    import sys

    page = open_page(keyed.url, f"token={STUDENT}&annotator=probe", timeout=180)
    w = widgets(page)
    toggle = w.by_class("pg-toggle")[0]
    w.update(toggle, {"index": 99})
    w.send(toggle, {"method": "update", "state": {"index": "not a number"}, "buffer_paths": []})
    w.ws.close()
    sent = b"".join(w.frames)
    for path in {str(REPO), sys.prefix, str(Path(pytest.__file__).parents[1])}:
        assert path.encode() not in sent, path
    assert b"Traceback" not in sent
