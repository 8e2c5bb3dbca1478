"""No key or signature in any log the servers write, in any encoding (issue 43.4).

The scrubber's rules are checked on strings first (:mod:`playground.serving.scrub`); then the probes of the
issue are sent to two real servers — ``playground serve --roster --debug`` (every request logged) and the room
(``--read-only``) — and every log they wrote is searched for each key and signature, in the text and in each of
its percent-decodings.
"""
from __future__ import annotations

import logging
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote, unquote_plus, urlsplit

import pytest
from browser_fixtures import start_server, stop_server, wait_for_log
from serve_clients import open_page

from playground.serving import scrub

STUDENT, INSTRUCTOR, OBSERVER = "class-key-4b1d9e", "teacher-key-8e2f71", "observer-key-5d0e33"


@pytest.fixture(autouse=True)
def _record_factory_restored():
    """:func:`scrub.install` changes this process's log record factory: put the original back after each test."""
    factory = logging.getLogRecordFactory()
    yield
    logging.setLogRecordFactory(factory)
    scrub._KNOWN.clear()


@pytest.mark.parametrize(("uri", "scrubbed"), [
    ("/?token=K1&annotator=alice&sig=S1", "/?token=[secret]&annotator=alice&sig=[secret]"),
    ("/login?next=%2F%3Ftoken%3DK1%26annotator%3Dalice%26sig%3DS1",
     "/login?next=/%3Ftoken%3D[secret]%26annotator%3Dalice%26sig%3D[secret]"),
    ("/login?next=%252F%253Ftoken%253DK1%2526sig%253DS1", "/login?next=/%3Ftoken%3D[secret]%26sig%3D[secret]"),
    ("/?%74oken=K1", "/?%74oken=[secret]"),                          # the parameter's name encoded
    ("/?next=http%3A%2F%2Fh%2F%3Fa%3D1%26sig%3DS1", "/?next=http://h/%3Fa%3D1%26sig%3D[secret]"),
    ("/?annotator=Zo%C3%AB%20Martin&gen=2&case=GC-1", "/?annotator=Zo%C3%AB%20Martin&gen=2&case=GC-1"),  # kept
    ("/api/kernels/abc/channels?session_id=s1", "/api/kernels/abc/channels?session_id=s1"),
])
def test_scrub_uri(uri, scrubbed):
    assert scrub.scrub_uri(uri) == scrubbed and not scrub.leaks(scrubbed)


def test_deeper_than_the_bound_is_withheld():
    deep = "token=K1"
    for _ in range(scrub.MAX_DEPTH + 1):
        deep = quote(deep, safe="")
    assert scrub.leaks("/?a=" + deep)
    assert scrub.scrub_uri("/x?a=" + deep) == "/x?" + scrub.WITHHELD      # six levels: the query is withheld
    assert scrub.scrub_uri("/" + quote(quote("?token=K1", safe=""), safe="")) == "/?token=[secret]"  # in the path


def test_every_log_record_is_scrubbed_and_known_keys_go_wherever_they_are(caplog):
    scrub.install(["known-key-0123456789"])
    with caplog.at_level(logging.INFO):
        logging.getLogger("probe").info("GET %s from %s", "/?sig=S1", "referer=http://h/?token=K1")
        logging.getLogger("probe").info("a key alone in text: known-key-0123456789 (and %s)",
                                        quote(quote("known-key-0123456789")))
    text = caplog.text
    assert "S1" not in text and "K1" not in text and "known-key" not in text
    assert "/?sig=[secret]" in text and "referer=http://h/?token=[secret]" in text


def test_a_traceback_is_scrubbed_too(caplog):
    scrub.install([])
    with caplog.at_level(logging.ERROR):
        try:
            raise ValueError("bad request /?next=%2F%3Ftoken%3DK9%26sig%3DS9")
        except ValueError:
            logging.getLogger("probe").exception("while serving")
    text = caplog.text + "".join(r.exc_text or "" for r in caplog.records)
    assert "K9" not in text and "S9" not in text and "ValueError" in text and "[secret]" in text


def _layers(text: str) -> list[str]:
    out = [text]
    for _ in range(8):
        out.append(unquote_plus(out[-1]))
    return out


def _send(url: str, headers: dict[str, str] | None = None, method: str = "GET") -> int:
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=60) as resp:
            resp.read()
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def probes(base: str, link: str) -> list[tuple[str, dict[str, str]]]:
    """The issue's probes for one link (``link`` = a query holding a key, maybe a signature): plain, percent-
    encoded, double-encoded, inside ``next=``, as a full address inside ``next=``, with the parameter's name
    encoded, in a path, in a ``Referer`` (plain and encoded) of refused requests, on pages that do not exist."""
    once, twice = quote("/?" + link, safe=""), quote(quote("/?" + link, safe=""), safe="")
    full = quote(f"http://{urlsplit(base).netloc}/?{link}", safe="")
    return [
        (f"{base}?{link}", {}),
        (f"{base}login?next={once}", {}),
        (f"{base}login?next={twice}", {}),
        (f"{base}login?next={full}", {}),
        (f"{base}?{link.replace('token=', '%74oken=')}", {}),
        (f"{base}no-such-page?{link}", {}),
        (f"{base}no-such-page/{once}", {}),
        (f"{base}api/kernels?{link}", {}),
        (f"{base}static/x.js", {"Referer": f"{base}?{link}"}),
        (f"{base}static/x.js", {"Referer": f"{base}login?next={once}"}),
        (f"{base}api/kernels", {"Referer": f"{base}?{quote(link, safe='')}"}),
    ]


def _run_probes(srv, links: list[str]) -> list[int]:
    codes = []
    for link in links:
        for url, headers in probes(srv.url, link):
            codes.append(_send(url, headers))
            codes.append(_send(url, headers, method="POST"))
    return codes


def _assert_no_secret(logs: list[Path], secrets: list[str]) -> str:
    assert logs, "no log found"
    text = "\n".join(p.read_text(errors="replace") for p in logs)
    for layer in _layers(text):
        for secret in secrets:
            assert secret not in layer, f"{secret[:6]}... in a server log"
    return text


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``serve --roster --debug``: the labelling page, every request logged (debug), a signed link per student."""
    mp = pytest.MonkeyPatch()
    mp.setenv("PLAYGROUND_SERVE_TOKEN", STUDENT)
    mp.setenv("PLAYGROUND_INSTRUCTOR_TOKEN", INSTRUCTOR)
    mp.delenv("PLAYGROUND_ROSTER_SECRET", raising=False)
    work = tmp_path_factory.mktemp("logs-serve")
    (work / "names.txt").write_text("alice\ncarol\n", encoding="utf-8")
    links = work / "links.txt"
    srv = start_server(work, "--roster", str(work / "names.txt"), "--links-file", str(links), "--debug")
    mp.undo()
    assert wait_for_log(srv.log, "playground: ready", 180), srv.log_tail()
    srv.student = [urlsplit(line.split(": ", 1)[1]).query for line in links.read_text().splitlines()
                   if line.startswith("student link")]
    yield srv
    stop_server(srv.proc)


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    for k, v in {"PLAYGROUND_SERVE_TOKEN": STUDENT, "PLAYGROUND_INSTRUCTOR_TOKEN": INSTRUCTOR,
                 "PLAYGROUND_OBSERVER_TOKEN": OBSERVER}.items():
        mp.setenv(k, v)
    from playground.store import open_store

    work = tmp_path_factory.mktemp("logs-room")
    with open_store(str(work / "labels.db"), create=True):
        pass
    srv = start_server(work, "--read-only", "--links-file", str(work / "links.txt"))
    mp.undo()
    yield srv
    stop_server(srv.proc)


@pytest.mark.slow
def test_no_key_or_signature_in_the_labelling_servers_logs(served):
    sigs = [q.rsplit("sig=", 1)[1] for q in served.student]
    assert len(sigs) == 2 and all(len(s) == 32 for s in sigs)
    page = open_page(served.url, served.student[0], timeout=240)  # a real page: the kernel logs too
    assert page.status == 200 and page.kernel_id
    codes = _run_probes(served, [*served.student, f"token={INSTRUCTOR}"])
    assert 403 in codes and 200 in codes  # refused probes (logged as warnings) and served ones (debug)
    assert wait_for_log(served.log, "page for 'alice' built", 120)
    stop_server(served.proc)  # everything flushed, the shutdown logged too
    text = _assert_no_secret(sorted(served.log.parent.glob("*.log")), [STUDENT, INSTRUCTOR, *sigs])
    assert "next=/%3Ftoken%3D[secret]" in text         # the probes reached the log, scrubbed
    assert "referer=http" in text and "sig=[secret]" in text


@pytest.mark.slow
def test_no_key_in_the_rooms_logs(room):
    codes = _run_probes(room, [f"token={OBSERVER}", f"token={INSTRUCTOR}", f"token={STUDENT}&sig=0123abcd"])
    assert 403 in codes
    stop_server(room.proc)
    text = _assert_no_secret(sorted(room.log.parent.glob("*.log")), [STUDENT, INSTRUCTOR, OBSERVER])
    assert "login?next=/%3Ftoken%3D[secret]" in text and "referer=" in text
