# ruff: noqa: F811  (pytest fixtures imported from browser_fixtures are used as arguments)
"""A lesson page in a real browser at 1280×800 (issue 42.5): the class link ``?lesson=week-1`` opens on the
lesson (progress "0 / 31", its two cases), with its first passage focused and on screen, and the first ``j``
moves from passage 1 to passage 2.

Skipped without /usr/bin/chromium unless PLAYGROUND_REQUIRE_BROWSER=1 (then they fail).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_fixtures import (  # noqa: F401  (fixtures are used by name)
    ARTIFACTS,
    PAGE_TIMEOUT_MS,
    browser,
    need_chromium,
    start_server,
    stop_server,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTH, HEIGHT = 1280, 800


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


@pytest.fixture(scope="module")
def lesson_server(tmp_path_factory):
    """``playground serve`` on the shipped data, with the lesson week-1 of docs/lesson-plan.md (31 units)."""
    need_chromium()
    from playground.datasets import open_dataset
    from playground.lessons import make_lesson
    from playground.store import open_store

    work = tmp_path_factory.mktemp("lesson")
    db = work / "labels.db"
    with open_store(db) as s:
        s.save_lesson(make_lesson("week-1", open_dataset(None), ["GC-0036", "GC-0034"],
                                  ["GC-0036-R1", "GC-0034-R1", "GC-0034-R5", "GC-0034-R4", "GC-0034-R3"]))
    srv = start_server(work, db=db, shipped=True)
    yield srv
    stop_server(srv.proc)


def in_viewport(box: dict | None) -> bool:
    return (box is not None and box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT
            and box["x"] >= 0 and box["x"] + box["width"] <= WIDTH)


def test_a_lesson_page_at_1280x800_is_about_the_lesson(lesson_server, browser):
    ctx = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        p = ctx.new_page()
        p.set_default_timeout(PAGE_TIMEOUT_MS)
        errors: list[str] = []
        p.on("pageerror", lambda exc: errors.append(str(exc)))
        p.goto(lesson_server.url + "?lesson=week-1", timeout=PAGE_TIMEOUT_MS)
        p.locator(".pg-passage-0-relevant").first.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
        expect(p.locator(".pg-progress")).to_contain_text("0 / 31 units labelled in lesson week-1")
        expect(p.locator(".pg-progress")).not_to_contain_text("1036")
        options = p.locator(".pg-case-list select option")
        expect(options).to_have_count(2)
        assert [t.split()[1] for t in options.all_inner_texts()] == ["GC-0034", "GC-0036"]
        expect(p.locator(".pg-case-head")).to_contain_text("GC-0036")
        # the first passage is focused (the ring) and on screen, without a key pressed
        focused = p.locator(".pg-focus")
        expect(focused).to_have_count(1)
        expect(p.locator(".pg-passage-0 .pg-q.pg-focus")).to_have_count(1)
        p.wait_for_timeout(300)  # the scroll that brings it on screen
        assert in_viewport(focused.bounding_box()), focused.bounding_box()
        ARTIFACTS.mkdir(exist_ok=True)
        p.screenshot(path=str(ARTIFACTS / "lesson-1280x800-open.png"))
        # the first j moves from passage 1 to passage 2, and it stays on screen
        p.keyboard.press("j")
        expect(p.locator(".pg-passage-1 .pg-q.pg-focus")).to_have_count(1)
        expect(focused).to_have_count(1)
        assert in_viewport(focused.bounding_box()), focused.bounding_box()
        # a name, then y: the answer lands on passage 2 and progress reads against the lesson
        box = p.locator(".pg-annotator input")
        box.fill("Ada")
        box.press("Enter")
        expect(p.locator(".pg-status")).to_contain_text("Following the lesson 'week-1'")
        p.keyboard.press("y")
        expect(p.locator(".pg-passage-1-relevant button.mod-active")).to_have_text("yes")
        expect(p.locator(".pg-passage-0-relevant button.mod-active")).to_have_count(0)
        expect(p.locator(".pg-progress")).to_contain_text("1 / 31 units labelled in lesson week-1")
        assert not errors, errors
    finally:
        ctx.close()
