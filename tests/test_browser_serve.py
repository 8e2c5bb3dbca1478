"""``playground serve`` in Chromium: no kernel outlives its page, the page asks nothing of the internet, pages
opened while the pool fills draw, and a page without its widgets says so and retries."""
from __future__ import annotations

from urllib.parse import urlparse

import browser_fixtures
import pytest
from browser_fixtures import need_chromium, open_app, start_server, stop_server
from serve_clients import status, wait_until

pytestmark = pytest.mark.browser

POOL = 1
browser = browser_fixtures.browser  # fixtures, used by name
page = browser_fixtures.page


@pytest.fixture(scope="module")
def pooled(tmp_path_factory):
    need_chromium()
    # a long grace: only the page's own shutdown beacon can end a kernel within seconds
    srv = start_server(tmp_path_factory.mktemp("pooled"), "--preheat", str(POOL), "--disconnect-grace", "120")
    assert wait_until(lambda: status(srv.url)["pool_ready"] == POOL, 120)
    yield srv
    stop_server(srv.proc)


def test_twenty_pages_opened_and_closed_leave_only_the_pool(pooled, browser):
    requests: list[str] = []
    opened: list[float] = []
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.on("request", lambda r: requests.append(r.url))
    try:
        for i in range(20):
            page = context.new_page()
            opened.append(open_app(page, f"{pooled.url}?annotator=student-{i}"))
            how = i % 3
            if how == 1:    # reload: the old page's kernel goes, the new page gets one
                page.reload()
                page.locator(".pg-app .pg-rates").wait_for(state="visible")
            elif how == 2:  # navigate away
                page.goto("about:blank")
            page.close(run_before_unload=True)
        back = wait_until(lambda: status(pooled.url)["kernels"] == POOL, 30)
        st = status(pooled.url)
    finally:
        context.close()
    print(f"\n[serve] 20 pages: open p50 {sorted(opened)[10]:.1f} s, max {max(opened):.1f} s; "
          f"kernels after: {st['kernels']} (pool {POOL})")
    assert back, f"kernels left: {st}"
    assert st["culled"]["disconnected"] == 0  # the beacon ended them, not the grace watch
    assert "403 POST /voila/api/shutdown" not in pooled.log_tail(400000)
    outside = sorted({u for u in requests if urlparse(u).scheme in ("http", "https", "ws", "wss")
                      and urlparse(u).hostname != "127.0.0.1"})
    assert requests and outside == []


def test_the_icons_come_from_this_server(pooled, page):
    css: list[tuple[str, int]] = []
    page.on("response", lambda r: css.append((r.url, r.status)) if "fontawesome" in r.url or "icons/" in r.url
            else None)
    open_app(page, f"{pooled.url}?annotator=icons")
    page.wait_for_timeout(500)
    assert any(u.endswith("css/all.min.css") and s == 200 for u, s in css), css
    assert all(urlparse(u).hostname == "127.0.0.1" and s in (200, 304) for u, s in css), css
    weight = page.evaluate("getComputedStyle(document.querySelector('.fa, .fas') || document.body).fontFamily")
    assert "Font Awesome" in weight or "FontAwesome" in weight


def test_pages_opened_while_the_pool_fills_become_interactive(tmp_path, browser):
    """Issue 23: a class arriving right after start, the pool still filling: every page draws, none stays blank,
    none shows a Python repr."""
    from playwright.sync_api import expect

    srv = start_server(tmp_path, "--preheat", "3", "--open-slots", "1")  # serve's waiting line, one cold page at a time
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        assert status(srv.url)["pool_ready"] < 3  # still filling when the pages are asked for
        pages = [context.new_page() for _ in range(3)]
        for i, pg in enumerate(pages):
            pg.set_default_timeout(browser_fixtures.PAGE_TIMEOUT_MS)
            pg.goto(f"{srv.url}?annotator=early-{i}", wait_until="commit")
        for pg in pages:
            pg.locator(".pg-app .pg-rates").wait_for(state="visible", timeout=180_000)
            pg.locator(".pg-claim-0-supported").first.wait_for(state="visible", timeout=180_000)
            body = pg.inner_text("body")
            assert "VBox(" not in body and "children=" not in body
            assert pg.locator("#pg-serve-notice").count() == 0
        pages[0].locator(".pg-claim-0-supported button[data-value='yes']").click()  # interactive: a click is saved
        expect(pages[0].locator(".pg-status")).to_contain_text("Saved", timeout=60_000)
    finally:
        context.close()
        stop_server(srv.proc)
    assert "Timeout waiting for IOPub output" not in srv.log_tail(10**7)


def test_a_page_without_its_widgets_says_so_and_retries(page):
    """The guard the server adds to every page, run in Chromium on a page whose HTML came without widgets."""
    from playground.serving.page import guard_script

    page.route("http://playground.test/**", lambda route: route.fulfill(
        status=200, content_type="text/html",
        body="<!doctype html><html><body><div id='rendered_cells'></div>" + guard_script(False) + "</body></html>"))
    page.goto("http://playground.test/?token=abc&annotator=zoe")
    notice = page.locator("#pg-serve-notice")
    notice.wait_for(state="visible", timeout=10_000)
    assert "arrived without its content" in notice.inner_text()
    assert "Trying again by itself in 5 s" in notice.inner_text()
    assert page.evaluate("window.location.search") == "?annotator=zoe"  # the key left the address bar
    with page.expect_navigation(timeout=15_000):  # it reloads by itself
        pass
    page.locator("#pg-serve-notice").wait_for(state="visible", timeout=10_000)
    assert "attempt 2 of" in page.locator("#pg-serve-notice").inner_text()


def test_a_page_whose_widgets_cannot_be_drawn_says_so(page):
    from playground.serving.page import guard_script

    page.route("http://playground.test/**", lambda route: route.fulfill(
        status=200, content_type="text/html",
        body="<!doctype html><html><body>" + guard_script(True, draw_timeout=1) + "</body></html>"))
    page.goto("http://playground.test/")
    page.locator("#pg-serve-notice").wait_for(state="visible", timeout=10_000)
    assert "could not be drawn" in page.locator("#pg-serve-notice").inner_text()
