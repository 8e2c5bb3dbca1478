"""The playground in a real browser: Debian's Chromium driven by Playwright against ``playground serve``.

One server per module (a free port, a temporary label store, a data root with
hostile text); every page load starts its own kernel, as for a person.
Skipped without /usr/bin/chromium unless PLAYGROUND_REQUIRE_BROWSER=1.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_fixtures as bf
from browser_fixtures import (
    ARTIFACTS,
    IMG,
    PAGE_TIMEOUT_MS,
    SCRIPT,
    XSS_CLAIMS,
    XSS_QUERY,
    open_app,
    start_server,
    stop_server,
    wait_for_log,
)

browser, page, server = bf.browser, bf.page, bf.server  # fixtures, used by name

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TIMINGS: dict[str, float] = {}


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def rate(page, dim: str, col: str = "current"):
    return page.locator(f".pg-rate-{dim} .pg-{col}")


def toggle(page, kind: str, index: int, dim: str, choice: str):
    return page.locator(f".pg-{kind}-{index}-{dim} button[data-value='{choice}']")


def report(capsys, line: str) -> None:
    with capsys.disabled():
        print(f"\n[browser] {line}")
    ARTIFACTS.mkdir(exist_ok=True)
    mode = "a" if TIMINGS else "w"  # a fresh file per test run
    TIMINGS[line] = time.time()
    with open(ARTIFACTS / "browser-timings.txt", mode, encoding="utf-8") as fh:
        fh.write(line + "\n")


def watch_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    return errors


def test_label_undo_weight_and_reload(server, page, capsys):
    errors = watch_errors(page)
    seconds = open_app(page, server.url)
    report(capsys, f"server ready {server.ready_s:.1f} s; first page: widgets visible {seconds:.1f} s after goto")
    # no name yet: toggles are disabled
    expect(page.locator(".pg-claim-0-supported button").first).to_be_disabled()
    page.locator(".pg-annotator input").fill("alice")
    page.locator(".pg-annotator input").press("Enter")
    expect(page.locator(".pg-status")).to_contain_text("Labelling as alice")
    expect(rate(page, "faithfulness")).to_contain_text("no data")

    # a claim toggled to unsupported: faithfulness and its interval change on the page
    toggle(page, "claim", 0, "supported", "no").click()
    expect(rate(page, "faithfulness")).to_contain_text("0% [0%–79%] n=1")
    expect(rate(page, "faithfulness", "pooled")).to_contain_text("0% [0%–79%] n=1")
    expect(page.locator(".pg-claim-0-supported-auto")).to_contain_text("harness:")
    # toggled back
    toggle(page, "claim", 0, "supported", "yes").click()
    expect(rate(page, "faithfulness")).to_contain_text("100% [21%–100%] n=1")
    # undo: back to unsupported
    page.locator(".pg-undo").click()
    expect(rate(page, "faithfulness")).to_contain_text("0% [0%–79%] n=1")
    expect(toggle(page, "claim", 0, "supported", "no")).to_have_class(lambda_re("mod-active"))
    expect(page.locator(".pg-status")).to_contain_text("Undone")

    # a relevant passage, then a weight: the composite moves and the shares stay normalised
    toggle(page, "passage", 0, "relevant", "yes").click()
    expect(rate(page, "context_relevance")).to_contain_text("100%")
    expect(page.locator(".pg-composite-current")).to_have_text("0.50")
    readout = page.locator(".pg-weight-faithfulness .widget-readout")
    readout.click()
    readout.fill("0")
    readout.press("Enter")
    expect(page.locator(".pg-weight-faithfulness-share")).to_have_text("0%")
    expect(page.locator(".pg-weight-coverage-share")).to_have_text("33%")
    expect(page.locator(".pg-composite-current")).to_have_text("1.00")
    expect(page.locator(".pg-diagnosis")).to_contain_text("faithfulness")
    expect(page.locator(".pg-chart svg")).to_be_visible()
    expect(page.locator(".pg-progress")).to_contain_text("1 / ")

    # the main view, as an artifact (the page fits the window; each column scrolls on its own)
    page.set_viewport_size({"width": 1500, "height": 1250})
    page.wait_for_timeout(800)  # the chart image arrives after the numbers
    page.evaluate("document.querySelectorAll('.pg-panel').forEach(e => e.scrollTop = 0)")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "playground.png"))
    page.set_viewport_size({"width": 1500, "height": 1000})

    # reload through the bookmark link: the name comes from the URL and the labels are still there
    href = page.locator(".pg-bookmark-link").get_attribute("href")
    assert href == "?annotator=alice"
    t0 = time.monotonic()
    open_app(page, server.url + href)
    report(capsys, f"reload: widgets visible {time.monotonic() - t0:.1f} s")
    expect(page.locator(".pg-annotator input")).to_have_value("alice")
    expect(page.locator(".pg-status")).to_contain_text("Welcome back, alice: 2 labels loaded")
    expect(toggle(page, "claim", 0, "supported", "no")).to_have_class(lambda_re("mod-active"))
    expect(toggle(page, "passage", 0, "relevant", "yes")).to_have_class(lambda_re("mod-active"))
    expect(rate(page, "faithfulness", "pooled")).to_contain_text("0% [0%–79%] n=1")
    assert not errors, errors

    from playground.store import open_store

    with open_store(server.db, read_only=True) as store:
        assert sorted((lab.unit_kind, lab.dimension, lab.value) for lab in store.labels(annotator="alice")) == [
            ("claim", "supported", 0), ("passage", "relevant", 1)]


def lambda_re(word: str):
    import re

    return re.compile(rf"(^|\s){re.escape(word)}(\s|$)")


def test_hostile_text_renders_as_text(server, page):
    errors = watch_errors(page)
    open_app(page, server.url + "?annotator=xss-tester")
    page.locator(".pg-case-list select").select_option(index=2)
    expect(page.locator(".pg-case-head")).to_contain_text("GC-0003")
    expect(page.locator(".pg-question")).to_have_text(XSS_QUERY)
    expect(page.locator(".pg-claim-0-text")).to_contain_text(XSS_CLAIMS[0])
    expect(page.locator(".pg-claim-1-text")).to_contain_text(XSS_CLAIMS[1])
    expect(page.locator(".pg-fact-0-text")).to_contain_text(SCRIPT)
    expect(page.locator(".pg-case-list select")).to_contain_text("GC-0003 0/5 · How long may an…")
    # hostile text typed into the search is searched for and echoed as text
    page.locator(".pg-search input").fill("<img src=x onerror")
    expect(page.locator(".pg-nav")).to_contain_text("matching “<img src=x onerror”")
    expect(page.locator(".pg-case-list select option", has_text="GC-0003")).to_have_count(1)
    expect(page.locator(".pg-case")).to_contain_text(IMG)  # the hostile article title and passage text
    toggle(page, "claim", 0, "supported", "yes").click()
    expect(page.locator(".pg-claim-0-supported-auto")).to_contain_text("harness:")
    page.wait_for_timeout(500)
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.locator(".pg-app img[src='x']").count() == 0
    assert page.evaluate("[...document.querySelectorAll('.pg-app script')].length") == 0
    # export from the page: a real download
    page.locator(".pg-export-jsonl").click()
    link = page.locator(".pg-download-link")
    expect(link).to_contain_text("labels-xss-tester.jsonl")
    with page.expect_download() as info:
        link.click()
    text = Path(info.value.path()).read_text(encoding="utf-8")
    assert text.count("\n") == 1 and '"annotator": "xss-tester"' in text and '"dimension": "supported"' in text
    assert not errors, errors


def test_two_tabs_label_at_once(server, browser, capsys):
    ctx = browser.new_context(viewport={"width": 1500, "height": 1000})
    try:
        a, b = ctx.new_page(), ctx.new_page()
        for p in (a, b):
            p.set_default_timeout(PAGE_TIMEOUT_MS)
        t0 = time.monotonic()
        a.goto(server.url + "?annotator=tabs", wait_until="commit")
        b.goto(server.url + "?annotator=tabs", wait_until="commit")
        for p in (a, b):
            p.locator(".pg-claim-0-supported").first.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
        report(capsys, f"two tabs opened together: both visible after {time.monotonic() - t0:.1f} s")
        # each tab (kernel) labels a different unit
        toggle(a, "passage", 0, "relevant", "yes").click()
        toggle(b, "claim", 0, "supported", "no").click()
        expect(rate(a, "context_relevance", "pooled")).to_contain_text("100%")
        expect(rate(b, "faithfulness", "pooled")).to_contain_text("0%")
        expect(rate(b, "context_relevance", "pooled")).to_contain_text("no data")  # not refreshed yet
        # B refreshes and sees A's label; A reloads and sees B's
        b.locator(".pg-refresh").click()
        expect(rate(b, "context_relevance", "pooled")).to_contain_text("100%")
        expect(toggle(b, "passage", 0, "relevant", "yes")).to_have_class(lambda_re("mod-active"))
        a.reload()
        a.locator(".pg-claim-0-supported").first.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
        expect(toggle(a, "claim", 0, "supported", "no")).to_have_class(lambda_re("mod-active"))
        expect(a.locator(".pg-progress")).to_contain_text("1 / ")
        # a change over the other tab's change is saved and flagged
        toggle(b, "passage", 0, "relevant", "no").click()
        expect(b.locator(".pg-status")).to_contain_text("Saved")
        toggle(a, "passage", 0, "relevant", "clear").click()  # A still shows "yes"
        expect(a.locator(".pg-status")).to_contain_text("another tab")
        toggle(a, "passage", 0, "relevant", "yes").click()
        expect(a.locator(".pg-status")).to_contain_text("Saved")
    finally:
        ctx.close()
    from playground.store import open_store

    with open_store(server.db, read_only=True) as store:
        mine = {(lab.unit_kind, lab.dimension): lab.value for lab in store.labels(annotator="tabs")}
        assert mine == {("passage", "relevant"): 1, ("claim", "supported"): 0}
        assert {"alice", "tabs"} <= set(store.annotators())


def test_read_only_serves_the_instructors_room(browser, tmp_path, capsys):
    """``--read-only`` on a store serves the instructor's room: every annotator, no label toggles.

    Its own data root and store, labelled here through the store API, so that it passes alone.
    """
    from playground.store import open_store
    from playground.units import load_catalog

    root = bf.make_data_root(tmp_path / "data")
    db = tmp_path / "labels.db"
    hostile = next(u for u in load_catalog(root).values() if u.text == XSS_CLAIMS[0])
    with open_store(db) as store:
        store.set_label("alice", hostile, "supported", 1)
        store.set_label("bob", hostile, "supported", 0)
    dash = start_server(tmp_path, "--read-only", db=db)
    try:
        ctx = browser.new_context(viewport={"width": 1500, "height": 1000})
        p = ctx.new_page()
        p.set_default_timeout(PAGE_TIMEOUT_MS)
        errors = watch_errors(p)
        p.goto(f"{dash.url}?interval=2", timeout=PAGE_TIMEOUT_MS)
        p.locator(".pr-room .pr-progress").wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
        expect(p.locator(".pr-progress")).to_contain_text("alice")
        expect(p.locator(".pr-progress")).to_contain_text("bob")
        expect(p.locator(".pr-moments")).to_contain_text("tie: 1 yes · 1 no")  # their split on the hostile claim
        expect(p.locator(".pg-claim-0-supported button")).to_have_count(0)  # no label toggles
        expect(p.locator(".pg-undo")).to_have_count(0)
        assert not errors, errors
        ctx.close()
    finally:
        stop_server(dash.proc)


def test_shipped_data_with_preheated_kernels(browser, tmp_path, capsys):
    """``playground serve --preheat 1`` on the shipped corpus and golden set: the name still comes from the URL."""
    srv = start_server(tmp_path, "--preheat", "1", shipped=True)
    try:
        filled = wait_for_log(srv.log, "playground: session ready", 90)  # the preheated kernel ran the notebook
        ctx = browser.new_context(viewport={"width": 1500, "height": 1000})
        p = ctx.new_page()
        p.set_default_timeout(PAGE_TIMEOUT_MS)
        errors = watch_errors(p)
        seconds = open_app(p, srv.url + "?annotator=Zo%C3%AB")
        report(capsys, f"shipped data, preheated kernel ({'ready' if filled else 'NOT ready'}): widgets visible "
                       f"{seconds:.1f} s after goto")
        expect(p.locator(".pg-annotator input")).to_have_value("Zoë")
        expect(p.locator(".pg-case-head")).to_contain_text("GC-0001")
        expect(p.locator(".pg-case-list option")).to_have_count(len(__import__("playground.golden", fromlist=["x"])
                                                                     .load_dataset().cases))
        toggle(p, "claim", 0, "supported", "no").click()
        expect(rate(p, "faithfulness")).to_contain_text("0% [0%–79%] n=1")
        p.locator(".pg-next-unlabelled").click()
        expect(p.locator(".pg-status")).not_to_contain_text("Saved")
        assert not errors, errors
        ctx.close()
    finally:
        stop_server(srv.proc)
