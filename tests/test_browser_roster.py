"""A student's roster link in Chromium (issue 29.1): the page opens under the link's name with the name box
locked, the key and the signature leave the address bar, a label is saved under the name, a reload keeps it,
and another name typed after "Switch name" is refused in words."""
from __future__ import annotations

from urllib.parse import urlsplit

import browser_fixtures
import pytest
from browser_fixtures import need_chromium, open_app, start_server, stop_server, wait_for_log

pytestmark = pytest.mark.browser

browser = browser_fixtures.browser  # fixtures, used by name
page = browser_fixtures.page


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    need_chromium()
    mp = pytest.MonkeyPatch()
    mp.setenv("PLAYGROUND_SERVE_TOKEN", "class-key-b10c")
    mp.setenv("PLAYGROUND_INSTRUCTOR_TOKEN", "teacher-key-77aa")
    work = tmp_path_factory.mktemp("roster-browser")
    (work / "names.txt").write_text("Zoë Martin\nbob\n", encoding="utf-8")
    links = work / "links.txt"
    srv = start_server(work, "--roster", str(work / "names.txt"), "--links-file", str(links))
    mp.undo()
    assert wait_for_log(srv.log, "playground: ready", 120)
    srv.zoe = next(line.split(": ", 1)[1] for line in links.read_text(encoding="utf-8").splitlines()  # type: ignore[attr-defined]
                   if line.startswith("student link for Zoë Martin"))
    yield srv
    stop_server(srv.proc)


def test_a_roster_link_opens_the_page_under_its_name(classroom, page):
    from playwright.sync_api import expect

    query = urlsplit(classroom.zoe).query
    open_app(page, f"{classroom.url}?{query}")
    name = page.locator(".pg-annotator input")
    expect(name).to_have_value("Zoë Martin")
    expect(name).to_be_disabled()
    expect(page.locator(".pg-status")).to_contain_text("Labelling as Zoë Martin")
    search = page.evaluate("window.location.search")
    assert "token=" not in search and "sig=" not in search  # neither the key nor the signature stays in view
    page.locator(".pg-claim-0-supported button[data-value='yes']").first.click()
    expect(page.locator(".pg-status")).to_contain_text("Saved", timeout=60_000)

    page.reload()  # the address now holds the name only: the login cookie keeps the binding
    page.locator(".pg-claim-0-supported").first.wait_for(state="visible")
    expect(page.locator(".pg-annotator input")).to_have_value("Zoë Martin")

    page.locator(".pg-annotator-go").click()  # "Switch name"
    box = page.locator(".pg-annotator input")
    box.fill("bob")
    box.press("Enter")
    expect(page.locator(".pg-status")).to_contain_text("labels as Zoë Martin only, not as bob")

    from playground.store import open_store

    with open_store(str(classroom.db), create=False, read_only=True) as store:
        assert {label.annotator for label in store.labels()} == {"Zoë Martin"}
