"""The request that claims a preheated kernel: Voila's request-info handshake, without importing ``voila.utils``.

Voila (0.5) starts pooled kernels with ``VOILA_PREHEAT=True`` and runs the
notebook in them before anyone asks for a page.  A notebook that needs the
page's URL calls :func:`voila.utils.get_query_string`, which opens a
websocket to ``{VOILA_WS_PROTOCOL}://{VOILA_APP_IP}:{VOILA_APP_PORT}
{VOILA_WS_BASE_URL or VOILA_SERVER_URL}voila/query/{VOILA_KERNEL_ID}`` and
waits for one text message: a JSON object of the request's variables
(``QUERY_STRING``, ``SCRIPT_NAME``, ``SERVER_NAME``, ...), which it copies into
``os.environ``.  Voila's handler sends that message when a request claims the
kernel (``RequestInfoSocketHandler.send_updates``), or keeps it until the
kernel connects.

:func:`wait_for_request` speaks the same protocol with the ``websockets``
package's synchronous client.  Why not call Voila's function: importing
``voila.utils`` brings jupyter_server, jupyterlab_server and nbconvert into
the kernel, 1.35 s of CPU and 47 MiB per kernel (measured on the project's
machine, 2026-12-01).  A pooled kernel still importing it when its page is
requested makes the page wait those seconds, and the pool's refill competes
with every page being opened.  ``websockets`` costs 0.06 s.

The handshake is refused without the kernel's own key: ``playground serve``
gives each preheated kernel ``PLAYGROUND_KERNEL_KEY`` and :func:`wait_for_request`
sends it in the ``X-Playground-Kernel-Key`` header (see
:mod:`playground.serving.auth`; this module does not import it, to stay light).

:func:`role` is the page's role as the server decided it from the key in the
page's link: ``student``, ``instructor`` or ``observer``.

With a class roster (``playground serve --roster``) the server also checks a
student link's signed name and tells the kernel the name it binds
(``PLAYGROUND_SIGNED_NAME``; "" when the page has no valid roster link), and
every kernel's environment says a roster is in force (``PLAYGROUND_ROSTER=1``).
:func:`check_name` is the page's one check (its session calls it for every name
it labels or views under): a student's page labels under its bound name only.
The signature itself is checked in the serving process
(:mod:`playground.serving.roster`), whose secret never reaches a kernel.
"""
from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping

from websockets.exceptions import WebSocketException
from websockets.sync.client import connect

__all__ = ["KERNEL_KEY_ENV", "KERNEL_KEY_HEADER", "NO_ROSTER_LINK", "REQUEST_TIMEOUT", "ROLES", "ROLE_ENV",
           "ROSTER_ENV", "SIGNED_NAME_ENV", "can_write_room", "check_name", "name_refusal", "request_url", "role",
           "signed_name", "wait_for_request"]

#: Seconds to wait for the websocket to open (Voila's own client waits 5).
REQUEST_TIMEOUT = 5.0
#: Same names as :mod:`playground.serving.auth` (tests/test_request.py checks they agree).
KERNEL_KEY_ENV = "PLAYGROUND_KERNEL_KEY"
KERNEL_KEY_HEADER = "X-Playground-Kernel-Key"
ROLE_ENV = "PLAYGROUND_ROLE"
ROLES = ("student", "instructor", "observer")
ROSTER_ENV = "PLAYGROUND_ROSTER"
SIGNED_NAME_ENV = "PLAYGROUND_SIGNED_NAME"
#: What a student's page says when a roster is in force and the page has no valid roster link.
NO_ROSTER_LINK = ("This class has one link per student, and this page was not opened with a valid one: open the "
                  "link your instructor gave you, as it was given. Nothing is saved from this page.")


def role(environ: dict[str, str] | None = None) -> str:
    """The page's role: ``PLAYGROUND_ROLE`` as ``playground serve`` set it for this kernel.

    Outside Voila (a notebook in Jupyter, a script: no ``VOILA_PREHEAT`` in the environment) there is no
    server to ask and the person is the machine's own user: ``instructor``.  Under Voila a kernel without
    a role yet (a preheated kernel before its request) or with an unknown value counts as ``student``
    (the least power).
    """
    env = os.environ if environ is None else environ
    if ROLE_ENV not in env:
        return "student" if "VOILA_PREHEAT" in env else "instructor"
    value = env[ROLE_ENV].strip()
    return value if value in ROLES else "student"


def can_write_room(environ: dict[str, str] | None = None) -> bool:
    """Whether this page may adjudicate, assign or change lessons: the instructor's role only."""
    return role(environ) == "instructor"


def _bound(env: Mapping[str, str]) -> bool:
    """Whether this page's names are bound: a roster is in force and the page is a student's."""
    return env.get(ROSTER_ENV, "") == "1" and role(dict(env)) == "student"


def signed_name(environ: dict[str, str] | None = None) -> str | None:
    """The roster name the server bound to this student's page, or None (no roster, not a student, no valid
    roster link)."""
    env = os.environ if environ is None else environ
    if not _bound(env):
        return None
    return env.get(SIGNED_NAME_ENV, "").strip() or None


def name_refusal(name: str | None, environ: dict[str, str] | None = None) -> str:
    """Why this page may not label or look as ``name`` (a tidied annotator name; None: no name yet), or "".

    The rule: without a roster, or on an instructor's or observer's page, every name may be used.  On a
    student's page under a roster, only the name the server bound to the page's link; a page without a valid
    roster link may use none (:data:`NO_ROSTER_LINK`).
    """
    env = os.environ if environ is None else environ
    if not _bound(env):
        return ""
    bound = signed_name(dict(env))
    if bound is None:
        return NO_ROSTER_LINK
    if name is not None and name != bound:
        return (f"This page was opened with {bound}'s link, so it labels as {bound} only, not as {name}. "
                "Each student has their own link: ask your instructor for yours.")
    return ""


def check_name(name: str, environ: dict[str, str] | None = None) -> str:
    """``name`` when this page may use it; otherwise :class:`~playground.ui.session_types.SessionError` with
    :func:`name_refusal`'s words (the page shows them)."""
    why = name_refusal(name, environ)
    if why:
        from .session_types import SessionError

        raise SessionError(why)
    return name


def request_url(environ: dict[str, str] | None = None) -> str:
    """The websocket address Voila gives a preheated kernel its request on, built as ``voila.utils`` builds it."""
    env = os.environ if environ is None else environ
    protocol = env.get("VOILA_WS_PROTOCOL", "ws")
    ip = env.get("VOILA_APP_IP", "127.0.0.1")
    port = env.get("VOILA_APP_PORT", "8866")
    base = env.get("VOILA_WS_BASE_URL", env.get("VOILA_SERVER_URL", "/"))
    return f"{protocol}://{ip}:{port}{base}voila/query/{env.get('VOILA_KERNEL_ID', '')}"


def wait_for_request(url: str | None = None, *, timeout: float = REQUEST_TIMEOUT) -> bool:
    """Outside a preheated kernel, return False at once; inside, block until the kernel is claimed.

    Then the request's variables are in ``os.environ`` (``QUERY_STRING``
    among them) and the result is True.  A server that cannot be reached, or
    a message that is not a JSON object of strings, leaves the environment
    as it was with a warning (as Voila's client does) and returns False.
    """
    if os.environ.get("VOILA_PREHEAT", "False") == "False":
        return False
    headers = {KERNEL_KEY_HEADER: os.environ.get(KERNEL_KEY_ENV, "")}
    try:
        with connect(url or request_url(), open_timeout=timeout, max_size=2**20, additional_headers=headers) as ws:
            message = ws.recv()
    except (OSError, TimeoutError, WebSocketException) as exc:
        warnings.warn(f"no request info from Voila at {url or request_url()}: {exc}", stacklevel=2)
        return False
    try:
        info = json.loads(message)
    except ValueError:
        info = None
    if not isinstance(info, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in info.items()):
        warnings.warn("Voila's request info is not a JSON object of strings; ignored", stacklevel=2)
        return False
    os.environ.update(info)
    return True
