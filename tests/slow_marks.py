"""A pytest plugin that names every test over the slow limit without the ``slow`` or ``browser`` mark.

``tests/conftest.py`` takes its two hooks; ``tests/test_slow_marks.py`` loads it alone (``-p slow_marks``).
"""
from __future__ import annotations

import os

#: A test that takes longer than this (seconds, its call phase) carries ``@pytest.mark.slow`` (or ``browser``):
#: ``make test-fast`` leaves those out, so the everyday loop stays fast.  ``$PLAYGROUND_SLOW_S`` changes it.
SLOW_S = float(os.environ.get("PLAYGROUND_SLOW_S", "10"))
_UNMARKED_SLOW: list[tuple[str, float]] = []


def pytest_runtest_logreport(report):
    """Note each test over :data:`SLOW_S` seconds that is marked neither ``slow`` nor ``browser``."""
    if report.when == "call" and report.duration > SLOW_S and not ({"slow", "browser"} & set(report.keywords)):
        _UNMARKED_SLOW.append((report.nodeid, report.duration))


def pytest_terminal_summary(terminalreporter):
    """List the unmarked slow tests at the end of the run (on this machine's load: check before marking)."""
    if not _UNMARKED_SLOW:
        return
    terminalreporter.section(f"tests over {SLOW_S:g} s without the slow mark")
    for nodeid, seconds in sorted(_UNMARKED_SLOW, key=lambda t: -t[1]):
        terminalreporter.write_line(f"{seconds:7.1f} s  {nodeid}")
