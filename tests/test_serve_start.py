"""``playground serve`` before and around its server (issues 42.1, 43.5, 44.2), without starting Voila: paths
resolved where they were typed, the kernels' readiness reports, the rule for "ready", the pool's progress
lines, the parent-death signal, and a store that cannot be opened stopping ``serve`` before any link."""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from playground.cli.serve_paths import resolve_env, resolve_paths, resolve_store
from playground.cli.serve_run import (
    PROGRESS_EVERY_S,
    PoolProgress,
    built,
    die_with_parent,
    read_reports,
    wait_until_ready,
)
from playground.store.core import parse_url
from playground.ui import readiness

REPO = Path(__file__).resolve().parent.parent
HERE = Path("/srv/class")


# --- paths ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("typed", "meant"), [
    ("labels.db", "/srv/class/labels.db"),
    ("./week/labels.db", "/srv/class/week/labels.db"),
    ("../labels.db", "/srv/class/../labels.db"),
    ("/var/lib/labels.db", "/var/lib/labels.db"),
    ("sqlite:labels.db", "sqlite:///srv/class/labels.db"),
    ("sqlite://labels.db", "sqlite:///srv/class/labels.db"),
    ("sqlite:///var/lib/labels.db", "sqlite:///var/lib/labels.db"),
    ("sqlite:////var/lib/labels.db", "sqlite:///var/lib/labels.db"),
    ("postgresql://writer@dbhost/playground", "postgresql://writer@dbhost/playground"),
    ("postgres://writer@dbhost/playground", "postgres://writer@dbhost/playground"),
    ("POSTGRESQL://w@h/db", "POSTGRESQL://w@h/db"),
    ("mysql://w@h/db", "mysql://w@h/db"),  # not a store: left for open_store to refuse with its message
    (None, None),
])
def test_a_store_location_is_resolved_where_it_was_typed(typed, meant):
    assert resolve_store(typed, HERE) == meant


@pytest.mark.parametrize("typed", ["labels.db", "sqlite:labels.db", "sqlite://labels.db", "week/labels.db"])
def test_the_store_opens_the_same_file_whatever_the_folder(typed):
    """The reference is the store's own parser: the resolved location names the file the caller meant."""
    kind, where = parse_url(resolve_store(typed, HERE))
    assert kind == "sqlite" and where == HERE / typed.removeprefix("sqlite://").removeprefix("sqlite:")


def test_home_is_expanded():
    assert resolve_store("~/labels.db", HERE) == str(Path.home() / "labels.db")


def test_every_path_option_of_serve_is_made_absolute():
    args = argparse.Namespace(db="labels.db", root=Path("data"), roster=Path("names.txt"), links_file="links.txt")
    resolve_paths(args, HERE)
    assert args.db == "/srv/class/labels.db"
    assert args.root == Path("/srv/class/data") and isinstance(args.root, Path)
    assert args.roster == Path("/srv/class/names.txt")
    assert args.links_file == "/srv/class/links.txt"


def test_options_not_given_stay_unset():
    args = argparse.Namespace(db=None, root=None, roster=None, links_file=None)
    resolve_paths(args, HERE)
    assert (args.db, args.root, args.roster, args.links_file) == (None, None, None, None)


def test_path_settings_inherited_from_the_shell_are_resolved_and_others_left():
    env = {"PLAYGROUND_DB": "labels.db", "PLAYGROUND_ROOT": "data", "PLAYGROUND_HARNESS_RUN": "/abs/run",
           "PLAYGROUND_RAGTRUTH": "rt", "PLAYGROUND_DATASET": "golden", "HOME": "/root"}
    assert resolve_env(env, HERE) == {"PLAYGROUND_DB": "/srv/class/labels.db", "PLAYGROUND_ROOT": "/srv/class/data",
                                      "PLAYGROUND_RAGTRUTH": "/srv/class/rt"}
    assert resolve_env({"PLAYGROUND_DB": "postgresql://w@h/db"}, HERE) == {}


def test_print_command_shows_the_store_resolved_from_the_callers_folder(tmp_path):
    out = subprocess.run([sys.executable, "-m", "playground", "serve", "--db", "labels.db", "--root", "data",
                          "--preheat", "0", "--print-command"], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    # --root data does not exist: serve refuses, naming the folder as the caller meant it
    assert out.returncode == 1 and f"--root {tmp_path / 'data'}: no corpus/ folder there" in out.stderr
    out = subprocess.run([sys.executable, "-m", "playground", "serve", "--db", "labels.db", "--preheat", "0",
                          "--print-command"], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"PLAYGROUND_DB={tmp_path / 'labels.db'}" in out.stdout.splitlines()


# --- a store that cannot be opened stops serve before anything starts -----------------------------------------


@pytest.mark.parametrize(("extra", "said"), [
    (["--read-only", "--db", "missing.db"], "no label store at {tmp}/missing.db"),
    (["--db", "no-such-folder/labels.db"], "no-such-folder"),
    (["--db", "postgresql://nobody@127.0.0.1:9/none"], "postgresql"),
])
def test_a_store_that_cannot_be_opened_stops_serve_with_the_reason_and_no_link(tmp_path, extra, said):
    out = subprocess.run([sys.executable, "-m", "playground", "serve", "--port", "9299", "--preheat", "0", *extra],
                         cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                         timeout=120)
    assert out.returncode == 1
    assert "playground serve: label store:" in out.stderr and said.format(tmp=tmp_path) in out.stderr, out.stderr
    assert "ready" not in out.stdout and "http://" not in out.stdout and "token=" not in out.stdout + out.stderr


# --- the kernels' reports -----------------------------------------------------------------------------------


def test_a_kernel_reports_nothing_without_the_file_setting(monkeypatch, tmp_path):
    monkeypatch.delenv(readiness.READY_FILE_ENV, raising=False)
    assert readiness.report(readiness.READY) is False


def test_a_kernel_never_creates_the_file(monkeypatch, tmp_path):
    gone = tmp_path / "gone.jsonl"
    monkeypatch.setenv(readiness.READY_FILE_ENV, str(gone))
    assert readiness.report(readiness.FAILED, "StoreError: x") is False and not gone.exists()


def test_reports_are_one_json_line_each_and_a_partial_line_is_not_read(monkeypatch, tmp_path):
    reports = tmp_path / "ready.jsonl"
    reports.touch()
    monkeypatch.setenv(readiness.READY_FILE_ENV, str(reports))
    assert readiness.report(readiness.READY)
    assert readiness.report(readiness.FAILED, "StoreError: no label store at /x/labels.db")
    with reports.open("a", encoding="utf-8") as fh:
        fh.write('{"state": "ready"')  # a kernel still writing
    lines = reports.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"state": "ready", "pid": os.getpid()}
    assert read_reports(reports) == [{"state": "ready", "pid": str(os.getpid())},
                                     {"state": "failed", "pid": str(os.getpid()),
                                      "detail": "StoreError: no label store at /x/labels.db"}]


def test_built_is_the_pool_capped_by_the_pages_reported_built():
    two_built = [{"state": "ready"}, {"state": "ready"}, {"state": "failed"}]
    assert built({"pool_ready": 5}, two_built) == 2
    assert built({"pool_ready": 1}, two_built) == 1
    assert built({}, two_built) == 0


# --- ready, or why not --------------------------------------------------------------------------------------


class _Proc:
    def __init__(self, code=None):
        self.returncode = code

    def poll(self):
        return self.returncode


def _wait(tmp_path, lines, pool=3, status=lambda: {"pool_ready": 1}, proc=None, timeout=5.0):
    reports = tmp_path / "ready.jsonl"
    reports.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    said: list[str] = []
    progress = PoolProgress(pool, said.append)
    return wait_until_ready(proc or _Proc(), reports, status, progress, timeout=timeout, poll_s=0.01), said


def test_ready_once_a_pooled_kernel_has_built_its_page(tmp_path):
    found, _ = _wait(tmp_path, [{"state": "ready", "pid": 1}])
    assert found.ready and found.checked


def test_a_kernel_that_cannot_start_its_page_is_the_reason_even_beside_a_ready_one(tmp_path):
    found, _ = _wait(tmp_path, [{"state": "ready", "pid": 1},
                                {"state": "failed", "pid": 2, "detail": "StoreError: no label store at labels.db"}])
    assert not found.ready
    assert found.reason == "a page cannot start: StoreError: no label store at labels.db"


def test_a_server_that_exits_is_not_ready(tmp_path):
    found, _ = _wait(tmp_path, [], proc=_Proc(3))
    assert not found.ready and found.reason.startswith("the server stopped (exit 3) before a page was ready")


def test_nothing_ready_in_time_is_not_ready(tmp_path):
    found, said = _wait(tmp_path, [], timeout=0.05)
    assert not found.ready and found.reason.startswith("no page was ready 0 s after the start")
    assert said == ["preparing: 1 of 3 kernels started; the link follows when the first page is built"]


def test_without_a_pool_the_server_answering_is_ready_unchecked(tmp_path):
    found, said = _wait(tmp_path, [], pool=0)
    assert found.ready and not found.checked and said == []


def test_without_a_pool_a_silent_server_is_not_ready(tmp_path):
    found, _ = _wait(tmp_path, [], pool=0, status=lambda: None, timeout=0.05)
    assert not found.ready


# --- the pool's progress ------------------------------------------------------------------------------------


def test_progress_says_growth_at_most_every_few_seconds_and_full_once():
    now = [0.0]
    said: list[str] = []
    p = PoolProgress(4, said.append, clock=lambda: now[0])
    p.started(1)
    now[0] = PROGRESS_EVERY_S - 0.01
    p.started(2)  # too soon: not said
    now[0] = PROGRESS_EVERY_S
    p.started(2)  # grown since the last line, and PROGRESS_EVERY_S later: said
    p.ready(1)    # the link was given: the count starts again, in pages built
    now[0] += PROGRESS_EVERY_S
    p.ready(1)    # not grown: not said again
    p.ready(0)    # a student took one: never said as progress
    p.ready(4)
    p.ready(4)
    assert said == [
        "preparing: 1 of 4 kernels started; the link follows when the first page is built",
        "preparing: 2 of 4 kernels started; the link follows when the first page is built",
        "preparing: 1 of 4 kernels ready (students who come before a kernel is ready wait in line)",
        "pool full: 4 of 4 kernels ready",
    ]


def test_no_pool_no_progress():
    said: list[str] = []
    p = PoolProgress(0, said.append)
    p.started(0)
    p.ready(0)
    assert said == []


# --- the parent-death signal --------------------------------------------------------------------------------

_PARENT = """
import subprocess, sys, time
from playground.cli.serve_run import start_server
child = start_server([sys.executable, "-c", "import time; time.sleep(60)"], {})
print(child.pid, flush=True)
time.sleep(60)
"""


def test_the_server_gets_sigterm_when_serve_is_killed(tmp_path):
    parent = subprocess.Popen([sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)}, start_new_session=True)
    try:
        child = int(parent.stdout.readline())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        end = time.monotonic() + 5
        while time.monotonic() < end and _alive(child):
            time.sleep(0.05)
        assert not _alive(child), "the child outlived its parent's SIGKILL by 5 s"
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)


def test_a_parent_gone_before_the_request_is_signalled_at_once(monkeypatch):
    """The race: the parent died between the fork and the prctl call; the child signals itself."""
    import ctypes

    asked: list[tuple[int, ...]] = []

    class _Libc:  # this test process's own parent-death signal is left alone
        def prctl(self, *a):
            asked.append(a)
            return 0

    monkeypatch.setattr(ctypes, "CDLL", lambda *a, **k: _Libc())
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: sent.append((pid, sig)))
    die_with_parent(parent_pid=-1)()
    assert asked == [(1, int(signal.SIGTERM), 0, 0, 0)]  # PR_SET_PDEATHSIG = 1 (linux/prctl.h)
    assert sent == [(os.getpid(), int(signal.SIGTERM))]
    sent.clear()
    die_with_parent(parent_pid=os.getppid())()
    assert sent == []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a_missing_lti_config_stops_serve_before_it_starts_with_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "playground", "serve", "--port", "9298", "--preheat", "0",
                          "--lti-config", "lti.json"], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert out.returncode != 0
    assert "--lti-config lti.json: no such file" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and "http://" not in out.stdout
