"""Who may do what on ``playground serve``: role keys, the login page, the kernels' request handshake, headers.

Roles (``docs/security.md``):

* **student** — the class token (``$PLAYGROUND_SERVE_TOKEN``): opens the labelling page;
* **instructor** — a second key (``$PLAYGROUND_INSTRUCTOR_TOKEN``) students never see: the labelling page
  and the room, with adjudication and assignment;
* **observer** — a third key (``$PLAYGROUND_OBSERVER_TOKEN``): the room, read-only.

With a class roster (``serve --roster``, :mod:`playground.serving.roster`) a student's link also carries a
name, its generation and expiry, and their signature under the roster secret (``$PLAYGROUND_ROSTER_SECRET``,
taken out of the environment with the keys, as is the roster file's path ``$PLAYGROUND_ROSTER_FILE``).  The
signature is checked here when the link is opened, and the grant against the roster file as it is now (a name
removed, revoked or reissued, or an expired link: 403, the page never opens).  The grant is bound to the login
cookie (``student:ID:MAC/GEN/EXP:NAME``, MAC from :func:`playground.serving.roster.bind`), checked again, MAC
and roster, on every request; the page's kernel is told the name as
``PLAYGROUND_SIGNED_NAME`` ("" when the page has no valid roster link) with :func:`page_env`.  The kernel
refuses every other name (:func:`playground.ui.request.check_name`).

:class:`RoleIdentityProvider` accepts each key (in the URL once, then a signed cookie) and names the role in
the user's ``username`` (``ROLE:random-id``).  A server without any key (loopback, or ``--no-auth``) gives
every visitor ``$PLAYGROUND_OPEN_ROLE`` (``serve`` sets it: instructor on loopback, student or observer
beyond it).  Each key is compared with :func:`hmac.compare_digest`.

The role reaches the page's kernel as ``PLAYGROUND_ROLE`` (never the keys; ``token=`` is removed from the
``QUERY_STRING`` the kernel sees): in a cold kernel's environment (:mod:`playground.serving.kernels`) or in
the request info a preheated kernel waits for (:class:`RequestInfoHandler`).  That handshake, Voila's
``/voila/query/<kernel-id>`` websocket, is refused without the kernel's own key: ``HMAC-SHA256(server
secret, kernel id)``, given to that kernel alone in its environment (``PLAYGROUND_KERNEL_KEY``).  A kernel id
(which the page's HTML holds) is therefore not enough to listen for another page's request, and a refused
connection never touches the table of waiting kernels.
"""
from __future__ import annotations

import contextvars
import hashlib
import hmac
import inspect
import logging
import os
import secrets
import time
import uuid
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

import tornado.web
from jupyter_server.auth.identity import IdentityProvider, User
from tornado.websocket import WebSocketHandler

from . import roster, scrub

__all__ = [
    "INSTRUCTOR_TOKEN_ENV",
    "KERNEL_KEY_ENV",
    "KERNEL_KEY_HEADER",
    "LOGIN_HTML",
    "OBSERVER_TOKEN_ENV",
    "OPEN_ROLE_ENV",
    "REFERRER_POLICY",
    "ROLES",
    "ROLE_ENV",
    "ROSTER_ENV",
    "ROSTER_FILE_ENV",
    "ROSTER_SECRET_ENV",
    "SIGNED_NAME_ENV",
    "TOKEN_ENV",
    "KeyRequired",
    "LoginPage",
    "RequestInfoHandler",
    "RoleIdentityProvider",
    "SecurityHeaders",
    "bound_name",
    "claim",
    "current_name",
    "current_role",
    "grant_refusal",
    "install",
    "kernel_key",
    "key_required",
    "page_env",
    "role_of",
    "scrub_query",
    "scrub_url",
    "still_allowed",
    "take_keys",
]

TOKEN_ENV = "PLAYGROUND_SERVE_TOKEN"
INSTRUCTOR_TOKEN_ENV = "PLAYGROUND_INSTRUCTOR_TOKEN"
OBSERVER_TOKEN_ENV = "PLAYGROUND_OBSERVER_TOKEN"
OPEN_ROLE_ENV = "PLAYGROUND_OPEN_ROLE"
#: The role, in the kernel's environment.
ROLE_ENV = "PLAYGROUND_ROLE"
#: A preheated kernel's key for its request handshake, in its environment; sent back in this header.
KERNEL_KEY_ENV = "PLAYGROUND_KERNEL_KEY"
KERNEL_KEY_HEADER = "X-Playground-Kernel-Key"
ROLES = ("student", "instructor", "observer")
#: The roster secret (serving process only; :func:`take_keys` removes it from the environment).
ROSTER_SECRET_ENV = "PLAYGROUND_ROSTER_SECRET"
#: The roster file's path (serving process only): links are checked against it as it is now.
ROSTER_FILE_ENV = "PLAYGROUND_ROSTER_FILE"
#: ``1`` in every kernel's environment when a roster is in force (not a secret: it says names are bound).
ROSTER_ENV = "PLAYGROUND_ROSTER"
#: The roster name the server bound to a student's page ("" when none); set per page, never inherited.
SIGNED_NAME_ENV = "PLAYGROUND_SIGNED_NAME"
REFERRER_POLICY = "no-referrer"

log = logging.getLogger("playground.serving")

#: The role of the page request being served (set by the page handler; read where the kernel gets it).
current_role: contextvars.ContextVar[str | None] = contextvars.ContextVar("playground_role", default=None)
#: The roster name bound to the page request being served (None: not bound).
current_name: contextvars.ContextVar[str | None] = contextvars.ContextVar("playground_name", default=None)
_SECRET = secrets.token_bytes(32)
#: The role keys, taken out of the environment by :func:`take_keys` before any kernel starts.
_KEYS: dict[str, str] = {}
#: The roster file as it is now (built on first use from ``_KEYS["roster_file"]``).
_ROSTER: dict[str, roster.CurrentRoster] = {}

LOGIN_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ask your instructor for the class link</title>
<style>body{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;line-height:1.5;color:#222}</style>
</head><body>
<h1>This page needs the class link</h1>
<p>The address you opened has no class key, or an old one.
Ask your instructor for the class link and open it as it is given.</p>
</body></html>
"""


def take_keys(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Move the role keys and the open role out of ``environ`` (default ``os.environ``) into this process."""
    env = os.environ if environ is None else environ
    _KEYS.clear()
    _ROSTER.clear()
    for role, name in (("student", TOKEN_ENV), ("instructor", INSTRUCTOR_TOKEN_ENV),
                       ("observer", OBSERVER_TOKEN_ENV), ("open", OPEN_ROLE_ENV), ("roster", ROSTER_SECRET_ENV),
                       ("roster_file", ROSTER_FILE_ENV)):
        value = env.pop(name, "").strip()
        if value:
            _KEYS[role] = value
    return dict(_KEYS)


def kernel_key(kernel_id: str) -> str:
    """The key a kernel presents on its request handshake: ``HMAC-SHA256(this server's secret, kernel id)``."""
    return hmac.new(_SECRET, kernel_id.encode(), hashlib.sha256).hexdigest()


def role_of(user: Any) -> str | None:
    """The role named in an authenticated user's ``username`` (``ROLE:id``), or None."""
    name = str(getattr(user, "username", "") or "")
    role = name.split(":", 1)[0]
    return role if role in ROLES else None


def grant_refusal(grant: roster.Grant, now: float | None = None) -> str | None:
    """Why the roster file as it is now refuses ``grant`` (:func:`playground.serving.roster.refusal`), or None.
    Without a roster file (a server started without ``$PLAYGROUND_ROSTER_FILE``) the signature alone decides."""
    path = _KEYS.get("roster_file", "")
    if not path:
        return None
    if path not in _ROSTER:
        _ROSTER.clear()
        _ROSTER[path] = roster.CurrentRoster(path)
    return _ROSTER[path].refusal(grant, time.time() if now is None else now)


def _grant_of(user: Any) -> roster.Grant | None:
    """The grant bound to a student user (``student:ID:MAC/GEN/EXP:NAME``, MAC checked), else None."""
    parts = str(getattr(user, "username", "") or "").split(":", 3)
    secret = _KEYS.get("roster", "")
    if len(parts) != 4 or parts[0] != "student" or not secret:
        return None
    mac, _, rest = parts[2].partition("/")
    gen, _, exp = rest.partition("/")
    if not (gen.isascii() and gen.isdigit() and exp.isascii() and exp.isdigit()):
        return None
    grant = roster.Grant(unquote(parts[3]), int(gen), int(exp) or None)
    return grant if hmac.compare_digest(roster.bind(secret, grant).encode(), mac.encode("utf-8", "replace")) else None


def bound_name(user: Any) -> str | None:
    """The roster name bound to a student user whose grant is intact and still allowed by the roster file as it
    is now (:func:`grant_refusal`), else None."""
    grant = _grant_of(user)
    return grant.name if grant is not None and grant_refusal(grant) is None else None


def still_allowed(user: Any) -> bool:
    """False for a student bound to a roster grant (``student:ID:MAC/GEN/EXP:NAME``) that is no longer intact or
    allowed (:func:`bound_name`): an open page's kernel websocket is closed on its next message; True otherwise."""
    return str(getattr(user, "username", "") or "").count(":") != 3 or bound_name(user) is not None


def claim(user: Any) -> None:
    """Note the role and the bound roster name of the page request being served (its kernel learns them)."""
    current_role.set(role_of(user))
    current_name.set(bound_name(user))


def page_env() -> dict[str, str]:
    """What a page's kernel is told of its request: ``PLAYGROUND_ROLE`` and, with a roster,
    ``PLAYGROUND_SIGNED_NAME`` (the bound name, or "" for a student page without a valid roster link)."""
    role = current_role.get() or "student"
    env = {ROLE_ENV: role}
    if _KEYS.get("roster"):
        env[SIGNED_NAME_ENV] = (current_name.get() or "") if role == "student" else ""
    return env


def scrub_query(query: str) -> str:
    """``query`` without its secret parameters (:func:`playground.serving.scrub.is_secret_name`: ``token``,
    ``sig``, ...; the key stays out of the kernel, the roster signature is checked by the server and the
    kernel told the name it binds), and any secret nested in another parameter's value (``next=%3Ftoken%3D..``)
    scrubbed (:func:`playground.serving.scrub.scrub_uri`)."""
    kept = [(k, scrub.scrub_uri(v) if scrub.leaks(v) else v)
            for k, v in parse_qsl(query, keep_blank_values=True) if not scrub.is_secret_name(k)]
    return urlencode(kept)


def scrub_url(url: str) -> str:
    """``url`` without its secret query parameters (:func:`scrub_query`)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(query=scrub_query(parts.query)))


class RoleIdentityProvider(IdentityProvider):
    """Accepts the student, instructor and observer keys; the user's ``username`` is ``ROLE:random-id``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.role_keys: dict[str, str] = {role: key for role, key in _KEYS.items() if key and role in ROLES}
        self.open_role = _KEYS.get("open", "") or "student"
        self.roster_secret = _KEYS.get("roster", "")
        self.token = next(iter(self.role_keys.values()), "")

    @property
    def auth_enabled(self) -> bool:
        return bool(self.role_keys)

    @property
    def login_available(self) -> bool:
        return True  # the page that says "ask your instructor"; it takes no password

    def role_for_key(self, given: str) -> str | None:
        """The role whose key is ``given`` (compared in constant time), or None."""
        found = None
        for role, key in self.role_keys.items():
            if given and hmac.compare_digest(given.encode(), key.encode()):
                found = role
        return found

    def _user(self, role: str, grant: roster.Grant | None = None) -> User:
        bound = ""
        if grant is not None:
            mac = roster.bind(self.roster_secret, grant)
            bound = f":{mac}/{grant.generation}/{grant.expires or 0}:{quote(grant.name, safe='')}"
        return User(f"{role}:{uuid.uuid4().hex}{bound}", role, role, role[0].upper(), None, None)

    async def get_user_token(self, handler: tornado.web.RequestHandler) -> User | None:
        role = self.role_for_key(self.get_token(handler) or "")
        if role is None:
            return None
        if role == "student" and self.roster_secret and handler.get_argument(roster.SIG_PARAM, ""):
            return self._roster_user(handler)
        found = self.get_user_cookie(handler)
        cookie_user = await found if inspect.isawaitable(found) else found
        return cookie_user if role_of(cookie_user) == role else self._user(role)

    def _roster_user(self, handler: tornado.web.RequestHandler) -> User:
        """A student link with a signature: bound to its grant when the signature is the grant's and the roster
        file allows it now; 403 when the roster refuses it (removed, revoked, reissued, expired); else unbound
        (a signature that does not match: the page's kernel then refuses to label)."""
        name = handler.get_argument("annotator", "", strip=False)
        sig = handler.get_argument(roster.SIG_PARAM, "", strip=False)
        gen = handler.get_argument(roster.GEN_PARAM, "1", strip=False)
        exp = handler.get_argument(roster.EXP_PARAM, "", strip=False)
        well_formed = gen.isascii() and gen.isdigit() and (not exp or (exp.isascii() and exp.isdigit()))
        grant = roster.Grant(name, int(gen), int(exp) if exp else None) if well_formed else None
        if grant is None or not roster.verify(self.roster_secret, name, sig, grant.generation, grant.expires):
            log.warning("playground: a student link with a signature that does not match its name")
            return self._user("student")
        why = grant_refusal(grant)
        if why is not None:
            log.warning("playground: refused a student link for %r: %s", name, why)
            raise tornado.web.HTTPError(403, "this link no longer works: ask your instructor for yours")
        return self._user("student", grant)

    def generate_anonymous_user(self, handler: tornado.web.RequestHandler) -> User:
        return self._user(self.open_role if self.open_role in ROLES else "student")

    def user_from_cookie(self, cookie_value: str) -> User | None:
        user: User | None = super().user_from_cookie(cookie_value)
        if user is None or role_of(user) is None:
            return None
        if self.auth_enabled and role_of(user) not in self.role_keys:
            return None
        if str(user.username).count(":") == 3 and bound_name(user) is None:
            return None  # a name bound under another roster secret (an old link): open the link again
        return user


class KeyRequired:
    """Mixed into a handler that does not check the key itself (static files, themes, extensions, logout):
    without a role key (in the URL or the login cookie) the answer is 403 before the handler runs."""

    async def prepare(self) -> None:
        handler: Any = self
        provider = handler.settings.get("identity_provider")
        if provider is not None and provider.auth_enabled:
            user = provider.get_user(handler)
            if inspect.isawaitable(user):
                user = await user
            if user is None:
                raise tornado.web.HTTPError(403)
        done = super().prepare()  # type: ignore[misc]
        if inspect.isawaitable(done):
            await done


def key_required(cls: type) -> type:
    """``cls`` with :class:`KeyRequired` in front (its name kept, prefixed ``Keyed``)."""
    return type(f"Keyed{cls.__name__}", (KeyRequired, cls), {})


class LoginPage(tornado.web.RequestHandler):
    """``/login``: where a page without a valid key lands; says to ask for the class link, takes no password."""

    def get(self, *args: Any) -> None:
        self.set_status(403)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(LOGIN_HTML)

    def post(self, *args: Any) -> None:
        self.get()

    def check_xsrf_cookie(self) -> None:  # nothing to protect: this page changes nothing
        return None


class SecurityHeaders(tornado.web.OutputTransform):
    """On every response: ``Referrer-Policy: no-referrer`` (the key in a page's URL is never sent on),
    ``X-Content-Type-Options: nosniff``."""

    def transform_first_chunk(self, status_code: int, headers: Any, chunk: bytes,
                              finishing: bool) -> tuple[int, Any, bytes]:
        headers["Referrer-Policy"] = REFERRER_POLICY
        headers.setdefault("X-Content-Type-Options", "nosniff")
        return status_code, headers, chunk


class RequestInfoHandler(WebSocketHandler):
    """Voila's ``/voila/query/<kernel-id>`` handshake, open only to the kernel holding that id's key.

    Replaces ``voila.request_info_handler.RequestInfoSocketHandler`` (whose class methods Voila's page handler
    calls; :func:`install` points it here): one waiter per kernel, refused before the upgrade without the
    kernel's :func:`kernel_key`; a closing waiter removes only itself.  The request info sent on carries the
    page's role and a ``QUERY_STRING`` without the key.
    """

    _waiters: dict[str, RequestInfoHandler] = {}
    _cache: dict[str, Any] = {}

    async def get(self, *args: Any, **kwargs: Any) -> None:
        kernel_id = str(kwargs.get("kernel_id") or (args[0] if args else ""))
        given = self.request.headers.get(KERNEL_KEY_HEADER, "")
        if not given or not hmac.compare_digest(given.encode(), kernel_key(kernel_id).encode()):
            log.warning("playground: refused a request-info connection without its kernel's key")
            self.set_status(403)
            self.finish("forbidden")
            return
        if kernel_id in self._waiters:
            self.set_status(409)
            self.finish("already waiting")
            return
        await super().get(*args, **kwargs)

    def check_origin(self, origin: str) -> bool:
        return True  # the kernel is not a browser; the key decides

    def open(self, *args: Any, **kwargs: Any) -> None:
        kernel_id = str(kwargs.get("kernel_id") or (args[0] if args else ""))
        self.kernel_id = kernel_id
        RequestInfoHandler._waiters[kernel_id] = self
        if kernel_id in RequestInfoHandler._cache:
            self.write_message(RequestInfoHandler._cache.pop(kernel_id))

    def on_close(self) -> None:
        kernel_id = getattr(self, "kernel_id", None)
        if kernel_id is not None and RequestInfoHandler._waiters.get(kernel_id) is self:
            del RequestInfoHandler._waiters[kernel_id]

    @classmethod
    def send_updates(cls, msg: dict[str, Any]) -> None:
        """Give the request's info to its kernel (now, or when that kernel connects)."""
        kernel_id = msg["kernel_id"]
        payload = dict(msg["payload"])
        payload["QUERY_STRING"] = scrub_query(str(payload.get("QUERY_STRING", "")))
        payload.pop("VOILA_REQUEST_URL", None)
        payload.update(page_env())
        waiter = cls._waiters.get(kernel_id)
        if waiter is not None:
            try:
                waiter.write_message(payload)
                return
            except Exception as exc:
                log.warning("playground: could not send request info to kernel: %s", type(exc).__name__)
        cls._cache[kernel_id] = payload

    @classmethod
    def forget(cls, kernel_id: str) -> None:
        """Drop what is kept for a kernel that is gone."""
        cls._cache.pop(kernel_id, None)


def install() -> None:
    """Make Voila's page handler hand request info to :class:`RequestInfoHandler` (serving process only)."""
    import voila.handler

    voila.handler.RequestInfoSocketHandler = RequestInfoHandler
