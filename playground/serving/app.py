"""The Voila application ``playground serve`` runs: Voila with the project's guards, handlers and kernel manager.

``python -m playground.serving NOTEBOOK [VOILA OPTIONS]`` is what
``playground serve`` starts.  Compared with ``python -m voila`` it

* installs the websocket frame guards (:mod:`playground.serving.guards`) and
  bounds tornado's websocket message size;
* uses :class:`~playground.serving.kernels.GuardedKernelManager` (kernel cap,
  orphan watch);
* serves the page through :class:`PageHandler`, which sets the ``_xsrf``
  cookie that Voila's own ``beforeunload`` shutdown beacon reads (without it
  Voila 0.5.13 answers the beacon ``403 '_xsrf' argument missing`` and the
  kernel outlives its page), answers "the class is full" (503, ``Retry-After``)
  when the kernel cap is reached, and points the page's icon stylesheet at a
  local copy instead of a CDN;
* takes the role keys from ``$PLAYGROUND_SERVE_TOKEN`` (students),
  ``$PLAYGROUND_INSTRUCTOR_TOKEN`` and ``$PLAYGROUND_OBSERVER_TOKEN`` (removed from
  the environment before any kernel starts, never on a command line), and
  checks them with :class:`~playground.serving.auth.RoleIdentityProvider`;
  the login page says to ask for the class link (no password form);
* scrubs every log line of keys and signatures, in any encoding (:mod:`playground.serving.scrub`);
* answers every response with ``Referrer-Policy: no-referrer``; the kernels'
  request handshake (``/voila/query/<id>``) takes only the kernel's own key
  (:class:`~playground.serving.auth.RequestInfoHandler`);
* rewrites the page (:mod:`playground.serving.page`): no Python repr of a
  widget, the key dropped from the address bar, and a page sent without its
  widgets (or whose widgets cannot be drawn) says so and reloads itself;
* compiles Voila's page templates once per server, not once per page
  (:mod:`playground.serving.templates`), and parses the dates of kernel
  messages with the standard library (:mod:`playground.serving.messages`);
* waits up to :data:`IOPUB_TIMEOUT` seconds, not nbclient's 4, for the rest of
  a cell's output after the cell has finished.  The page's cell sends a few
  hundred widget messages; the server reads them for every page being opened
  on one event loop, and on a busy machine the last of them (the display of
  the page itself) came more than 4 s after the cell's reply: nbclient then
  logged ``Timeout waiting for IOPub output`` and the page was sent empty.
  The wait ends as soon as the kernel reports idle, so a long bound costs
  nothing when the machine is quiet.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from voila.app import Voila
from voila.tornado.handler import TornadoVoilaHandler

from . import auth, guards, lti, messages, scrub, templates
from .auth import TOKEN_ENV
from .kernels import ClassFull, track_request_kernels
from .page import WIDGET_VIEW, guard_script, plain_widget_text
from .queue import QUEUE_URL, TICKET_COOKIE, over_share, waiting_page

__all__ = ["CDN_PREFIX", "CLASS_FULL_HTML", "ICONS_URL", "IOPUB_TIMEOUT", "KEYED_HANDLERS", "STATUS_URL", "TOKEN_ENV",
           "PageHandler", "PlaygroundVoila", "QueueHandler", "StatusHandler", "icons_dir", "main"]

#: Voila's handlers that answer without checking the key themselves: they get :class:`.auth.KeyRequired`.
KEYED_HANDLERS = ("TemplateStaticFileHandler", "MultiStaticFileHandler", "ThemesHandler", "FileFindHandler",
                  "AllowListFileHandler", "LogoutHandler")
#: Seconds nbclient waits for a cell's remaining output after its reply (its default, 4, left pages blank).
IOPUB_TIMEOUT = 120
#: Voila's lab template links Font Awesome 5 from this CDN; the page gets a local copy instead.
CDN_PREFIX = "https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@^5/css/"
#: Where the local copy is served (relative to the base URL).
ICONS_URL = "playground/icons/"
KERNEL_ID = re.compile(r'"kernelId":\s*"([0-9a-f-]{36})"')
#: The kernel counts (:class:`StatusHandler`).
STATUS_URL = "playground/api/status"

_NOTICE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta http-equiv="refresh" content="60">
<style>body{{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;line-height:1.5;color:#222}}</style>
</head><body>
<h1>{title}</h1>
<p>{text}</p>
</body></html>
"""


def _notice(title: str, text: str) -> str:
    """A notice page (its ``{{``/``}}`` kept for a later ``format``)."""
    return _NOTICE_HTML.replace("{title}", title).replace("{text}", text)


CLASS_FULL_HTML = _notice("The class is full", "Every place on this server is taken ({count} of {cap} kernels are "
                          "running).\nTry again in a minute: a place frees up when someone closes their page.\n"
                          "This page reloads itself every minute.")
SHARE_HTML = _notice("Too many pages open", "{why}. Close one of them (its place frees at once), or wait: this "
                     "page tries again every minute.")


def icons_dir() -> Path | None:
    """The folder of the installed Font Awesome 5 (``css/``, ``webfonts/``; PyPI ``fontawesome-free``), or ``None``."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution("fontawesome-free")
    except importlib.metadata.PackageNotFoundError:
        return None
    where = Path(str(dist.locate_file("fontawesome-free/static/fontawesome_free")))
    return where if (where / "css" / "all.min.css").is_file() else None


class PageHandler(TornadoVoilaHandler):
    """Voila's page handler with the xsrf cookie set, the kernel cap answered, and no CDN link."""

    _client_gone = False
    _cold = False

    @tornado.web.authenticated
    async def get(self, path: str | None = None) -> None:
        self.xsrf_token  # noqa: B018  (reading it sets the _xsrf cookie the shutdown beacon sends back)
        manager = self.kernel_manager
        guarded = hasattr(manager, "page_served")
        if guarded and manager.full() and not manager.ready_in_pool():
            self._class_full()
            return
        owner = (str(self.request.remote_ip), str(getattr(self.current_user, "username", "")))
        if guarded and (why := manager.over_share(*owner)):
            self._class_full(why)
            return
        if guarded and manager.open_slots > 0 and not self._admitted():
            return
        if guarded:
            manager.serving(owner, +1)
        started = time.monotonic()
        try:
            await self._serve(path, owner)
        finally:
            if guarded:
                manager.serving(owner, -1)
                if self._cold and not self._client_gone:
                    manager.line.opened(time.monotonic() - started)

    def _admitted(self) -> bool:
        """The waiting line (:mod:`playground.serving.queue`): True if this request may open its page now;
        otherwise it has been answered with the waiting page (a ticket at the back of the line)."""
        manager, now = self.kernel_manager, time.monotonic()
        line, pooled, opening = manager.line, manager.ready_in_pool(), manager.pages_being_opened()
        line.admit(pooled, opening, now)
        ticket = self.get_cookie(TICKET_COOKIE)
        if (ticket and line.claim(ticket, now)) or (line.find(ticket) is None and line.may_enter(pooled, opening, now)):
            self.clear_cookie(TICKET_COOKIE, path=self.base_url)
            return True
        t = line.find(ticket)  # asking again keeps one's place: one browser, one place
        if t is None:
            owner = (str(self.request.remote_ip), str(getattr(self.current_user, "username", "")))
            why = over_share(line, manager, *owner)  # places count as pages (kernel cap, per visitor/address)
            if why is not None:
                self._class_full(None if why == "full" else why)
                return False
            t = line.join(now, owner)
        place = line.position(t.id, now) or 1
        self.set_cookie(TICKET_COOKIE, t.id, path=self.base_url, httponly=True, samesite="Strict")
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(waiting_page(place, line.estimate_s(place), self.base_url.rstrip("/") + "/" + QUEUE_URL))
        return False

    async def _serve(self, path: str | None, owner: tuple[str, str]) -> None:
        manager = self.kernel_manager
        guarded = hasattr(manager, "page_served")
        kernels = track_request_kernels()  # a cold kernel started for this page lands here
        auth.claim(self.current_user)  # the role and, with a roster, the bound name
        widgets = guarded_end = False
        try:
            async for html in self._page(path):
                kernels.extend(k for k in KERNEL_ID.findall(html) if k not in kernels)  # a pooled one: in the HTML
                if self._client_gone:
                    break
                widgets = widgets or WIDGET_VIEW in html
                if "</html>" in html and not guarded_end:
                    html = html.replace("</html>", guard_script(widgets) + "</html>", 1)
                    guarded_end = True
                self.write(html)
                self.flush()
            if not guarded_end and not self._client_gone:
                self.write(guard_script(widgets))
            if not widgets and kernels and not self._client_gone:
                self.log.warning("playground: a page was sent without its widgets; it says so and retries")
        except ClassFull:
            if self._headers_written:
                raise
            self.clear()
            self._class_full()
            return
        if not guarded:
            return
        stream = getattr(self.request.connection, "stream", None)
        if self._client_gone or stream is None or stream.closed():
            await manager.abandon(kernels)
        else:
            for kid in kernels:
                manager.page_served(kid)
                manager.own(kid, owner)

    def should_use_rendered_notebook(self, notebook_data: Any, pool_size: int, template_name: Any, theme: Any,
                                     request_args: Any) -> bool:
        """Voila's rule, and a preheated kernel must have started: otherwise the page gets a cold kernel (3 s
        on the project's machine) instead of waiting for a refill that waits its turn (up to a minute)."""
        manager = self.kernel_manager
        if hasattr(manager, "ready_first") and manager.ready_first() == 0:
            self._cold = True
            return False
        pooled = bool(super().should_use_rendered_notebook(notebook_data, pool_size, template_name, theme,
                                                           request_args))
        self._cold = not pooled
        return pooled

    def on_connection_close(self) -> None:
        self._client_gone = True
        super().on_connection_close()

    async def _page(self, path: str | None) -> AsyncIterator[str]:
        local = self.base_url.rstrip("/") + "/" + ICONS_URL + "css/"
        async for html in self.get_generator(path=path):
            yield plain_widget_text(html.replace(CDN_PREFIX, local) if CDN_PREFIX in html else html)

    def _class_full(self, share: str | None = None) -> None:
        manager = self.kernel_manager
        self.set_status(503 if share is None else 429)
        self.set_header("Retry-After", "60")
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        if share is not None:
            self.finish(SHARE_HTML.format(why=share))
            return
        self.finish(CLASS_FULL_HTML.format(count=manager.kernel_count(), cap=manager.max_kernels))


class StatusHandler(APIHandler):
    """``GET /playground/api/status``: kernel counts for tests, benchmarks and an instructor's check.

    ``{"kernels": running or starting, "pool_ready": preheated and waiting, "max_kernels": the cap (0: none),
    "culled": {"unconnected": n, "disconnected": n}}``.
    """

    @tornado.web.authenticated
    def get(self) -> None:
        manager = self.kernel_manager
        self.finish(json.dumps({
            "kernels": manager.kernel_count() if hasattr(manager, "kernel_count") else len(manager.list_kernel_ids()),
            "pool_ready": manager.ready_in_pool() if hasattr(manager, "ready_in_pool") else 0,
            "max_kernels": getattr(manager, "max_kernels", 0),
            "culled": dict(getattr(manager, "culled", {})),
        }))


class QueueHandler(APIHandler):
    """``GET /playground/api/queue``: a waiting page's place (its ticket is in its cookie), see
    :meth:`playground.serving.queue.WaitingLine.answer`."""

    @tornado.web.authenticated
    def get(self) -> None:
        manager: Any = self.kernel_manager
        line = getattr(manager, "line", None)
        ticket = self.get_cookie(TICKET_COOKIE) or ""
        if line is None or not ticket:
            self.finish(json.dumps({"known": False, "turn": False}))
            return
        line.admit(manager.ready_in_pool(), manager.pages_being_opened(), time.monotonic())
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(line.answer(ticket)))


class PlaygroundVoila(Voila):
    """Voila with :class:`PageHandler` for the page, a status endpoint, local icons and trusted notebooks."""

    def init_settings(self) -> dict[str, Any]:
        settings: dict[str, Any] = super().init_settings()
        self._trust_served_notebook()
        self.skip_unshown_records()
        return settings

    def skip_unshown_records(self) -> None:
        """The server's logger at the level its handler shows (``--log-level``, ``--debug``), not DEBUG.

        traitlets sets the application's logger to DEBUG and lets its handler drop what is below the level
        shown, so every ``log.debug`` call still built a record: nbclient makes one for each message of each
        kernel (8 % of the server's samples under py-spy while a class opened its pages), only to drop it.
        """
        self.log.setLevel(self.log_level)

    def _trust_served_notebook(self) -> None:
        """Trust the served notebook for this process only (an in-memory notary with a fresh secret).

        The notebooks ship without outputs and the server runs them itself, so there is nothing untrusted
        to show; signing them here (as ``jupyter trust`` would) silences "Notebook ... is not trusted" on
        every page view without writing a signature database or key into the user's home.
        """
        import nbformat
        from nbformat.sign import MemorySignatureStore

        notary = self.contents_manager.notary
        notary.store = MemorySignatureStore()
        notary.secret = os.urandom(32)
        if self.notebook_path:
            notary.sign(nbformat.read(self.notebook_path, as_version=4))

    def init_handlers(self) -> list[Any]:
        handlers = []
        for spec in super().init_handlers():
            if len(spec) >= 2 and spec[1] is TornadoVoilaHandler:
                spec = (spec[0], PageHandler, *spec[2:])
            elif len(spec) >= 2 and getattr(spec[1], "__name__", "") == "RequestInfoSocketHandler":
                spec = (spec[0], auth.RequestInfoHandler, *spec[2:])
            elif len(spec) >= 2 and str(spec[0]).endswith("/login"):
                spec = (spec[0], auth.LoginPage, *spec[2:])
            elif len(spec) >= 2 and getattr(spec[1], "__name__", "") in KEYED_HANDLERS:
                spec = (spec[0], auth.key_required(spec[1]), *spec[2:])
            handlers.append(spec)
        handlers.insert(0, (url_path_join(self.server_url, STATUS_URL), StatusHandler))
        handlers.insert(0, (url_path_join(self.server_url, QUEUE_URL), QueueHandler))
        handlers[:0] = lti.handlers(self.server_url)  # LTI 1.3 login, launch, JWKS, grades (when --lti-config)
        where = icons_dir()
        if where is not None:
            handlers.insert(0, (url_path_join(self.server_url, ICONS_URL + "(.*)"),
                                auth.key_required(tornado.web.StaticFileHandler), {"path": str(where)}))
        return handlers

    def listen(self) -> None:
        self.app.transforms.append(auth.SecurityHeaders)
        super().listen()


def main(argv: list[str] | None = None) -> None:
    """Run the guarded Voila on ``argv`` (the notebook and Voila's options)."""
    guards.install()
    auth.install()
    templates.install()  # page templates compiled once per server, not once per page
    messages.install()  # kernel messages' dates parsed by the standard library
    lti.prepare_environment()  # with --lti-config: a roster class (names bound), a roster secret
    keys = auth.take_keys()  # out of the environment before any kernel inherits it
    scrub.install(v for k, v in keys.items() if k in (*auth.ROLES, "roster"))  # no key in any log line
    lti.configure(keys)
    kwargs: dict[str, Any] = {}
    if any(role in keys for role in auth.ROLES):
        kwargs["token"] = next(keys[role] for role in auth.ROLES if role in keys)
    settings = {"websocket_max_message_size": guards.MAX_MESSAGE_BYTES, "log_function": scrub.log_request}
    args = list(sys.argv[1:] if argv is None else argv)
    args.append("--VoilaConfiguration.multi_kernel_manager_class="
                "playground.serving.kernels.GuardedKernelManager")
    args.append("--Voila.identity_provider_class=playground.serving.auth.RoleIdentityProvider")
    if not any(a in ("--debug", "--show_tracebacks=True") for a in args):  # no server paths to the browser
        args.append("--Voila.kernel_websocket_connection_class=playground.serving.guards.QuietConnection")
    if not any(a.startswith("--VoilaExecutor.iopub_timeout") for a in args):
        args.append(f"--VoilaExecutor.iopub_timeout={IOPUB_TIMEOUT}")
    PlaygroundVoila.launch_instance(args, tornado_settings=settings, **kwargs)
