"""How many kernels ``playground serve`` keeps ready and allows, from the memory the machine has free.

With ``A`` the available memory in MiB (``psutil.virtual_memory().available``:
free plus reclaimable cache) when the server starts:

* pool (preheated kernels kept ready): ``clamp(A // POOL_MIB_PER_KERNEL, 1, MAX_POOL)``
  — one ready kernel per GiB available, at most 30 (a class); a pooled
  kernel holds 80 MiB (``bench/bench_page.py``, 2026-12-01), so a full pool
  holds under a tenth of the free memory;
* cap (most kernels at once, pooled included):
  ``max(pool + 1, (A - RESERVE_MIB) // PLANNED_KERNEL_MIB)`` — the memory
  left after a reserve for the server, the operating system and the store,
  divided by what one kernel is planned to use.

On the project's machine (24 GiB, about 23 GiB available) that is a pool of
22 and a cap of 87 kernels.  Filling the pool costs about a second of CPU per
kernel; refills start one at a time (:mod:`playground.serving.kernels`).
``--preheat N`` and ``--max-kernels N`` override either.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_POOL", "PLANNED_KERNEL_MIB", "POOL_MIB_PER_KERNEL", "RESERVE_MIB", "Sizing", "available_mib",
           "plan"]

#: Planned resident memory of one page's kernel (MiB): measured 80 MiB cold or pooled on the shipped set
#: (bench/bench_page.py prints it, 2026-12-01), with a wide margin for a big dataset's session and labels.
PLANNED_KERNEL_MIB = 256
#: Kept free for the Voila server, the operating system, page caches and the label store (MiB).
RESERVE_MIB = 1024
#: One preheated kernel per this much available memory (MiB).
POOL_MIB_PER_KERNEL = 1024
#: The pool never holds more kernels than this by default: a class of thirty opens its pages from the pool.
MAX_POOL = 30


@dataclass(frozen=True)
class Sizing:
    """The pool size and the kernel cap, with the available memory they were computed from."""

    available_mib: int
    pool: int
    max_kernels: int

    def describe(self) -> str:
        planned = self.max_kernels * PLANNED_KERNEL_MIB
        return (f"{self.pool} preheated kernel(s), at most {self.max_kernels} kernels "
                f"(planned {planned / 1024:.1f} GiB of {self.available_mib / 1024:.1f} GiB available)")


def available_mib() -> int:
    """Available memory in MiB, as the kernel reports it (``MemAvailable``)."""
    import psutil  # type: ignore[import-untyped]

    return int(psutil.virtual_memory().available // (1024 * 1024))


def plan(available: int | None = None, *, pool: int | None = None, max_kernels: int | None = None) -> Sizing:
    """The :class:`Sizing` for ``available`` MiB (default: now); ``pool``/``max_kernels`` given are kept."""
    avail = available_mib() if available is None else int(available)
    if pool is None:
        pool = min(MAX_POOL, max(1, avail // POOL_MIB_PER_KERNEL))
    if max_kernels is None:
        max_kernels = max(pool + 1, (avail - RESERVE_MIB) // PLANNED_KERNEL_MIB)
    return Sizing(avail, pool, max_kernels)
