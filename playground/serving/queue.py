"""The waiting line of ``playground serve``: when no kernel is ready, a page waits its turn, in order, and says so.

Rules (:class:`WaitingLine`):

* a page may open *now* when the line is empty and either a preheated kernel is ready (one not yet promised
  to someone admitted) or fewer than ``slots`` pages are being opened from a cold kernel (on two cores, more
  cold starts at once only make every one of them slower: thirty at once all took three minutes);
* otherwise the request gets a ticket at the back of the line and a small page (:data:`WAITING_HTML`) that
  says "you are 12th in line; about 40 s", asks ``/playground/api/queue`` every ``POLL_S`` seconds, and
  reloads itself when its turn comes (the ticket travels in a cookie);
* a request that already holds a waiting ticket (its cookie) keeps it: one browser never holds two places by
  asking again;
* places count as pages do (:func:`over_share`): one more place is refused when the visitor (login cookie) or
  the network address already holds ``max_per_visitor`` / ``max_per_address`` pages and places together, and
  "the class is full" when the pages held plus the places in line reach the kernel cap;
* tickets are admitted from the front only, so arrival order is kept.  A waiting page asks every ``POLL_S``
  seconds, every :data:`FRONT_POLL_S` within ``slots + 2`` places of the front; a ticket is *told* its turn when
  its page next asks.  An admitted ticket holds its slot until it is told, and for ``hold_s`` seconds after
  (:data:`HOLD_S`); then the next ticket may be admitted, while the told one may still come until ``claim_s``
  seconds after being told (:data:`CLAIM_S`).  It is dropped (its turn passed on) beyond ``claim_s``, when it
  is not told within ``tell_s`` seconds of being admitted (:data:`TELL_S`: the page stopped asking), or when
  it has not asked for ``gone_s`` seconds (the student closed the page).  A dropped ticket's page is told it
  is unknown, reloads, and takes a new place at the back.  A holder of places who asks and never comes costs
  the line about ``FRONT_POLL_S / 2 + HOLD_S`` seconds of one slot per place, once: a visitor who let a turn
  pass is remembered (*lapsed*, the last :data:`LAPSED_KEPT`), and their later tickets hold no slot (they are
  let in if they come, beside the next ticket); claiming a turn clears the mark;
* the estimate is ``ceil(position / slots) * average``, where ``average`` is the mean of the last
  ``AVERAGE_OF`` cold page openings (``DEFAULT_OPEN_S`` before any).
"""
from __future__ import annotations

import logging
import math
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AVERAGE_OF",
    "CLAIM_S",
    "DEFAULT_OPEN_S",
    "FRONT_EXTRA",
    "FRONT_POLL_S",
    "HOLD_S",
    "LAPSED_KEPT",
    "POLL_S",
    "QUEUE_URL",
    "TELL_S",
    "TICKET_COOKIE",
    "WAITING_HTML",
    "Ticket",
    "WaitingLine",
    "ordinal",
    "over_share",
    "waiting_page",
]

log = logging.getLogger("playground.serving")

QUEUE_URL = "playground/api/queue"
TICKET_COOKIE = "pg_ticket"
POLL_S = 2
#: Seconds between the questions of a page within ``slots + FRONT_EXTRA`` places of the front (its turn is
#: near: a page that moves up learns its turn within this, not ``POLL_S``, while its slot waits for it).
FRONT_POLL_S = 0.25
FRONT_EXTRA = 2
#: Seconds a told ticket holds its slot.  A waiting page reloads the moment it reads its turn: its request
#: reaches the server within one round trip (milliseconds on loopback, tens on a class network), so a page
#: that comes takes its slot within this, and a slower one is still let in until ``CLAIM_S``; a holder who
#: asks and never comes wastes one slot this long per place, once per visitor (issue 43.3: 20 s made six
#: such places cost the next student 2 min).
HOLD_S = 0.5
#: Visitors remembered as having let a turn pass (the oldest forgotten first).
LAPSED_KEPT = 4096
#: Seconds a told ticket may still come (a slow page is let in, beside the ticket admitted after it).
CLAIM_S = 2.5
#: Seconds an admitted ticket may go without asking (a live page asks every ``POLL_S``; two misses allowed).
TELL_S = 2 * POLL_S + 1.0
DEFAULT_OPEN_S = 10.0
AVERAGE_OF = 10


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ..., ``11th``, ``12th``, ``13th``, ``21st``, ``112th``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass
class Ticket:
    """One place in the line."""

    id: str
    created: float
    seen: float
    owner: tuple[str, str] = ("", "")  # (network address, visitor) of the request that took it
    admitted_at: float | None = None
    told_at: float | None = None


@dataclass
class WaitingLine:
    """The line, its admission rule and its estimate (pure bookkeeping: the clock is passed in)."""

    slots: int = 2
    claim_s: float = CLAIM_S
    hold_s: float = HOLD_S
    tell_s: float = TELL_S
    gone_s: float = 15.0 * POLL_S
    tickets: deque[Ticket] = field(default_factory=deque)
    opened_s: deque[float] = field(default_factory=lambda: deque(maxlen=AVERAGE_OF))
    lapsed: dict[str, None] = field(default_factory=dict)  # visitors who let a turn pass, oldest first

    # --- the rule ----------------------------------------------------------------------------------------
    def holding(self, now: float) -> int:
        """Admitted tickets that hold a slot at ``now``: not told yet, or told at most ``hold_s`` ago; none of a
        visitor who let a turn pass before (:attr:`lapsed`)."""
        return sum(1 for t in self.tickets if t.admitted_at is not None and t.owner[1] not in self.lapsed
                   and (t.told_at is None or now - t.told_at <= self.hold_s))

    def can_open(self, pooled_ready: int, opening: int, now: float | None = None) -> bool:
        """Whether one more page may be opened now, beside the admitted tickets that hold a slot."""
        held = self.holding(time.monotonic() if now is None else now)
        return pooled_ready > held or opening + held < self.slots

    def may_enter(self, pooled_ready: int, opening: int, now: float) -> bool:
        """A request without a ticket: open now only when nobody is waiting and :meth:`can_open`."""
        self.expire(now)
        return not any(t.admitted_at is None for t in self.tickets) and self.can_open(pooled_ready, opening, now)

    def join(self, now: float, owner: tuple[str, str] = ("", "")) -> Ticket:
        """A new ticket at the back of the line, taken by ``owner`` (address, visitor)."""
        ticket = Ticket(secrets.token_urlsafe(16), now, now, owner)
        self.tickets.append(ticket)
        return ticket

    def find(self, ticket_id: str | None) -> Ticket | None:
        """The ticket ``ticket_id`` if it is in the line."""
        return next((t for t in self.tickets if ticket_id and t.id == ticket_id), None)

    def places(self, address: str | None = None, visitor: str | None = None) -> int:
        """Places in line (waiting or admitted) taken from ``address`` or by ``visitor``."""
        return sum(1 for t in self.tickets if (address is not None and t.owner[0] == address)
                   or (visitor is not None and t.owner[1] == visitor))

    def admit(self, pooled_ready: int, opening: int, now: float) -> None:
        """Admit waiting tickets from the front while :meth:`can_open`."""
        self.expire(now)
        for t in self.tickets:
            if t.admitted_at is not None:
                continue
            if not self.can_open(pooled_ready, opening, now):
                break
            t.admitted_at = now

    def claim(self, ticket_id: str, now: float) -> bool:
        """A page request carrying ``ticket_id``: True (and the ticket is used up) if it was admitted."""
        self.expire(now)
        for t in self.tickets:
            if t.id == ticket_id and t.admitted_at is not None:
                self.tickets.remove(t)
                self.lapsed.pop(t.owner[1], None)
                return True
        return False

    def expire(self, now: float) -> None:
        """Drop tickets told their turn more than ``claim_s`` ago, admitted more than ``tell_s`` ago without being
        told, or not asked about in ``gone_s`` (a bound is kept at exactly its value: dropped only beyond it)."""
        for t in list(self.tickets):
            unclaimed = t.told_at is not None and now - t.told_at > self.claim_s
            untold = t.admitted_at is not None and t.told_at is None and now - t.admitted_at > self.tell_s
            if unclaimed or untold or now - t.seen > self.gone_s:
                self.tickets.remove(t)
            if unclaimed or untold:
                self._passed(t, now)

    def _passed(self, t: Ticket, now: float) -> None:
        """Note a turn that passed on unclaimed: the visitor is *lapsed*; one log line says how long the turn
        held its slot (0 for a visitor already lapsed) — what a holder of places costs the line."""
        if t.admitted_at is None:
            return
        if t.owner[1] in self.lapsed:
            held = 0.0
        elif t.told_at is None:
            held = now - t.admitted_at
        else:
            held = t.told_at + self.hold_s - t.admitted_at
        log.warning("playground: a turn in the waiting line passed on unclaimed (%s; it held the slot %.2f s)",
                    "told" if t.told_at is not None else "never told", held)
        if t.owner[1]:
            self.lapsed.pop(t.owner[1], None)
            self.lapsed[t.owner[1]] = None
            while len(self.lapsed) > LAPSED_KEPT:
                del self.lapsed[next(iter(self.lapsed))]

    # --- what a waiting page is told ---------------------------------------------------------------------
    def position(self, ticket_id: str, now: float) -> int | None:
        """1-based place among those not yet admitted (0: admitted, your turn: the ticket is now *told*, and
        its ``claim_s`` starts); None: no such ticket."""
        place = 0
        for t in self.tickets:
            if t.id == ticket_id:
                t.seen = now
                if t.admitted_at is not None and t.told_at is None:
                    t.told_at = now
                return 0 if t.admitted_at is not None else place + 1
            if t.admitted_at is None:
                place += 1
        return None

    def opened(self, seconds: float) -> None:
        """A cold page took ``seconds`` to open (for the estimate)."""
        self.opened_s.append(seconds)

    def estimate_s(self, position: int) -> int:
        """Seconds until a ticket at ``position`` opens: ``ceil(position / slots) * average opening``."""
        average = sum(self.opened_s) / len(self.opened_s) if self.opened_s else DEFAULT_OPEN_S
        return int(math.ceil(position / max(1, self.slots)) * average)

    def answer(self, ticket_id: str, now: float | None = None) -> dict[str, object]:
        """What ``/playground/api/queue`` answers a waiting page."""
        now = time.monotonic() if now is None else now
        self.expire(now)
        place = self.position(ticket_id, now)
        if place is None:
            return {"known": False, "turn": False}
        return {"known": True, "turn": place == 0, "position": place, "of": self.waiting(),
                "about_s": self.estimate_s(place) if place else 0,
                "poll_ms": int(1000 * (FRONT_POLL_S if place <= self.slots + FRONT_EXTRA else POLL_S))}

    def waiting(self) -> int:
        return sum(1 for t in self.tickets if t.admitted_at is None)


def over_share(line: WaitingLine, manager: Any, address: str, visitor: str) -> str | None:
    """Why ``manager`` (a :class:`playground.serving.kernels.GuardedKernelManager`) refuses one more place in
    ``line`` to this client, or None: its pages held (:meth:`held`) plus its places reach ``max_per_visitor``
    or ``max_per_address`` (0: no limit), or the pages held by everyone plus every place reach ``max_kernels``
    ("full": the class is full)."""
    if manager.max_per_visitor and (manager.held(visitor=visitor) + line.places(visitor=visitor)
                                    >= manager.max_per_visitor):
        return f"this browser already has {manager.max_per_visitor} pages open or waiting here"
    if manager.max_per_address and (manager.held(address=address) + line.places(address=address)
                                    >= manager.max_per_address):
        return f"your network address already holds {manager.max_per_address} pages or places in line here"
    if manager.max_kernels and manager.pages_held() + len(line.tickets) >= manager.max_kernels:
        return "full"
    return None


WAITING_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Waiting for a place</title>
<meta name="referrer" content="no-referrer">
<style>body{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;line-height:1.5;color:#222}
#pg-queue-line{font-size:1.4em;font-weight:600}</style>
</head><body>
<h1>The class is arriving</h1>
<p id="pg-queue-line" role="status" aria-live="polite">You are %(place)s in line; about %(about)d s.</p>
<p>Your page opens by itself when its turn comes: keep this page open (leaving gives up your place).</p>
<script>
(function () {
  "use strict";
  var line = document.getElementById("pg-queue-line");
  function ordinal(n) {
    var s = (n %% 100 >= 10 && n %% 100 <= 20) ? "th" : ({1: "st", 2: "nd", 3: "rd"}[n %% 10] || "th");
    return n + s;
  }
  function ask() {
    fetch("%(api)s", {credentials: "same-origin", cache: "no-store"}).then(function (r) {
      return r.json();
    }).then(function (a) {
      if (a.turn || !a.known) { line.textContent = "Your turn: opening your page…"; window.location.reload(); return; }
      line.textContent = "You are " + ordinal(a.position) + " in line; about " + a.about_s + " s.";
      window.setTimeout(ask, a.poll_ms || %(poll)d);
    }).catch(function () { window.setTimeout(ask, %(poll)d); });
  }
  window.setTimeout(ask, %(poll)d);
})();
</script>
</body></html>
"""


def waiting_page(position: int, about_s: int, api_url: str) -> str:
    """The page a waiting student sees (its first words are right; then it asks ``api_url``)."""
    return WAITING_HTML % {"place": ordinal(position), "about": about_s, "api": api_url, "poll": 1000 * POLL_S}
