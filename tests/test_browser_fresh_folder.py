"""Issue 42.1 in Chromium: ``playground labels init --db labels.db`` and ``playground serve --db labels.db``
typed in a fresh folder, as docs/instructor.md writes them: the page draws the playground (not "The playground
cannot start") and a click is saved in that folder's ./labels.db."""
from __future__ import annotations

import browser_fixtures
import pytest
from browser_fixtures import need_chromium, open_app, wait_for_log
from serve_process import READY, playground, serving

pytestmark = [pytest.mark.browser, pytest.mark.slow]

browser = browser_fixtures.browser  # fixtures, used by name
page = browser_fixtures.page


def test_the_documented_commands_from_a_fresh_folder_serve_a_page_that_saves_there(tmp_path, page):
    from playwright.sync_api import expect

    from playground.store import open_store

    need_chromium()
    assert playground(tmp_path, "labels", "init", "--db", "labels.db").returncode == 0
    with serving(tmp_path, "--db", "labels.db", "--preheat", "1", "--open-slots", "0") as srv:
        assert wait_for_log(srv.log, READY, 240), srv.text()[-4000:]
        open_app(page, f"{srv.url}?annotator=ada")
        assert "cannot start" not in page.inner_text("body")
        page.locator(".pg-claim-0-supported button[data-value='yes']").first.click()
        expect(page.locator(".pg-status")).to_contain_text("Saved", timeout=60_000)
    with open_store(str(tmp_path / "labels.db"), create=False, read_only=True) as store:
        labels = [(label.annotator, label.dimension, label.value) for label in store.labels()]
    assert labels == [("ada", "supported", 1)]
