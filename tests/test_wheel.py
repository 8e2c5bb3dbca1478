"""The built wheel installs into a fresh venv and runs from an empty folder (no checkout in sight).

The dependencies are not downloaded again: the fresh venv reaches the test
environment's site-packages through a ``.pth`` line (the effect of
``--system-site-packages`` when they are installed system-wide) and Jupyter's
data files (Voila's templates) through ``JUPYTER_PATH``.  The playground
itself — code, corpus, golden set, configs, notebooks — comes only from the
wheel, which is checked.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent
FIX = REPO / "tests" / "fixtures"


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(venv bin dir, env)`` with the freshly built wheel installed."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".git", ".venv", "runs", "build", "dist", "*.egg-info",
                                                               "__pycache__", ".pytest_cache"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PLAYGROUND_DB", "VIRTUAL_ENV")}
    _run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-q", "-w", str(base / "dist")], src, env)
    (wheel,) = (base / "dist").glob("rag_label_playground-*.whl")
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], base, env)
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site_dir = Path(_run([str(venv / "bin" / "python"), "-c", purelib], base, env).stdout.strip())
    (site_dir / "test_env_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], base, env)
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    return venv / "bin", env, base


def test_the_wheel_runs_outside_a_checkout(installed, tmp_path):
    bindir, env, base = installed
    empty = tmp_path / "empty"
    empty.mkdir()
    where = _run([str(bindir / "python"), "-c", "import playground; print(playground.__file__); "
                  "print(playground.REPO_ROOT)"], empty, env).stdout.split()
    assert where[0].startswith(str(base / "venv"))
    assert where[1] == str(base / "venv" / "share" / "rag-label-playground")
    play = str(bindir / "playground")
    out = _run([play, "data", "check"], empty, env).stdout
    assert out.startswith(f"data at {base / 'venv' / 'share' / 'rag-label-playground'}: valid")
    assert "claims keyed: 415; reference facts: 96" in out
    _run([play, "harness", "run", "--out", "run", "--quiet"], empty, env)
    assert (empty / "run" / "report.json").is_file()
    shutil.copy(FIX / "ragas_single.jsonl", empty / "mine.jsonl")
    out = _run([play, "import", "ragas", "mine.jsonl", "--dataset", "mine", "--db", "labels.db"], empty, env).stdout
    assert "dataset 'mine' (ragas) imported: 3 samples, 14 units" in out
    _run([play, "harness", "run", "--dataset", "mine", "--db", "labels.db", "--out", "run-mine", "--quiet"], empty, env)
    assert (empty / "run-mine" / "units.csv").is_file()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_answers_from_the_installed_wheel(installed, tmp_path):
    bindir, env, _base = installed
    port = _free_port()
    proc = subprocess.Popen([str(bindir / "playground"), "serve", "--port", str(port), "--db", "labels.db"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        status = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as resp:
                    status = resp.status
                    break
            except OSError:
                time.sleep(0.5)
        assert status == 200, f"serve did not answer (exit {proc.poll()})"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
