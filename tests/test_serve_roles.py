"""Roles, keys and page rewriting of ``playground serve``, without a server: the rules, one by one."""
from __future__ import annotations

import json

import pytest

from playground.cli import build_parser
from playground.cli.serve import build_command, open_role, per_address, plan_for, role_keys
from playground.serving import auth
from playground.serving.kernels import kernel_env
from playground.serving.page import NO_WIDGET_TEXT, plain_widget_text

KEY_ENVS = ("PLAYGROUND_SERVE_TOKEN", "PLAYGROUND_INSTRUCTOR_TOKEN", "PLAYGROUND_OBSERVER_TOKEN")


def _args(*argv):
    return build_parser().parse_args(["serve", *argv])


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)


def test_on_loopback_without_keys_the_visitor_is_the_machines_own_user():
    args = _args()
    assert role_keys(args) == {} and open_role(args) == "instructor"


def test_beyond_loopback_students_and_the_instructor_get_different_keys(monkeypatch):
    monkeypatch.setenv("PLAYGROUND_SERVE_TOKEN", "class-key")
    keys = role_keys(_args("--host", "0.0.0.0"))
    assert set(keys) == {"student", "instructor"} and keys["student"] == "class-key"
    assert keys["instructor"] != "class-key" and len(keys["instructor"]) >= 20


def test_the_room_takes_the_instructor_and_an_observer_never_the_class_key(monkeypatch):
    monkeypatch.setenv("PLAYGROUND_SERVE_TOKEN", "class-key")
    monkeypatch.setenv("PLAYGROUND_INSTRUCTOR_TOKEN", "teacher-key")
    keys = role_keys(_args("--read-only", "--host", "0.0.0.0"))
    assert keys["instructor"] == "teacher-key" and set(keys) == {"instructor", "observer"}
    assert "class-key" not in keys.values()


def test_no_auth_gives_the_least_power():
    assert role_keys(_args("--host", "0.0.0.0", "--no-auth")) == {}
    assert open_role(_args("--host", "0.0.0.0", "--no-auth")) == "student"
    assert open_role(_args("--host", "0.0.0.0", "--no-auth", "--read-only")) == "observer"


def test_the_room_starts_no_pool():
    sizing = plan_for(_args("--read-only"))
    assert (sizing.pool, sizing.max_kernels) == (0, 4)
    cmd, env = build_command(_args("--read-only"), sizing)
    assert not any(c.startswith("--preheat_kernel") for c in cmd) and env["PLAYGROUND_OPEN_ROLE"] == "instructor"


def test_one_address_gets_half_the_cap_beyond_loopback():
    assert per_address(_args("--host", "0.0.0.0"), 87) == 43
    assert per_address(_args("--host", "0.0.0.0"), 5) == 4     # at least 4
    assert per_address(_args(), 87) == 0                       # loopback: every client is this machine
    assert per_address(_args("--host", "0.0.0.0", "--max-per-address", "0"), 87) == 0


def test_the_keys_compare_and_name_the_role():
    auth.take_keys({"PLAYGROUND_SERVE_TOKEN": "s-key", "PLAYGROUND_INSTRUCTOR_TOKEN": "i-key"})
    provider = auth.RoleIdentityProvider()
    assert provider.role_for_key("s-key") == "student" and provider.role_for_key("i-key") == "instructor"
    assert provider.role_for_key("") is None and provider.role_for_key("s-ke") is None
    assert auth.role_of(provider.generate_anonymous_user(None)) == "student"
    auth.take_keys({})


def test_the_key_never_reaches_a_kernel():
    assert auth.scrub_query("token=abc&annotator=Zo%C3%AB&case=GC-1") == "annotator=Zo%C3%AB&case=GC-1"
    assert auth.scrub_url("http://h:1/?token=abc&annotator=a") == "http://h:1/?annotator=a"
    env = {"QUERY_STRING": "token=k&annotator=a", "VOILA_REQUEST_URL": "http://h/?token=k", "PLAYGROUND_ROLE": "x"}
    token = auth.current_role.set("observer")
    try:
        page = kernel_env(env, "kid-1", for_pool=False)
    finally:
        auth.current_role.reset(token)
    assert page["QUERY_STRING"] == "annotator=a" and page["VOILA_REQUEST_URL"] == "http://h/"
    assert page["PLAYGROUND_ROLE"] == "observer" and "PLAYGROUND_KERNEL_KEY" not in page
    pooled = kernel_env({"PLAYGROUND_KERNEL_KEY": "forged"}, "kid-1", for_pool=True)
    assert pooled["PLAYGROUND_KERNEL_KEY"] == auth.kernel_key("kid-1") != auth.kernel_key("kid-2")
    assert "PLAYGROUND_ROLE" not in pooled  # a pooled kernel learns its role with its request


def test_a_widget_never_shows_as_a_python_repr():
    output = {"data": {"application/vnd.jupyter.widget-view+json": {"model_id": "ab12", "version_major": 2},
                       "text/plain": "VBox(children=(HTML(value='<b>x</b>'),))"},
              "metadata": {}, "output_type": "display_data"}
    html = ('<div><script type="application/vnd.voila.cell-output+json">' + json.dumps(output) + "</script></div>"
            '<script type="application/vnd.voila.cell-output+json">{"data": {"text/plain": "42"}}</script>')
    out = plain_widget_text(html)
    assert "VBox(" not in out and NO_WIDGET_TEXT in out
    assert '{"data": {"text/plain": "42"}}' in out  # an output without a widget is left as it is
    inner = out.split('json">', 1)[1].split("</script>", 1)[0]
    view = json.loads(inner)["data"]["application/vnd.jupyter.widget-view+json"]
    assert "<" not in inner and view["model_id"] == "ab12"  # '<' escaped as in Jinja's tojson


def test_the_kernel_websocket_sends_no_server_paths():
    from jupyter_client.session import Session

    from playground.serving.guards import quieted

    session = Session(key=b"k")

    def frames(msg_type, content):
        return session.serialize(session.msg(msg_type, content), ident=[b"iopub"])

    def content_of(msg_list):
        _idents, fed = session.feed_identities(msg_list)
        return session.deserialize(fed, content=True)["content"]

    assert quieted(session, frames("stream", {"name": "stderr", "text": "File /srv/x.py, line 1"})) is None
    out = frames("stream", {"name": "stdout", "text": "hello"})
    assert quieted(session, out) is out
    error = quieted(session, frames("error", {"ename": "TraitError", "evalue": "in /srv/venv/traitlets.py",
                                              "traceback": ["File /srv/venv/traitlets.py"]}))
    assert content_of(error) == {"ename": "TraitError", "traceback": [],
                                 "evalue": "an error in the page's kernel (details in the server's log)"}
    other = frames("comm_msg", {"comm_id": "c", "data": {"method": "update"}})
    assert quieted(session, other) is other


def test_the_rooms_writes_check_the_role(tmp_path):
    """Issue 29: RoomStore refuses both of its writes to a page without the instructor's role, whatever the page
    shows; nothing reaches the store."""
    from playground.assign import make_assignment
    from playground.calibrate.room import RoomStore
    from playground.store import open_store

    with open_store(str(tmp_path / "labels.db"), create=True) as store:
        observer = RoomStore(store, {}, "golden", may_write=False)
        assert observer.writable is False
        with pytest.raises(PermissionError, match="only the instructor's link"):
            observer.adjudicate("GC-0001-R1:claim:0", "supported", 1, "mallory")
        queue = make_assignment(["u1", "u2"], ["alice"], 1, 1, name="q", dataset="golden")
        with pytest.raises(PermissionError):
            observer.save_assignment(queue)
        assert list(store.assignments()) == []
        RoomStore(store, {}, "golden").save_assignment(queue)  # the instructor's page (the default)
        assert [a.name for a in store.assignments()] == ["q"]
