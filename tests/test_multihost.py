"""Many hosts as a deployment (issue 30.2): the shipped nginx file in front of `playground serve` hosts.

The shipped ``deploy/nginx/playground.conf`` is run by a real nginx (Debian's
``nginx`` package) as the current user, with a temp prefix, pid and logs; only
the addresses change (:func:`render`): its upstream hosts become loopback
ports, its ``listen`` lines free loopback ports.

* ``test_the_proxy_*`` (fast): two tiny HTTP upstreams that echo what they got
  — a new visitor gets the ``playground_host`` cookie, a browser with it always
  reaches the same host, fresh visitors reach both, and the websocket upgrade
  headers and the Host with its port reach the host.
* ``test_a_class_through_the_proxy_on_two_hosts`` (slow): PostgreSQL
  (``playground.store.pgtest``), two ``playground serve`` hosts and the room on
  a third process, all on that store, and the class benchmark's protocol
  students (``bench/bench_class.py``) through the proxy: every student opened
  its page and labelled, 0 labels lost, every student an annotator of the one
  store, and the room's page on the third process lists every one.

Without nginx these tests skip with the reason, unless
``PLAYGROUND_REQUIRE_NGINX=1`` (set by ``.ci/run``, which installs it), where
they fail; PostgreSQL likewise with ``PLAYGROUND_REQUIRE_POSTGRES=1``.
"""
from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
for p in (REPO / "bench", REPO / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import store_fixtures as sf  # noqa: E402
from browser_fixtures import free_port, stop_server, wait_for_port  # noqa: E402

pg_server = sf.pg_server

CONF = REPO / "deploy" / "nginx" / "playground.conf"
ENV_REQUIRE_NGINX = "PLAYGROUND_REQUIRE_NGINX"


def need_nginx() -> str:
    """The nginx binary; skip (or, with ``PLAYGROUND_REQUIRE_NGINX=1``, fail) without it."""
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)
    if found:
        return found
    reason = (f"no nginx here: install it with `apt-get install nginx` ({ENV_REQUIRE_NGINX}=1 turns this skip "
              "into a failure)")
    if os.environ.get(ENV_REQUIRE_NGINX) == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def render(conf: str, hosts: list[int], room: int, listen: int, room_listen: int) -> str:
    """The shipped file with loopback addresses: upstream hosts, the room, and the two ``listen`` ports."""
    lines = [f"    server 127.0.0.1:{port};" for port in hosts]
    out, n = re.subn(r"(upstream playground_hosts \{[^}]*?)(?:\n    server [^\n]+;)+",
                     lambda m: m.group(1) + "\n" + "\n".join(lines), conf)
    assert n == 1, "the upstream block of the hosts is not where render() expects it"
    for old, new in ((" room:8867;", f" 127.0.0.1:{room};"), ("listen 80;", f"listen 127.0.0.1:{listen};"),
                     ("listen 8867;", f"listen 127.0.0.1:{room_listen};")):
        assert out.count(old) == 1, f"{old!r} is not in the shipped file once"
        out = out.replace(old, new)
    return out


@contextlib.contextmanager
def nginx(hosts: list[int], room: int, tmp: Path) -> Iterator[tuple[str, str]]:
    """A real nginx on the shipped file (two free loopback ports); yields the class's and the room's base URLs."""
    binary = need_nginx()
    listen, room_listen = free_port(), free_port()
    (tmp / "logs").mkdir(parents=True, exist_ok=True)
    (tmp / "playground.conf").write_text(render(CONF.read_text(), hosts, room, listen, room_listen))
    temps = "\n".join(f"    {kind}_temp_path {tmp}/{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                        "scgi"))
    (tmp / "nginx.conf").write_text(
        f"daemon off;\nworker_processes 1;\npid {tmp}/nginx.pid;\nerror_log {tmp}/logs/error.log info;\n"
        f"events {{ worker_connections 1024; }}\n"
        f"http {{\n    access_log {tmp}/logs/access.log;\n{temps}\n    include {tmp}/playground.conf;\n}}\n")
    check = subprocess.run([binary, "-t", "-p", str(tmp), "-e", str(tmp / "logs" / "error.log"), "-c",
                            str(tmp / "nginx.conf")], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, f"nginx -t refused the shipped file:\n{check.stderr}"
    log = tmp / "logs" / "nginx.out"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([binary, "-p", str(tmp), "-e", str(tmp / "logs" / "error.log"), "-c",
                                 str(tmp / "nginx.conf")], stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        wait_for_port(listen, proc, 30, log)
        wait_for_port(room_listen, proc, 30, log)
        yield f"http://127.0.0.1:{listen}/", f"http://127.0.0.1:{room_listen}/"
    finally:
        proc.terminate()  # SIGTERM: nginx's fast shutdown of the master and its worker
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


# --- the proxy alone, on two echoing upstreams (fast) ----------------------------------------------------------


class _Echo(http.server.BaseHTTPRequestHandler):
    """Answers every GET with JSON: which upstream it is and the headers it got."""

    name = ""

    def do_GET(self) -> None:
        body = json.dumps({"host": self.name, "headers": {k.lower(): v for k, v in self.headers.items()}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None


@contextlib.contextmanager
def echo_upstreams(names: list[str]) -> Iterator[list[int]]:
    servers = []
    for name in names:
        handler = type(f"Echo_{name}", (_Echo,), {"name": name})
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
    try:
        yield [srv.server_address[1] for srv in servers]
    finally:
        for srv in servers:
            srv.shutdown()
            srv.server_close()


def _get(url: str, cookie: str | None = None, headers: dict[str, str] | None = None) -> tuple[dict, str | None]:
    request = urllib.request.Request(url, headers={**({"Cookie": cookie} if cookie else {}), **(headers or {})})
    with urllib.request.urlopen(request, timeout=30) as resp:
        return json.loads(resp.read()), resp.headers.get("Set-Cookie")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory) -> Iterator[str]:
    need_nginx()
    with echo_upstreams(["one", "two", "room"]) as (one, two, room), \
            nginx([one, two], room, tmp_path_factory.mktemp("nginx")) as (base, _room):
        yield base


def test_the_proxy_gives_a_new_visitor_a_host_cookie_and_keeps_it_on_that_host(proxy):
    answer, set_cookie = _get(proxy + "playground/api/status")
    assert set_cookie is not None
    m = re.fullmatch(r"playground_host=([0-9a-f]{32}); Path=/; HttpOnly; SameSite=Lax", set_cookie)
    assert m, set_cookie
    cookie = f"playground_host={m.group(1)}"
    for _ in range(10):
        again, set_again = _get(proxy + "voila/api/shutdown/x", cookie)
        assert again["host"] == answer["host"]
        assert set_again is None  # the browser has its cookie: nothing new is set


def test_the_proxy_sends_fresh_visitors_to_both_hosts(proxy):
    hosts = {_get(proxy)[0]["host"] for _ in range(40)}  # P(one host only) = 2 * 2**-40 with an even hash
    assert hosts == {"one", "two"}


def test_the_proxy_passes_the_websocket_upgrade_and_the_host_with_its_port(proxy):
    got, _ = _get(proxy + "api/kernels/k/channels", headers={"Upgrade": "websocket", "Connection": "Upgrade"})
    port = proxy.rsplit(":", 1)[1].rstrip("/")
    assert got["headers"]["upgrade"] == "websocket"
    assert got["headers"]["connection"] == "upgrade"
    assert got["headers"]["host"] == f"127.0.0.1:{port}"  # Jupyter checks a websocket's Origin against it
    assert got["headers"]["x-forwarded-for"] == "127.0.0.1"
    plain, _ = _get(proxy)
    assert plain["headers"]["connection"] == "close"


def test_render_puts_every_address_of_the_shipped_file_in_place():
    text = render(CONF.read_text(), [1001, 1002, 1003], 1004, 1005, 1006)
    assert re.findall(r"server 127\.0\.0\.1:(\d+);", text) == ["1001", "1002", "1003", "1004"]
    assert re.findall(r"listen ([^;]+);", text) == ["127.0.0.1:1005", "127.0.0.1:1006"]
    code = "\n".join(line.split("#")[0] for line in text.splitlines())
    assert "playground-1" not in code and "room:" not in code


# --- the compose file: not run here (no container engine), checked against the nginx file and the CLI ----------

COMPOSE = REPO / "deploy" / "compose.yaml"


def _compose() -> dict:
    import yaml

    return yaml.safe_load(COMPOSE.read_text())


def _nginx_upstreams() -> list[tuple[str, int]]:
    code = "\n".join(line.split("#")[0] for line in CONF.read_text().splitlines())
    return [(name, int(port)) for name, port in re.findall(r"^\s*server ([\w.-]+):(\d+);", code, flags=re.M)]


def test_every_upstream_of_the_nginx_file_is_a_compose_service_on_that_port():
    services = _compose()["services"]
    upstreams = _nginx_upstreams()
    assert upstreams == [("playground-1", 8866), ("playground-2", 8866), ("room", 8867)]
    for name, port in upstreams:
        command = services[name]["command"]
        assert command[command.index("--port") + 1] == str(port), name
    assert "--read-only" in services["room"]["command"]
    nginx_service = services["nginx"]
    assert "./nginx/playground.conf:/etc/nginx/conf.d/default.conf:ro" in nginx_service["volumes"]
    listens = re.findall(r"^\s*listen (\d+);", CONF.read_text(), flags=re.M)
    assert [p.split(":")[0] for p in nginx_service["ports"]] == listens == ["80", "8867"]


def test_every_compose_serve_command_is_one_the_cli_accepts(monkeypatch, capsys):
    """Each service's ``playground serve ...`` with ``--print-command`` (parses, plans, starts nothing)."""
    from store_fixtures import run_cli

    from playground.cli import serve

    services = _compose()["services"]
    commands = {name: svc["command"] for name, svc in services.items() if svc.get("command", [""])[0] == "playground"}
    assert sorted(commands) == ["playground-1", "playground-2", "room"]
    for key in ("PLAYGROUND_SERVE_TOKEN", "PLAYGROUND_INSTRUCTOR_TOKEN", "PLAYGROUND_OBSERVER_TOKEN"):
        assert key in services["playground-1"]["environment"]
        monkeypatch.setenv(key, f"key-of-{key}")
    monkeypatch.setenv("PLAYGROUND_DB", "postgresql://playground@postgres/playground")
    for name, command in commands.items():
        code, out, err = run_cli(serve, [*command[1:], "--print-command"], capsys)
        assert code == 0, (name, err)
        assert f"--port={command[command.index('--port') + 1]}" in out and "--Voila.ip=0.0.0.0" in out, name


# --- a class on two hosts, one store, the room on a third process (slow) ----------------------------------------


def serve_host(tmp: Path, name: str, url: str, *extra: str) -> tuple[subprocess.Popen, int, Path]:
    """``playground serve`` on a free loopback port on the store ``url`` (as the recipe's hosts: no share per
    address behind the proxy); the process, its port and its log (``tmp/NAME.log``)."""
    port = free_port()
    log = tmp / f"{name}.log"
    cmd = [sys.executable, "-m", "playground", "serve", "--port", str(port), "--db", url, "--cull-idle", "0",
           "--max-per-address", "0", *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PLAYGROUND_READ_ONLY", None)
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=str(REPO),
                                start_new_session=True)
    try:
        wait_for_port(port, proc, 180, log)
    except Exception:
        stop_server(proc)
        raise
    return proc, port, log


def room_text(room_base: str) -> str:
    """Every text the room's page shows (its widgets' state, as its kernel sends it to the browser)."""
    import uuid

    from bench_class import _msg, _read_v1
    from serve_clients import kernel_socket, open_page, v1_frame

    page = open_page(room_base, "", timeout=300)
    assert page.status == 200 and page.kernel_id, page.html[-2000:]
    ws = kernel_socket(page, timeout=120)
    try:
        session, control = uuid.uuid4().hex, uuid.uuid4().hex
        ws.send_binary(v1_frame("shell", _msg("comm_open", {"comm_id": control, "data": {},
                                                            "target_name": "jupyter.widget.control"},
                                              session, {"version": "1.0.0"})))
        ws.send_binary(v1_frame("shell", _msg("comm_msg", {"comm_id": control,
                                                           "data": {"method": "request_states"}}, session)))
        while True:
            frame = ws.recv()
            if isinstance(frame, bytes):
                _ch, header, _parent, content, _bufs = _read_v1(frame)
                data = content.get("data", {}) if header["msg_type"] == "comm_msg" else {}
                if data.get("method") == "update_states":
                    return json.dumps(data["states"])
    finally:
        ws.close()


@pytest.mark.slow
@pytest.mark.postgres
def test_a_class_through_the_proxy_on_two_hosts(tmp_path, pg_server):
    """Six protocol students through nginx onto two hosts: 0 labels lost, one store, the room sees them all."""
    need_nginx()
    from bench_class import Student, lost_labels, student
    from serve_clients import status, wait_until
    from store_fixtures import drop_pg_schema, new_pg_schema

    from playground.store import open_store

    schema, url = new_pg_schema(pg_server)
    procs: list[subprocess.Popen] = []
    try:
        one, p1, log1 = serve_host(tmp_path, "host-1", url, "--preheat", "3", "--open-slots", "2")
        procs.append(one)
        two, p2, log2 = serve_host(tmp_path, "host-2", url, "--preheat", "3", "--open-slots", "2")
        procs.append(two)
        room, p3, _log3 = serve_host(tmp_path, "room", url, "--read-only", "--preheat", "0")
        procs.append(room)
        for port in (p1, p2):  # the pools full first, as a class is let in (the bench does the same)
            assert wait_until(lambda port=port: status(f"http://127.0.0.1:{port}/")["pool_ready"] >= 3, 600, 2.0)
        with nginx([p1, p2], p3, tmp_path / "nginx") as (base, room_base):
            students = [Student(f"student-{i:02d}", 30) for i in range(6)]
            until = time.monotonic() + 150  # time to label even when a loaded machine opens the pages slowly
            threads = [threading.Thread(target=student, args=(base, st, until, 3.0), daemon=True) for st in students]
            for t in threads:
                t.start()
                time.sleep(1.0)
            for t in threads:
                t.join(timeout=until + 300 - time.monotonic())
            assert [(s.name, s.error) for s in students if s.error or s.open_s is None] == []
            assert all(s.last for s in students), [(s.name, s.last) for s in students]  # each one labelled
            assert lost_labels(url, students) == 0  # type: ignore[arg-type]  (open_store takes a URL too)
            with open_store(url, read_only=True, create=False) as store:
                assert set(store.annotators()) >= {s.name for s in students}
            served = {name: [s.name for s in students if f"page for '{s.name}'" in log.read_text(errors="replace")]
                      for name, log in (("host-1", log1), ("host-2", log2))}
            print(f"\n[multihost] pages built per host: {served}")
            assert sorted(served["host-1"] + served["host-2"]) == [s.name for s in students]  # each on one host
            shown = room_text(room_base)
            assert [s.name for s in students if s.name not in shown] == []
    finally:
        for proc in reversed(procs):
            stop_server(proc)
        drop_pg_schema(pg_server, schema)
