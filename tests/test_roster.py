"""Per-student links (issue 29.1), the rules one by one without a server: the roster file, the signature,
the name a student's page may use, the login cookie's binding, ``serve --roster``'s options and links."""
from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

import pytest

from playground.cli import build_parser
from playground.cli.serve import _check_roster, build_command, role_keys, student_links
from playground.serving import auth, roster
from playground.ui import request
from playground.ui.session_types import SessionError

SECRET = "roster-secret-for-tests"
MINI = Path(__file__).resolve().parent / "data" / "mini"


def test_a_signature_is_the_hmac_of_the_name_under_the_secret():
    expected = hmac.new(SECRET.encode(), b"playground-roster\0" + "Zoë Å".encode(), hashlib.sha256).hexdigest()[:32]
    assert roster.sign(SECRET, "Zoë Å") == expected and len(expected) == 32
    assert roster.verify(SECRET, "Zoë Å", expected)


@pytest.mark.parametrize("name, sig", [
    ("bob", "SIG-OF-alice"),            # another name under alice's signature
    ("alice", "SIG-OF-alice"[:-1]),     # one digit short
    ("alice", ""),                      # no signature
    ("", "SIG-OF-alice"),               # no name
    ("alice ", "SIG-OF-alice"),         # the name changed by a space
    ("alice", "SIG-OF-alice-UPPER"),    # the same digits in upper case
])
def test_a_signature_fits_its_own_name_only(name, sig):
    good = roster.sign(SECRET, "alice")
    sig = sig.replace("SIG-OF-alice-UPPER", good.upper()).replace("SIG-OF-alice", good)
    assert roster.verify(SECRET, "alice", good)
    assert not roster.verify(SECRET, name, sig)
    assert not roster.verify("another-secret", "alice", good)


def test_the_roster_file_is_tidied_by_the_name_rule(tmp_path):
    f = tmp_path / "names.txt"
    f.write_text("# class of 2026\n\n  alice  \nZoe\u0301 Martin\n" + "x" * 64 + "\n", encoding="utf-8")
    assert roster.read_roster(f) == ["alice", "Zoé Martin", "x" * 64]  # NFC, spaces trimmed, 64 characters kept


def test_every_bad_roster_line_is_named(tmp_path):
    f = tmp_path / "names.txt"
    f.write_text("alice\n" + "y" * 65 + "\nconsensus\nbad\u200bname\n alice\n", encoding="utf-8")
    with pytest.raises(roster.RosterError) as info:
        roster.read_roster(f)
    said = str(info.value)
    assert said.startswith(f"--roster {f}: line 2: That name cannot be used:")
    for part in ("line 3: That name cannot be used", "line 4: That name cannot be used",
                 "line 5: 'alice' is already on line 1"):
        assert part in said
    assert "line 1" not in said.split("line 5")[0]  # alice itself is fine


def test_an_empty_roster_and_a_fifo_are_refused(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nobody yet\n\n")
    with pytest.raises(roster.RosterError, match="no name in it"):
        roster.read_roster(empty)
    fifo = tmp_path / "names.fifo"
    os.mkfifo(fifo)
    with pytest.raises(roster.RosterError, match="not a regular file"):
        roster.read_roster(fifo)  # refused without waiting for a writer


STUDENT = {"VOILA_PREHEAT": "True", "PLAYGROUND_ROLE": "student", "PLAYGROUND_ROSTER": "1"}


@pytest.mark.parametrize("env, name, refused", [
    ({}, "bob", ""),                                                          # no roster: any name
    ({**STUDENT, "PLAYGROUND_ROLE": "instructor"}, "bob", ""),                # the instructor is not bound
    ({**STUDENT, "PLAYGROUND_SIGNED_NAME": "alice"}, "alice", ""),            # the link's own name
    ({**STUDENT, "PLAYGROUND_SIGNED_NAME": "alice"}, None, ""),               # no name yet
    ({**STUDENT, "PLAYGROUND_SIGNED_NAME": "alice"}, "bob", "alice's link"),  # another student's name
    ({**STUDENT, "PLAYGROUND_SIGNED_NAME": "alice"}, "Alice", "alice's link"),  # names are case-sensitive
    ({**STUDENT, "PLAYGROUND_SIGNED_NAME": ""}, "alice", "not opened with a valid one"),  # no valid link
    (STUDENT, "alice", "not opened with a valid one"),                         # no name told at all
    ({**STUDENT, "PLAYGROUND_ROLE": "nonsense", "PLAYGROUND_SIGNED_NAME": ""}, "a", "not opened"),  # least power
    ({"PLAYGROUND_ROLE": "student", "PLAYGROUND_SIGNED_NAME": "alice"}, "bob", ""),  # a name without a roster
])
def test_the_name_a_page_may_use(env, name, refused):
    said = request.name_refusal(name, env)
    assert (said == "") if not refused else (refused in said)
    if refused and name is not None:
        with pytest.raises(SessionError, match="link"):
            request.check_name(name, env)
    elif name is not None:
        assert request.check_name(name, env) == name


def test_the_page_opens_with_the_links_name(monkeypatch):
    env = {**STUDENT, "PLAYGROUND_SIGNED_NAME": "alice"}
    assert request.signed_name(env) == "alice"
    assert request.signed_name({**env, "PLAYGROUND_ROLE": "instructor"}) is None
    assert request.signed_name({k: v for k, v in env.items() if k != "PLAYGROUND_ROSTER"}) is None


def test_a_session_refuses_another_name_under_a_roster(monkeypatch, tmp_path):
    """The page's one check: every name a session labels under passes :func:`request.check_name`."""
    from playground.golden import load_dataset
    from playground.store import open_store
    from playground.ui.session import LabelSession

    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "harness-cache"))
    for k, v in {**STUDENT, "PLAYGROUND_SIGNED_NAME": "alice"}.items():
        monkeypatch.setenv(k, v)
    session = LabelSession(load_dataset(MINI), open_store(tmp_path / "labels.db"), annotator="  alice ")
    assert session.annotator == "alice"
    with pytest.raises(SessionError, match="opened with alice's link"):
        session.set_annotator("bob")
    assert session.annotator == "alice"  # the refused name changed nothing
    with pytest.raises(SessionError, match="opened with alice's link"):
        LabelSession(load_dataset(MINI), open_store(tmp_path / "labels.db"), annotator="bob")


@pytest.fixture
def keys():
    auth.take_keys({"PLAYGROUND_SERVE_TOKEN": "s-key", "PLAYGROUND_INSTRUCTOR_TOKEN": "i-key",
                    "PLAYGROUND_ROSTER_SECRET": SECRET})
    yield auth.RoleIdentityProvider()
    auth.take_keys({})
    auth.current_role.set(None)
    auth.current_name.set(None)


def test_the_login_cookie_binds_the_name_and_is_checked_again(keys):
    user = keys._user("student", roster.Grant("Zoë: B"))
    assert auth.role_of(user) == "student" and auth.bound_name(user) == "Zoë: B"
    assert keys.user_from_cookie(keys.user_to_cookie(user)) == user
    role, uid, sig, _name = user.username.split(":")
    forged = user.__class__(f"{role}:{uid}:{sig}:bob", *[getattr(user, f) for f in
                                                          ("name", "display_name", "initials", "avatar_url", "color")])
    assert auth.bound_name(forged) is None and keys.user_from_cookie(keys.user_to_cookie(forged)) is None
    assert auth.bound_name(keys._user("student")) is None
    assert auth.bound_name(keys._user("instructor")) is None


def test_a_pages_kernel_is_told_the_bound_name(keys):
    auth.claim(keys._user("student", roster.Grant("alice")))
    assert auth.page_env() == {"PLAYGROUND_ROLE": "student", "PLAYGROUND_SIGNED_NAME": "alice"}
    auth.claim(keys._user("student"))
    assert auth.page_env() == {"PLAYGROUND_ROLE": "student", "PLAYGROUND_SIGNED_NAME": ""}
    auth.claim(keys._user("instructor"))
    assert auth.page_env() == {"PLAYGROUND_ROLE": "instructor", "PLAYGROUND_SIGNED_NAME": ""}
    auth.take_keys({"PLAYGROUND_SERVE_TOKEN": "s-key"})  # no roster: nothing about names
    assert auth.page_env() == {"PLAYGROUND_ROLE": "instructor"}


def test_the_signature_never_reaches_a_kernel():
    assert auth.scrub_query("token=k&annotator=alice&sig=0123&case=GC-1") == "annotator=alice&case=GC-1"


def _args(*argv):
    return build_parser().parse_args(["serve", *argv])


@pytest.fixture
def names(tmp_path, monkeypatch):
    for name in ("PLAYGROUND_SERVE_TOKEN", "PLAYGROUND_INSTRUCTOR_TOKEN", "PLAYGROUND_ROSTER_SECRET"):
        monkeypatch.delenv(name, raising=False)
    f = tmp_path / "names.txt"
    f.write_text("alice\nZoë Martin\n", encoding="utf-8")
    return f


@pytest.mark.parametrize("extra, problem", [
    ((), "--roster writes one link per student to --links-file FILE (never to the log): give it"),
    (("--links-file", "l.txt", "--no-auth"), "--roster binds each student's link to a name with a key: it cannot "
                                             "go with --no-auth"),
])
def test_serve_roster_needs_a_links_file_and_keys(names, extra, problem):
    problems = _check_roster(_args("--roster", str(names), *extra))
    assert len(problems) == 1 and problems[0].startswith(problem)


def test_the_room_takes_the_roster_to_say_the_class_uses_personal_links(names):
    """Issue 42.3: the room (--read-only) with --roster gives no student link and needs no --links-file."""
    args = _args("--roster", str(names), "--read-only")
    assert _check_roster(args) == [] and args.roster_names == [] and args.roster_count == 2


def test_serve_writes_one_signed_link_per_student(names):
    args = _args("--roster", str(names), "--links-file", "l.txt", "--port", "8123")
    assert _check_roster(args) == [] and args.roster_names == ["alice", "Zoë Martin"]
    keys = role_keys(args)  # on loopback too: a roster needs keys
    assert set(keys) == {"student", "instructor"}
    lines = student_links(args, keys, SECRET)
    assert lines[0].startswith("instructor link") and len(lines) == 3
    assert lines[1] == (f"student link for alice: http://127.0.0.1:8123/?token={keys['student']}&annotator=alice"
                        f"&sig={roster.sign(SECRET, 'alice')}")
    assert lines[2].endswith(f"&annotator=Zo%C3%AB%20Martin&sig={roster.sign(SECRET, 'Zoë Martin')}")
    assert not any(line.startswith("join link") for line in lines)  # the class-wide link labels under no name
    _cmd, env = build_command(args)
    assert env["PLAYGROUND_ROSTER"] == "1" and SECRET not in env.values()
    _cmd, env = build_command(_args())
    assert "PLAYGROUND_ROSTER" not in env


def test_print_command_names_the_roster_secret_without_printing_it(names, capsys, monkeypatch):
    from playground.cli import main

    monkeypatch.setenv("PLAYGROUND_ROSTER_SECRET", SECRET)
    assert main(["serve", "--roster", str(names), "--links-file", "l.txt", "--print-command"]) == 0
    out = capsys.readouterr().out
    assert "PLAYGROUND_ROSTER=1\n" in out and "PLAYGROUND_ROSTER_SECRET=(set: signs the 2 student links)\n" in out
    assert SECRET not in out


def test_a_bad_roster_stops_serve_with_its_line(tmp_path, capsys, monkeypatch):
    from playground.cli import main

    monkeypatch.delenv("PLAYGROUND_SERVE_TOKEN", raising=False)
    bad = tmp_path / "names.txt"
    bad.write_text("alice\nalice\n", encoding="utf-8")
    assert main(["serve", "--roster", str(bad), "--links-file", "l.txt", "--print-command"]) == 1
    assert f"--roster {bad}: line 2: 'alice' is already on line 1" in capsys.readouterr().err
