"""The instructor's room in a real browser: two annotators disagree on the playground, the room shows it by itself.

Two Voila servers on one label store: ``playground serve`` (the labelling page)
and Voila on ``notebooks/room.ipynb``.  Alice and Bob label the same claim
differently on the playground; the room, opened before they label and never
reloaded, shows the tie with its vote split within its refresh interval; the
instructor settles it there and the store's consensus becomes the adjudicated
value.  Skipped without /usr/bin/chromium unless PLAYGROUND_REQUIRE_BROWSER=1.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_fixtures as bf
from browser_fixtures import PAGE_TIMEOUT_MS, REPO, SERVER_TIMEOUT, Server, open_app, stop_server

# the shared fixtures, by name
browser, page, server = bf.browser, bf.page, bf.server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

INTERVAL = 2.0


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def start_room(srv: Server, workdir: Path, **env_extra: str) -> Server:
    """Voila on notebooks/room.ipynb over the playground server's store and data root."""
    return start_room_on(srv.db, srv.root, workdir, PLAYGROUND_READ_ONLY="1", **env_extra)


def start_room_on(db: Path, root: Path, workdir: Path, **env_extra: str) -> Server:
    """Voila on notebooks/room.ipynb over ``db`` and the data at ``root`` (``env_extra``: more settings)."""
    port = bf.free_port()
    log = workdir / f"room-{port}.log"
    cmd = [sys.executable, "-m", "voila", str(REPO / "notebooks" / "room.ipynb"), f"--port={port}",
           "--Voila.ip=127.0.0.1", "--Voila.port_retries=0", "--no-browser",
           "--MappingKernelManager.cull_idle_timeout=0"]
    # Bare Voila, not `playground serve`: no key decides the role, so the kernels inherit the instructor's
    # (tests/test_serve_roles.py checks what `serve` gives each key, students and observers included).
    env = {**os.environ, "PYTHONPATH": str(REPO), "PLAYGROUND_DB": str(db), "PLAYGROUND_ROOT": str(root),
           "PLAYGROUND_ROLE": "instructor", **env_extra}
    t0 = time.monotonic()
    with open(log, "wb") as fh:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=str(REPO),
                                start_new_session=True)
    try:
        bf.wait_for_port(port, proc, SERVER_TIMEOUT, log)
    except Exception:
        stop_server(proc)
        raise
    return Server(f"http://127.0.0.1:{port}/", db, root, log, proc, time.monotonic() - t0)


@pytest.fixture(scope="module")
def room_server(server, tmp_path_factory):
    srv = start_room(server, tmp_path_factory.mktemp("room"))
    yield srv
    stop_server(srv.proc)


def wait_for_label(db: Path, name: str, timeout: float = 30.0) -> None:
    """Until ``name`` has a label in the store (the page saves on the toggle, in its own kernel)."""
    from playground.store import open_store

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open_store(db, read_only=True) as store:
            if store.labels(annotator=name):
                return
        time.sleep(0.2)
    raise AssertionError(f"{name}'s label never reached the store")


def new_page(browser, width: int, height: int) -> tuple[Any, Any]:
    """``(context, page)`` of a fresh browser context at ``width`` x ``height``."""
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = context.new_page()
    pg.set_default_timeout(PAGE_TIMEOUT_MS)
    return context, pg


def label_first_claim(browser, url: str, db: Path, name: str, choice: str) -> None:
    context, pg = new_page(browser, 1400, 900)
    try:
        open_app(pg, f"{url}?annotator={name}")
        expect(pg.locator(".pg-status")).to_contain_text(f"Labelling as {name}")
        pg.locator(f".pg-claim-0-supported button[data-value='{choice}']").click()
        wait_for_label(db, name)
    finally:
        context.close()


def test_room_shows_a_disagreement_by_itself_and_adjudication_makes_the_consensus(server, room_server, browser,
                                                                                   page, capsys):
    from playground.calibrate.room import Adjudication, Room, RoomStore
    from playground.store import open_store

    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    t0 = time.monotonic()
    page.goto(f"{room_server.url}?adjudicator=prof&interval={INTERVAL:g}", timeout=PAGE_TIMEOUT_MS)
    page.locator(".pr-room .pr-progress").wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
    opened = time.monotonic() - t0
    expect(page.locator(".pr-moments")).to_contain_text("No disagreement yet")
    expect(page.locator(".pr-progress")).to_contain_text("Nobody has labelled yet")

    label_first_claim(browser, server.url, server.db, "alice", "yes")
    label_first_claim(browser, server.url, server.db, "bob", "no")
    t_labelled = time.monotonic()
    # no reload, no button: the room refreshes by itself
    moment = page.locator(".pr-moment-0")
    expect(moment.locator(".pr-split")).to_have_text("tie: 1 yes · 1 no", timeout=int((INTERVAL + 8) * 1000))
    shown = time.monotonic() - t_labelled
    expect(moment).to_contain_text("alice: yes, bob: no")
    expect(moment.locator(".pr-consensus")).to_contain_text("consensus: none (tie)")
    progress = page.locator(".pr-progress")
    expect(progress).to_contain_text("alice")
    expect(progress).to_contain_text("bob")
    expect(page.locator(".pr-agreement")).to_contain_text("alice – bob")

    moment.locator(".pr-adj-yes button, button.pr-adj-yes").first.click()
    expect(page.locator(".pr-moment-0 .pr-consensus")).to_have_text("consensus: yes (adjudicated by prof)")
    expect(page.locator(".pr-moment-0 .pr-split")).to_have_text("tie: 1 yes · 1 no")
    expect(page.locator(".pr-progress")).not_to_contain_text("consensus")
    bf.ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(bf.ARTIFACTS / "room.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 800})  # a small laptop: nothing scrolls sideways
    page.wait_for_timeout(300)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1024
    page.screenshot(path=str(bf.ARTIFACTS / "room-1024.png"), full_page=True)

    with open_store(server.db, read_only=True) as store:
        last = store.events()[-1].event_id
        expect(page.locator(".pr-updated")).to_contain_text(f"· {last} events ·", timeout=int((INTERVAL + 5) * 1000))
        labels = [lab for lab in store.labels() if lab.annotator in ("alice", "bob")]
        assert sorted((lab.annotator, lab.value) for lab in labels) == [("alice", 1), ("bob", 0)]
        unit_id, dim = labels[0].unit_id, labels[0].dimension
        from playground.ui.room import _open_dataset

        _, _, catalog = _open_dataset(None, str(server.root), store)
        [m], _open, _settled = Room(RoomStore(store, catalog)).moments()
        assert (m.unit_id, m.dimension, m.adjudication, m.consensus) == (unit_id, dim, Adjudication(1, "prof"), 1)
        [row] = store.consensus(dimension=dim, catalog=catalog, unit_ids=[unit_id])  # the store's own consensus
        assert (row.status, row.value, row.adjudicator) == ("adjudicated", 1, "prof")
    assert errors == []
    with capsys.disabled():
        print(f"\n[browser] room opened in {opened:.1f} s; disagreement shown {shown:.1f} s after the second label "
              f"(refresh every {INTERVAL:g} s)")


# --- the room for a projector, a lesson of 30 (issue 23.4) ------------------------------------------------------

LINK_BASE = "http://192.0.2.10:8866/voila/render/playground.ipynb"


def class_of_30(db: Path) -> Any:
    """A store with the lesson week-1 (19 units) and 30 students' answers: the key, about 1 in 6 turned over,
    about 1 in 25 unsure, every student leaving a few units out (stable hashes: the same store every run)."""
    from playground.calibrate.room_grid import answer_key_values
    from playground.datasets import open_dataset
    from playground.lessons import lesson_catalog, make_lesson
    from playground.sampling import stable_hash
    from playground.store import UNSURE, open_store

    od = open_dataset(None)
    lesson = make_lesson("week-1", od, ["GC-0034", "GC-0036"], ["GC-0034-R4", "GC-0036-R1"])
    catalog = lesson_catalog(lesson, od.catalog())
    key = answer_key_values(od, list(catalog.values()))
    rows = []
    for i in range(30):
        who = f"student-{i + 1:02d}"
        for uid, unit in catalog.items():
            if stable_hash(i, uid) % 10 == 0:
                continue
            for d in unit.dimensions:
                h = stable_hash(f"{i}|{d}", uid) % 25
                rows.append((who, unit, d, UNSURE if h == 0 else key[(uid, d)] ^ int(h <= 4)))
    with open_store(db) as store:
        store.save_lesson(lesson)
        store.write_rows(rows)
    return lesson


def check_projector(page, width: int, height: int, db: Path) -> None:
    page.set_viewport_size({"width": width, "height": height})
    page.evaluate("() => { window.scrollTo(0, 0); for (const e of document.querySelectorAll('*')) "
                  "{ if (e.scrollTop) e.scrollTop = 0; } }")  # the first screen, as the projector shows it
    page.wait_for_timeout(400)
    link = page.locator(".pr-join-link")
    expect(link).to_have_text(f"{LINK_BASE}?lesson=week-1")
    for sel in (".pr-join-link", ".pr-qr svg"):
        box = page.locator(sel).bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height, sel
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, sel
    assert page.locator(".pr-moment-0").bounding_box()["y"] < page.locator(".pr-units").bounding_box()["y"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    text = page.locator(".pr-room").inner_text()
    assert str(db) not in text and str(db.parent) not in text
    bf.ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(bf.ARTIFACTS / f"room-lesson-{width}x{height}.png"))
    page.locator(".pr-units").screenshot(path=str(bf.ARTIFACTS / f"room-lesson-{width}x{height}-units.png"))


def test_the_room_of_a_lesson_of_30_fits_a_projector(browser, tmp_path):
    bf.need_chromium()
    db = tmp_path / "labels.db"
    lesson = class_of_30(db)
    room = start_room_on(db, REPO, tmp_path, PLAYGROUND_LINK_BASE=LINK_BASE)
    context, page = new_page(browser, 1280, 800)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{room.url}?adjudicator=prof", timeout=PAGE_TIMEOUT_MS)
        page.locator(".pr-room .pr-units .pr-grid").wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
        expect(page.locator(".pr-scope")).to_contain_text(f"lesson week-1 · GC-0034, GC-0036 · {len(lesson.units)} "
                                                          "units")
        expect(page.locator(".pr-progress")).to_contain_text("30 labelling")
        assert page.locator(".pr-units tr.pr-cell").count() == 5 + 3 * 2 + 2 + 5 + 2 * 2 + 2
        # the room opens with the answer key hidden; the instructor's tick shows it (issue 42.5)
        expect(page.locator(".pr-show-key input")).not_to_be_checked()
        expect(page.locator(".pr-moment-0 .pr-moment-key")).to_have_count(0)
        page.locator(".pr-show-key input").check()
        expect(page.locator(".pr-moment-0 .pr-moment-key")).to_contain_text("answer key:")
        # the pairwise tables are folded: 4 dimensions x 435 pairs are in the page but not on screen
        assert not page.locator("details.pr-pairs table").first.is_visible()
        assert page.locator(".pr-agreement .pr-summary tr").count() == 1 + 4
        check_projector(page, 1280, 800, db)
        check_projector(page, 1920, 1080, db)
    finally:
        context.close()
        stop_server(room.proc)
    assert errors == []


# --- the lesson of docs/lesson-plan.md with 4 students and the room (issue 23.6) -------------------------------

LESSON_CMD = ["lesson", "create", "week-1", "--cases", "GC-0036,GC-0034",
              "--responses", "GC-0036-R1,GC-0034-R1,GC-0034-R5,GC-0034-R4,GC-0034-R3"]


def student_labels_first_passage(browser, url: str, db: Path, name: str, choice: str) -> None:
    """A student joins with the class link, follows the lesson and answers its first unit."""
    context, pg = new_page(browser, 1280, 800)
    try:
        open_app(pg, f"{url}&annotator={name}")
        expect(pg.locator(".pg-status")).to_contain_text("Following the lesson 'week-1'")
        box = pg.locator(".pg-queue-box")
        expect(box).to_contain_text("0 / 31 in this lesson")
        pg.locator(f".pg-passage-0-relevant button[data-value='{choice}']").click()
        wait_for_label(db, name)
        expect(box).to_contain_text("1 / 31 in this lesson")
        if name.endswith("1"):
            bf.ARTIFACTS.mkdir(exist_ok=True)
            pg.screenshot(path=str(bf.ARTIFACTS / "lesson-student.png"))
    finally:
        context.close()


def test_the_lesson_with_four_students_and_the_room(browser, tmp_path, capsys):
    bf.need_chromium()
    db = tmp_path / "labels.db"
    made = subprocess.run([sys.executable, "-m", "playground", *LESSON_CMD, "--db", str(db)], cwd=str(REPO),
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0 and "31 unit(s) for every student" in made.stdout, made.stderr
    (tmp_path / "serve").mkdir()
    srv = bf.start_server(tmp_path / "serve", db=db, shipped=True)
    room = start_room_on(db, REPO, tmp_path, PLAYGROUND_LINK_BASE=srv.url)
    context, page = new_page(browser, 1280, 800)
    try:
        page.goto(f"{room.url}?adjudicator=prof&interval={INTERVAL:g}", timeout=PAGE_TIMEOUT_MS)
        page.locator(".pr-room .pr-units").wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
        join = f"{srv.url}?lesson=week-1"
        expect(page.locator(".pr-join-link")).to_have_text(join)
        expect(page.locator(".pr-scope")).to_contain_text("lesson week-1 · GC-0036, GC-0034 · 31 units")
        for i, choice in enumerate(("yes", "yes", "no", "no"), 1):
            student_labels_first_passage(browser, join, db, f"student-{i}", choice)
        page.locator(".pr-show-key input").check()  # the key starts hidden (issue 42.5)
        moment = page.locator(".pr-moment-0")
        # the superseded $0.80 overage section: relevant to the question by the key, and the class is split
        expect(moment.locator(".pr-split")).to_have_text("tie: 2 yes · 2 no", timeout=int((INTERVAL + 10) * 1000))
        expect(moment.locator(".pr-moment-key")).to_have_text("answer key: yes")
        expect(moment).to_contain_text("2 of 4 match it")
        expect(page.locator(".pr-progress")).to_contain_text("4 labelling · 0 finished")
        expect(page.locator(".pr-units tr.pr-divided")).to_have_count(1)
        moment.locator(".pr-adj-yes button, button.pr-adj-yes").first.click()
        expect(page.locator(".pr-moment-0 .pr-consensus")).to_have_text("consensus: yes (adjudicated by prof)")
        page.screenshot(path=str(bf.ARTIFACTS / "lesson-room.png"))
    finally:
        context.close()
        stop_server(room.proc)
        stop_server(srv.proc)
