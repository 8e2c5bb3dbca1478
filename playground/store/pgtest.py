"""A throwaway PostgreSQL cluster for tests and benchmarks: temp dir, loopback port, trust auth.

Usage::

    from playground.store.pgtest import server_url
    with server_url() as url:          # $PLAYGROUND_TEST_POSTGRES, else a fresh cluster
        ...                            # url: postgresql://postgres@127.0.0.1:PORT/postgres

or ``python -m playground.store.pgtest`` to start one and print its URL (Ctrl-C stops it).

The server binaries are found on ``$PATH`` or under ``/usr/lib/postgresql/*/bin``.
PostgreSQL refuses to run as root, so when running as root the cluster is
owned by and run as the ``postgres`` user (or ``$PLAYGROUND_PG_USER``).
Durability settings stay at PostgreSQL's defaults (``fsync=on``,
``synchronous_commit=on``).
"""
from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ENV_REQUIRE",
    "ENV_URL",
    "Cluster",
    "ClusterUnavailable",
    "find_bin_dir",
    "free_port",
    "server_url",
    "start_cluster",
    "wait_ready",
]

ENV_URL = "PLAYGROUND_TEST_POSTGRES"
ENV_REQUIRE = "PLAYGROUND_REQUIRE_POSTGRES"


class ClusterUnavailable(RuntimeError):
    """No PostgreSQL server could be started here; the message says why."""


def find_bin_dir() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl`` (newest version under /usr/lib/postgresql first)."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0)
    return Path(candidates[-1]).parent if candidates else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Cluster:
    """A running throwaway cluster; :meth:`stop` shuts it down and deletes its directory."""

    url: str
    datadir: Path
    bin_dir: Path
    port: int
    run_as: tuple[int, int] | None
    version: str = ""

    def _run(self, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        # None is subprocess.run's own default for each: run as ourselves unless run_as is set
        user, group = self.run_as if self.run_as else (None, None)
        extra_groups: list[int] | None = [] if self.run_as else None
        return subprocess.run(list(args), capture_output=True, text=True, check=check, timeout=timeout,
                              cwd=str(self.datadir.parent), user=user, group=group, extra_groups=extra_groups)

    def stop(self) -> None:
        try:
            self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.datadir / "data"), "-m", "fast", "-w",
                      "stop", check=False, timeout=60)
        finally:
            shutil.rmtree(self.datadir, ignore_errors=True)


def _run_as() -> tuple[int, int] | None:
    if os.geteuid() != 0:
        return None
    import pwd

    name = os.environ.get("PLAYGROUND_PG_USER", "postgres")
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise ClusterUnavailable(
            f"running as root and there is no '{name}' user to run PostgreSQL as "
            "(PostgreSQL refuses to run as root; set PLAYGROUND_PG_USER)"
        ) from None
    return entry.pw_uid, entry.pw_gid


def start_cluster(max_connections: int = 100) -> Cluster:
    """initdb + pg_ctl start in a new temp dir on a free loopback port; raise ClusterUnavailable if impossible."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise ClusterUnavailable(
            "no PostgreSQL server binaries (initdb, pg_ctl) on PATH or under /usr/lib/postgresql/*/bin"
        )
    run_as = _run_as()
    base = Path(tempfile.mkdtemp(prefix="playground-pg-"))
    if run_as:
        os.chown(base, *run_as)
    cluster = Cluster("", base, bin_dir, 0, run_as)
    data = base / "data"
    try:
        res = cluster._run(str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                           "-E", "UTF8", "--locale=C", "--no-sync", check=False, timeout=120)
        if res.returncode != 0:
            raise ClusterUnavailable(f"initdb failed: {(res.stderr or res.stdout).strip()[-500:]}")
        last = ""
        for _attempt in range(3):
            port = free_port()
            opts = (f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={base} "
                    f"-c max_connections={max_connections} -c fsync=on -c synchronous_commit=on")
            res = cluster._run(str(bin_dir / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(base / "server.log"),
                               "-w", "-t", "60", "start", check=False, timeout=90)
            if res.returncode == 0:
                cluster.port = port
                cluster.url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
                cluster.version = (data / "PG_VERSION").read_text().strip()
                return cluster
            log = (base / "server.log")
            last = (log.read_text(errors="replace") if log.exists() else res.stderr)[-500:]
        raise ClusterUnavailable(f"pg_ctl start failed: {last.strip()}")
    except ClusterUnavailable:
        shutil.rmtree(base, ignore_errors=True)
        raise
    except (OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(base, ignore_errors=True)
        raise ClusterUnavailable(f"could not start PostgreSQL: {exc}") from exc


@contextlib.contextmanager
def server_url(max_connections: int = 100) -> Iterator[str]:
    """``$PLAYGROUND_TEST_POSTGRES`` if set, else a throwaway cluster for the duration of the block."""
    url = os.environ.get(ENV_URL)
    if url:
        yield url
        return
    cluster = start_cluster(max_connections=max_connections)
    try:
        yield cluster.url
    finally:
        cluster.stop()


def wait_ready(url: str, timeout: float = 30.0) -> None:
    """Block until a connection to ``url`` succeeds (or raise ClusterUnavailable)."""
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            psycopg.connect(url, connect_timeout=5).close()
            return
        except psycopg.Error as exc:
            if time.monotonic() > deadline:
                raise ClusterUnavailable(f"cannot connect to {url}: {exc}") from exc
            time.sleep(0.2)


if __name__ == "__main__":  # pragma: no cover
    c = start_cluster()
    print(c.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        c.stop()
