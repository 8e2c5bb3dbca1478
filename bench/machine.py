"""What every benchmark prints about the machine, and pinning to one core."""
from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU model from /proc/cpuinfo, else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def memory_gib() -> float | None:
    try:
        return int(Path("/proc/meminfo").read_text().split()[1]) / 1024 / 1024
    except (OSError, ValueError, IndexError):
        return None


def describe() -> str:
    """One line: OS, CPU, logical CPUs, memory, Python, load average."""
    mem = memory_gib()
    try:
        load = "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        load = "load unknown"
    return (f"{platform.system()} {platform.release()} {platform.machine()}; {cpu_model()}; "
            f"{os.cpu_count()} logical CPU(s){f'; {mem:.0f} GiB' if mem else ''}; "
            f"Python {platform.python_version()} ({platform.python_implementation()}); {load}")


def pin_one_core() -> str:
    """Pin this process to one CPU (Linux); say which, or that it could not."""
    try:
        cpu = max(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    except (AttributeError, OSError):  # not Linux
        return "not pinned"
