"""The waiting line (playground.serving.queue): order kept, a place freed when its page goes, words at once."""
from __future__ import annotations

import pytest

from playground.serving.queue import DEFAULT_OPEN_S, WaitingLine, ordinal, waiting_page


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


def test_an_admitted_ticket_not_used_frees_the_place():
    line = WaitingLine(slots=1, claim_s=20.0)
    a, b = line.join(0.0), line.join(0.0)
    line.admit(pooled_ready=0, opening=0, now=0.0)
    assert line.position(a.id, 20.0) == 0 and line.position(b.id, 20.0) == 1
    line.admit(pooled_ready=0, opening=0, now=20.5)     # a did not come within 20 s: b's turn
    assert line.position(a.id, 20.5) is None and line.position(b.id, 20.5) == 0


def test_the_estimate():
    line = WaitingLine(slots=2)
    assert line.estimate_s(1) == int(DEFAULT_OPEN_S) == 10
    line.opened(8.0)
    line.opened(12.0)                                   # average 10 s
    assert [line.estimate_s(p) for p in (1, 2, 3, 12)] == [10, 10, 20, 60]


def test_the_answer_and_the_first_words():
    line = WaitingLine(slots=2)
    t = [line.join(0.0) for _ in range(12)]
    assert line.answer(t[11].id, 0.0) == {"known": True, "turn": False, "position": 12, "of": 12, "about_s": 60}
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
