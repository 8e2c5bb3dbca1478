"""The waiting line (playground.serving.queue): order kept, a place freed when its page goes, words at once."""
from __future__ import annotations

import pytest

from playground.serving.queue import (
    CLAIM_S,
    DEFAULT_OPEN_S,
    FRONT_POLL_S,
    HOLD_S,
    POLL_S,
    TELL_S,
    WaitingLine,
    ordinal,
    over_share,
    waiting_page,
)


@pytest.mark.parametrize(("n", "word"), [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"),
                                         (13, "13th"), (21, "21st"), (22, "22nd"), (23, "23rd"), (101, "101st"),
                                         (111, "111th"), (112, "112th")])
def test_ordinal(n, word):
    assert ordinal(n) == word


def test_a_page_opens_at_once_while_a_slot_or_a_preheated_kernel_is_free():
    line = WaitingLine(slots=2)
    assert line.may_enter(pooled_ready=0, opening=1, now=0.0)
    assert not line.may_enter(pooled_ready=0, opening=2, now=0.0)  # the boundary: slots taken
    assert line.may_enter(pooled_ready=1, opening=5, now=0.0)       # a preheated kernel is ready


def test_arrival_order_is_kept():
    line = WaitingLine(slots=2)
    a, b, c = (line.join(now=0.0) for _ in range(3))
    assert [line.position(t.id, 0.0) for t in (a, b, c)] == [1, 2, 3]
    assert not line.may_enter(pooled_ready=0, opening=0, now=0.0)  # someone waits: a newcomer goes to the back
    line.admit(pooled_ready=0, opening=1, now=1.0)                   # one slot free: the front only
    assert [line.position(t.id, 1.0) for t in (a, b, c)] == [0, 1, 2]
    assert not line.claim(b.id, 1.0)                                 # not b's turn
    assert line.claim(a.id, 1.0) and not line.claim(a.id, 1.0)       # a ticket opens one page
    line.admit(pooled_ready=2, opening=2, now=2.0)                   # two preheated kernels: b and c
    assert [line.position(t.id, 2.0) for t in (b, c)] == [0, 0]


def test_a_student_who_leaves_frees_the_place():
    line = WaitingLine(slots=1, gone_s=30.0)
    a, b, c = (line.join(now=0.0) for _ in range(3))
    line.position(a.id, 20.0)                            # a and c keep asking; b closed its page at 0
    line.position(c.id, 20.0)
    line.expire(30.0)                                    # b silent for 30 s: not more than gone_s, kept
    assert line.waiting() == 3 and [line.position(t.id, 30.0) for t in (a, c)] == [1, 3]
    line.expire(30.5)                                    # b silent for 30.5 s: gone, c moves up
    assert line.waiting() == 2 and [line.position(t.id, 30.5) for t in (a, b, c)] == [1, None, 2]


def test_a_told_turn_holds_its_slot_hold_s_and_may_be_claimed_until_claim_s():
    line = WaitingLine(slots=1, hold_s=1.0, claim_s=2.5, tell_s=5.0)
    a, b, c = line.join(0.0, ("ip", "va")), line.join(0.0, ("ip", "vb")), line.join(0.0, ("ip", "vc"))
    line.admit(pooled_ready=0, opening=0, now=0.0)
    assert line.position(a.id, 1.0) == 0 and line.position(b.id, 1.0) == 1  # a is told its turn at 1.0
    line.admit(pooled_ready=0, opening=0, now=2.0)      # 1.0 s after being told: a still holds the slot
    assert line.position(b.id, 2.0) == 1
    line.admit(pooled_ready=0, opening=0, now=2.1)      # beyond hold_s: b is admitted beside a
    assert line.position(b.id, 2.1) == 0 and line.position(c.id, 2.1) == 1
    line.admit(pooled_ready=0, opening=0, now=3.5)      # 2.5 s after a was told: a may still come
    assert line.find(a.id) is not None
    line.admit(pooled_ready=0, opening=0, now=3.6)      # beyond claim_s: a is dropped
    assert line.position(a.id, 3.6) is None and not line.claim(a.id, 3.6)
    assert line.claim(b.id, 3.6)


def test_a_visitor_who_let_a_turn_pass_holds_no_slot_next_time():
    line = WaitingLine(slots=1, hold_s=0.5, claim_s=2.5)
    h = line.join(0.0, ("10.0.0.9", "jar"))
    a = line.join(0.0, ("10.0.0.1", "alice"))
    line.admit(0, 0, 0.0)
    assert line.answer(h.id, 0.1)["turn"]               # told at 0.1; never comes
    line.admit(0, 0, 2.7)                                # beyond claim_s: dropped, the jar is remembered
    assert line.find(h.id) is None and "jar" in line.lapsed
    h2 = line.join(2.7, ("10.0.0.9", "jar"))             # it takes a new place, behind alice
    assert line.claim(a.id, 2.8)
    line.admit(0, 1, 9.0)                                # alice's page opening: the slot is taken
    assert line.position(h2.id, 9.0) == 1
    line.admit(0, 0, 12.0)                               # free: the jar is admitted...
    b = line.join(12.0, ("10.0.0.2", "bob"))
    line.admit(0, 0, 12.0)                               # ...and holds no slot: bob is admitted beside it
    assert line.position(h2.id, 12.0) == 0 and line.position(b.id, 12.0) == 0
    assert line.claim(h2.id, 12.1) and "jar" not in line.lapsed  # coming for a turn clears the mark


def test_each_turn_passed_on_says_how_long_it_held_the_slot(caplog):
    line = WaitingLine(slots=1, hold_s=0.5, claim_s=2.5, tell_s=5.0)
    h, closed = line.join(0.0, ("ip", "jar")), line.join(0.0, ("ip", "closed"))
    line.admit(0, 0, 0.0)
    line.answer(h.id, 0.1)                               # told at 0.1: it holds the slot until 0.6
    line.admit(0, 0, 2.7)                                # the jar's turn passes on; 'closed' is admitted at 2.7,
    h2 = line.join(2.8, ("ip", "jar"))
    line.expire(7.8)                                     # its page closed: untold 5.1 s after admission, passed on
    assert line.find(closed.id) is None
    line.admit(0, 0, 7.8)
    line.answer(h2.id, 7.9)
    line.expire(10.5)                                    # the lapsed jar again: it held nothing
    held = [r.getMessage().rsplit("slot ", 1)[1] for r in caplog.records if "passed on unclaimed" in r.getMessage()]
    assert held == ["0.60 s)", "5.10 s)", "0.00 s)"]


def test_a_page_that_comes_takes_its_slot_and_the_next_waits_for_it():
    line = WaitingLine(slots=1, hold_s=1.0)
    a, b = line.join(0.0), line.join(0.0)
    line.admit(pooled_ready=0, opening=0, now=0.0)
    assert line.answer(a.id, 0.4)["turn"] and line.claim(a.id, 0.5)
    line.admit(pooled_ready=0, opening=1, now=9.0)      # a's page is being opened: b waits for the slot
    assert line.position(b.id, 9.0) == 1


def test_pages_near_the_front_ask_more_often():
    line = WaitingLine(slots=2)
    t = [line.join(0.0) for _ in range(5)]
    assert [line.answer(x.id, 0.0)["poll_ms"] for x in t] == [250, 250, 250, 250, 2000]  # within slots + 2: 0.25 s


def test_an_admitted_ticket_never_told_passes_on_after_the_tell_window():
    line = WaitingLine(slots=1, claim_s=2.5, tell_s=5.0)
    a, b = line.join(0.0), line.join(0.0)
    line.admit(pooled_ready=0, opening=0, now=0.0)      # a's page stopped asking: it is never told
    line.admit(pooled_ready=0, opening=0, now=5.0)
    assert line.position(b.id, 5.0) == 1                # 5 s: not beyond tell_s
    line.admit(pooled_ready=0, opening=0, now=5.1)
    assert line.find(a.id) is None and line.position(b.id, 5.1) == 0


def test_the_default_windows_are_seconds_not_twenty():
    assert (FRONT_POLL_S, HOLD_S, CLAIM_S) == (0.25, 0.5, 2.5) and TELL_S == 2 * POLL_S + 1.0 == 5.0
    assert (WaitingLine().hold_s, WaitingLine().claim_s) == (HOLD_S, CLAIM_S)


class _Manager:
    """What :func:`over_share` reads of the kernel manager: pages held per visitor/address and in all."""

    def __init__(self, per_visitor=0, per_address=0, cap=0, held=None, total=0):
        self.max_per_visitor, self.max_per_address, self.max_kernels = per_visitor, per_address, cap
        self._held, self._total = held or {}, total

    def held(self, address=None, visitor=None):
        return self._held.get(address if address is not None else visitor, 0)

    def pages_held(self):
        return self._total


def test_places_in_line_count_against_the_visitors_share():
    line = WaitingLine()
    m = _Manager(per_visitor=4, held={"v1": 1})
    for _ in range(2):
        line.join(0.0, ("10.0.0.1", "v1"))
    assert over_share(line, m, "10.0.0.1", "v1") is None                 # 1 page + 2 places = 3 < 4
    line.join(0.0, ("10.0.0.1", "v1"))
    assert "4 pages open or waiting" in over_share(line, m, "10.0.0.1", "v1")  # 1 + 3 = 4: the boundary
    assert over_share(line, m, "10.0.0.1", "v2") is None                 # another browser is not counted


def test_places_in_line_count_against_the_address_and_the_cap():
    line = WaitingLine()
    for i in range(3):
        line.join(0.0, ("10.0.0.9", f"jar{i}"))                          # three cookie jars, one address
    assert "network address" in over_share(line, _Manager(per_address=3), "10.0.0.9", "jar9")
    assert over_share(line, _Manager(per_address=4), "10.0.0.9", "jar9") is None
    assert over_share(line, _Manager(cap=10, total=7), "10.0.0.2", "v") == "full"   # 7 pages + 3 places = cap
    assert over_share(line, _Manager(cap=11, total=7), "10.0.0.2", "v") is None


def test_the_estimate():
    line = WaitingLine(slots=2)
    assert line.estimate_s(1) == int(DEFAULT_OPEN_S) == 10
    line.opened(8.0)
    line.opened(12.0)                                   # average 10 s
    assert [line.estimate_s(p) for p in (1, 2, 3, 12)] == [10, 10, 20, 60]


def test_the_answer_and_the_first_words():
    line = WaitingLine(slots=2)
    t = [line.join(0.0) for _ in range(12)]
    assert line.answer(t[11].id, 0.0) == {"known": True, "turn": False, "position": 12, "of": 12, "about_s": 60,
                                          "poll_ms": 2000}
    assert line.answer("nobody", 0.0) == {"known": False, "turn": False}
    html = waiting_page(12, 60, "/playground/api/queue")
    assert "You are 12th in line; about 60 s." in html and "opens by itself" in html


@pytest.mark.slow
def test_a_class_larger_than_the_slots_waits_in_order_and_every_page_opens(tmp_path):
    """Live: four pages at once with one slot and no pool: the first opens, the others are told their place at
    once (in words), keep it, and open by themselves in arrival order."""
    import threading
    import time

    from browser_fixtures import start_server, stop_server
    from serve_clients import open_page

    srv = start_server(tmp_path, "--preheat", "0", "--open-slots", "1")
    pages: dict[int, object] = {}
    try:
        def student(i: int) -> None:
            pages[i] = open_page(srv.url, f"annotator=s{i}", timeout=600)

        threads = []
        for i in range(4):
            threads.append(threading.Thread(target=student, args=(i,)))
            threads[-1].start()
            time.sleep(0.3)  # arrival order: 0, 1, 2, 3
        for t in threads:
            t.join(700)
    finally:
        stop_server(srv.proc)
    got = [pages[i] for i in range(4)]
    assert all(p.status == 200 and p.kernel_id for p in got), [(p.status, p.html[:200]) for p in got]
    assert got[0].place is None                               # the slot was free
    assert [p.place for p in got[1:]] == [1, 2, 3]             # told at once, in arrival order
    finished = [p.seconds + 0.3 * i for i, p in enumerate(got)]
    assert finished == sorted(finished)                       # opened in arrival order
