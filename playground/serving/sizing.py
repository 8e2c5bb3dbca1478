"""How many kernels ``playground serve`` keeps ready and allows, from the class size and the memory free.

With ``A`` the available memory in MiB (``psutil.virtual_memory().available``,
the kernel's ``MemAvailable``: free plus reclaimable cache) when the server
starts, and ``C`` the class size (``--class-size``, default
:data:`CLASS_SIZE` = 30):

* cap (most kernels at once, pooled included):
  ``max(pool + 1, (A - RESERVE_MIB) // PLANNED_KERNEL_MIB)`` — the memory
  left after a reserve for the server, the operating system and the store,
  divided by what one kernel is planned to use (256 MiB: a page's kernel on
  the shipped set measures 80–82 MiB, ``bench/bench_page.py``; the margin is
  for a big dataset's session and its labels);
* pool (preheated kernels kept ready): ``clamp(min(C, room - POOL_SPARE), 1, C)`` with
  ``room = (A - RESERVE_MIB) // PLANNED_KERNEL_MIB`` — the whole class, as
  long as the memory plans for the class and :data:`POOL_SPARE` kernels more:
  every student's page takes a pooled kernel, and once the class has taken
  its places the pool keeps only ``POOL_SPARE`` kernels ready behind them (the
  manager's ``class_size`` rule, :meth:`~playground.serving.kernels.GuardedKernelManager.pool_target`),
  so a class of ``C`` holds ``C + POOL_SPARE`` kernels at its peak.  A class of
  30 is covered from ``A = (30 + 2) × 256 + 1024 = 9,216`` MiB (9 GiB)
  available; with less, ``room - POOL_SPARE`` kernels are kept ready and the
  rest of the class opens from cold kernels, in line
  (:mod:`playground.serving.queue`).  (Until 2026-12-02 the pool was
  ``room // 2``, planned for a refill of the whole class behind it; at 60
  students that left 18 to open from cold kernels, two at a time, p95 53.9 s.)

On the project's machine (24 GiB, about 23 GiB available) that is a pool of
30 and a cap of 87 kernels (a class of 60: a pool of 60); the memory a full pool holds is
``pool × KERNEL_RSS_MIB``.  The pool fills one kernel every
:data:`FILL_S_PER_KERNEL` seconds at best (the refill spacing of
:class:`~playground.serving.kernels.GuardedKernelManager`), so the pool is full
about ``pool × FILL_S_PER_KERNEL`` seconds after ``serve`` starts
(:attr:`Sizing.fill_s`); ``serve`` gives out its links before, once the first
pooled kernel has built its page (:mod:`playground.cli.serve_run`).  ``--preheat N`` and ``--max-kernels N``
override either number.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLASS_SIZE", "FILL_S_PER_KERNEL", "KERNEL_RSS_MIB", "PLANNED_KERNEL_MIB", "POOL_SPARE", "RESERVE_MIB",
           "Sizing", "available_mib", "plan"]

#: Planned resident memory of one page's kernel (MiB), for the cap: a wide margin over :data:`KERNEL_RSS_MIB`
#: for a big dataset's session and labels.
PLANNED_KERNEL_MIB = 256
#: Measured resident memory of one page's kernel on the shipped set (MiB): 80–82 MiB pooled or cold
#: (``bench/bench_page.py``, 2026-12-01); a class of 30 with its refilled pool peaked at 5.16 GiB for 57 kernels
#: and the server (``bench/bench_class.py --preheat 30``), 90 MiB a kernel.  Used only to say what a full pool
#: holds.
KERNEL_RSS_MIB = 90
#: Kept free for the Voila server, the operating system, page caches and the label store (MiB).
RESERVE_MIB = 1024
#: The class the pool is planned for when ``--class-size`` is not given: every student of it opens from the pool.
CLASS_SIZE = 30
#: Kernels the pool keeps ready once the class has taken its places (the manager's ``pool_spare``).
POOL_SPARE = 2
#: Seconds between two pooled kernels' starts (the manager's ``refill_spacing``): the pool fills at this pace.
FILL_S_PER_KERNEL = 2.0


@dataclass(frozen=True)
class Sizing:
    """The pool size and the kernel cap, with the available memory and the class size they were computed from."""

    available_mib: int
    pool: int
    max_kernels: int
    class_size: int = CLASS_SIZE

    @property
    def fill_s(self) -> int:
        """Seconds until the pool is full, at best: ``pool × FILL_S_PER_KERNEL``."""
        return int(self.pool * FILL_S_PER_KERNEL)

    def describe(self) -> str:
        """The plan as ``serve`` prints it: the pool against the class, its memory, the cap and the fill time."""
        planned = self.max_kernels * PLANNED_KERNEL_MIB
        cap = (f"at most {self.max_kernels} kernels (planned {planned / 1024:.1f} GiB of "
               f"{self.available_mib / 1024:.1f} GiB available)")
        if not self.pool:
            return f"no preheated kernel, {cap}"
        text = (f"{self.pool} preheated kernel(s) for a class of {self.class_size} "
                f"(about {self.pool * KERNEL_RSS_MIB / 1024:.1f} GiB), {cap}; the pool is full in about "
                f"{self.fill_s} s")
        if self.pool < self.class_size:
            text += (f"; beyond the first {self.pool} students, pages open from cold kernels, in line "
                     "(--class-size, --preheat)")
        return text


def available_mib() -> int:
    """Available memory in MiB, as the kernel reports it (``MemAvailable``)."""
    import psutil  # type: ignore[import-untyped]

    return int(psutil.virtual_memory().available // (1024 * 1024))


def plan(available: int | None = None, *, class_size: int = CLASS_SIZE, pool: int | None = None,
         max_kernels: int | None = None) -> Sizing:
    """The :class:`Sizing` for ``available`` MiB (default: now) and a class of ``class_size``; ``pool`` and
    ``max_kernels`` given are kept."""
    avail = available_mib() if available is None else int(available)
    room = max(0, (avail - RESERVE_MIB) // PLANNED_KERNEL_MIB)
    if pool is None:
        pool = max(1, min(class_size, room - POOL_SPARE))
    if max_kernels is None:
        max_kernels = max(pool + 1, room)
    return Sizing(avail, pool, max_kernels, class_size)
