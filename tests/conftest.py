"""Shared fixtures: the repository root, the tiny valid dataset in tests/data/mini, copies to break."""
from __future__ import annotations

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
