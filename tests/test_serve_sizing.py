"""The pool planned for a class (playground/serving/sizing.py) and the refills that follow it (serving/kernels.py)."""
from __future__ import annotations

import pytest

from playground.serving import sizing
from playground.serving.kernels import GuardedKernelManager


@pytest.mark.parametrize(("available", "class_size", "pool", "cap"), [
    # room = (available - 1024) // 256 planned kernels; pool = min(class, room - 2), at least 1; cap = room
    (9216, 30, 30, 32),   # (9216 - 1024) // 256 = 32 = 30 + 2: the whole class ready, two kernels to spare
    (9215, 30, 29, 31),   # one MiB less: 31 planned, 29 ready
    (16384, 30, 30, 60),  # more planned than the class needs: still the class, not more
    (23494, 60, 60, 87),  # this machine (about 23 GiB available): a class of 60 all from the pool
    (6144, 10, 10, 20),   # a class of 10: 20 planned
    (1792, 10, 1, 3),     # 3 planned: 1 ready
    (1280, 30, 1, 2),     # one kernel planned: one ready, and the cap stays above the pool
    (1024, 30, 1, 2),     # nothing planned beyond the reserve: still one ready
    (23494, 1, 1, 87),    # a class of one
])
def test_the_pool_covers_the_class_while_memory_plans_for_the_class_and_the_spare(available, class_size, pool, cap):
    s = sizing.plan(available, class_size=class_size)
    assert (s.pool, s.max_kernels, s.class_size) == (pool, cap, class_size)


def test_a_pool_and_a_cap_given_are_kept_whatever_the_class():
    assert sizing.plan(16383, class_size=30, pool=30) == sizing.Sizing(16383, 30, 59, 30)
    assert sizing.plan(16383, class_size=30, pool=40, max_kernels=41) == sizing.Sizing(16383, 40, 41, 30)


def test_what_serve_prints_says_the_pool_its_memory_the_cap_and_the_fill_time():
    assert sizing.plan(16384).fill_s == 60  # 30 kernels, one every FILL_S_PER_KERNEL = 2 s
    # (8703 - 1024) // 256 = 29 planned, 27 ready: 27 x 90 MiB = 2.37 GiB, 29 x 256 MiB = 7.25 GiB, 27 x 2 s
    assert sizing.plan(8703).describe() == (
        "27 preheated kernel(s) for a class of 30 (about 2.4 GiB), at most 29 kernels (planned 7.2 GiB of "
        "8.5 GiB available); the pool is full in about 54 s; beyond the first 27 students, pages open from cold "
        "kernels, in line (--class-size, --preheat)")
    assert sizing.plan(8000, pool=0, max_kernels=4).describe() == \
        "no preheated kernel, at most 4 kernels (planned 1.0 GiB of 7.8 GiB available)"


def _manager(class_size: int, spare: int = 2) -> GuardedKernelManager:
    m = GuardedKernelManager(class_size=class_size, pool_spare=spare, refill_spacing=0.0)
    return m


def _counts(m: GuardedKernelManager, monkeypatch, kernels: int, ready: int, starting_pool: int = 0) -> None:
    monkeypatch.setattr(m, "kernel_count", lambda: kernels)
    monkeypatch.setattr(m, "ready_in_pool", lambda: ready)
    monkeypatch.setattr(m, "pages_opening", lambda now=None: 0)
    m._starting_pool = {f"s{i}" for i in range(starting_pool)}


@pytest.mark.parametrize(("kernels", "ready", "starting", "target", "refill"), [
    (0, 0, 0, 30, True),     # the server starts: the pool fills for the class
    (29, 29, 0, 30, True),
    (30, 30, 0, 30, False),  # full
    (30, 29, 1, 30, False),  # the 30th is starting
    (30, 20, 0, 20, False),  # 10 students took their places: their places are not refilled
    (30, 2, 0, 2, False),    # 28 students in: the 2 left are the spare
    (30, 1, 0, 2, True),     # 29 students in: one more is kept spare
    (32, 2, 0, 2, False),    # the whole class in, 2 spare
    (33, 1, 0, 2, True),     # 32 pages (a reload, a late student): the spare is refilled
    (12, 2, 0, 20, True),    # 10 students left: the pool fills up again
])
def test_refills_keep_ready_the_places_the_class_has_not_taken(monkeypatch, kernels, ready, starting, target, refill):
    m = _manager(30)
    _counts(m, monkeypatch, kernels, ready, starting)
    assert m.pool_target() == target
    assert m.may_refill(0.0, now=100.0) is refill


def test_without_a_class_size_refills_follow_voilas_pool(monkeypatch):
    m = _manager(0)
    _counts(m, monkeypatch, kernels=60, ready=0)
    assert m.pool_target() is None and m.may_refill(0.0, now=100.0) is True


def test_the_line_counts_an_admitted_request_before_its_kernel_has_started(monkeypatch):
    m = GuardedKernelManager(open_slots=2)
    monkeypatch.setattr(m, "pages_waiting", lambda: 0)  # no kernel started for a page yet
    m.serving(("10.0.0.1", "a"), +1)
    m.serving(("10.0.0.2", "b"), +1)
    assert m.requests_in_flight() == 2 and m.pages_being_opened() == 2
    assert m.line.can_open(0, m.pages_being_opened()) is False  # two cold pages at once: the third waits
    m.serving(("10.0.0.1", "a"), -1)
    assert m.pages_being_opened() == 1 and m.line.can_open(0, m.pages_being_opened()) is True
    monkeypatch.setattr(m, "pages_waiting", lambda: 2)  # a page whose client left still holds its kernel start
    assert m.pages_being_opened() == 2


def test_no_refill_while_people_wait_in_line(monkeypatch):
    m = _manager(30)
    m.line.gone_s = 30.0
    _counts(m, monkeypatch, kernels=40, ready=0)  # the class in, nothing spare: a refill would start
    assert m.may_refill(0.0, now=100.0) is True
    ticket = m.line.join(100.0)
    assert m.may_refill(60.0, now=101.0) is False  # not even after refill_yield
    m.line.position(ticket.id, 120.0)
    assert m.may_refill(60.0, now=140.0) is False
    assert m.may_refill(60.0, now=151.0) is True  # the ticket was not asked about for 30 s: gone
    assert not m.line.tickets


def test_a_refill_waits_its_turn_before_voila_builds_its_renderer():
    import asyncio

    calls: list[str] = []

    class Pooled(GuardedKernelManager):  # as Voila derives its manager from this one
        async def _initialize(self, notebook_path, kernel_id=None, **kwargs):
            calls.append(f"renderer {kernel_id}")  # Voila builds the renderer here, then starts the kernel
            return kernel_id

    m = Pooled(class_size=30)

    async def wait_to_refill():
        calls.append("turn")

    m._wait_to_refill = wait_to_refill
    assert asyncio.run(m._initialize("nb.ipynb")) is None
    assert asyncio.run(m._initialize("nb.ipynb", "k1")) == "k1"  # a restart does not wait
    assert calls == ["turn", "renderer None", "renderer k1"]
