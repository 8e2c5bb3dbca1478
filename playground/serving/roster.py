"""Per-student links: a class roster, each name signed so that a link labels under its own name only.

``playground serve --roster names.txt`` reads one name per line (blank lines and lines starting with ``#``
skipped), each tidied and checked by the page's own name rule
(:func:`playground.ui.session_types.validate_annotator`: NFC, spaces collapsed, at most 64 characters, no
control or format characters, not a reserved name); a name given twice (after tidying) is refused too.

A student's link carries the name and its signature::

    ?token=CLASS-KEY&annotator=NAME&sig=SIG
    SIG = first 32 hex digits of HMAC-SHA256(roster secret, "playground-roster\\0" + NAME as UTF-8)

The roster secret is ``$PLAYGROUND_ROSTER_SECRET`` (the links then stay valid across restarts) or 32 random
bytes drawn by ``serve`` (:func:`new_secret`).  It lives in the serving process only, never in a kernel (a
kernel's websocket runs what its page sends; a secret there could be read back and used to sign any name).
:func:`verify` compares with :func:`hmac.compare_digest`.

The server checks the signature when the link is opened and binds the name to the browser's signed login
cookie (:class:`playground.serving.auth.RoleIdentityProvider`); the page's kernel is told the bound name
(``PLAYGROUND_SIGNED_NAME``) and refuses every other name (:func:`playground.ui.request.check_name`).
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path
from urllib.parse import quote

__all__ = ["CONTEXT", "SIG_CHARS", "SIG_PARAM", "RosterError", "new_secret", "read_roster", "sign", "student_link",
           "verify"]

#: The query parameter that carries a name's signature.
SIG_PARAM = "sig"
#: Hex digits of the signature kept in a link (128 bits).
SIG_CHARS = 32
#: Prefixed to the name before signing, so that the secret signs nothing else by accident.
CONTEXT = b"playground-roster\0"


class RosterError(ValueError):
    """A roster file that cannot be used: the message names the file, the line and the rule."""


def new_secret() -> str:
    """A fresh roster secret (URL-safe text, 32 random bytes)."""
    return secrets.token_urlsafe(32)


def sign(secret: str, name: str) -> str:
    """The signature of ``name`` under ``secret`` (module docstring)."""
    mac = hmac.new(secret.encode("utf-8"), CONTEXT + name.encode("utf-8"), hashlib.sha256)
    return mac.hexdigest()[:SIG_CHARS]


def verify(secret: str, name: str, sig: str) -> bool:
    """Whether ``sig`` is ``name``'s signature under ``secret`` (constant-time compare; empty never is)."""
    if not secret or not name or not sig:
        return False
    return hmac.compare_digest(sign(secret, name).encode("ascii"), sig.encode("utf-8", "replace"))


def read_roster(path: str | Path) -> list[str]:
    """The tidied names of the roster file ``path``, in file order; :class:`RosterError` on any bad line.

    Every problem is listed (``FILE line N: ...``); a roster without a name is refused.  The file is
    checked with the import bounds first (a regular file: a FIFO is refused without waiting).
    """
    from ..limits import LimitExceeded, check_file
    from ..ui.session_types import SessionError, validate_annotator

    p = Path(path)
    try:
        check_file(p)
        text = p.read_text(encoding="utf-8-sig")
    except (LimitExceeded, OSError, UnicodeDecodeError) as exc:
        raise RosterError(f"--roster {p}: cannot read it: {exc}") from None
    names: list[str] = []
    problems: list[str] = []
    first: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            name = validate_annotator(line)
        except SessionError as exc:
            problems.append(f"line {n}: {exc}")
            continue
        if name in first:
            problems.append(f"line {n}: {name!r} is already on line {first[name]}")
            continue
        first[name] = n
        names.append(name)
    if not names and not problems:
        problems.append("no name in it (one name per line)")
    if problems:
        raise RosterError(f"--roster {p}: " + "; ".join(problems))
    return names


def student_link(base: str, token: str, secret: str, name: str) -> str:
    """``base`` (the join URL without a query) with the class key, the name and its signature."""
    return f"{base}?token={quote(token, safe='')}&annotator={quote(name, safe='')}&{SIG_PARAM}={sign(secret, name)}"
