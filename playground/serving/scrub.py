"""No key or signature in any log line of the serving process, in any encoding.

Rules:

* a **secret parameter** is a query parameter whose name, decoded, contains one of :data:`SECRET_WORDS`
  (``token``, ``sig``, ``key``, ``secret``, ``auth``, ``password``, ``xsrf``; jupyter_server's own list is
  ``token auth key code state xsrf``); its value is logged as ``[secret]``;
* :func:`scrub_uri` scrubs an address's query, and the value of every other parameter as an address of its
  own (``next=%2F%3Ftoken%3D...``), percent-decoding it once per level, at most :data:`MAX_DEPTH` levels;
* :func:`leaks` decodes a text repeatedly (``%XX`` and ``+``), at most :data:`MAX_DEPTH` times, and says
  whether any layer still has ``NAME=VALUE`` with a secret name and a value other than ``[secret]``, or
  holds one of the server's own keys, or is still changing after the last decoding (more levels of encoding
  than the bound): then :func:`scrub_uri` withholds the query (``?[withheld: it may hold a key]``), or the
  whole address when its path leaks too;
* :func:`scrub_text` applies :func:`scrub_uri` to every run of characters of a log message that holds ``=``
  or ``%``, and replaces the server's own keys wherever they are.

:func:`install` applies :func:`scrub_text` to every log record the process makes (a log record factory: the
message, its arguments and the text of its traceback), so a line from Voila, jupyter_server or tornado is
scrubbed as well as the access log; :func:`log_request` is the access log (tornado's ``log_function``): it
names the user by role and id only and logs the ``Referer`` of a refused request, scrubbed.
"""
from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote, unquote_plus

__all__ = ["MAX_DEPTH", "SECRET_WORDS", "WITHHELD", "install", "is_secret_name", "leaks", "log_request",
           "scrub_text", "scrub_uri"]

#: A parameter whose decoded name contains one of these is a secret.
SECRET_WORDS = ("token", "sig", "key", "secret", "auth", "password", "xsrf")
#: Levels of percent-encoding decoded, at most (deeper is withheld whole).
MAX_DEPTH = 5
WITHHELD = "[withheld: it may hold a key]"
#: ``NAME=VALUE`` with the value in a look-ahead, so that a pair inside another's value is found too.
_SECRET_PAIR = re.compile(r"([^\s=&?;\"'<>/]+)\s*=(?=\s*([^\s&;\"'<>]*))")
_RUN = re.compile(r"[^\s\"'<>()]+")
#: The server's own keys (set by :func:`install`): redacted wherever they appear.
_KNOWN: list[str] = []


def is_secret_name(name: str) -> bool:
    """Whether the parameter ``name`` (decoded up to :data:`MAX_DEPTH` times) contains a :data:`SECRET_WORDS`."""
    decoded = _layers(name)[-1].lower()
    return any(word in decoded for word in SECRET_WORDS)


def _layers(text: str) -> list[str]:
    """``text`` and its successive percent-decodings (``+`` as a space), until it stops changing or
    :data:`MAX_DEPTH` decodings; one more entry (the next decoding) when it was still changing."""
    layers = [text]
    for _ in range(MAX_DEPTH + 1):
        nxt = unquote_plus(layers[-1])
        if nxt == layers[-1]:
            break
        layers.append(nxt)
    return layers


def leaks(text: str) -> bool:
    """Whether any decoding layer of ``text`` shows a secret (module docstring)."""
    layers = _layers(text)
    if len(layers) > MAX_DEPTH + 1:
        return True
    for layer in layers:
        for name, value in _SECRET_PAIR.findall(layer):
            if value and value != "[secret]" and is_secret_name(name):
                return True
        if any(key in layer for key in _KNOWN):
            return True
    return False


def _scrub(uri: str, depth: int) -> str:
    head, sep, query = uri.partition("?")
    if not sep:
        if "=" in uri:
            head, query = "", uri
        elif "%" in uri and depth < MAX_DEPTH and (decoded := unquote(uri)) != uri:
            return _scrub(decoded, depth + 1)
        else:
            return uri
    parts = []
    for part in re.split(r"([&;])", query):
        name, eq, value = part.partition("=")
        if eq and is_secret_name(name):
            parts.append(f"{name}=[secret]")
        elif eq and value and depth < MAX_DEPTH and ("%" in value or "=" in value):
            inner = _scrub(unquote_plus(value), depth + 1)
            parts.append(f"{name}={quote(inner, safe='/[]:')}")
        else:
            parts.append(part)
    return head + sep + "".join(parts)


def scrub_uri(uri: str) -> str:
    """``uri`` with every secret parameter's value ``[secret]``, at any nesting; withheld where that is not
    enough (module docstring)."""
    scrubbed = _scrub(uri, 0)
    for key in _KNOWN:
        scrubbed = scrubbed.replace(key, "[secret]")
    if not leaks(scrubbed):
        return scrubbed
    head = uri.partition("?")[0]
    return head + "?" + WITHHELD if "?" in uri and not leaks(head) else WITHHELD


def scrub_text(text: str) -> str:
    """A log message with :func:`scrub_uri` applied to each run holding ``=`` or ``%``, and the server's own
    keys redacted."""
    for key in _KNOWN:
        text = text.replace(key, "[secret]")
    return _RUN.sub(lambda m: scrub_uri(m.group(0)) if ("=" in m.group(0) or "%" in m.group(0)) else m.group(0),
                    text)


def log_request(handler: Any) -> None:
    """The access log line of one request: ``STATUS METHOD URI (ROLE:ID@IP) MS ms``, with ``referer=`` for a
    status from 400, every address scrubbed (tornado's ``log_function``)."""
    status = handler.get_status()
    request = handler.request
    level = logging.DEBUG if status < 300 or status == 304 else logging.INFO if status < 400 else (
        logging.WARNING if status < 500 else logging.ERROR)
    try:
        user = handler.current_user
    except Exception:
        user = None
    who = ":".join(str(getattr(user, "username", "") or "").split(":")[:2]) if user else ""
    line = (f"{status} {request.method} {scrub_uri(request.uri)} ({who}@{request.remote_ip}) "
            f"{1000.0 * request.request_time():.2f}ms")
    if status >= 400:
        line += f" referer={scrub_uri(request.headers.get('Referer', 'None'))}"
    logging.getLogger("tornado.access").log(level, "%s", line)


def install(keys: Iterable[str] = ()) -> None:
    """Scrub every log record this process makes from now on (idempotent); ``keys``: the server's own keys."""
    _KNOWN[:] = sorted({k for k in keys if len(k) >= 8}, key=len, reverse=True)
    factory = logging.getLogRecordFactory()
    if getattr(factory, "scrubbing", False):
        return

    def scrubbed_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        try:
            record.msg, record.args = scrub_text(record.getMessage()), None
        except Exception:  # a message that cannot be formatted: keep it out rather than risk a key
            record.msg, record.args = "(a log message that could not be formatted)", None
        if record.exc_info:
            record.exc_text = scrub_text("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
        return record

    scrubbed_record.scrubbing = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(scrubbed_record)
