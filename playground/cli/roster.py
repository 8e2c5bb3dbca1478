"""``playground roster``: cut one student's link off, or give them a new one, without touching the others'.

* ``playground roster revoke NAME --roster FILE [--links-file LINKS]`` — NAME's line gets ``revoked``: no link
  of NAME works from the next request on (the server reads the roster file as it is now); NAME's line leaves
  LINKS.
* ``playground roster reissue NAME --roster FILE --links-file LINKS [--link-expiry WHEN]`` — NAME's
  generation goes up by one (a revoked name is live again): their older links stop working; the new link
  replaces NAME's line in LINKS (built from the class key and address of the lines already there, signed with
  ``$PLAYGROUND_ROSTER_SECRET``, which must be the server's).
* ``playground roster list --roster FILE`` — each name, its generation and whether it is revoked (no key).

The roster file is rewritten whole or not at all (:func:`playground.files.write_atomic`); every other line,
comment and generation is kept as it was, so every other student's link keeps working.  An unknown name, a
roster that cannot be read, or a reissue without the secret: one error, exit code 2, nothing written.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from ..serving.roster import (
    Entry,
    RosterError,
    format_roster,
    parse_expiry,
    read_entries,
    student_link,
)

__all__ = ["LINK_PREFIX", "register", "reissue", "revoke", "run_roster"]

#: How a student's line starts in the links file ``serve --roster --links-file`` writes.
LINK_PREFIX = "student link for "
_SECRET_ENV = "PLAYGROUND_ROSTER_SECRET"

_DESCRIPTION = (
    "One student's roster link: revoke it (their links stop working at their next request), reissue it (a new "
    "link, their older ones stop working), or list the roster. The server reads the roster file on every student "
    "request, so nothing is restarted and no other student's link changes. reissue signs the new link with "
    "$PLAYGROUND_ROSTER_SECRET (the server's) and writes it to --links-file, never to the terminal."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "roster", help="revoke or reissue one student's roster link, or list the roster",
        description=_DESCRIPTION,
        epilog="examples:\n  playground roster revoke carol --roster names.txt --links-file links.txt\n"
        "  PLAYGROUND_ROSTER_SECRET=... playground roster reissue carol --roster names.txt --links-file links.txt\n"
        "  playground roster list --roster names.txt",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=lambda args: p.print_help() or 2)
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    for action, text in (("revoke", "no link of NAME works from their next request on"),
                         ("reissue", "a new link for NAME; their older links stop working"),
                         ("list", "each name, its link's generation, and whether it is revoked")):
        a = sub.add_parser(action, help=text, description=f"{text[0].upper()}{text[1:]}. {_DESCRIPTION}")
        if action != "list":
            a.add_argument("name", metavar="NAME", help="the student, as on the roster")
            a.add_argument("--links-file", type=Path, default=None, required=action == "reissue", metavar="LINKS",
                           help="the links file serve wrote: NAME's line is removed (revoke) or replaced by the new "
                                "link (reissue: required, the link is written there only)")
        if action == "reissue":
            a.add_argument("--link-expiry", default=None, metavar="WHEN",
                           help="the new link stops working after a duration (90m, 8h, 7d) or at a UTC time")
        a.add_argument("--roster", type=Path, required=True, metavar="FILE", help="the roster file serve reads")
        a.set_defaults(func=run_roster)


def _find(entries: list[Entry], name: str, path: Path) -> int:
    from ..ui.session_types import SessionError, validate_annotator

    try:
        tidy = validate_annotator(name)
    except SessionError as exc:
        raise RosterError(f"{name!r}: {exc}") from None
    for i, e in enumerate(entries):
        if e.name == tidy:
            return i
    raise RosterError(f"{tidy!r} is not on the roster {path} (names: {', '.join(e.name for e in entries)})")


def _comments(path: Path) -> str:
    """The roster's leading comment lines (kept when it is rewritten), without their ``# ``."""
    lines = []
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        if not line.lstrip().startswith("#"):
            break
        lines.append(line.lstrip()[1:].removeprefix(" "))
    return "\n".join(lines)


def _write_roster(path: Path, entries: list[Entry]) -> None:
    from ..files import write_atomic

    mode = path.stat().st_mode & 0o777
    write_atomic(path, format_roster(entries, _comments(path)))
    path.chmod(mode)


def revoke(roster: Path, name: str, links: Path | None = None) -> Entry:
    """Mark ``name`` revoked in ``roster`` (and drop its line from ``links``); returns its new entry."""
    entries = read_entries(roster)
    i = _find(entries, name, roster)
    entries[i] = Entry(entries[i].name, entries[i].generation, revoked=True)
    if links is not None:
        _replace_link(links, entries[i].name, None)
    _write_roster(roster, entries)
    return entries[i]


def reissue(roster: Path, name: str, secret: str, links: Path | None = None, expires: int | None = None) -> Entry:
    """Raise ``name``'s generation by one in ``roster`` (no longer revoked); with ``links``, its line there is
    replaced by the new link signed with ``secret``.  Returns the new entry."""
    if not secret:
        raise RosterError(f"reissue signs the new link: set ${_SECRET_ENV} to the server's roster secret")
    entries = read_entries(roster)
    i = _find(entries, name, roster)
    entries[i] = Entry(entries[i].name, entries[i].generation + 1, revoked=False)
    if links is not None:
        _replace_link(links, entries[i].name, (secret, entries[i].generation, expires))
    _write_roster(roster, entries)
    return entries[i]


def _replace_link(links: Path, name: str, new: tuple[str, int, int | None] | None) -> None:
    """Remove ``name``'s line from ``links`` (``new`` None) or put the new link there, in its place (or last);
    the class key and address come from the file's student links."""
    from ..files import write_atomic

    try:
        lines = links.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RosterError(f"--links-file {links}: cannot read it: {exc}") from None
    students = [line for line in lines if line.startswith(LINK_PREFIX)]
    kept = [line for line in lines if not line.startswith(f"{LINK_PREFIX}{name}: ")]
    if new is not None:
        if not students:
            raise RosterError(f"--links-file {links}: no student link in it to take the class key and address from")
        url = urlsplit(students[0].split(": ", 1)[1])
        token = parse_qs(url.query).get("token", [""])[0]
        base = f"{url.scheme}://{url.netloc}{url.path}"
        secret, generation, expires = new
        line = f"{LINK_PREFIX}{name}: {student_link(base, token, secret, name, generation, expires)}"
        at = next((i for i, old in enumerate(lines) if old.startswith(f"{LINK_PREFIX}{name}: ")), None)
        kept = [*lines[:at], line, *lines[at + 1:]] if at is not None else [*kept, line]
    write_atomic(links, "".join(line + "\n" for line in kept), private=True)


def run_roster(args: argparse.Namespace) -> int:
    try:
        if args.action == "list":
            for e in read_entries(args.roster):
                print(f"{e.name}\tgeneration {e.generation}" + ("\trevoked" if e.revoked else ""))
            return 0
        if args.action == "revoke":
            e = revoke(args.roster, args.name, args.links_file)
            print(f"{e.name}'s links no longer work (revoked; the other students' links are unchanged)")
            return 0
        expires = parse_expiry(args.link_expiry, time.time()) if args.link_expiry else None
        e = reissue(args.roster, args.name, os.environ.get(_SECRET_ENV, "").strip(), args.links_file, expires)
    except (RosterError, OSError) as exc:
        print(f"playground roster {args.action}: {exc}", file=sys.stderr)
        return 2
    print(f"{e.name} has a new link, generation {e.generation}, in {args.links_file}; their older links no longer "
          "work", flush=True)
    return 0
