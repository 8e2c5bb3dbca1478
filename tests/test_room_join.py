"""What the room's join panel tells a class (issue 42.3): a join link and its QR code for a class on the class
link, "open the link your instructor sent you" for a roster class (whose class link with a typed name is
refused), and, with neither, how the docs start the room so that it shows the link."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from playground.ui.room_html import PERSONAL_LINKS_ENV, join_html, personal_links

REPO = Path(__file__).resolve().parent.parent
LINK = "http://host:8866/?token=class-key&lesson=week-1"


def test_a_class_on_the_class_link_is_shown_the_link_its_qr_code_and_to_type_a_name():
    text = join_html(LINK)
    assert "Join the lesson: open" in text and "and type your name." in text and "<svg" in text
    assert "Personal links" not in text


@pytest.mark.parametrize("url", [None, LINK])
def test_a_roster_class_is_told_to_open_its_personal_link_and_shown_no_class_link(url):
    text = join_html(url, personal=3)
    assert "Personal links" in text and "Open the link your instructor sent you." in text
    assert "(3 on the roster)" in text and "no name to type" in text
    assert "type your name" not in text and "<svg" not in text and "token=" not in text and "http" not in text


def test_without_a_link_the_room_says_how_the_docs_start_it():
    text = join_html(None)
    assert ("<code>PLAYGROUND_LINK_BASE='&lt;the join link&gt;' playground serve --read-only</code>" in text
            and "<code>--roster names.txt</code>" in text)
    assert "(it sets PLAYGROUND_LINK_BASE)" not in text  # serve never set it: the old text was wrong


@pytest.mark.parametrize(("value", "count"), [("", 0), ("0", 0), ("1", 1), ("31", 31), ("x", 0), ("-2", 0)])
def test_the_rooms_personal_links_setting(value, count):
    assert personal_links({PERSONAL_LINKS_ENV: value}) == count
    assert personal_links({}) == 0


def test_the_room_app_shows_the_personal_links_panel_when_serve_says_so(tmp_path, monkeypatch):
    from playground.store import open_store
    from playground.ui.room import RoomApp, open_room

    db = tmp_path / "labels.db"
    open_store(db).close()
    monkeypatch.setenv(PERSONAL_LINKS_ENV, "2")
    room, _ = open_room(None, str(db), None, None)
    app = RoomApp(room, adjudicator="prof", link_base=LINK)
    assert "Open the link your instructor sent you." in app.join.value and LINK not in app.join.value
    monkeypatch.delenv(PERSONAL_LINKS_ENV)
    room, _ = open_room(None, str(db), None, None)
    app = RoomApp(room, adjudicator="prof", link_base=LINK)
    assert "Personal links" not in app.join.value and "type your name" in app.join.value


def _print_command(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for name in ("PLAYGROUND_SERVE_TOKEN", "PLAYGROUND_INSTRUCTOR_TOKEN", "PLAYGROUND_ROSTER_SECRET"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "playground", "serve", "--print-command", *extra], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=120)


def test_the_room_started_with_the_roster_tells_its_kernels_the_class_uses_personal_links(tmp_path):
    (tmp_path / "names.txt").write_text("alice\nbob\ncarol\n", encoding="utf-8")
    out = _print_command(tmp_path, "--read-only", "--roster", "names.txt", "--db", "labels.db")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert f"{PERSONAL_LINKS_ENV}=3" in lines
    assert "PLAYGROUND_ROSTER=1" not in lines  # the room's own names (adjudicators) are not bound to links
    assert not any(line.startswith(("PLAYGROUND_ROSTER_SECRET", "PLAYGROUND_SERVE_TOKEN")) for line in lines)
    assert not any(line.startswith("PLAYGROUND_INSTRUCTOR_TOKEN") for line in lines)  # loopback: no key asked


def test_the_students_server_with_the_roster_still_needs_its_links_file(tmp_path):
    (tmp_path / "names.txt").write_text("alice\n", encoding="utf-8")
    out = _print_command(tmp_path, "--roster", "names.txt")
    assert out.returncode == 1 and "--roster writes one link per student to --links-file FILE" in out.stderr
    out = _print_command(tmp_path, "--roster", "names.txt", "--links-file", "links.txt")
    assert out.returncode == 0 and "PLAYGROUND_ROSTER=1" in out.stdout.splitlines()
    assert not any(line.startswith(PERSONAL_LINKS_ENV) for line in out.stdout.splitlines())
