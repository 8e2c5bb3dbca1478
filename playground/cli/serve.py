"""``playground serve``: the labelling playground (a Voila app) on this machine or for a class.

Runs ``python -m voila notebooks/<name>.ipynb`` with the settings the page
reads from its environment: ``PLAYGROUND_DB`` (``--db``), ``PLAYGROUND_ROOT``
(``--root``) and ``PLAYGROUND_READ_ONLY`` (``--read-only``).  Voila starts
one kernel per page load; ``--cull-idle`` shuts down kernels idle that long
whose page is closed, so a class does not leave dozens of kernels behind.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from .options import add_db, add_root

NOTEBOOKS = ("playground", "calibrate", "harness")

DESCRIPTION = """\
Start the labelling playground: Voila serving notebooks/playground.ipynb on the
shipped corpus and golden set (or --root), labels in the label store (--db).

People give a name on the page (or open the URL with ?annotator=NAME, which a
bookmark keeps); every toggle is saved at once. A name is an identity, NOT
authentication: anyone who can open the page can label under any name. Keep
the default bind address 127.0.0.1 unless everyone who can reach the host may
label; protect the label store (file permissions, database roles) instead.
"""

EPILOG = """\
examples:
  playground serve                          http://127.0.0.1:8866, labels in the default store
  playground serve --db labels.db --open    a file of your own, and open the browser
  playground serve --read-only --port 8867  an instructor dashboard: every annotator, nothing editable

a class on one machine:
  playground serve --host 0.0.0.0 --db /srv/playground/labels.db --cull-idle 1800
  (SQLite in WAL mode takes many kernels writing at once; students open
   http://HOST:8866/?annotator=THEIR-NAME)

several Voila hosts on one PostgreSQL (a class or a team across machines):
  1. createdb playground; create two roles: a writer (INSERT/UPDATE/DELETE on the
     label tables) and a reader (SELECT only) for dashboards.
  2. on every host (same checkout, same corpus/ and golden/):
       playground serve --host 0.0.0.0 --db postgresql://writer@dbhost/playground \\
                        --cull-idle 1800 [--preheat 2]
     and send each group to one host, or put the hosts behind a load balancer
     with sticky sessions (a page talks to the kernel on the host that served it).
  3. the instructor's dashboard, anywhere:
       playground serve --read-only --db postgresql://reader@dbhost/playground --port 8867
  Every host sees every label on refresh: the store is the only shared state.

JupyterHub: in each single-user server set the environment
  c.Spawner.environment = {"PLAYGROUND_DB": "postgresql://writer@dbhost/playground"}
and open /user/NAME/voila/render/notebooks/playground.ipynb; the page then takes
the annotator name from JUPYTERHUB_USER (the hub's login), unless ?annotator= is
given.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve", help="start the labelling playground in the browser (Voila)",
        description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--port", type=int, default=8866, help="port to listen on (default 8866)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only; 0.0.0.0 for a class)")
    add_db(p)
    add_root(p)
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument("--read-only", action="store_true",
                   help="instructor dashboard: show every annotator's labels and their consensus, change nothing")
    p.add_argument("--cull-idle", type=int, default=3600, metavar="SECONDS",
                   help="shut down kernels idle this long with no page attached (default 3600; 0: never)")
    p.add_argument("--cull-interval", type=int, default=None, metavar="SECONDS",
                   help="how often to look for idle kernels (default: min(60, --cull-idle))")
    p.add_argument("--notebook", choices=NOTEBOOKS, default="playground",
                   help="which app to serve (default playground)")
    p.add_argument("--theme", choices=("light", "dark"), default="light", help="page theme (default light)")
    p.add_argument("--preheat", type=int, default=0, metavar="N",
                   help="keep N kernels started and the page computed ahead, so a page opens in about a second "
                        "(each costs memory; default 0)")
    p.add_argument("--base-url", default="/", help="URL prefix when behind a proxy (default /)")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks on the page and log verbosely")
    p.add_argument("--print-command", action="store_true",
                   help="print the Voila command and environment, and exit without starting it")
    p.set_defaults(func=run_serve)


def notebook_path(name: str) -> Path:
    from .. import REPO_ROOT

    return REPO_ROOT / "notebooks" / f"{name}.ipynb"


def build_command(args: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    """The Voila command line and the environment variables it adds (pure: nothing is started)."""
    nb = notebook_path(args.notebook)
    cull = max(0, int(args.cull_idle))
    interval = args.cull_interval if args.cull_interval is not None else (min(60, cull) if cull else 300)
    base = args.base_url if args.base_url.endswith("/") else args.base_url + "/"
    cmd = [
        sys.executable, "-m", "voila", str(nb),
        # Voila serves notebooks below its root folder (the working directory unless given): name the
        # notebooks' own folder so `serve` works from any folder, an installed wheel's included.
        f"--Voila.root_dir={nb.parent}",
        f"--port={args.port}", f"--Voila.ip={args.host}", "--Voila.port_retries=0",
        f"--theme={args.theme}", f"--base_url={base}",
        f"--MappingKernelManager.cull_idle_timeout={cull}",
        f"--MappingKernelManager.cull_interval={max(1, int(interval))}",
        "--MappingKernelManager.cull_connected=False",
    ]
    if not args.open:
        cmd.append("--no-browser")
    if args.preheat > 0:
        cmd += ["--preheat_kernel=True", f"--pool_size={args.preheat}"]
    if args.debug:
        cmd += ["--show_tracebacks=True", "--debug"]
    package_parent = str(Path(__file__).resolve().parents[2])
    env = {"PYTHONPATH": os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH", "")) if p)}
    if args.db:
        env["PLAYGROUND_DB"] = str(args.db)
    if args.root is not None:
        env["PLAYGROUND_ROOT"] = str(Path(args.root).resolve())
    env["PLAYGROUND_READ_ONLY"] = "1" if args.read_only else "0"
    return cmd, env


def _port_free(host: str, port: int) -> bool:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return False
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError:
            return False
    return True


def _check(args: argparse.Namespace) -> list[str]:
    problems = []
    if not 0 < args.port < 65536:
        problems.append(f"--port {args.port} is not a port number (1-65535)")
    if args.cull_idle < 0:
        problems.append("--cull-idle cannot be negative (0 turns culling off)")
    if args.preheat < 0:
        problems.append("--preheat cannot be negative")
    nb = notebook_path(args.notebook)
    if not nb.is_file():
        problems.append(f"the {args.notebook} notebook is not in this installation ({nb} is missing)")
    if args.root is not None:
        root = Path(args.root)
        for sub in ("corpus", "golden"):
            if not (root / sub).is_dir():
                problems.append(f"--root {root}: no {sub}/ folder there")
    return problems


def _check_store(args: argparse.Namespace) -> str | None:
    """Open the store once before any kernel does (creating or migrating it); returns its location or raises."""
    from ..store import open_store

    with open_store(args.db or None, read_only=args.read_only) as store:
        return store.url


def run_serve(args: argparse.Namespace) -> int:
    problems = _check(args)
    if problems:
        print("playground serve: cannot start:\n" + "\n".join(f"  {p}" for p in problems), file=sys.stderr)
        return 1
    cmd, env = build_command(args)
    if args.print_command:
        for k, v in sorted(env.items()):
            print(f"{k}={v}")
        print(" ".join(cmd))
        return 0
    if not _port_free(args.host, args.port):
        print(f"playground serve: port {args.port} on {args.host} is in use; choose another with --port",
              file=sys.stderr)
        return 1
    from ..store import StoreError

    try:
        where = _check_store(args)
    except StoreError as exc:
        print(f"playground serve: label store: {exc}", file=sys.stderr)
        return 1
    shown_host = socket.gethostname() if args.host in ("0.0.0.0", "::", "") else args.host
    if ":" in shown_host:
        shown_host = f"[{shown_host}]"
    base = args.base_url if args.base_url.endswith("/") else args.base_url + "/"
    url = f"http://{shown_host}:{args.port}{base}"
    print(f"playground: serving {args.notebook} at {url}", flush=True)
    print(f"playground: labels in {where}{' (read-only)' if args.read_only else ''}", flush=True)
    if args.notebook == "playground" and not args.read_only:
        print(f"playground: give each person {url}?annotator=THEIR-NAME (a name, not a login)", flush=True)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("playground: listening beyond this machine — anyone who can reach it can label under any name",
              flush=True)
    print("playground: Ctrl-C stops the server", flush=True)
    proc = subprocess.Popen(cmd, env={**os.environ, **env})

    def on_term(signum, frame):  # a service manager's stop: shut Voila (and its kernels) down cleanly
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
