"""The keys and links of ``playground serve``: which keys the server accepts, by role, and the links it gives out.

Roles (``docs/security.md``): students hold the class token (``$PLAYGROUND_SERVE_TOKEN``), the instructor
their own key, the room's viewers an observer's key; on loopback this machine's own user needs none.  A
link is ``http://HOST:PORT/BASE/?token=KEY``; with ``--roster`` each student's link also carries their
name, signed with the roster secret (:mod:`playground.serving.roster`).
"""
from __future__ import annotations

import argparse
import os
import secrets
import socket

__all__ = ["INSTRUCTOR_TOKEN_ENV", "KEY_ENVS", "LINK_TEXT", "LOOPBACK", "OBSERVER_TOKEN_ENV", "ROSTER_SECRET_ENV",
           "TOKEN_ENV", "is_loopback", "join_url", "links", "open_role", "role_keys", "roster_secret",
           "student_links"]


#: The access keys reach the server through these environment variables, never its command line.
TOKEN_ENV = "PLAYGROUND_SERVE_TOKEN"
INSTRUCTOR_TOKEN_ENV = "PLAYGROUND_INSTRUCTOR_TOKEN"
OBSERVER_TOKEN_ENV = "PLAYGROUND_OBSERVER_TOKEN"
KEY_ENVS = {"student": TOKEN_ENV, "instructor": INSTRUCTOR_TOKEN_ENV, "observer": OBSERVER_TOKEN_ENV}
#: The roster secret (``--roster``): set it to keep the students' links valid across restarts.
ROSTER_SECRET_ENV = "PLAYGROUND_ROSTER_SECRET"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


def join_url(host: str, port: int, base_url: str = "/", token: str | None = None) -> str:
    """The address to give people: ``http://HOST:PORT/BASE/`` with ``?token=...`` when there is one."""
    shown = socket.gethostname() if host in ("0.0.0.0", "::", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    base = base_url if base_url.endswith("/") else base_url + "/"
    return f"http://{shown}:{port}{base}" + (f"?token={token}" if token else "")


def roster_secret() -> str:
    """The roster secret: ``$PLAYGROUND_ROSTER_SECRET``, or a new random one."""
    from ..serving.roster import new_secret

    return os.environ.get(ROSTER_SECRET_ENV, "").strip() or new_secret()


def _token(args: argparse.Namespace) -> str | None:
    """The class token: ``$PLAYGROUND_SERVE_TOKEN`` or a new random one; none on loopback or with --no-auth."""
    if args.no_auth:
        return None
    given = os.environ.get(TOKEN_ENV, "").strip()
    if given:
        return given
    if is_loopback(args.host) and (getattr(args, "roster", None) is None or args.read_only):
        return None
    return secrets.token_urlsafe(16)


def role_keys(args: argparse.Namespace) -> dict[str, str]:
    """The keys the server accepts, by role (``docs/security.md``).

    The labelling page: the class token (students) and the instructor's key.  The room (``--read-only``):
    the instructor's key and an observer's key, never the class token (a student must not read everyone's
    labels or adjudicate).  A key not given in the environment is drawn at random when the server needs
    keys at all (beyond loopback, or a class token given); none with ``--no-auth``.
    """
    student = _token(args)
    if student is None and not os.environ.get(INSTRUCTOR_TOKEN_ENV, "").strip():
        return {}

    def key(env: str) -> str:
        return os.environ.get(env, "").strip() or secrets.token_urlsafe(16)

    keys = {"instructor": key(INSTRUCTOR_TOKEN_ENV)}
    if args.read_only:
        keys["observer"] = key(OBSERVER_TOKEN_ENV)
    elif student:
        keys["student"] = student
    return keys


def open_role(args: argparse.Namespace) -> str:
    """The role of every visitor when the server has no keys: this machine's own user on loopback, else the
    least power the app allows (``--no-auth``: student on the page, observer in the room)."""
    if is_loopback(args.host) and not args.no_auth:
        return "instructor"
    return "observer" if args.read_only else "student"


LINK_TEXT = {
    "student": "join link (give it to the class; it holds the class key)",
    "instructor": "instructor link (keep it to yourself: it adjudicates and assigns)",
    "observer": "observer link (the room, read-only: for a projector or a colleague)",
}


def links(args: argparse.Namespace, keys: dict[str, str]) -> list[str]:
    """The lines that give out the links, one per role with a key, students first."""
    return [f"{LINK_TEXT[role]}: {join_url(args.host, args.port, args.base_url, keys[role])}"
            for role in ("student", "instructor", "observer") if role in keys]


def student_links(args: argparse.Namespace, keys: dict[str, str], secret: str) -> list[str]:
    """With ``--roster``: one line per student whose link is live, ``student link for NAME: URL`` (the name, its
    generation and ``--link-expiry`` signed), in roster order, after the instructor's link (the class-wide join
    link is not given: it labels under no name)."""
    from ..serving.roster import read_entries, student_link

    base = join_url(args.host, args.port, args.base_url)
    expires = getattr(args, "link_expires", None)
    return ([line for line in links(args, keys) if not line.startswith(LINK_TEXT["student"])]
            + [f"student link for {e.name}: "
               f"{student_link(base, keys['student'], secret, e.name, e.generation, expires)}"
               for e in read_entries(args.roster) if not e.revoked])
