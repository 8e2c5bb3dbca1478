"""Roster links that can be taken back (issue 43.2): a link works only for a name on the roster as it is now, at
its current generation, before its expiry; ``playground roster revoke/reissue`` changes one student only.

The rules are checked here on the auth layer (the identity provider and the cookie check the server runs), with
the roster file on disk; tests/test_serve_revocation.py checks them through a real server and its store.
"""
from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
import tornado.web

from playground.cli import main
from playground.cli.roster import reissue, revoke
from playground.serving import auth, roster

SECRET = "roster-secret-for-revocation-tests"
EXP = 1_800_000_000  # a fixed Unix second: the expiry boundary is tested at it


def _hand_sig(name: str, suffix: bytes = b"") -> str:
    """The signature written out by hand from the module's formula (a reference, not the code under test)."""
    return hmac.new(SECRET.encode(), b"playground-roster\0" + name.encode() + suffix, hashlib.sha256).hexdigest()[:32]


def test_a_first_link_without_expiry_keeps_its_old_signature_and_the_others_sign_generation_and_expiry():
    assert roster.sign(SECRET, "carol") == _hand_sig("carol")
    assert roster.sign(SECRET, "carol", 2) == _hand_sig("carol", b"\x002\x000")
    assert roster.sign(SECRET, "carol", 1, EXP) == _hand_sig("carol", f"\x001\x00{EXP}".encode())
    assert not roster.verify(SECRET, "carol", roster.sign(SECRET, "carol", 1, EXP), 1, EXP + 1)  # expiry moved
    assert not roster.verify(SECRET, "carol", roster.sign(SECRET, "carol", 1), 2)  # generation moved
    assert roster.bind(SECRET, roster.Grant("carol")) != roster.sign(SECRET, "carol")  # a cookie MAC is no link


def test_the_roster_file_columns(tmp_path):
    f = tmp_path / "names.txt"
    f.write_text("# class 3B\nalice\ncarol\t2\ndave\t3\trevoked\n", encoding="utf-8")
    assert roster.read_entries(f) == [roster.Entry("alice"), roster.Entry("carol", 2),
                                      roster.Entry("dave", 3, revoked=True)]
    assert roster.read_roster(f) == ["alice", "carol"]  # the names whose links are live
    assert roster.format_roster(roster.read_entries(f), "class 3B") == f.read_text(encoding="utf-8")


@pytest.mark.parametrize(("line", "problem"), [
    ("carol\t0", "generation '0' is not a whole number from 1"),
    ("carol\tx2", "generation 'x2' is not a whole number from 1"),
    ("carol\t2\tgone", "third column 'gone': only 'revoked' is known"),
    ("carol\t2\trevoked\tmore", "4 columns: at most NAME, GENERATION and 'revoked'"),
])
def test_a_bad_column_is_refused_with_its_line(tmp_path, line, problem):
    f = tmp_path / "names.txt"
    f.write_text(f"alice\n{line}\n", encoding="utf-8")
    with pytest.raises(roster.RosterError) as err:
        roster.read_entries(f)
    assert f"line 2: {problem}" in str(err.value)


ENTRIES = {"alice": roster.Entry("alice"), "carol": roster.Entry("carol", 2), "dave": roster.Entry("dave", 1, True)}


@pytest.mark.parametrize(("grant", "now", "why"), [
    (roster.Grant("alice"), EXP, None),
    (roster.Grant("bob"), 0, "the name is not on the roster"),
    (roster.Grant("dave"), 0, "the student's link is revoked"),
    (roster.Grant("carol", 1), 0, "an old link (generation 1; the current one is 2)"),
    (roster.Grant("carol", 3), 0, "an old link (generation 3; the current one is 2)"),
    (roster.Grant("carol", 2, EXP), EXP - 1, None),                    # the last second it works
    (roster.Grant("carol", 2, EXP), EXP - 0.001, None),
    (roster.Grant("carol", 2, EXP), EXP, "the link has expired"),     # the boundary: refused from EXP on
    (roster.Grant("carol", 2, EXP), EXP + 1, "the link has expired"),
])
def test_what_the_roster_refuses(grant, now, why):
    assert roster.refusal(ENTRIES, grant, now) == why
    assert roster.refusal(None, roster.Grant("alice"), 0) == "the roster file cannot be read"


@pytest.mark.parametrize(("text", "expires"), [("90m", 1000 + 5400), ("8h", 1000 + 28800), ("7d", 1000 + 604800),
                                               ("1s", 1001), ("2027-01-15T08:00Z", 1_800_000_000)])
def test_link_expiry_values(text, expires):
    assert roster.parse_expiry(text, 1000.5) == expires


@pytest.mark.parametrize(("text", "problem"), [("0m", "at least 1 s"), ("soon", "give a duration"),
                                               ("2027-01-15T08:00", "must be UTC"), ("1970-01-01T00:00Z", "passed")])
def test_bad_link_expiry_values(text, problem):
    with pytest.raises(roster.RosterError, match=problem):
        roster.parse_expiry(text, 1000.0)


class _Handler:
    """What the identity provider reads of a request: its query arguments."""

    def __init__(self, query: str) -> None:
        from urllib.parse import parse_qsl

        self.args = dict(parse_qsl(query))

    def get_argument(self, name: str, default: str = "", strip: bool = True) -> str:
        return self.args.get(name, default)


@pytest.fixture
def provider(tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("alice\ncarol\nZoë Martin\n", encoding="utf-8")
    auth.take_keys({"PLAYGROUND_SERVE_TOKEN": "s-key", "PLAYGROUND_ROSTER_SECRET": SECRET,
                    "PLAYGROUND_ROSTER_FILE": str(names)})
    yield SimpleNamespace(p=auth.RoleIdentityProvider(), names=names)
    auth.take_keys({})


def _query(name: str, generation: int = 1, expires: int | None = None) -> str:
    return roster.student_link("http://h/", "s-key", SECRET, name, generation, expires).split("?", 1)[1]


def _rewrite(path: Path, text: str) -> None:
    """Rewrite the roster as an editor or the command does: a new file put in place (a new inode)."""
    tmp = path.with_suffix(".new")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def test_a_name_taken_off_the_roster_is_refused_at_once(provider):
    carol = provider.p._roster_user(_Handler(_query("carol")))
    cookie = provider.p.user_to_cookie(carol)
    assert auth.bound_name(carol) == "carol" and provider.p.user_from_cookie(cookie) is not None
    _rewrite(provider.names, "alice\nZoë Martin\n")  # carol removed, nothing restarted
    with pytest.raises(tornado.web.HTTPError) as refused:
        provider.p._roster_user(_Handler(_query("carol")))
    assert refused.value.status_code == 403
    assert provider.p.user_from_cookie(cookie) is None  # her browser's login cookie no longer works either
    assert not auth.still_allowed(carol)                  # her open page is closed at its next message
    assert auth.bound_name(provider.p._roster_user(_Handler(_query("alice")))) == "alice"


def test_an_expired_link_is_refused_from_its_expiry_second(provider, monkeypatch):
    query = _query("alice", 1, EXP)
    monkeypatch.setattr(auth.time, "time", lambda: EXP - 1.0)
    user = provider.p._roster_user(_Handler(query))
    assert auth.bound_name(user) == "alice"
    monkeypatch.setattr(auth.time, "time", lambda: float(EXP))
    assert auth.bound_name(user) is None and not auth.still_allowed(user)  # the cookie expires with the link
    with pytest.raises(tornado.web.HTTPError):
        provider.p._roster_user(_Handler(query))


def test_an_expiry_changed_in_the_link_breaks_its_signature(provider):
    forged = _query("alice", 1, EXP).replace(f"exp={EXP}", f"exp={EXP + 86400}")
    assert auth.bound_name(provider.p._roster_user(_Handler(forged))) is None  # unbound: labels under no name


def test_revoke_and_reissue_change_one_student_only(provider, tmp_path, monkeypatch):
    links = tmp_path / "links.txt"
    lines = ["instructor link (keep it to yourself: it adjudicates and assigns): http://h/?token=i-key"]
    lines += [f"student link for {n}: {roster.student_link('http://h/', 's-key', SECRET, n)}"
              for n in ("alice", "carol", "Zoë Martin")]
    links.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    users = {n: provider.p._roster_user(_Handler(_query(n))) for n in ("alice", "carol", "Zoë Martin")}

    reissue(provider.names, "alice", SECRET, links)
    after = links.read_text(encoding="utf-8").splitlines()
    assert after[0] == lines[0] and after[2:] == lines[2:]                 # everyone else's line unchanged
    assert after[1] == f"student link for alice: {roster.student_link('http://h/', 's-key', SECRET, 'alice', 2)}"
    with pytest.raises(tornado.web.HTTPError):
        provider.p._roster_user(_Handler(_query("alice")))                 # her old link
    assert auth.bound_name(users["alice"]) is None                         # and her old cookie
    assert auth.bound_name(provider.p._roster_user(_Handler(after[1].split("?", 1)[1]))) == "alice"
    assert auth.bound_name(users["carol"]) == "carol" and auth.bound_name(users["Zoë Martin"]) == "Zoë Martin"

    revoke(provider.names, "carol", links)
    assert links.read_text(encoding="utf-8").splitlines() == [after[0], after[1], after[3]]
    assert provider.names.read_text(encoding="utf-8") == "alice\t2\ncarol\t1\trevoked\nZoë Martin\n"
    assert auth.bound_name(users["carol"]) is None and auth.bound_name(users["Zoë Martin"]) == "Zoë Martin"
    assert links.stat().st_mode & 0o777 == 0o600


def test_the_command_line(provider, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("PLAYGROUND_ROSTER_SECRET", raising=False)
    links = tmp_path / "links.txt"
    links.write_text(f"student link for carol: {roster.student_link('http://h/', 's-key', SECRET, 'carol')}\n")
    before = provider.names.read_text(encoding="utf-8")
    assert main(["roster", "reissue", "carol", "--roster", str(provider.names), "--links-file", str(links)]) == 2
    assert "set $PLAYGROUND_ROSTER_SECRET" in capsys.readouterr().err
    assert main(["roster", "revoke", "bob", "--roster", str(provider.names)]) == 2
    assert "'bob' is not on the roster" in capsys.readouterr().err
    assert provider.names.read_text(encoding="utf-8") == before  # nothing written on an error
    monkeypatch.setenv("PLAYGROUND_ROSTER_SECRET", SECRET)
    assert main(["roster", "reissue", "carol", "--roster", str(provider.names), "--links-file", str(links),
                 "--link-expiry", "2099-01-01T00:00Z"]) == 0
    out = capsys.readouterr().out
    assert "carol has a new link, generation 2" in out and "token" not in out and SECRET not in out
    assert links.read_text().endswith(f"&gen=2&exp=4070908800&sig={roster.sign(SECRET, 'carol', 2, 4070908800)}\n")
    assert main(["roster", "list", "--roster", str(provider.names)]) == 0
    assert capsys.readouterr().out == "alice\tgeneration 1\ncarol\tgeneration 2\nZoë Martin\tgeneration 1\n"


def test_a_roster_file_that_breaks_refuses_every_link_until_fixed(provider, caplog):
    user = provider.p._roster_user(_Handler(_query("alice")))
    _rewrite(provider.names, "alice\nalice\n")  # a name twice: refused whole
    assert auth.bound_name(user) is None
    assert "every student link is refused until it is fixed" in caplog.text
    _rewrite(provider.names, "alice\n")
    assert auth.bound_name(user) == "alice"


def test_serve_signs_an_expiry_into_every_link_and_passes_the_roster_file(tmp_path, monkeypatch):
    from playground.cli import build_parser
    from playground.cli.serve import _check_roster, build_command
    from playground.cli.serve_links import student_links

    for name in ("PLAYGROUND_SERVE_TOKEN", "PLAYGROUND_INSTRUCTOR_TOKEN", "PLAYGROUND_ROSTER_SECRET"):
        monkeypatch.delenv(name, raising=False)
    names = tmp_path / "names.txt"
    names.write_text("alice\ncarol\t3\ndave\t2\trevoked\n", encoding="utf-8")
    monkeypatch.setattr("time.time", lambda: 1000.0)
    args = build_parser().parse_args(["serve", "--roster", str(names), "--links-file", "l.txt", "--port", "8123",
                                      "--link-expiry", "8h"])
    assert _check_roster(args) == [] and args.link_expires == 1000 + 8 * 3600
    lines = student_links(args, {"student": "s-key", "instructor": "i-key"}, SECRET)
    alice, carol = _hand_sig("alice", b"\x001\x0029800"), _hand_sig("carol", b"\x003\x0029800")
    assert lines[1:] == [  # dave is revoked: no link; carol's carries her generation
        f"student link for alice: http://127.0.0.1:8123/?token=s-key&annotator=alice&exp=29800&sig={alice}",
        f"student link for carol: http://127.0.0.1:8123/?token=s-key&annotator=carol&gen=3&exp=29800&sig={carol}"]
    assert build_command(args)[1]["PLAYGROUND_ROSTER_FILE"] == str(names.resolve())
    alone = build_parser().parse_args(["serve", "--link-expiry", "8h"])
    assert _check_roster(alone) == ["--link-expiry is for the student links of --roster"]
