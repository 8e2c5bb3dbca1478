"""What the tests on the shared real data (RAGTruth, BEGIN) share: where the data are, and the CLI runner
(the ``shared_env`` fixture is in conftest.py).

The shared data are required (no skip): ``$PLAYGROUND_SHARED_DATA`` or ``../shared/data`` beside the repository.
"""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("PLAYGROUND_SHARED_DATA", ROOT.parent / "shared" / "data"))


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``playground ARGV``."""
    from playground.cli import main

    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err
