"""The conftest hook that names every test over the slow limit without the ``slow`` mark."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
TESTS = '''
import time
import pytest

def test_quick():
    pass

def test_unmarked_sleeper():
    time.sleep(0.6)

@pytest.mark.slow
def test_marked_sleeper():
    time.sleep(0.6)

@pytest.mark.browser
def test_browser_sleeper():
    time.sleep(0.6)
'''


def test_unmarked_slow_tests_are_named_at_the_end(tmp_path):
    (tmp_path / "test_sleepers.py").write_text(TESTS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n    browser: browser\n")
    env = {"PATH": "/usr/bin:/bin", "PLAYGROUND_SLOW_S": "0.5", "PYTHONPATH": str(TESTS_DIR),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "slow_marks",
                           str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    section = proc.stdout.split("tests over 0.5 s without the slow mark", 1)[1]
    named = [line.split()[-1] for line in section.splitlines() if line.strip().endswith("_sleeper")]
    assert named == ["test_sleepers.py::test_unmarked_sleeper"]
