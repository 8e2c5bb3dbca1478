"""The labelling page's first view imports nothing that only calibration, plotting or retrieval needs (issue 13.2).

A fresh Python runs exactly what notebooks/playground.ipynb runs (``from
playground.ui import launch; app = launch()``) with a visitor's name in the
URL, on the shipped data, a new label store and a harness cache that a
previous kernel filled; after the page is built none of statsmodels, scipy,
matplotlib, bm25s or numba (nor pandas) is in ``sys.modules``.  These cost
a kernel about 300 MiB together (bench/bench_page.py); the goal is 150 MiB.

A behaviour test, not a timed one: the first kernel, which has no cache,
computes the harness run with BM25 and so does import bm25s — which also
shows the probe sees an import when there is one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Needed only by calibration (statsmodels, scipy, pandas), the harness view's plots (matplotlib) or retrieval.
HEAVY = ("statsmodels", "scipy", "matplotlib", "bm25s", "numba", "pandas")

NOTEBOOK = r"""
import json, sys
from playground.ui import launch

app = launch()
print(json.dumps({
    "app": type(app).__name__,
    "annotator": getattr(getattr(app, "session", None), "annotator", None),
    "harness": getattr(getattr(app, "session", None), "harness_source", None),
    "loaded": sorted(m for m in HEAVY_NAMES if m in sys.modules),
}))
""".replace("HEAVY_NAMES", repr(HEAVY))


def _page(env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", NOTEBOOK], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def page_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("light")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAYGROUND_", "VOILA_", "QUERY_STRING"))}
    env.update(PYTHONPATH=str(ROOT), PLAYGROUND_DB=str(tmp / "labels.db"), PLAYGROUND_CACHE=str(tmp / "cache"),
               QUERY_STRING="annotator=light-test", MPLBACKEND="Agg")
    subprocess.run([sys.executable, "-m", "playground", "labels", "init", "--db", env["PLAYGROUND_DB"]],
                   cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    return env


@pytest.mark.slow
def test_first_kernel_computes_the_harness_with_bm25(page_env: dict[str, str]) -> None:
    first = _page(page_env)
    assert first["app"] == "PlaygroundApp" and first["annotator"] == "light-test"
    assert first["harness"] == "computed and kept"
    assert "bm25s" in first["loaded"]


@pytest.mark.slow
def test_page_from_the_cache_imports_no_calibration_plotting_or_retrieval(page_env: dict[str, str]) -> None:
    if not any((Path(page_env["PLAYGROUND_CACHE"])).glob("*")):  # run alone: fill the cache first
        _page(page_env)
    later = _page(page_env)
    assert later["app"] == "PlaygroundApp" and later["annotator"] == "light-test"
    assert later["harness"] == "read"
    assert later["loaded"] == []


def test_scoring_given_passages_imports_no_bm25(page_env: dict[str, str]) -> None:
    # an imported dataset brings its passages: its page scores them (harness.run) but never ranks (BM25)
    code = ("import sys; from playground.ui.session import hits_of; import playground.harness.run; "
            f"hits_of({{}}); print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=page_env, capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]"
