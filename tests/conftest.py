"""Shared fixtures: the repository root, the tiny valid dataset in tests/data/mini, copies to break."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MINI = REPO / "tests" / "data" / "mini"


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture
def mini_root(tmp_path: Path) -> Path:
    """A writable copy of the tiny valid dataset (corpus/ + golden/)."""
    target = tmp_path / "mini"
    shutil.copytree(MINI, target)
    return target


@pytest.fixture(scope="session", autouse=True)
def _harness_cache_in_a_temporary_folder(tmp_path_factory):
    """The page's harness cache (``PLAYGROUND_CACHE``) of every test and of the servers and kernels they start
    goes to a folder of this run, never to the user's cache directory; a test may still point it elsewhere."""
    before = os.environ.get("PLAYGROUND_CACHE")
    os.environ["PLAYGROUND_CACHE"] = str(tmp_path_factory.mktemp("harness-cache"))
    yield
    if before is None:
        os.environ.pop("PLAYGROUND_CACHE", None)
    else:
        os.environ["PLAYGROUND_CACHE"] = before


#: Set by others than the test: pytest itself (per phase), and scikit-learn on its first import (OpenMP's
#: KMP_* settings; ppi_py imports it), which must stay set for the rest of the process.
_NOT_THE_TESTS = frozenset({"PYTEST_CURRENT_TEST", "KMP_DUPLICATE_LIB_OK", "KMP_INIT_AT_FORK"})


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _NOT_THE_TESTS}


@pytest.fixture(autouse=True)
def _environment_unchanged(request):
    """Every test leaves ``os.environ`` as it found it (change it with ``monkeypatch.setenv``/``delenv``).

    A test that leaves a variable set, changed or removed fails, naming the variables, and the environment is
    put back so that no later test runs in it (a leaked ``QUERY_STRING`` once reached every later test).
    Torn down after every other function fixture, so ``monkeypatch`` has already undone its changes.
    """
    before = _environment()
    yield
    after = _environment()
    if after == before:
        return
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    for key in after.keys() - before.keys():
        del os.environ[key]
    os.environ.update(before)
    pytest.fail(f"{request.node.nodeid} left os.environ changed: {', '.join(changed)} "
                f"(set variables with monkeypatch.setenv / delenv)", pytrace=False)


@pytest.fixture()
def shared_env(monkeypatch):
    """The shared real data's location (tests/real_data.DATA) in the environment, as the CLI reads it."""
    from real_data import DATA

    monkeypatch.setenv("PLAYGROUND_SHARED_DATA", str(DATA))


@pytest.fixture()
def tiny(tmp_path, monkeypatch):
    """A folder whose ``shared`` holds the tiny RAGTruth and BEGIN files of tests/frozen_tiny.py, named by
    PLAYGROUND_SHARED_DATA (OLLAMA_HOST unset, so each test names its Ollama double)."""
    from frozen_tiny import write_shared

    root = write_shared(tmp_path / "shared")
    monkeypatch.setenv("PLAYGROUND_SHARED_DATA", str(root))
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    return tmp_path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With PLAYGROUND_REQUIRE_SHARED=1 (set by .ci/run) a test skipped for want of the shared data fails instead.

    Tests that need ``../shared/data/ragtruth`` skip with a reason naming the shared RAGTruth sample; in CI that
    data must be there, so the skip would hide a broken checkout.
    """
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or os.environ.get("PLAYGROUND_REQUIRE_SHARED") != "1":
        return
    reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if "shared" in reason.lower() and "ragtruth" in reason.lower():
        report.outcome = "failed"
        report.longrepr = f"PLAYGROUND_REQUIRE_SHARED=1, but the test was skipped: {reason}"


# The slow-mark report (tests/slow_marks.py): hooks pytest finds here by name.
from slow_marks import pytest_runtest_logreport, pytest_terminal_summary  # noqa: E402,F401


def pytest_collection_modifyitems(config, items):
    """The ``hostile`` marker on every test tests/hostile_index.py names (``make test-hostile`` runs them)."""
    from hostile_index import INDEX, matches

    named = [t for entry in INDEX for t in entry.tests]
    for item in items:
        if any(matches(t, item.nodeid) for t in named):
            item.add_marker(pytest.mark.hostile)
