"""``playground serve`` without a server: the frame guards, pool sizing, the kernel watch, the command, the token."""
from __future__ import annotations

import asyncio
import json
import struct
import sys
import time
from concurrent.futures import Future
from pathlib import Path

import pytest
from jupyter_server.services.kernels.connection import base as ws_base

from playground.cli import build_parser, main
from playground.cli.serve import TOKEN_ENV, build_command, join_url, notebook_path
from playground.serving import guards, sizing
from playground.serving.guards import MAX_PARTS, MalformedFrame
from playground.serving.kernels import ClassFull, GuardedKernelManager, pooled_kernel_ids, track_request_kernels

REFERENCE_V1 = ws_base.serialize_msg_to_ws_v1  # upstream serialisers: the reference for well-formed frames
REFERENCE_LEGACY = ws_base.serialize_binary_message
MSG = {"header": {"msg_id": "m1", "msg_type": "comm_msg", "session": "s", "username": "u", "version": "5.3",
                  "date": "2026-01-01T00:00:00Z"},
       "parent_header": {}, "metadata": {}, "content": {"comm_id": "c", "data": {"method": "update"}}}


def _v1(parts, channel="shell"):
    return REFERENCE_V1([json.dumps(p).encode() if not isinstance(p, bytes) else p for p in parts], channel)


def _v1_raw(offsets, tail=b""):
    return len(offsets).to_bytes(8, "little") + b"".join(o.to_bytes(8, "little") for o in offsets) + tail


# --- v1 frames --------------------------------------------------------------------------------------------------


def test_a_well_formed_v1_frame_reads_as_upstream_writes_it():
    frame = _v1([MSG["header"], MSG["parent_header"], MSG["metadata"], MSG["content"], b"\x00\x01buffer"])
    channel, parts = guards.deserialize_v1(frame)
    assert channel == "shell"
    assert [bytes(p) for p in parts] == [json.dumps(MSG["header"]).encode(), b"{}", b"{}",
                                         json.dumps(MSG["content"]).encode(), b"\x00\x01buffer"]
    assert guards.read_header(frame) == MSG["header"]


def test_the_16_byte_frame_of_issue_17_is_refused_at_once():
    frame = b"\xff" * 7 + b"\x7f" + b"\x00" * 8
    # refused by the part-count check, before any part is read (upstream would loop 2**63 times)
    with pytest.raises(MalformedFrame, match=r"part count 9223372036854775807 outside 2\.\.1024"):
        guards.deserialize_v1(frame)
    assert guards.read_header(frame) is None


def test_v1_part_count_boundaries():
    # n = 2: channel only, no message parts (the smallest frame the format allows)
    assert guards.deserialize_v1(_v1_raw([24, 29], b"shell")) == ("shell", [])
    with pytest.raises(MalformedFrame, match="part count 1 outside"):
        guards.v1_offsets(_v1_raw([16], b"x"))
    with pytest.raises(MalformedFrame, match="part count 0 outside"):
        guards.v1_offsets(b"\x00" * 8)
    # n = MAX_PARTS is allowed, MAX_PARTS + 1 is not
    start = 8 * (MAX_PARTS + 1)
    ok = _v1_raw([start] * MAX_PARTS)
    assert len(guards.v1_offsets(ok)) == MAX_PARTS
    with pytest.raises(MalformedFrame, match=f"part count {MAX_PARTS + 1} outside"):
        guards.v1_offsets(_v1_raw([start + 8] * (MAX_PARTS + 1)))


def test_v1_offsets_must_fit_the_frame():
    good = _v1_raw([24, 29], b"shell")
    assert guards.v1_offsets(good) == [24, 29]
    with pytest.raises(MalformedFrame, match="2 offsets need 24 bytes; the frame has 23"):
        guards.v1_offsets(good[:23])
    with pytest.raises(MalformedFrame, match="offset 30 beyond the frame's 29 bytes"):
        guards.v1_offsets(_v1_raw([24, 30], b"shell"))
    with pytest.raises(MalformedFrame, match="not in increasing order"):
        guards.v1_offsets(_v1_raw([32, 37, 34], b"shell"))
    with pytest.raises(MalformedFrame, match="first offset 23 inside the 24-byte offset table"):
        guards.v1_offsets(_v1_raw([23, 29], b"shell"))
    with pytest.raises(MalformedFrame, match="shorter than the 8-byte part count"):
        guards.v1_offsets(b"\x02\x00")
    with pytest.raises(MalformedFrame, match="must be binary"):
        guards.v1_offsets("text")  # type: ignore[arg-type]


# --- legacy binary frames (what Voila misread as v1: issue 17's first trigger) ---------------------------------


def test_a_legacy_frame_reads_as_upstream_writes_it_and_its_header_is_found():
    frame = REFERENCE_LEGACY({**MSG, "buffers": [b"\x89PNG-bytes", b"more"]})
    # upstream's v1 reader would take these 8 bytes as a part count of ~8.6e17
    assert int.from_bytes(frame[:8], "little") > 10**15
    msg = guards.deserialize_legacy(frame)
    assert msg["content"] == MSG["content"] and [bytes(b) for b in msg["buffers"]] == [b"\x89PNG-bytes", b"more"]
    assert guards.read_header(frame)["msg_type"] == "comm_msg"


def test_legacy_frames_that_lie_are_refused():
    huge = struct.pack("!i", 2**31 - 1) + b"\x00" * 12
    with pytest.raises(MalformedFrame, match=r"part count 2147483647 outside 1\.\.1024"):
        guards.deserialize_legacy(huge)
    with pytest.raises(MalformedFrame, match="part count -1 outside"):
        guards.legacy_offsets(struct.pack("!i", -1) + b"\x00" * 4)
    with pytest.raises(MalformedFrame, match="3 offsets need 16 bytes; the frame has 12"):
        guards.legacy_offsets(struct.pack("!iII", 3, 16, 16))
    with pytest.raises(MalformedFrame, match="not UTF-8 JSON"):
        guards.deserialize_legacy(struct.pack("!iI", 1, 8) + b"\xff\xfe")
    assert guards.read_header(huge) is None


def test_install_replaces_the_upstream_parsers_once(monkeypatch):
    from jupyter_server.services.kernels.connection import channels
    from voila.tornado import kernel_websocket_handler as voila_ws

    for module, name in ((ws_base, "deserialize_msg_from_ws_v1"), (channels, "deserialize_msg_from_ws_v1"),
                         (ws_base, "deserialize_binary_message"), (channels, "deserialize_binary_message"),
                         (voila_ws, "read_header_from_binary_message")):
        monkeypatch.setattr(module, name, getattr(module, name))
    monkeypatch.setattr(channels.ZMQChannelsWebsocketConnection, "handle_incoming_message",
                        channels.ZMQChannelsWebsocketConnection.handle_incoming_message)
    monkeypatch.setattr(guards, "_installed", False)
    guards.install()
    guards.install()
    assert guards.installed()
    assert channels.deserialize_msg_from_ws_v1 is guards.deserialize_v1
    assert channels.deserialize_binary_message is guards.deserialize_legacy
    assert voila_ws.read_header_from_binary_message is guards.read_header


# --- pool and cap from free memory ------------------------------------------------------------------------------


@pytest.mark.parametrize(("available", "pool", "cap"), [
    (23494, 30, 87),   # the project's machine: (23494 - 1024) // 256 = 87 planned; 87 - 2 = 85 ≥ a class of 30
    (30719, 30, 115),
    (9216, 30, 32),    # exactly 30 + 2 kernels planned: (9216 - 1024) // 256 = 32
    (9215, 29, 31),    # one MiB less: 31 planned, 31 - 2 = 29 ready
    (2047, 1, 3),
    (2048, 2, 4),      # 4 kernels planned: 2 ready
    (1023, 1, 2),      # under one kernel's worth: still one
    (1000, 1, 2),      # less than the reserve: the cap stays above the pool
])
def test_pool_and_cap_follow_available_memory(available, pool, cap):
    s = sizing.plan(available)
    assert (s.pool, s.max_kernels) == (pool, cap)


def test_pool_and_cap_given_are_kept():
    assert sizing.plan(23494, pool=0) == sizing.Sizing(23494, 0, 87)
    assert sizing.plan(23494, pool=3, max_kernels=5) == sizing.Sizing(23494, 3, 5)
    assert sizing.plan(1000, pool=4).max_kernels == 5
    assert sizing.plan(23494).describe() == \
        ("30 preheated kernel(s) for a class of 30 (about 2.6 GiB), at most 87 kernels (planned 21.8 GiB of "
         "22.9 GiB available); the pool is full in about 60 s")


def test_available_memory_is_read():
    assert sizing.available_mib() > 0


# --- the kernel watch -------------------------------------------------------------------------------------------


def _manager(**kw) -> GuardedKernelManager:
    m = GuardedKernelManager(**kw)
    m._kernels = {k: object() for k in ("pooled", "never", "gone", "held")}
    m._kernel_connections = {"pooled": 0, "never": 0, "gone": 0, "held": 1}
    done: Future = Future()
    done.set_result({"kernel_id": "pooled"})
    starting: Future = Future()
    m._pools = {"playground.ipynb": [done, starting]}
    m._started_at = {"pooled": 0.0, "never": 100.0, "gone": 0.0, "held": 0.0}
    m._ever_connected = {"gone", "held"}
    m._disconnected_at = {"gone": 200.0}
    m._served_at = {"never": 100.0}
    return m


def test_the_watch_ends_unconnected_and_abandoned_kernels_at_their_timeouts():
    m = _manager(unconnected_timeout=60, disconnected_timeout=30)
    assert pooled_kernel_ids(m) == {"pooled"}
    assert m.orphans(now=159.9) == []
    assert m.orphans(now=160.0) == [("never", "unconnected")]            # exactly 60 s after its page was sent
    assert m.orphans(now=229.9) == [("never", "unconnected")]
    assert m.orphans(now=230.0) == [("never", "unconnected"), ("gone", "disconnected")]  # exactly 30 s after


def test_a_kernel_handed_out_gets_a_minute_from_when_its_page_was_sent():
    m = _manager(unconnected_timeout=60, render_timeout=600)
    assert ("pooled", "unconnected") not in m.orphans(now=1000.0)  # seen in the pool at 1000
    m._pools = {}                                                 # ... then handed to a request
    assert all(kid != "pooled" for kid, _ in m.orphans(now=1599.9))   # a slow page: still rendering
    assert ("pooled", "unsent") in m.orphans(now=1600.0)              # the backstop: 600 s handed out, never sent
    m._served_at["pooled"] = 1500.0                                   # its page was sent at 1500
    assert all(kid != "pooled" for kid, _ in m.orphans(now=1559.9))
    assert ("pooled", "unconnected") in m.orphans(now=1560.0)


def test_kernels_started_for_a_request_are_tracked_but_not_pool_refills(monkeypatch):
    from playground.serving.kernels import _request_kernels

    m = _manager()
    calls = iter(["k-page", "k-pool"])

    async def fake_start(self, *args, **kwargs):
        return next(calls)

    async def run():
        started = track_request_kernels()
        await m.start_kernel(kernel_name="python3", env={"VOILA_PREHEAT": "False"})
        await m.start_kernel(kernel_name="python3", env={"VOILA_PREHEAT": "True"})
        return started

    from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager

    monkeypatch.setattr(AsyncMappingKernelManager, "start_kernel", fake_start)
    monkeypatch.setattr(GuardedKernelManager, "_start_watch", lambda self: None)
    assert asyncio.run(run()) == ["k-page"]
    assert _request_kernels.get() is None  # asyncio.run ran in a copy of the context


def test_connecting_and_disconnecting_are_tracked():
    m = _manager(disconnected_timeout=30)
    m.notify_connect("never")
    assert "never" in m._ever_connected and m._kernel_connections["never"] == 1
    assert all(kid != "never" for kid, _ in m.orphans(now=10_000.0))
    before = time.monotonic()
    m.notify_disconnect("never")
    assert before <= m._disconnected_at["never"] <= time.monotonic()
    # the boundary on exact binary numbers: (t + 30) - t with t from the clock is not always 30.0 (issue 27)
    m._disconnected_at["never"] = 1000.0
    assert ("never", "disconnected") in m.orphans(now=1030.0)
    assert ("never", "disconnected") not in m.orphans(now=1029.75)


def test_a_page_beyond_the_cap_is_refused_and_a_pool_refill_waits():
    m = _manager(max_kernels=4)
    assert m.kernel_count() == 4 and m.full() and m.ready_in_pool() == 1
    with pytest.raises(ClassFull, match="4 kernels are running"):
        asyncio.run(m.start_kernel(kernel_name="python3", env={"VOILA_PREHEAT": "False"}))
    m._closing = True  # a waiting refill gives up when the server stops
    with pytest.raises(ClassFull, match="stopping"):
        asyncio.run(m.start_kernel(kernel_name="python3", env={"VOILA_PREHEAT": "True"}))
    m.max_kernels = 5
    assert not m.full()


# --- the command line -------------------------------------------------------------------------------------------


def _args(*argv):
    return build_parser().parse_args(["serve", *argv])


def test_serve_builds_the_guarded_voila_command():
    cmd, env = build_command(_args("--port", "9001", "--host", "0.0.0.0", "--db", "x.db", "--root",
                                   "tests/data/mini", "--cull-idle", "600", "--theme", "dark", "--dataset", "ragtruth",
                                   "--preheat", "3", "--max-kernels", "20", "--disconnect-grace", "12"))
    assert cmd[:4] == [sys.executable, "-m", "playground.serving", str(notebook_path("playground"))]
    for flag in ("--port=9001", "--Voila.ip=0.0.0.0", "--no-browser", "--theme=dark", "--Voila.port_retries=0",
                 "--MappingKernelManager.cull_idle_timeout=600", "--MappingKernelManager.cull_interval=60",
                 "--GuardedKernelManager.max_kernels=20", "--GuardedKernelManager.unconnected_timeout=60.0",
                 "--GuardedKernelManager.disconnected_timeout=12.0", "--KernelManager.transport=ipc",
                 "--preheat_kernel=True", "--pool_size=3"):
        assert flag in cmd, flag
    # the kernels run in notebooks/: a relative store is resolved where the command was typed (issue 42.1)
    assert env["PLAYGROUND_DB"] == str(Path.cwd() / "x.db") and env["PLAYGROUND_READ_ONLY"] == "0"
    assert env["PLAYGROUND_DATASET"] == "ragtruth"
    assert env["PLAYGROUND_ROOT"] == str(Path("tests/data/mini").resolve())
    cmd, env = build_command(_args("--open", "--preheat", "0"))
    assert "--no-browser" not in cmd and "--preheat_kernel=True" not in cmd and "--Voila.ip=127.0.0.1" in cmd
    assert "PLAYGROUND_DB" not in env and "PLAYGROUND_DATASET" not in env
    assert not any("token" in part.lower() for part in cmd)


def test_the_default_pool_follows_free_memory(monkeypatch):
    monkeypatch.setattr(sizing, "available_mib", lambda: 8192)
    cmd, _ = build_command(_args())
    assert "--pool_size=26" in cmd and "--GuardedKernelManager.max_kernels=28" in cmd  # (8192 - 1024) // 256 = 28


def test_read_only_serves_the_room_when_it_is_installed(monkeypatch, tmp_path):
    import playground.cli.serve as serve

    monkeypatch.setattr(serve, "notebook_path", lambda name: tmp_path / f"{name}.ipynb")
    (tmp_path / "playground.ipynb").write_text("{}")
    assert build_command(_args("--read-only"))[0][3] == str(tmp_path / "playground.ipynb")
    (tmp_path / "room.ipynb").write_text("{}")
    cmd, env = build_command(_args("--read-only"))
    assert cmd[3] == str(tmp_path / "room.ipynb") and env["PLAYGROUND_READ_ONLY"] == "1"
    assert build_command(_args("--read-only", "--notebook", "calibrate"))[0][3] == str(tmp_path / "calibrate.ipynb")


def test_a_token_is_asked_for_beyond_loopback(monkeypatch):
    from playground.cli.serve_links import _token

    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert _token(_args()) is None
    assert _token(_args("--host", "127.0.0.2")) is None
    first, second = _token(_args("--host", "0.0.0.0")), _token(_args("--host", "0.0.0.0"))
    assert first and second and first != second and len(first) >= 20
    assert _token(_args("--host", "0.0.0.0", "--no-auth")) is None
    monkeypatch.setenv(TOKEN_ENV, "class-of-2026")
    assert _token(_args("--host", "192.168.1.5")) == "class-of-2026"
    assert _token(_args()) == "class-of-2026"  # given: used on loopback too


def test_join_url():
    assert join_url("127.0.0.1", 8866) == "http://127.0.0.1:8866/"
    assert join_url("10.0.0.2", 80, "/class", "abc") == "http://10.0.0.2:80/class/?token=abc"
    assert join_url("::1", 8866) == "http://[::1]:8866/"


def test_print_command_never_prints_the_token(capsys, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "sekret-token-value")
    assert main(["serve", "--print-command", "--port", "9002", "--host", "0.0.0.0"]) == 0
    out = capsys.readouterr().out
    assert "-m playground.serving" in out and "--port=9002" in out
    assert "sekret-token-value" not in out and f"{TOKEN_ENV}=(set" in out


def test_serve_refuses_bad_input(capsys, tmp_path):
    assert main(["serve", "--root", str(tmp_path)]) == 1
    assert "no corpus/ folder" in capsys.readouterr().err
    assert main(["serve", "--preheat", "4", "--max-kernels", "4"]) == 1
    assert "--preheat 4 leaves no kernel for a page under --max-kernels 4" in capsys.readouterr().err
    assert main(["serve", "--max-kernels", "0", "--disconnect-grace", "0"]) == 1
    err = capsys.readouterr().err
    assert "--max-kernels must be at least 1" in err and "--disconnect-grace must be a positive" in err


def test_serve_help_explains_the_token_and_the_cap(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for text in ("asks for keys", "instructor link", "observer", "?token=", "--no-auth", "class is full",
                 "--max-kernels", "--class-size", "the class and two kernels more", "--dataset", "not authentication"):
        assert text.lower() in out.lower(), text


def test_the_class_full_page_renders():
    from playground.serving.app import CLASS_FULL_HTML

    html = CLASS_FULL_HTML.format(count=3, cap=3)
    assert "The class is full" in html and "3 of 3 kernels are running" in html and "Try again in a minute" in html


def test_a_pool_refill_lets_waiting_pages_go_first():
    m = _manager(refill_yield=60)
    m._pool_started = {"pooled": 0.0}
    # "never" (sent at 100, not connected) and "gone"/"held" (connected) are not waiting; nothing is starting
    assert m.pages_waiting() == 0
    m._kernels["cold"] = object()           # a cold kernel computing a visitor's page
    m._kernel_connections["cold"] = 0
    assert m.pages_waiting() == 1
    m._starting_pages.add("starting")      # and one still starting
    assert m.pages_waiting() == 2
    m.page_served("cold")
    m._starting_pages.clear()
    assert m.pages_waiting() == 0
    m._kernels["refill"] = object()         # a refill that just started is not a page
    m._pool_started["refill"] = 5.0
    assert m.pages_waiting() == 0


def test_a_page_is_being_opened_until_it_connected_and_settled():
    m = _manager(connect_grace=10, settle_time=3)
    # "never" was sent at 100 and has not connected: opening for exactly connect_grace seconds
    assert m.pages_opening(now=109.9) == 1
    assert m.pages_opening(now=110.0) == 0
    m._connected_first["never"] = 105.0      # it connected at 105: opening until exactly 108
    assert m.pages_opening(now=107.9) == 1
    assert m.pages_opening(now=108.0) == 0
    m._kernels.pop("never")                  # a page whose kernel is gone is not being opened
    m._connected_first.clear()
    assert m.pages_opening(now=100.0) == 0
    m._starting_pages.add("cold")            # a cold page's kernel starting counts (pages_waiting)
    assert m.pages_opening(now=100.0) == 1


def test_pool_refills_go_one_at_a_time_and_after_the_pages_being_opened():
    m = _manager(refill_yield=60, refill_spacing=2, connect_grace=10, settle_time=3, max_kernels=0)
    assert m.pages_opening(now=100.0) == 1    # "never", sent at 100
    assert not m.may_refill(waited=59.9, now=100.0)
    assert m.may_refill(waited=60.0, now=100.0)   # waited refill_yield: it goes anyway
    assert m.may_refill(waited=0.0, now=110.0)    # nothing being opened
    m._last_refill = 110.0
    assert not m.may_refill(waited=0.0, now=111.9)
    assert not m.may_refill(waited=60.0, now=111.9)  # the spacing holds even after the yield
    assert m.may_refill(waited=0.0, now=112.0)
    m.max_kernels = 4                             # four kernels: no place under the cap
    assert not m.may_refill(waited=60.0, now=200.0)


class _SimulatedClock:
    """A clock that moves only when the code under test sleeps: no real time passes."""

    def __init__(self, start: float) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_a_refill_that_may_go_records_its_start():
    m = _manager(refill_yield=60, refill_spacing=2, connect_grace=0, settle_time=0)
    m._served_at.clear()  # "never" is a page still being opened: the refill waits its yield of 60 s
    clock = _SimulatedClock(1000.0)
    m._clock, m._sleep = clock, clock.sleep
    asyncio.run(m._wait_to_refill())
    assert clock.sleeps == [0.5] * 120            # polled every half second, exactly 60 s (0.5 is exact in binary)
    first = m._last_refill
    assert first == 1060.0                         # it started the moment it had waited refill_yield
    assert not m.may_refill(waited=60.0, now=first + 1.9)  # the spacing of 2 s holds
    assert m.may_refill(waited=60.0, now=first + 2.0)      # ... and ends at exactly 2 s


def test_a_request_takes_a_started_kernel_first_and_none_that_is_still_starting():
    from types import SimpleNamespace

    from playground.serving.app import PageHandler

    m = _manager()
    pool = m._pools["playground.ipynb"]
    pool.reverse()                            # [still starting, started]: Voila would await the first
    handler = PageHandler.__new__(PageHandler)  # the decision alone: no request, no application around it
    handler.application = SimpleNamespace(settings={"kernel_manager": m})
    assert handler.kernel_manager is m
    assert handler.should_use_rendered_notebook({"template": "lab"}, 2, None, None, {}) is True
    assert [f.done() for f in pool] == [True, False] and pool[0].result() == {"kernel_id": "pooled"}
    m._pools = {"playground.ipynb": [Future()]}   # only a refill still waiting its turn: a cold kernel instead
    assert handler.should_use_rendered_notebook({"template": "lab"}, 1, None, None, {}) is False
    m._pools = {"playground.ipynb": [pool[0]]}     # a started kernel, but Voila's own rule says no:
    assert handler.should_use_rendered_notebook({}, 1, None, None, {}) is False               # no notebook data
    assert handler.should_use_rendered_notebook({"template": "lab"}, 1, "classic", None, {}) is False  # template
