# ruff: noqa: F811  (pytest fixtures imported from browser_fixtures are used as arguments)
"""The labelling page in a real browser (Debian's Chromium, Playwright, ``playground serve``): keys, layout,
markdown, links that keep the view, and what the page does when the kernel or the store goes away.

Skipped without /usr/bin/chromium unless PLAYGROUND_REQUIRE_BROWSER=1 (then they fail).
"""
from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_fixtures import (  # noqa: F401  (fixtures are used by name)
    ARTIFACTS,
    PAGE_TIMEOUT_MS,
    browser,
    make_data_root,
    need_chromium,
    open_app,
    page,
    server,
    start_server,
    stop_server,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Markdown with every way of running script that the sanitiser must stop, beside markdown that must render.
MD_PAYLOAD = """

Use `retry_budget()` with **care** and *patience*:

- first item of a list
- a [javascript link](javascript:window.__xss=1) and a [data link](data:text/html,<script>window.__xss=1</script>)
- <b onmouseover="window.__xss=1">raw bold with a handler</b> and ![img](x" onerror="window.__xss=1)
- a [web link](https://example.org/docs)
"""


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def active(word: str = "mod-active"):
    return re.compile(rf"(^|\s){re.escape(word)}(\s|$)")


def toggle(page, kind: str, index: int, dim: str, choice: str):
    return page.locator(f".pg-{kind}-{index}-{dim} button[data-value='{choice}']")


def watch_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    return errors


def query_of(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    need_chromium()
    srv = start_server(tmp_path_factory.mktemp("shipped"), shipped=True)
    yield srv
    stop_server(srv.proc)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    need_chromium()
    work = tmp_path_factory.mktemp("hostile-md")
    root = make_data_root(work / "data")
    article = root / "corpus" / "acme" / "limits.md"
    article.write_text(article.read_text(encoding="utf-8") + MD_PAYLOAD, encoding="utf-8")
    srv = start_server(work)
    yield srv
    stop_server(srv.proc)


def test_a_whole_case_by_keyboard_alone(shipped, page, capsys):
    """GC-0003 (17 units, 23 questions over three responses): one key per answer plus one per move."""
    errors = watch_errors(page)
    open_app(page, shipped.url + "?annotator=keys&case=GC-0003")
    expect(page.locator(".pg-case-head")).to_contain_text("GC-0003")
    page.keyboard.press("?")
    expect(page.locator(".pg-keymap")).to_be_visible()
    expect(page.locator(".pg-keymap")).to_contain_text("unsure")
    page.keyboard.press("Escape")
    expect(page.locator(".pg-keymap")).to_be_hidden()
    answers = moves = 0
    plan = "yn"  # alternate yes and no, so both keys are exercised
    for response in range(3):
        if response:
            page.keyboard.press("s")  # next response of this case
            moves += 1
            expect(page.locator(".pg-scenario button.mod-active")).to_contain_text(f"Response {response + 1}")
            expect(page.locator(".pg-claim-0-supported button.mod-active")).to_have_count(0)
        todo = page.locator(".pg-case .pg-q").count() - page.locator(".pg-case .pg-q .mod-active").count()
        for _ in range(todo):
            page.keyboard.press(plan[answers % 2])
            answers += 1
            expect(page.locator(".pg-focus")).to_have_count(1)  # the focus ring moved on by itself
        expect(page.locator(".pg-case .pg-q .mod-active")).to_have_count(5 + 6)  # 5 passages, 2 claims x 2, 2 facts
        expect(page.locator(".pg-progress")).to_contain_text("this view 9/9")
    expect(page.locator(".pg-case-head")).to_contain_text("17/17 units labelled (done)")
    with capsys.disabled():
        print(f"\n[browser] GC-0003 by keyboard: {answers} answer keys + {moves} moves = {answers + moves} keys")
    assert answers == 23 and moves == 2 and answers + moves <= 23 + 2
    from playground.store import open_store

    with open_store(shipped.db, read_only=True) as store:
        mine = [(lab.case_id, lab.value) for lab in store.labels(annotator="keys")]
    assert len(mine) == 23 and {c for c, _ in mine} == {"GC-0003"}
    assert sorted(v for _, v in mine) == [0] * 11 + [1] * 12
    # z undoes the last answer (by keys too)
    page.keyboard.press("z")
    expect(page.locator(".pg-status")).to_contain_text("Undone")
    assert not errors, errors


@pytest.mark.parametrize("width", [1024, 1280, 1920])
def test_the_layout_fits_every_laptop_width(shipped, browser, width):
    ctx = browser.new_context(viewport={"width": width, "height": 800})
    try:
        p = ctx.new_page()
        p.set_default_timeout(PAGE_TIMEOUT_MS)
        open_app(p, shipped.url + "?annotator=widths&case=GC-0003")
        p.wait_for_timeout(500)
        scroll, inner = p.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        ARTIFACTS.mkdir(exist_ok=True)
        p.screenshot(path=str(ARTIFACTS / f"playground-{width}.png"), full_page=True)
        assert scroll <= inner, f"sideways scroll at {width} px: {scroll} > {inner}"
        # nothing inside is cut off either: every panel and passage box is as wide as its content
        clipped = p.evaluate("""[...document.querySelectorAll('.pg-panel, .pg-box, .pg-claim, .pg-fact, .pg-chart')]
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.className)""")
        assert clipped == [], clipped
        hidden = p.evaluate("""[...document.querySelectorAll('.pg-box')]
            .filter(e => e.scrollHeight > e.clientHeight + 1).length""")
        assert hidden == 0  # passage boxes show their whole text
        assert p.locator(".pg-scores").bounding_box()["width"] >= 300
    finally:
        ctx.close()


def test_markdown_renders_and_no_script_runs(hostile, page):
    errors = watch_errors(page)
    open_app(page, hostile.url + "?annotator=md&case=GC-0003")
    box = page.locator(".pg-case .pg-box", has_text="first item of a list").first
    expect(box.locator("code")).to_have_text("retry_budget()")
    expect(box.locator("strong")).to_have_text("care")
    expect(box.locator("li")).to_have_count(4)
    expect(box.locator("a[href='https://example.org/docs']")).to_have_text("web link")
    for link in box.locator("a").all():
        href = link.get_attribute("href") or ""
        assert not href.lower().startswith(("javascript:", "data:")), href
    assert box.locator("[onmouseover], [onerror], img, script").count() == 0
    # markdown-it refuses the javascript: and data: links: their text stays, as text
    expect(box).to_contain_text("[javascript link](javascript:window.__xss=1)")
    box.locator("text=raw bold with a handler").hover()
    page.wait_for_timeout(500)
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert not errors, errors


def test_the_url_keeps_the_view_and_a_link_reopens_it(shipped, page):
    open_app(page, shipped.url + "?annotator=teacher&case=GC-0002&weights=faithfulness:0,coverage:0.5"
                                 "&gates=correctness:0.6&reveal=1")
    expect(page.locator(".pg-case-head")).to_contain_text("GC-0002")
    expect(page.locator(".pg-weight-faithfulness-share")).to_have_text("0%")
    expect(page.locator(".pg-weight-coverage-share")).to_have_text("50%")  # 0.5 / (0 + 0.25 + 0.25 + 0.5)
    expect(page.locator(".pg-gate-correctness input")).to_be_checked()
    expect(page.locator(".pg-reveal input")).to_be_checked()
    expect(page.locator(".pg-filter-verdict")).to_be_visible()  # reveal on: the verdict filter is offered
    page.locator(".pg-next").click()
    expect(page.locator(".pg-case-head")).to_contain_text("GC-0003")
    page.wait_for_function("location.search.includes('case=GC-0003')")
    q = query_of(page)
    assert q == {"annotator": "teacher", "case": "GC-0003", "response": "GC-0003-R1",
                 "weights": "context_relevance:0.25,faithfulness:0,correctness:0.25,coverage:0.5",
                 "gates": "correctness:0.6", "reveal": "1"}
    page.locator(".pg-scenario button", has_text="Response 2").click()
    page.wait_for_function("location.search.includes('response=GC-0003-R2')")
    link = page.url
    page.goto("about:blank")
    open_app(page, link)  # the link alone brings the whole view back
    expect(page.locator(".pg-case-head")).to_contain_text("GC-0003")
    expect(page.locator(".pg-scenario button.mod-active")).to_contain_text("Response 2")
    expect(page.locator(".pg-weight-faithfulness-share")).to_have_text("0%")
    expect(page.locator(".pg-gate-correctness input")).to_be_checked()


def test_blind_mode_names_responses_neutrally_until_labelled(shipped, page):
    open_app(page, shipped.url + "?annotator=blind&case=GC-0001")
    names = page.locator(".pg-scenario button").all_inner_texts()
    assert names[:2] == ["Response 1", "Response 2"], names
    expect(page.locator(".pg-filter-verdict")).to_be_hidden()
    body = page.locator(".pg-app").inner_text()
    for word in ("grounded correct", "confident hallucination", "fabricated citation", "ACCEPT", "REJECT"):
        assert word not in body
    todo = page.locator(".pg-case .pg-q").count()
    for _ in range(todo):
        page.keyboard.press("y")
    expect(page.locator(".pg-scenario button.mod-active")).to_contain_text("Response 1 · ")
    expect(page.locator(".pg-decision")).to_contain_text("Harness decision")
    expect(page.locator(".pg-claim-0-evidence")).to_contain_text("matched in the passages")


def _kernels_of(server_pid: int) -> list:
    import psutil

    procs = psutil.Process(server_pid).children(recursive=True)
    return [p for p in procs if "ipykernel" in " ".join(p.cmdline())]


def test_a_dead_kernel_turns_the_page_into_connection_lost(tmp_path, browser, capsys):
    srv = start_server(tmp_path)
    try:
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        p = ctx.new_page()
        p.set_default_timeout(PAGE_TIMEOUT_MS)
        before = {k.pid for k in _kernels_of(srv.proc.pid)}
        open_app(p, srv.url + "?annotator=doomed")
        toggle(p, "passage", 0, "relevant", "yes").click()
        expect(p.locator(".pg-status")).to_contain_text("Saved")
        kernels = [k for k in _kernels_of(srv.proc.pid) if k.pid not in before] or _kernels_of(srv.proc.pid)
        assert len(kernels) == 1, kernels
        os.kill(kernels[0].pid, signal.SIGKILL)
        t0 = time.monotonic()
        toggle(p, "claim", 0, "supported", "no").click()  # clicked after the kernel died: never written
        expect(p.locator(".pg-lost-banner")).to_be_visible(timeout=20_000)
        seconds = time.monotonic() - t0
        with capsys.disabled():
            print(f"\n[browser] kernel killed: 'connection lost' shown after {seconds:.1f} s")
        assert seconds < 15
        expect(p.locator(".pg-lost-banner")).to_contain_text("Reload the page")
        # the unsaved click does not look set; the saved one still does; nothing can be clicked
        expect(toggle(p, "claim", 0, "supported", "no")).not_to_have_class(active())
        expect(toggle(p, "passage", 0, "relevant", "yes")).to_have_class(active())
        expect(toggle(p, "passage", 0, "relevant", "no")).to_be_disabled()
        expect(p.locator(".pg-undo")).to_be_disabled()
        ctx.close()
        from playground.store import open_store

        with open_store(srv.db, read_only=True) as store:
            assert [(lab.unit_kind, lab.value) for lab in store.labels(annotator="doomed")] == [("passage", 1)]
    finally:
        stop_server(srv.proc)


def test_a_deleted_store_stops_saving_and_says_so(tmp_path, browser):
    """The page's kernel opened the store with create=False: the deleted file raises StoreGoneError on the write."""
    srv = start_server(tmp_path)
    try:
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        p = ctx.new_page()
        p.set_default_timeout(PAGE_TIMEOUT_MS)
        open_app(p, srv.url + "?annotator=gone")
        toggle(p, "passage", 0, "relevant", "yes").click()
        expect(p.locator(".pg-status")).to_contain_text("Saved")
        for suffix in ("", "-wal", "-shm"):
            Path(str(srv.db) + suffix).unlink(missing_ok=True)
        toggle(p, "claim", 0, "supported", "no").click()
        expect(p.locator(".pg-stopped")).to_contain_text("nothing more can be saved")
        expect(toggle(p, "claim", 0, "supported", "no")).not_to_have_class(active())
        expect(toggle(p, "claim", 0, "supported", "yes")).to_be_disabled()
        assert not Path(srv.db).exists()  # no fresh empty store in its place
        ctx.close()
    finally:
        stop_server(srv.proc)


def _stored(db: Path):
    from playground.store import open_store

    with open_store(db, read_only=True) as store:
        labels = sorted((lab.annotator, lab.unit_id, lab.dimension, lab.value) for lab in store.labels())
        comments = sorted((c.annotator, c.unit_id, c.text) for c in store.comments())
    return labels, comments


def test_keys_go_only_where_meant(server, page):
    """Issue 24.1: name + Enter + y labels under that name; comment + Esc + y saves the comment and labels."""
    errors = watch_errors(page)
    open_app(page, server.url)
    name = page.locator(".pg-annotator input")
    name.click()
    page.keyboard.type("lea")
    page.keyboard.press("Enter")
    page.keyboard.press("y")  # pressed at once: it waits for the kernel to take the name, then answers
    expect(toggle(page, "passage", 0, "relevant", "yes")).to_have_class(active())
    expect(name).to_be_disabled()
    page.keyboard.press("Tab")
    page.keyboard.type("x")  # whatever the focus is on now, no key reaches the name
    page.keyboard.press("Escape")
    expect(name).to_have_value("lea")
    expect(page.locator(".pg-status")).to_contain_text("Saved")
    page.wait_for_timeout(500)
    assert {who for who, *_ in _stored(server.db)[0]} == {"lea"}
    # a comment on passage 2, left with Esc; the next key answers passage 2, it is not typed into the comment
    page.locator(".pg-passage-1-comment textarea").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.type("needs a date")
    page.keyboard.press("Escape")
    page.keyboard.press("n")  # answers the focused question: passage 2, not the comment
    expect(toggle(page, "passage", 1, "relevant", "no")).to_have_class(active())
    expect(page.locator(".pg-passage-1-comment textarea")).to_have_value("needs a date")
    page.wait_for_function("document.querySelector('.pg-status').innerText.includes('relevant: no label → no')")
    labels, comments = _stored(server.db)
    assert {who for who, *_ in labels} == {"lea"}  # one annotator, never "leay" or "lea3y"
    mine = {(uid, dim): value for _, uid, dim, value in labels}
    assert sorted(mine.values()) == [0, 1]
    assert comments == [("lea", comments[0][1], "needs a date")]  # exactly the text typed, no answer key in it
    assert mine[(comments[0][1], "relevant")] == 0  # the comment's unit got the "n"
    assert not errors, errors


def test_a_class_laptop_1280x800_sees_whole_words_and_the_response(shipped, browser):
    """Issue 23.7: no button label or title cut, the response on screen when a case opens; screenshots to look at."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        p = ctx.new_page()
        p.set_default_timeout(PAGE_TIMEOUT_MS)
        open_app(p, shipped.url + "?annotator=laptop&case=GC-0003")
        p.wait_for_timeout(500)
        ARTIFACTS.mkdir(exist_ok=True)
        p.screenshot(path=str(ARTIFACTS / "page-1280x800-open.png"))
        cut = p.evaluate("""[...document.querySelectorAll(
                '.pg-app button, .pg-case-head, .pg-h, .pg-scenario-note, .widget-label, .pg-title')]
            .filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
            .map(e => (e.className + ': ' + e.innerText).slice(0, 80))""")
        assert cut == [], cut
        # every line of the case list fits its box: measured in the list's own font
        too_wide = p.evaluate("""(() => {
            const sel = document.querySelector('.pg-case-list select');
            const ctx = document.createElement('canvas').getContext('2d');
            ctx.font = getComputedStyle(sel).font;
            const room = sel.clientWidth - 8;
            return [...sel.options].map(o => o.text).filter(t => ctx.measureText(t).width > room);
        })()""")
        assert too_wide == [], too_wide
        for text in ("unsure", "yes", "no", "clear"):
            expect(p.locator(".pg-passage-0-relevant button", has_text=text)).to_have_text(text)
        response = p.locator(".pg-response .pg-box").bounding_box()
        assert response is not None and response["y"] + 40 < 800, response  # its first lines are on screen
        # label the whole response by keys: the variant and what it was built to break show beside the key
        todo = p.locator(".pg-case .pg-q").count()
        for _ in range(todo):
            p.keyboard.press("y")
        expect(p.locator(".pg-scenario-note .pg-variant-purpose")).to_contain_text("built to move")
        expect(p.locator(".pg-passage-0-relevant-auto")).to_contain_text("your yes:")
        expect(p.locator(".pg-passage-0-relevant-auto")).not_to_contain_text("≠ you")
        p.screenshot(path=str(ARTIFACTS / "page-1280x800-labelled.png"))
        p.locator(".pg-why-supported summary").click()
        expect(p.locator(".pg-why-supported .pg-why-body")).to_contain_text("unfaithful")
        p.screenshot(path=str(ARTIFACTS / "page-1280x800-why.png"))
    finally:
        ctx.close()
