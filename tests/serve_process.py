"""``playground serve`` run as a person runs it: in a folder of their own (the command's working directory),
with its output in a log file there (tests/test_serve_lifecycle.py, tests/test_browser_fresh_folder.py)."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
from browser_fixtures import REPO, free_port

__all__ = ["READY", "Serve", "playground", "serving"]

#: What serve prints once a page is ready and the links are given.
READY = "playground: ready: give out the link now"


def playground(folder: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "playground", *args], cwd=folder, capture_output=True, text=True,
                          env=_env(), timeout=timeout)


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for name in ("PLAYGROUND_DB", "PLAYGROUND_ROOT", "PLAYGROUND_READ_ONLY", "PLAYGROUND_SERVE_TOKEN",
                 "PLAYGROUND_INSTRUCTOR_TOKEN"):
        env.pop(name, None)
    return env


class Serve:
    """``playground serve ARGS`` run in ``folder``, its output in ``folder/serve.log``."""

    def __init__(self, folder: Path, *args: str, port: int | None = None):
        self.folder, self.port = folder, port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = folder / f"serve-{self.port}.log"
        with open(self.log, "wb") as fh:
            self.proc = subprocess.Popen([sys.executable, "-m", "playground", "serve", "--port", str(self.port),
                                          "--cull-idle", "0", *args], cwd=folder, env=_env(), stdout=fh,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def lines(self) -> list[str]:
        return [line for line in self.text().splitlines() if line.startswith(("playground", "playground serve"))]

    def family(self) -> list[psutil.Process]:
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(self.proc.pid)
            return [root, *root.children(recursive=True)]
        return []

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


@contextlib.contextmanager
def serving(folder: Path, *args: str, port: int | None = None):
    srv = Serve(folder, *args, port=port)
    try:
        yield srv
    finally:
        srv.stop()
