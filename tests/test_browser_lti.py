"""An LTI 1.3 launch into the real class server, in Chromium (issue 39.2): the simulated platform's login and
auto-submitted launch form, then the student's page opens under the LMS identity with the name locked."""
from __future__ import annotations

import json

import browser_fixtures
import pytest
from browser_fixtures import need_chromium, open_app, start_server, stop_server, wait_for_log
from test_lti import CLIENT, DEPLOYMENT, ISS, Platform, _key, _Loop

pytestmark = [pytest.mark.browser, pytest.mark.slow]

browser = browser_fixtures.browser  # fixtures, used by name
page = browser_fixtures.page


@pytest.fixture(scope="module")
def lms_class(tmp_path_factory):
    need_chromium()
    work = tmp_path_factory.mktemp("lti-browser")
    loop = _Loop()
    platform = Platform()
    port = loop.serve(platform.app())
    platform.base = f"http://127.0.0.1:{port}"
    _k, private, public = _key()
    (work / "tool.key").write_text(private)
    (work / "tool.pub").write_text(public)
    (work / "lti.json").write_text(json.dumps({ISS: [{
        "default": True, "client_id": CLIENT, "auth_login_url": f"{platform.base}/auth",
        "auth_token_url": f"{platform.base}/token", "key_set_url": f"{platform.base}/jwks", "key_set": None,
        "private_key_file": "tool.key", "public_key_file": "tool.pub", "deployment_ids": [DEPLOYMENT]}]}))
    mp = pytest.MonkeyPatch()
    mp.setenv("PLAYGROUND_SERVE_TOKEN", "class-key-lti1")
    mp.setenv("PLAYGROUND_INSTRUCTOR_TOKEN", "teacher-key-lti1")
    srv = start_server(work, "--lti-config", str(work / "lti.json"))
    mp.undo()
    try:
        assert wait_for_log(srv.log, "playground: ready", 120), srv.log_tail()
        yield srv, platform
    finally:
        stop_server(srv.proc)
        loop.stop()


def test_a_learner_launched_from_the_lms_labels_under_the_lms_identity(lms_class, page):
    from playwright.sync_api import expect

    srv, platform = lms_class
    platform.user = {"roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
                     "email": "zoe@school.edu"}
    login = (f"{srv.url}lti/login?iss={ISS}&login_hint=u1&client_id={CLIENT}"
             f"&target_link_uri={srv.url}lti/launch")
    open_app(page, login)  # login -> the platform's auth form -> POST launch -> the signed link -> the page
    name = page.locator(".pg-annotator input")
    expect(name).to_have_value("zoe@school.edu")
    expect(name).to_be_disabled()
    expect(page.locator(".pg-status")).to_contain_text("Labelling as zoe@school.edu")
    assert "sig=" not in page.evaluate("window.location.search")
