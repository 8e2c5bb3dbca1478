"""``playground serve`` in Chromium: no kernel outlives its page, and the page asks nothing of the internet."""
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
