# ruff: noqa: F811  (pytest fixtures imported from browser_fixtures are used as arguments)
"""Error analysis on the page in a real browser (issues 24.5, 24.6): a response's verdict, note and a new
failure-mode tag by keyboard alone, the store holding exactly that; the authored verdict revealed once judged;
the dataset's guidelines rendered, with script in them inert.

Skipped without /usr/bin/chromium unless PLAYGROUND_REQUIRE_BROWSER=1 (then they fail).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_fixtures import (  # noqa: F401  (fixtures are used by name)
    browser,
    need_chromium,
    open_app,
    page,
    start_server,
    stop_server,
)
from test_browser_page import active, expect, watch_errors

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GUIDELINES = """# Our rules

Judge **the whole answer**: a response *fails* when a user would be misled.

- cite the passage
- a [javascript link](javascript:window.__xss=1) and <script>window.__xss=1</script>
- <img src=x onerror="window.__xss=1"> and a [web link](https://example.org/rules)
"""


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    need_chromium()
    srv = start_server(tmp_path_factory.mktemp("verdicts"), shipped=True)
    yield srv
    stop_server(srv.proc)


@pytest.fixture(scope="module")
def with_guidelines(tmp_path_factory):
    need_chromium()
    from playground.store import open_store

    work = tmp_path_factory.mktemp("guidelines")
    db = work / "labels.db"
    with open_store(db) as store:
        assert store.set_guidelines("golden", "first version", "owner") == 1
        assert store.set_guidelines("golden", GUIDELINES, "owner") == 2
    srv = start_server(work, db=db)
    yield srv
    stop_server(srv.proc)


def verdict_button(page, word: str):
    return page.locator(f".pg-verdict button[data-value='{word}']")


def _stored(db: Path, who: str):
    from playground.store import open_store

    with open_store(db, read_only=True) as store:
        verdicts = [(lab.unit_id, lab.value) for lab in store.labels(annotator=who, include_unsure=True)
                    if lab.dimension == "pass"]
        notes = [(c.unit_id, c.text) for c in store.comments(annotator=who)]
        tags = [(t.unit_id, t.tags) for t in store.tags(annotator=who)]
        modes = [(m.name, m.created_by) for m in store.taxonomy("golden")]
        others = [lab for lab in store.labels(annotator=who, include_unsure=True) if lab.dimension != "pass"]
    return verdicts, notes, tags, modes, others


def test_a_verdict_a_note_and_a_new_tag_by_keyboard_alone(shipped, page):
    errors = watch_errors(page)
    open_app(page, shipped.url + "?annotator=vera&case=GC-0003")
    page.keyboard.press("?")
    keymap = page.locator(".pg-keymap")
    expect(keymap).to_contain_text("response verdict: fail")  # the map lists the new keys
    page.keyboard.press("Escape")
    expect(page.locator(".pg-verdict-authored")).to_have_count(0)  # blind until judged
    page.keyboard.press("f")
    expect(verdict_button(page, "fail")).to_have_class(active())
    expect(page.locator(".pg-verdict-authored")).to_be_visible()  # the authored verdict, once judged
    page.keyboard.press("o")
    page.keyboard.type("cites the old limit")
    page.keyboard.press("Escape")  # leaves the box and saves; no key below is typed into it
    page.keyboard.press("t")
    page.keyboard.type("stale-source")
    page.keyboard.press("Enter")  # adds the tag, hands the keys back to labelling
    expect(page.locator(".pg-tag-stale-source")).to_have_class(active())
    page.keyboard.press("p")  # a verdict key right after Enter changes the verdict, not the tag box
    expect(verdict_button(page, "pass")).to_have_class(active())
    expect(page.locator(".pg-tag-new input")).to_have_value("")
    expect(page.locator(".pg-verdict-note textarea")).to_have_value("cites the old limit")
    # a tag name that breaks the rule: refused with the rule in words, nothing written
    page.keyboard.press("t")
    page.keyboard.type("Bad Tag")
    page.keyboard.press("Enter")
    expect(page.locator(".pg-status")).to_contain_text("lower-case")
    page.wait_for_timeout(500)
    verdicts, notes, tags, modes, others = _stored(shipped.db, "vera")
    assert verdicts == [("GC-0003-R1", 1)]
    assert notes == [("GC-0003-R1", "cites the old limit")]
    assert tags == [("GC-0003-R1", ("stale-source",))]
    assert ("stale-source", "vera") in modes and not any(name.startswith("bad") for name, _ in modes)
    assert others == []  # no key reached a unit's toggle
    assert not errors, errors


def test_the_guidelines_render_with_their_version_and_no_script_runs(with_guidelines, page):
    errors = watch_errors(page)
    open_app(page, with_guidelines.url + "?annotator=gina&case=GC-0003")
    fold = page.locator(".pg-guidelines")
    expect(fold).to_contain_text("version 2")
    fold.get_by_text("Guidelines of golden (version 2)").click()  # the fold opens
    body = page.locator(".pg-guidelines-body")
    expect(body.locator("strong")).to_have_text("the whole answer")
    expect(body.locator("a[href='https://example.org/rules']")).to_have_text("web link")
    expect(page.locator(".pg-guidelines-version")).to_contain_text("version 2 by owner")
    for link in body.locator("a").all():
        assert not (link.get_attribute("href") or "").lower().startswith("javascript:")
    assert body.locator("script, img, [onerror]").count() == 0
    expect(body).to_contain_text("<script>window.__xss=1</script>")  # shown as text, never run
    page.wait_for_timeout(500)
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert not errors, errors
