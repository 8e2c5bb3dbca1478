"""The waiting line of ``playground serve``: when no kernel is ready, a page waits its turn, in order, and says so.

Rules (:class:`WaitingLine`):

* a page may open *now* when the line is empty and either a preheated kernel is ready (one not yet promised
  to someone admitted) or fewer than ``slots`` pages are being opened from a cold kernel (on two cores, more
  cold starts at once only make every one of them slower: thirty at once all took three minutes);
* otherwise the request gets a ticket at the back of the line and a small page (:data:`WAITING_HTML`) that
  says "you are 12th in line; about 40 s", asks ``/playground/api/queue`` every ``POLL_S`` seconds, and
  reloads itself when its turn comes (the ticket travels in a cookie);
* tickets are admitted from the front only, so arrival order is kept; an admitted ticket not used within
  ``claim_s`` seconds, or a ticket not asked about within ``gone_s`` seconds (the student closed the page),
  is dropped and frees its place;
* the estimate is ``ceil(position / slots) * average``, where ``average`` is the mean of the last
  ``AVERAGE_OF`` cold page openings (``DEFAULT_OPEN_S`` before any).
"""
from __future__ import annotations

import math
import secrets
import time
from collections import deque
from dataclasses import dataclass, field

__all__ = ["AVERAGE_OF", "DEFAULT_OPEN_S", "POLL_S", "QUEUE_URL", "TICKET_COOKIE", "WAITING_HTML", "Ticket",
           "WaitingLine", "ordinal", "waiting_page"]

QUEUE_URL = "playground/api/queue"
TICKET_COOKIE = "pg_ticket"
POLL_S = 2
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
    admitted_at: float | None = None


@dataclass
class WaitingLine:
    """The line, its admission rule and its estimate (pure bookkeeping: the clock is passed in)."""

    slots: int = 2
    claim_s: float = 20.0
    gone_s: float = 15.0 * POLL_S
    tickets: deque[Ticket] = field(default_factory=deque)
    opened_s: deque[float] = field(default_factory=lambda: deque(maxlen=AVERAGE_OF))

    # --- the rule ----------------------------------------------------------------------------------------
    def can_open(self, pooled_ready: int, opening: int) -> bool:
        """Whether one more page may be opened now, beside the tickets already admitted."""
        admitted = sum(1 for t in self.tickets if t.admitted_at is not None)
        return pooled_ready > admitted or opening + admitted < self.slots

    def may_enter(self, pooled_ready: int, opening: int, now: float) -> bool:
        """A request without a ticket: open now only when nobody is waiting and :meth:`can_open`."""
        self.expire(now)
        return not any(t.admitted_at is None for t in self.tickets) and self.can_open(pooled_ready, opening)

    def join(self, now: float) -> Ticket:
        """A new ticket at the back of the line."""
        ticket = Ticket(secrets.token_urlsafe(16), now, now)
        self.tickets.append(ticket)
        return ticket

    def admit(self, pooled_ready: int, opening: int, now: float) -> None:
        """Admit waiting tickets from the front while :meth:`can_open`."""
        self.expire(now)
        for t in self.tickets:
            if t.admitted_at is not None:
                continue
            if not self.can_open(pooled_ready, opening):
                break
            t.admitted_at = now

    def claim(self, ticket_id: str, now: float) -> bool:
        """A page request carrying ``ticket_id``: True (and the ticket is used up) if it was admitted."""
        self.expire(now)
        for t in self.tickets:
            if t.id == ticket_id and t.admitted_at is not None:
                self.tickets.remove(t)
                return True
        return False

    def expire(self, now: float) -> None:
        """Drop admitted tickets not claimed in ``claim_s`` and tickets not asked about in ``gone_s``."""
        for t in list(self.tickets):
            unclaimed = t.admitted_at is not None and now - t.admitted_at > self.claim_s
            if unclaimed or now - t.seen > self.gone_s:
                self.tickets.remove(t)

    # --- what a waiting page is told ---------------------------------------------------------------------
    def position(self, ticket_id: str, now: float) -> int | None:
        """1-based place among those not yet admitted (0: admitted, your turn); None: no such ticket."""
        place = 0
        for t in self.tickets:
            if t.id == ticket_id:
                t.seen = now
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
        place = self.position(ticket_id, now)
        if place is None:
            return {"known": False, "turn": False}
        return {"known": True, "turn": place == 0, "position": place, "of": self.waiting(),
                "about_s": self.estimate_s(place) if place else 0}

    def waiting(self) -> int:
        return sum(1 for t in self.tickets if t.admitted_at is None)


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
      window.setTimeout(ask, %(poll)d);
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
