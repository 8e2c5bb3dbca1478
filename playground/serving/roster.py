"""Per-student links: a class roster, each name signed so that a link labels under its own name only, and only
while the name is on the roster, its link is the latest one issued, and the link has not expired.

``playground serve --roster names.txt`` reads one student per line (blank lines and lines starting with ``#``
skipped)::

    NAME                     generation 1, link live
    NAME<TAB>GENERATION      a reissued link (``playground roster reissue NAME``): older generations are dead
    NAME<TAB>GENERATION<TAB>revoked      no link of NAME works (``playground roster revoke NAME``)

Each name is tidied and checked by the page's own name rule
(:func:`playground.ui.session_types.validate_annotator`: NFC, spaces collapsed, at most 64 characters, no
control or format characters, not a reserved name); a name given twice (after tidying), a generation that is
not a whole number from 1, or a third column other than ``revoked`` is refused with its line.

A student's link carries the name, its generation, an optional expiry and their signature::

    ?token=CLASS-KEY&annotator=NAME[&gen=G][&exp=E]&sig=SIG
    SIG = first 32 hex digits of HMAC-SHA256(roster secret, "playground-roster\\0" + NAME [+ "\\0G\\0E"])

``gen`` is left out for generation 1 and ``exp`` when the link never expires; the ``\\0G\\0E`` suffix is signed
only when either is given (``E`` is 0 for no expiry), so a link of generation 1 without expiry keeps the
signature it had before generations existed.  ``E`` is a Unix time in whole seconds: the link works while
``now < E`` and is refused from the second ``E`` on (:func:`refusal`).

The roster secret is ``$PLAYGROUND_ROSTER_SECRET`` (the links then stay valid across restarts) or 32 random
bytes drawn by ``serve`` (:func:`new_secret`).  It lives in the serving process only, never in a kernel (a
kernel's websocket runs what its page sends; a secret there could be read back and used to sign any name).
:func:`verify` compares with :func:`hmac.compare_digest`.

The server checks the signature when the link is opened and binds the grant (name, generation, expiry) to the
browser's signed login cookie (:class:`playground.serving.auth.RoleIdentityProvider`), under a second MAC
(:func:`bind`, another context: the cookie's value is not a link).  On every request it checks the grant
against the roster file as it is *now* (:class:`CurrentRoster`: one ``stat`` per check, the file read again
only when it changed; a file that cannot be read or holds a bad line refuses every roster link until it is
fixed).  The page's kernel is told the bound name (``PLAYGROUND_SIGNED_NAME``) and refuses every other name
(:func:`playground.ui.request.check_name`).
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

__all__ = [
    "BIND_CONTEXT",
    "CONTEXT",
    "EXP_PARAM",
    "GEN_PARAM",
    "REVOKED",
    "SIG_CHARS",
    "SIG_PARAM",
    "CurrentRoster",
    "Entry",
    "Grant",
    "RosterError",
    "bind",
    "format_roster",
    "new_secret",
    "parse_expiry",
    "read_entries",
    "read_roster",
    "refusal",
    "sign",
    "student_link",
    "verify",
]

#: The query parameters that carry a name's signature, its generation and its expiry.
SIG_PARAM = "sig"
GEN_PARAM = "gen"
EXP_PARAM = "exp"
#: Hex digits of the signature kept in a link (128 bits).
SIG_CHARS = 32
#: Prefixed to the name before signing, so that the secret signs nothing else by accident.
CONTEXT = b"playground-roster\0"
#: Prefixed before the MAC that binds a grant to a login cookie (never valid as a link's signature).
BIND_CONTEXT = b"playground-bound\0"
#: The third column of a revoked student's line.
REVOKED = "revoked"

log = logging.getLogger("playground.serving")


class RosterError(ValueError):
    """A roster file that cannot be used: the message names the file, the line and the rule."""


@dataclass(frozen=True)
class Entry:
    """One student's line: their name, the generation of their current link, whether it is revoked."""

    name: str
    generation: int = 1
    revoked: bool = False


@dataclass(frozen=True)
class Grant:
    """What one link grants: a name, the link's generation, its expiry (Unix seconds; None: never)."""

    name: str
    generation: int = 1
    expires: int | None = None


def new_secret() -> str:
    """A fresh roster secret (URL-safe text, 32 random bytes)."""
    return secrets.token_urlsafe(32)


def _message(context: bytes, name: str, generation: int, expires: int | None) -> bytes:
    message = context + name.encode("utf-8")
    if generation != 1 or expires is not None:
        message += f"\0{generation}\0{expires or 0}".encode("ascii")
    return message


def sign(secret: str, name: str, generation: int = 1, expires: int | None = None) -> str:
    """The signature of a link for ``name`` (module docstring)."""
    mac = hmac.new(secret.encode("utf-8"), _message(CONTEXT, name, generation, expires), hashlib.sha256)
    return mac.hexdigest()[:SIG_CHARS]


def bind(secret: str, grant: Grant) -> str:
    """The MAC that ties ``grant`` to a login cookie: like :func:`sign` under :data:`BIND_CONTEXT`."""
    message = _message(BIND_CONTEXT, grant.name, grant.generation, grant.expires)
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()[:SIG_CHARS]


def verify(secret: str, name: str, sig: str, generation: int = 1, expires: int | None = None) -> bool:
    """Whether ``sig`` is the signature of that link under ``secret`` (constant-time compare; empty never is)."""
    if not secret or not name or not sig:
        return False
    return hmac.compare_digest(sign(secret, name, generation, expires).encode("ascii"),
                               sig.encode("utf-8", "replace"))


def refusal(entries: dict[str, Entry] | None, grant: Grant, now: float) -> str | None:
    """Why the roster ``entries`` (None: no readable roster) refuse ``grant`` at Unix time ``now``, or None.

    Refused: no readable roster; a name not on it; a revoked name; a generation other than the current one
    (an older link, or a forged newer one); an expiry ``E`` with ``now >= E`` (the second ``E`` is refused).
    """
    if entries is None:
        return "the roster file cannot be read"
    entry = entries.get(grant.name)
    if entry is None:
        return "the name is not on the roster"
    if entry.revoked:
        return "the student's link is revoked"
    if grant.generation != entry.generation:
        return f"an old link (generation {grant.generation}; the current one is {entry.generation})"
    if grant.expires is not None and now >= grant.expires:
        return "the link has expired"
    return None


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_expiry(text: str, now: float) -> int:
    """A link's expiry (Unix seconds) from ``--link-expiry``: a duration from ``now`` (``90m``, ``8h``, ``7d``,
    ``3600s``; whole numbers, at least 1 s) or a UTC time (``2026-12-24T18:00Z``, seconds optional); a
    time not after ``now`` is refused (:class:`RosterError` naming the option and the rule)."""
    import datetime as dt

    t = text.strip()
    if t[:-1].isascii() and t[:-1].isdigit() and t[-1:] in _UNITS:
        seconds = int(t[:-1]) * _UNITS[t[-1]]
        if seconds < 1:
            raise RosterError(f"--link-expiry {text!r}: a duration of at least 1 s")
        return int(now) + seconds
    try:
        when = dt.datetime.fromisoformat(t.removesuffix("Z") + "+00:00" if t.endswith("Z") else t)
    except ValueError:
        raise RosterError(f"--link-expiry {text!r}: give a duration (90m, 8h, 7d) or a UTC time "
                          "(2026-12-24T18:00Z)") from None
    if when.tzinfo is None or when.utcoffset() != dt.timedelta(0):
        raise RosterError(f"--link-expiry {text!r}: a time must be UTC, ending in Z")
    expires = int(when.timestamp())
    if expires <= now:
        raise RosterError(f"--link-expiry {text!r}: that time has passed")
    return expires


def _parse_line(line: str) -> Entry:
    from ..ui.session_types import validate_annotator

    name, *rest = line.split("\t")
    if len(rest) > 2:
        raise RosterError(f"{len(rest) + 1} columns: at most NAME, GENERATION and '{REVOKED}', tab-separated")
    generation = 1
    if rest and rest[0].strip():
        text = rest[0].strip()
        if not (text.isascii() and text.isdigit()) or int(text) < 1:
            raise RosterError(f"generation {text!r} is not a whole number from 1")
        generation = int(text)
    revoked = False
    if len(rest) == 2 and rest[1].strip():
        if rest[1].strip() != REVOKED:
            raise RosterError(f"third column {rest[1].strip()!r}: only '{REVOKED}' is known")
        revoked = True
    return Entry(validate_annotator(name), generation, revoked)


def read_entries(path: str | Path) -> list[Entry]:
    """Every student line of the roster file ``path``, in file order; :class:`RosterError` on any bad line.

    Every problem is listed (``FILE line N: ...``); a roster without a name is refused.  The file is
    checked with the import bounds first (a regular file: a FIFO is refused without waiting).
    """
    from ..limits import LimitExceeded, check_file
    from ..ui.session_types import SessionError

    p = Path(path)
    try:
        check_file(p)
        text = p.read_text(encoding="utf-8-sig")
    except (LimitExceeded, OSError, UnicodeDecodeError) as exc:
        raise RosterError(f"--roster {p}: cannot read it: {exc}") from None
    entries: list[Entry] = []
    problems: list[str] = []
    first: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            entry = _parse_line(line)
        except (SessionError, RosterError) as exc:
            problems.append(f"line {n}: {exc}")
            continue
        if entry.name in first:
            problems.append(f"line {n}: {entry.name!r} is already on line {first[entry.name]}")
            continue
        first[entry.name] = n
        entries.append(entry)
    if not entries and not problems:
        problems.append("no name in it (one name per line)")
    if problems:
        raise RosterError(f"--roster {p}: " + "; ".join(problems))
    return entries


def read_roster(path: str | Path) -> list[str]:
    """The names of the roster file ``path`` whose links are live (not revoked), in file order."""
    return [e.name for e in read_entries(path) if not e.revoked]


def format_roster(entries: list[Entry], header: str = "") -> str:
    """The roster file's text for ``entries`` (``header`` lines first, each prefixed ``# ``)."""
    lines = [f"# {h}" for h in header.splitlines()]
    for e in entries:
        cols = [e.name] + ([str(e.generation)] if e.generation != 1 or e.revoked else []) + ([REVOKED] if e.revoked
                                                                                              else [])
        lines.append("\t".join(cols))
    return "".join(line + "\n" for line in lines)


class CurrentRoster:
    """The roster file as it is now: :meth:`entries` stats the file on each call and reads it again only when
    its identity, size or modification time changed; a file that cannot be read or is refused gives None
    (every roster link refused, one warning in the log per change)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stamp: tuple[int, ...] | None = None
        self._entries: dict[str, Entry] | None = None

    def entries(self) -> dict[str, Entry] | None:
        try:
            st = os.stat(self.path)
            stamp: tuple[int, ...] = (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except OSError:
            stamp = ()
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self._entries = {e.name: e for e in read_entries(self.path)}
            except RosterError as exc:
                self._entries = None
                log.warning("playground: the roster cannot be used, every student link is refused until it is "
                            "fixed: %s", exc)
        return self._entries

    def refusal(self, grant: Grant, now: float) -> str | None:
        """:func:`refusal` against the roster as it is now."""
        return refusal(self.entries(), grant, now)


def student_link(base: str, token: str, secret: str, name: str, generation: int = 1,
                 expires: int | None = None) -> str:
    """``base`` (the join URL without a query) with the class key, the name, its generation and expiry (when
    not the defaults) and their signature."""
    extra = (f"&{GEN_PARAM}={generation}" if generation != 1 else "") + (
        f"&{EXP_PARAM}={expires}" if expires is not None else "")
    return (f"{base}?token={quote(token, safe='')}&annotator={quote(name, safe='')}{extra}"
            f"&{SIG_PARAM}={sign(secret, name, generation, expires)}")
