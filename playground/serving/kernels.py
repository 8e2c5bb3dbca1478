"""The kernel manager of ``playground serve``: a cap on the number of kernels and a watch that ends orphans.

A Voila page owns one kernel.  Besides Voila's own shutdown request (sent by
the page on ``beforeunload``, which :mod:`playground.serving.app` makes work)
and jupyter_server's idle cull (the backstop), the watch here, every
``watch_interval`` seconds, shuts down

* a kernel whose page never connected to it ``unconnected_timeout`` seconds
  after the page's HTML was sent (a crawler, a script that only GETs);
  the page handler (:mod:`playground.serving.app`) reports when it has sent
  a page (:meth:`GuardedKernelManager.page_served`) and shuts the kernel down
  at once when the client hangs up before that;
* a kernel handed to a request whose page was never reported sent,
  ``render_timeout`` seconds after it started or left the pool (a backstop);
* a kernel whose last page disconnected ``disconnected_timeout`` seconds ago
  and did not come back (a tab that crashed or was closed without
  ``beforeunload``); a page's websocket reconnects within that time after a
  network blip.

Preheated kernels waiting in the pool are never culled.

Every IOPub socket the server opens on a kernel — the page renderer's client
(:class:`UnboundedIOPubClient`), jupyter_server's activity watch and the page's
websocket channels (the manager's shared ZMQ context) — has no receive
high-water mark (``RCVHWM = 0``, :data:`IOPUB_RCVHWM`).  IOPub is PUB/SUB: with
ZMQ's default marks (1000 messages on each side) a kernel's messages beyond
about 2000 not yet read by the server are dropped without a word.  The server
reads every kernel's output on its one event loop; while that loop is behind
(thirty pages at once on two cores), a dropped ``status: idle`` or page
display made the renderer wait its whole ``iopub_timeout`` (120 s) for output
the kernel had sent within a second, and send the page without its widgets.
Without the mark, ZMQ's own I/O thread (which needs no Python) takes every
message off the kernel as it comes, however late the loop reads it.  ``max_kernels``
counts every kernel, pooled or serving, and those starting: a page request
beyond it gets :class:`ClassFull`; a pool refill waits for a free place.

The pool is planned for a class (``class_size``, :mod:`playground.serving.sizing`):
a refill starts only while the kernels ready or starting in the pool are fewer
than :meth:`GuardedKernelManager.pool_target` ``= max(pool_spare, class_size -
pages)``, ``pages`` being the kernels that hold a page.  A class of 30 that
took the 30 pooled kernels is not followed by 30 refills competing with its
labelling for the machine's cores: ``pool_spare`` (2) stay ready for a late
student or a reload, and the pool fills up again as students leave.
"""
from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from tornado.ioloop import PeriodicCallback
from traitlets import Float, Integer, Type, default

from . import activity, auth
from .queue import WaitingLine
from .sizing import POOL_SPARE

__all__ = ["DRAIN_YIELD_EVERY", "IOPUB_RCVHWM", "WIDGETS_ECHO_ENV", "ClassFull", "DrainingIOPubChannel",
           "GuardedKernelManager", "UnboundedIOPubClient", "kernel_env", "pooled_kernel_ids", "track_request_kernels",
           "unbounded_receive"]

#: The receive high-water mark of the server's kernel sockets: 0, no limit (ZMQ's default, 1000, drops IOPub).
IOPUB_RCVHWM = 0
#: A renderer taking queued messages one after another lets the event loop run others after this many.
DRAIN_YIELD_EVERY = 50

#: ipywidgets reads it when it is imported: "0" turns the echo of front-end changes off.
WIDGETS_ECHO_ENV = "JUPYTER_WIDGETS_ECHO"

_request_kernels: ContextVar[list[str] | None] = ContextVar("playground_request_kernels", default=None)
#: Set while a pool refill that has waited its turn (before its renderer was built) starts its kernel.
_turn_taken: ContextVar[bool] = ContextVar("playground_refill_turn_taken", default=False)


def track_request_kernels() -> list[str]:
    """From now on in this task, kernels started for a page (not for the pool) are appended to the list returned."""
    started: list[str] = []
    _request_kernels.set(started)
    return started


def kernel_env(env: dict[str, str], kernel_id: str, for_pool: bool) -> dict[str, str]:
    """The environment a kernel starts with: a pooled kernel gets its request-handshake key; a page's own
    kernel gets the page's role and a ``QUERY_STRING`` without the access key (:mod:`playground.serving.auth`).

    ipywidgets' echo of every front-end change (``echo_update``, one more message per click) is off
    (``JUPYTER_WIDGETS_ECHO=0``) unless the environment sets it: it keeps several views of one widget in step,
    and a page's kernel has one view, its page."""
    out = {k: v for k, v in env.items() if k not in (auth.KERNEL_KEY_ENV, auth.ROLE_ENV, auth.SIGNED_NAME_ENV)}
    out.setdefault(WIDGETS_ECHO_ENV, "0")
    if "VOILA_REQUEST_URL" in out:
        out["VOILA_REQUEST_URL"] = auth.scrub_url(out["VOILA_REQUEST_URL"])
    if for_pool:
        out[auth.KERNEL_KEY_ENV] = auth.kernel_key(kernel_id)
    else:
        if "QUERY_STRING" in out:
            out["QUERY_STRING"] = auth.scrub_query(out["QUERY_STRING"])
        out.update(auth.page_env())  # the role and, with a roster, the bound name
    return out


def unbounded_receive(context: zmq.Context[Any]) -> zmq.Context[Any]:
    """``context`` with :data:`IOPUB_RCVHWM` as the receive high-water mark of the sockets it creates from now on."""
    context.setsockopt(zmq.RCVHWM, IOPUB_RCVHWM)
    return context


class DrainingIOPubChannel(AsyncZMQSocketChannel):
    """An IOPub channel whose :meth:`get_msg` takes a message already queued without polling for it.

    jupyter_client's ``get_msg`` awaits a poll (a poller, its futures, a reader registered on the event loop
    and removed again) and then the receive, for every message.  Voila's renderer reads a page's few hundred
    widget messages that way; a message already queued is now taken at once (a non-blocking receive), and only
    an empty queue is polled.  Measured on 3,000 queued messages: 0.27-0.36 s of CPU against 0.64-0.68 s.
    Every :data:`DRAIN_YIELD_EVERY` messages taken at once, the loop runs the other pages' work.
    """

    _taken = 0

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:  # type: ignore[override]
        try:
            msg: dict[str, Any] = await self._recv(flags=zmq.NOBLOCK)
        except zmq.Again:
            return dict(await super().get_msg(timeout))
        self._taken += 1
        if self._taken % DRAIN_YIELD_EVERY == 0:
            await asyncio.sleep(0)
        return msg


class UnboundedIOPubClient(AsyncKernelClient):
    """The kernel client Voila's page renderer reads a kernel's output with: its sockets (IOPub among them)
    have no receive high-water mark, so no message is dropped while the server's event loop is behind, and
    its IOPub channel takes queued messages without polling (:class:`DrainingIOPubChannel`)."""

    iopub_channel_class = Type(DrainingIOPubChannel)

    @default("context")
    def _unbounded_context(self) -> zmq.asyncio.Context:
        self._created_context = True
        context = zmq.asyncio.Context()
        unbounded_receive(context)
        return context


class ClassFull(RuntimeError):
    """No room for another kernel: ``max_kernels`` are running."""


def _ready_id(fut: Any) -> str | None:
    """The kernel id of a pool entry whose kernel has started, else None (still starting, failed)."""
    if fut.done() and not fut.cancelled() and fut.exception() is None:
        result = fut.result()
        if isinstance(result, dict) and result.get("kernel_id"):
            return str(result["kernel_id"])
    return None


def pooled_kernel_ids(manager: Any) -> set[str]:
    """Ids of the preheated kernels waiting in Voila's pool (its ``_pools``: notebook → list of futures)."""
    return {kid for pool in getattr(manager, "_pools", {}).values() for fut in pool
            if (kid := _ready_id(fut)) is not None}


class GuardedKernelManager(AsyncMappingKernelManager):
    """``AsyncMappingKernelManager`` with a kernel cap and a watch for kernels no page holds."""

    max_kernels = Integer(0, config=True, help="most kernels at once, pooled included (0: no cap)")
    unconnected_timeout = Float(60.0, config=True,
                                help="shut down a kernel no page connected to within this many seconds")
    disconnected_timeout = Float(30.0, config=True,
                                 help="shut down a kernel this many seconds after its last page disconnected")
    render_timeout = Float(600.0, config=True,
                           help="shut down a kernel whose page was not sent this many seconds after it was handed out")
    watch_interval = Float(5.0, config=True, help="seconds between two looks for orphaned kernels")
    refill_yield = Float(60.0, config=True,
                         help="a pool refill waits up to this many seconds while visitors' pages are being opened")
    settle_time = Float(3.0, config=True,
                        help="a page counts as being opened until this many seconds after its websocket connected")
    connect_grace = Float(10.0, config=True,
                          help="a sent page that has not connected counts as being opened for this many seconds")
    refill_spacing = Float(2.0, config=True,
                           help="seconds between the starts of two pool refills (one kernel's start-up here)")
    max_per_address = Integer(0, config=True,
                              help="most pages (kernels, and requests being served) one network address holds "
                                   "(0: no limit)")
    max_per_visitor = Integer(0, config=True,
                              help="most pages one visitor (one login cookie) holds (0: no limit)")
    class_size = Integer(0, config=True,
                         help="students the pool is planned for: refills keep ready the places the class has not "
                              "taken, at least pool_spare (0: refill to the pool size, Voila's rule)")
    pool_spare = Integer(POOL_SPARE, config=True, help="kernels kept ready once the class has taken its places")
    open_slots = Integer(0, config=True,
                         help="most pages opened from a cold kernel at once; beyond, pages wait in line "
                              "(playground.serving.queue; 0: no line)")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._started_at: dict[str, float] = {}
        self._last_pooled: dict[str, float] = {}
        self._ever_connected: set[str] = set()
        self._disconnected_at: dict[str, float] = {}
        self._served_at: dict[str, float] = {}
        self._starting: set[str] = set()
        self._starting_pool: set[str] = set()
        self._starting_pages: set[str] = set()
        self._pool_started: dict[str, float] = {}
        self._connected_first: dict[str, float] = {}
        self._last_refill = float("-inf")
        #: The clock and the sleep :meth:`_wait_to_refill` polls with (a test puts a simulated pair here).
        self._clock: Callable[[], float] = time.monotonic
        self._sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        self._closing = False
        self._watcher: PeriodicCallback | None = None
        self.culled: dict[str, int] = {"unconnected": 0, "disconnected": 0, "unsent": 0, "hung_up": 0}
        self._owners: dict[str, tuple[str, str]] = {}  # kernel id -> (address, visitor) of the page holding it
        self._serving: dict[tuple[str, str], int] = {}  # (address, visitor) -> page requests being served now
        self.line = WaitingLine(slots=max(1, self.open_slots))
        self._gate_pool_renderers()

    def _gate_pool_renderers(self) -> None:
        """A pool refill waits its turn (:meth:`may_refill`) before Voila builds its page renderer, not after.

        Voila's ``_initialize`` (defined by the class Voila derives from this one) builds a renderer —
        ``get_page_config`` and ``NotebookRenderer.initialize`` read labextension and template files on the
        server's event loop — and only then asks :meth:`start_kernel` for the kernel.  Every page taken from the
        pool starts one: thirty students at once meant thirty renderers built on the event loop while their
        pages waited (at load 20, pages ready in the kernels came 60-130 s later).  Here the refill waits first;
        :meth:`start_kernel` then does not wait again.
        """
        original = getattr(self, "_initialize", None)
        if original is None:
            return

        async def gated(notebook_path: str, kernel_id: str | None = None, **kwargs: Any) -> Any:
            if kernel_id is not None:  # a restart: not a refill
                return await original(notebook_path, kernel_id, **kwargs)
            await self._wait_to_refill()
            token = _turn_taken.set(True)
            try:
                return await original(notebook_path, kernel_id, **kwargs)
            finally:
                _turn_taken.reset(token)

        self._initialize = gated

    # --- counting -------------------------------------------------------------------------------------------

    def kernel_count(self) -> int:
        """Kernels running or starting (each counted once)."""
        pending = getattr(self, "_pending_kernels", {})
        return len(set(self.list_kernel_ids()) | set(pending) | self._starting)

    def ready_in_pool(self) -> int:
        """Preheated kernels ready to be handed to a page."""
        return len(pooled_kernel_ids(self))

    def ready_first(self) -> int:
        """Put each pool's started kernels before those still starting, and return how many are started.

        Voila hands a request the first entry of the pool and awaits it; an entry still starting may be a
        refill waiting its turn (:meth:`may_refill`), which would hold the request up to ``refill_yield`` s.
        """
        for pool in getattr(self, "_pools", {}).values():
            pool.sort(key=lambda fut: _ready_id(fut) is None)
        return self.ready_in_pool()

    def pages_held(self) -> int:
        """Kernels that hold a page or are started for one: every kernel but those ready or starting in the pool."""
        return max(0, self.kernel_count() - self.ready_in_pool() - len(self._starting_pool))

    def pool_target(self) -> int | None:
        """Kernels the pool keeps ready or starting now: ``max(pool_spare, class_size - pages_held())``; None
        without a ``class_size`` (refill to the pool size)."""
        if not self.class_size:
            return None
        return max(self.pool_spare, self.class_size - self.pages_held())

    def full(self) -> bool:
        """True when a page request would need a new kernel and there is no room for one."""
        return bool(self.max_kernels) and self.kernel_count() >= self.max_kernels

    # --- shares ---------------------------------------------------------------------------------------------

    def held(self, address: str | None = None, visitor: str | None = None) -> int:
        """Pages held by ``address`` or by ``visitor``: live kernels owned, plus requests being served."""
        alive = set(self.list_kernel_ids())

        def mine(owner: tuple[str, str]) -> bool:
            return (address is not None and owner[0] == address) or (visitor is not None and owner[1] == visitor)

        owned = sum(1 for kid, owner in self._owners.items() if kid in alive and mine(owner))
        return owned + sum(n for owner, n in self._serving.items() if mine(owner))

    def over_share(self, address: str, visitor: str) -> str | None:
        """Why one more page for this client would exceed its share (``max_per_address``, ``max_per_visitor``),
        or None.  The share keeps one holder of the join link from taking every kernel."""
        if self.max_per_visitor and self.held(visitor=visitor) >= self.max_per_visitor:
            return f"this browser already has {self.max_per_visitor} pages open here"
        if self.max_per_address and self.held(address=address) >= self.max_per_address:
            return f"your network address already holds {self.max_per_address} pages here"
        return None

    def serving(self, owner: tuple[str, str], delta: int) -> None:
        """Count a page request of ``owner`` as being served (+1) or done (-1)."""
        n = self._serving.get(owner, 0) + delta
        if n > 0:
            self._serving[owner] = n
        else:
            self._serving.pop(owner, None)

    def own(self, kernel_id: str, owner: tuple[str, str]) -> None:
        """The page of ``owner`` holds ``kernel_id``."""
        self._owners[kernel_id] = owner

    # --- starting -------------------------------------------------------------------------------------------

    def pre_start_kernel(self, kernel_name: str | None, kwargs: Any) -> tuple[Any, str, str]:
        """jupyter_client's, with unbounded receive queues (the module's docstring): on the shared context the
        activity watch and the websockets use, and for the clients the kernel's manager makes (Voila's renderer)."""
        unbounded_receive(self.context)
        km, name, kernel_id = super().pre_start_kernel(kernel_name, kwargs)
        if issubclass(UnboundedIOPubClient, km.client_factory):
            km.client_factory = UnboundedIOPubClient
        return km, name, kernel_id

    async def start_kernel(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        env = kwargs.get("env") or {}
        for_pool = env.get("VOILA_PREHEAT") == "True"
        if for_pool and not _turn_taken.get():
            await self._wait_to_refill()
        elif self.max_kernels and self.kernel_count() >= self.max_kernels:
            raise ClassFull(f"{self.max_kernels} kernels are running (the cap)")
        # the id is chosen here so that a starting kernel is counted once, whatever stage it is in
        reserved = kwargs.get("kernel_id") or str(uuid.uuid4())
        kwargs["kernel_id"] = reserved
        kwargs["env"] = kernel_env(env, reserved, for_pool)
        self._starting.add(reserved)
        (self._starting_pool if for_pool else self._starting_pages).add(reserved)
        try:
            kernel_id: str = await super().start_kernel(*args, **kwargs)
        finally:
            self._starting.discard(reserved)
            self._starting_pool.discard(reserved)
            self._starting_pages.discard(reserved)
        self._started_at[kernel_id] = time.monotonic()
        if for_pool:  # computed ahead: never one of the pages_waiting()
            self._pool_started[kernel_id] = self._started_at[kernel_id]
        request = _request_kernels.get()
        if request is not None and not for_pool:  # a refill task inherits the request's context: not its kernel
            request.append(kernel_id)
        self._start_watch()
        return kernel_id

    def pages_waiting(self) -> int:
        """Pages waiting for a cold kernel: starting, or started for a request and its page not yet sent."""
        pooled = pooled_kernel_ids(self)
        busy = [kid for kid in self.list_kernel_ids()
                if kid not in pooled and kid not in self._pool_started and kid not in self._served_at
                and kid not in self._ever_connected]
        return len(busy) + len(self._starting_pages)

    def requests_in_flight(self) -> int:
        """Page requests being answered now (admitted, their page not yet sent), whatever their kernel."""
        return sum(self._serving.values())

    def pages_being_opened(self) -> int:
        """What the waiting line counts as pages being opened: ``max(pages_waiting(), requests_in_flight())``.

        A request admitted from the line has no kernel yet while Voila prepares its page (seconds on a busy
        machine); counted by :meth:`pages_waiting` alone it was not there, and the line admitted the next ticket
        meanwhile: at 60 students and load 15-20, 30 cold pages opened together and 20 passed the 120 s output
        wait (sent without widgets)."""
        return max(self.pages_waiting(), self.requests_in_flight())

    def pages_opening(self, now: float | None = None) -> int:
        """Pages not interactive yet: :meth:`pages_waiting`, plus pages sent less than ``connect_grace`` s ago
        that have not connected, plus pages whose websocket connected less than ``settle_time`` s ago (the
        widgets' state is still being sent and drawn)."""
        now = time.monotonic() if now is None else now
        alive = set(self.list_kernel_ids())
        opening = 0
        for kid, sent in self._served_at.items():
            if kid not in alive:
                continue
            first = self._connected_first.get(kid)
            unconnected = first is None and now - sent < self.connect_grace
            opening += unconnected or (first is not None and now - first < self.settle_time)
        return self.pages_waiting() + opening

    def may_refill(self, waited: float, now: float | None = None) -> bool:
        """Whether a pool refill that has waited ``waited`` seconds may start now.

        Rules: a place under the cap; fewer kernels ready or starting in the pool than :meth:`pool_target`;
        nobody in the waiting line (at 60 students each refill admitted the next in line to a kernel still
        computing its page, and 28 pages opened together instead of two at a time); the last refill started
        at least ``refill_spacing`` s ago (refills one at a time); and no page being
        opened (:meth:`pages_opening`), unless the refill has waited ``refill_yield`` s.  On two cores a refill
        costs what a visitor's cold page costs: during a rush ten refills at once would double the wait of the
        people in front of the screen, so they go first.
        """
        now = time.monotonic() if now is None else now
        if self.max_kernels and self.kernel_count() >= self.max_kernels:
            return False
        target = self.pool_target()
        if target is not None and self.ready_in_pool() + len(self._starting_pool) >= target:
            return False
        self.line.expire(now)
        if self.line.tickets:  # people in line: they open from cold kernels at the machine's pace; a refill
            return False       # would only compete with them and let the next in line take a half-started kernel
        if now - self._last_refill < self.refill_spacing:
            return False
        return waited >= self.refill_yield or self.pages_opening(now) == 0

    async def _wait_to_refill(self) -> None:
        """Wait until :meth:`may_refill`, polling every half second; then this refill is the last one started."""
        since = self._clock()
        while True:
            if self._closing:
                raise ClassFull("the server is stopping")
            now = self._clock()
            if self.may_refill(now - since, now):
                self._last_refill = now
                return
            await self._sleep(0.5)

    def page_served(self, kernel_id: str) -> None:
        """The page holding ``kernel_id`` has been sent: its page has ``unconnected_timeout`` to connect."""
        self._served_at[kernel_id] = time.monotonic()

    async def abandon(self, kernel_ids: list[str]) -> None:
        """Shut down the kernels of a request whose client hung up before its page was sent."""
        for kid in kernel_ids:
            if kid in self.list_kernel_ids():
                self.log.info("playground: shutting down kernel %s: its client left before the page was sent", kid)
                try:
                    await self.shutdown_kernel(kid)
                except Exception as exc:
                    self.log.warning("playground: could not shut down kernel %s: %s", kid, exc)
                    continue
                self.culled["hung_up"] += 1

    def _start_watch(self) -> None:
        if self._watcher is None and self.watch_interval > 0:
            self._watcher = PeriodicCallback(self.watch, 1000 * self.watch_interval)
            self._watcher.start()

    # --- connections ----------------------------------------------------------------------------------------

    def start_watching_activity(self, kernel_id: str) -> None:
        """jupyter_server's activity watch, reading two JSON frames of each message (:mod:`.activity`)."""
        activity.watch_activity(self, kernel_id)

    def notify_connect(self, kernel_id: str) -> None:
        super().notify_connect(kernel_id)
        self._ever_connected.add(kernel_id)
        self._connected_first.setdefault(kernel_id, time.monotonic())
        self._disconnected_at.pop(kernel_id, None)

    def notify_disconnect(self, kernel_id: str) -> None:
        super().notify_disconnect(kernel_id)
        if self._kernel_connections.get(kernel_id, 0) <= 0:
            self._disconnected_at[kernel_id] = time.monotonic()

    # --- the watch ------------------------------------------------------------------------------------------

    def orphans(self, now: float | None = None) -> list[tuple[str, str]]:
        """``(kernel_id, reason)`` for every kernel the watch would shut down now (pure: changes nothing)."""
        now = time.monotonic() if now is None else now
        pooled = pooled_kernel_ids(self)
        found = []
        for kid in self.list_kernel_ids():
            if kid in pooled:
                self._last_pooled[kid] = now
                continue
            if self._kernel_connections.get(kid, 0) > 0:
                continue
            if kid in self._ever_connected:
                since = self._disconnected_at.get(kid)
                if since is not None and now - since >= self.disconnected_timeout:
                    found.append((kid, "disconnected"))
            elif kid in self._served_at:
                if now - self._served_at[kid] >= self.unconnected_timeout:
                    found.append((kid, "unconnected"))
            else:
                since = max(self._started_at.get(kid, now), self._last_pooled.get(kid, 0.0))
                if now - since >= self.render_timeout:
                    found.append((kid, "unsent"))
        return found

    async def watch(self) -> None:
        """Shut down the orphans (see the module's docstring) and forget kernels that are gone."""
        for kid, reason in self.orphans():
            what = {"unconnected": "no page connected to it", "disconnected": "its page went away",
                    "unsent": "its page was never sent"}[reason]
            self.log.info("playground: shutting down kernel %s: %s", kid, what)
            try:
                await self.shutdown_kernel(kid)
            except Exception as exc:  # already gone, or failing to stop: the next look tries again
                self.log.warning("playground: could not shut down kernel %s: %s", kid, exc)
                continue
            self.culled[reason] += 1
        alive = set(self.list_kernel_ids())
        for table in (self._started_at, self._last_pooled, self._disconnected_at, self._served_at,
                      self._pool_started, self._connected_first, self._owners):
            for kid in [k for k in table if k not in alive]:
                del table[kid]
        self._ever_connected &= alive
        for kid in [k for k in auth.RequestInfoHandler._cache if k not in alive]:
            auth.RequestInfoHandler.forget(kid)

    async def shutdown_all(self, now: bool = True) -> None:  # type: ignore[override]
        """The server is stopping: every kernel is ended at once (``now``), not asked to shut down and waited
        for.  A label is stored when it is made, so a kernel has nothing left to finish; asked, the kernels
        answered late or not at all and the server held its port ``shutdown_wait_time`` (5 s) longer, past
        the 5 s in which a restarted ``serve`` must find it free (issue 43.5)."""
        self._closing = True
        if self._watcher is not None:
            self._watcher.stop()
        await super().shutdown_all(now=now)
