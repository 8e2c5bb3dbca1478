"""``playground serve``: the labelling playground (a Voila app) on this machine or for a class.

Runs ``python -m playground.serving notebooks/<name>.ipynb`` (Voila with the
project's websocket guards, kernel cap and orphan watch, see
:mod:`playground.serving`) with the settings the page reads from its
environment: ``PLAYGROUND_DB`` (``--db``), ``PLAYGROUND_ROOT`` (``--root``),
``PLAYGROUND_READ_ONLY`` (``--read-only``) and ``PLAYGROUND_DATASET``
(``--dataset``).  Voila starts one kernel per page; a preheated pool (sized
from the free memory, :mod:`playground.serving.sizing`) answers the first
pages at once and refills in the background.  A kernel is shut down when its
page closes (Voila's beacon), when no page connects to it within a minute, or
when its page has been gone ``--disconnect-grace`` seconds; ``--cull-idle``
is the backstop.  Beyond loopback keys are required (``--no-auth`` to go
without, loudly): the class token for students, the instructor's key, and for
the room an observer's key (:func:`role_keys`, :mod:`playground.serving.auth`).  ``--roster FILE`` gives
each student a link of their own, their name signed (:mod:`playground.serving.roster`): written to
``--links-file`` only, and a student's page labels under its link's name only.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import tempfile
from pathlib import Path

from ..ui.readiness import READY_FILE_ENV
from .options import add_db, add_root
from .serve_links import (
    INSTRUCTOR_TOKEN_ENV,
    KEY_ENVS,
    LOOPBACK,
    OBSERVER_TOKEN_ENV,
    ROSTER_SECRET_ENV,
    TOKEN_ENV,
    is_loopback,
    join_url,
    links,
    open_role,
    role_keys,
    roster_secret,
    student_links,
)
from .serve_paths import caller_folder, resolve_env, resolve_paths, resolve_store

__all__ = ["INSTRUCTOR_TOKEN_ENV", "KEY_ENVS", "LOOPBACK", "NOTEBOOKS", "OBSERVER_TOKEN_ENV", "READ_ONLY_NOTEBOOK",
           "ROSTER_SECRET_ENV", "TOKEN_ENV", "build_command", "join_url", "links", "notebook_path", "open_role",
           "per_address", "register", "role_keys", "roster_secret", "run_serve"]

NOTEBOOKS = ("playground", "calibrate", "harness")
#: ``--read-only`` serves the instructor's room (``notebooks/room.ipynb``) when it exists.
READ_ONLY_NOTEBOOK = "room"

DESCRIPTION = """\
Start the labelling playground: Voila serving notebooks/playground.ipynb on the
shipped corpus and golden set (or --root), labels in the label store (--db).

People give a name on the page (or open the URL with ?annotator=NAME, which a
bookmark keeps); every toggle is saved at once. A name is an identity, NOT
authentication: anyone with the join link can label under any name. Keep
the default bind address 127.0.0.1 for yourself. For a class, --host 0.0.0.0
asks for keys: the server prints a join link for students
(http://HOST:PORT/?token=...) and a separate instructor link (a second key
students never see). The room (--read-only) takes the instructor's link
(adjudicate, assign) and an observer's link (read-only), never the students'.
The key leaves the address bar once the page has loaded; no response sends
it on (Referrer-Policy: no-referrer). --no-auth turns the keys off (anyone
who can reach the host can label; the room is then read-only).
See docs/security.md and docs/classroom-server.md.

A class on one machine is planned from its size and the free memory: a pool of
preheated kernels as large as the class (--class-size, default 30) while the
memory plans for the class and two kernels more, so pages open at once, and a cap on
kernels ((available - 1 GiB) / 256 MiB); beyond the cap a visitor
gets "the class is full, try again in a minute". A page's kernel is shut down
when the page is closed or reloaded, when its client hangs up before the page
arrives, when nothing connects to it within a minute of the page being sent,
or when its page has been gone --disconnect-grace seconds.
"""

EPILOG = """\
examples:
  playground serve                          http://127.0.0.1:8866, labels in the default store
  playground serve --db labels.db --open    a file of your own, and open the browser
  playground serve --read-only --port 8867  an instructor dashboard: every annotator, nothing editable

a class on one machine:
  playground serve --host 0.0.0.0 --db /srv/playground/labels.db
  (prints the join link http://HOST:8866/?token=...; SQLite in WAL mode takes
   many kernels writing at once; students add &annotator=THEIR-NAME)

several Voila hosts on one PostgreSQL (a class or a team across machines):
  1. createdb playground; create two roles: a writer (INSERT/UPDATE/DELETE on the
     label tables) and a reader (SELECT only) for dashboards.
  2. on every host (same checkout, same corpus/ and golden/):
       PLAYGROUND_SERVE_TOKEN=the-class-token playground serve --host 0.0.0.0 \\
                        --db postgresql://writer@dbhost/playground
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
    _add_where(p)
    _add_lifetimes(p)
    _add_app(p)
    _add_capacity(p)
    _add_links(p)
    p.set_defaults(func=run_serve)


def _add_where(p: argparse.ArgumentParser) -> None:
    """Where the server listens, what it serves from, and who may open it."""
    p.add_argument("--port", type=int, default=8866, help="port to listen on (default 8866)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only; 0.0.0.0 for a class, "
                        "which asks for a token)")
    add_db(p)
    add_root(p)
    p.add_argument("--dataset", default=None, metavar="NAME",
                   help="the dataset the page labels: 'golden' (the shipped set, default) or one imported into "
                        "the store (playground import ...)")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument("--read-only", action="store_true",
                   help="instructor's room: every annotator's labels and their agreement, change nothing")
    p.add_argument("--no-auth", action="store_true",
                   help="serve beyond loopback WITHOUT a token: anyone who can reach the host can open the page")


def _add_lifetimes(p: argparse.ArgumentParser) -> None:
    """When kernels no page holds are shut down."""
    p.add_argument("--cull-idle", type=int, default=3600, metavar="SECONDS",
                   help="backstop: shut down kernels idle this long with no page attached (default 3600; 0: never)")
    p.add_argument("--cull-interval", type=int, default=None, metavar="SECONDS",
                   help="how often to look for idle kernels (default: min(60, --cull-idle))")
    p.add_argument("--disconnect-grace", type=float, default=30.0, metavar="SECONDS",
                   help="shut down a kernel this long after its page disconnected without coming back "
                        "(default 30; a closed or reloaded page's kernel goes at once)")
    p.add_argument("--unconnected-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="shut down a kernel nothing connected to this long after its page was sent (default 60)")


def _add_app(p: argparse.ArgumentParser) -> None:
    """Which app, in which theme."""
    p.add_argument("--notebook", choices=NOTEBOOKS, default="playground",
                   help="which app to serve (default playground)")
    p.add_argument("--theme", choices=("light", "dark"), default="light", help="page theme (default light)")


def _add_capacity(p: argparse.ArgumentParser) -> None:
    """The class the pool is planned for, the kernel cap, each visitor's share and the waiting line."""
    p.add_argument("--class-size", type=int, default=None, metavar="N",
                   help="students expected at once: the pool is planned for them (default 30)")
    p.add_argument("--preheat", type=int, default=None, metavar="N",
                   help="keep N kernels started with the page computed ahead, refilled in the background "
                        "(default: the class size, while the memory plans for twice as many kernels; else half "
                        "of what it plans for; 0: none)")
    p.add_argument("--max-kernels", type=int, default=None, metavar="N",
                   help="most kernels at once, preheated included; beyond it a visitor is told the class is "
                        "full (default: (available memory - 1 GiB) / 256 MiB)")
    p.add_argument("--max-per-address", type=int, default=None, metavar="N",
                   help="most pages one network address may hold, so that one holder of the join link cannot take "
                        "every kernel (default: half the --max-kernels cap, at least 4; none on 127.0.0.1; 0: no "
                        "limit, e.g. for a class behind one NAT address)")
    p.add_argument("--open-slots", type=int, default=2, metavar="N",
                   help="most pages opened from a cold kernel at once (default 2: one per core); beyond, pages "
                        "wait in line, in arrival order, and say their place (0: no line)")
    p.add_argument("--max-per-visitor", type=int, default=4, metavar="N",
                   help="most pages one browser (one login cookie) may hold (default 4; 0: no limit)")


def _add_links(p: argparse.ArgumentParser) -> None:
    """The links' prefix and where they go, the roster, and debugging."""
    p.add_argument("--base-url", default="/", help="URL prefix when behind a proxy (default /)")
    p.add_argument("--links-file", default=None, metavar="FILE",
                   help="write the join/instructor/observer links (they hold the keys) to FILE, readable by you "
                        "only, instead of printing them (for a server whose output goes to a log)")
    p.add_argument("--roster", type=Path, default=None, metavar="FILE",
                   help="one link per student: FILE holds one name per line; each student's link carries their name "
                        "signed with a server secret ($PLAYGROUND_ROSTER_SECRET, else drawn at random: the links then "
                        "change at each start), and their page labels under that name only; needs --links-file. "
                        "With --read-only (the room): the class uses these personal links, and the room tells the "
                        "students to open theirs instead of showing a join link")
    p.add_argument("--link-expiry", default=None, metavar="WHEN",
                   help="with --roster: the student links stop working after a duration from now (90m, 8h, 7d) or "
                        "at a UTC time (2026-12-24T18:00Z); the expiry is signed with the link")
    p.add_argument("--lti-config", type=Path, default=None, metavar="FILE",
                   help="launch from Canvas/Moodle as an LTI 1.3 tool: pylti1p3's JSON tool config (platforms, "
                        "client ids, URLs, deployment ids, the tool's key files); adds /lti/login, /lti/launch, "
                        "/lti/jwks and /lti/grades (docs/instructor.md)")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks on the page and log verbosely")
    p.add_argument("--print-command", action="store_true",
                   help="print the server command and environment, and exit without starting it")


def notebook_path(name: str) -> Path:
    from .. import REPO_ROOT

    return REPO_ROOT / "notebooks" / f"{name}.ipynb"


def served_notebook(args: argparse.Namespace) -> str:
    """The notebook's name: ``--notebook``, or the room for ``--read-only`` when it is installed."""
    if args.read_only and args.notebook == "playground" and notebook_path(READ_ONLY_NOTEBOOK).is_file():
        return READ_ONLY_NOTEBOOK
    return str(args.notebook)


def build_command(args: argparse.Namespace, sizing=None) -> tuple[list[str], dict[str, str]]:
    """The server's command line and the environment variables it adds (pure: nothing is started).

    ``sizing`` (a :class:`playground.serving.sizing.Sizing`) fixes the pool and the cap; without it they
    come from ``--preheat``/``--max-kernels`` or the available memory now.
    """
    nb = notebook_path(served_notebook(args))
    sizing = sizing or plan_for(args)
    cull = max(0, int(args.cull_idle))
    interval = args.cull_interval if args.cull_interval is not None else (min(60, cull) if cull else 300)
    base = args.base_url if args.base_url.endswith("/") else args.base_url + "/"
    cmd = [
        sys.executable, "-m", "playground.serving", str(nb),
        # Voila serves notebooks below its root folder (the working directory unless given): name the
        # notebooks' own folder so `serve` works from any folder, an installed wheel's included.
        f"--Voila.root_dir={nb.parent}",
        f"--port={args.port}", f"--Voila.ip={args.host}", "--Voila.port_retries=0",
        f"--theme={args.theme}", f"--base_url={base}",
        f"--MappingKernelManager.cull_idle_timeout={cull}",
        f"--MappingKernelManager.cull_interval={max(1, int(interval))}",
        "--MappingKernelManager.cull_connected=False",
        f"--GuardedKernelManager.max_kernels={sizing.max_kernels}",
        f"--GuardedKernelManager.unconnected_timeout={float(args.unconnected_timeout)}",
        f"--GuardedKernelManager.disconnected_timeout={float(args.disconnect_grace)}",
        f"--GuardedKernelManager.max_per_address={per_address(args, sizing.max_kernels)}",
        f"--GuardedKernelManager.max_per_visitor={max(0, int(args.max_per_visitor))}",
        f"--GuardedKernelManager.open_slots={max(0, int(args.open_slots))}",
        # The kernels talk to the server over local IPC sockets, not TCP on loopback.
        "--KernelManager.transport=ipc",
    ]
    if not args.open:
        cmd.append("--no-browser")
    if sizing.pool > 0:
        cmd += ["--preheat_kernel=True", f"--pool_size={sizing.pool}",
                f"--GuardedKernelManager.class_size={max(sizing.pool, sizing.class_size)}"]
    if args.debug:
        cmd += ["--show_tracebacks=True", "--debug"]
    package_parent = str(Path(__file__).resolve().parents[2])
    env = {"PYTHONPATH": os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH", "")) if p)}
    if args.db:
        env["PLAYGROUND_DB"] = str(resolve_store(str(args.db), caller_folder()))
    if args.root is not None:
        env["PLAYGROUND_ROOT"] = str(Path(args.root).resolve())
    if args.dataset:
        env["PLAYGROUND_DATASET"] = str(args.dataset)
    env["PLAYGROUND_READ_ONLY"] = "1" if args.read_only else "0"
    env["PLAYGROUND_OPEN_ROLE"] = open_role(args)
    if getattr(args, "roster", None) is not None and args.read_only:
        from ..ui.room_html import PERSONAL_LINKS_ENV

        env[PERSONAL_LINKS_ENV] = str(getattr(args, "roster_count", 0) or len(_roster_names(args.roster)))
    elif getattr(args, "roster", None) is not None:
        env["PLAYGROUND_ROSTER"] = "1"  # every kernel: a student's page labels under its link's name only
        env["PLAYGROUND_ROSTER_FILE"] = str(Path(args.roster).resolve())  # links checked against it as it is now
    if getattr(args, "lti_config", None) is not None:  # read by serving.lti (resolved where the user typed it)
        env["PLAYGROUND_LTI_CONFIG"] = str(Path(args.lti_config).resolve())
    return cmd, env


def _roster_names(path: Path) -> list[str]:
    from ..serving.roster import read_roster

    return read_roster(path)


def per_address(args: argparse.Namespace, cap: int) -> int:
    """The share of one network address: ``--max-per-address``, or half the cap (at least 4) beyond loopback,
    none on loopback (every client is this machine)."""
    if args.max_per_address is not None:
        return max(0, int(args.max_per_address))
    return 0 if is_loopback(args.host) else max(4, cap // 2)


#: The room has one viewer or a few: no pool, and a cap of this many kernels unless --max-kernels says otherwise.
ROOM_MAX_KERNELS = 4


def plan_for(args: argparse.Namespace):
    """The pool and cap: from the free memory (:func:`playground.serving.sizing.plan`) for the labelling page;
    for the room (``--read-only``) no pool and :data:`ROOM_MAX_KERNELS` unless ``--preheat``/``--max-kernels``."""
    from ..serving.sizing import CLASS_SIZE, plan

    if args.read_only:
        pool = args.preheat or 0
        return plan(pool=pool, max_kernels=args.max_kernels or max(ROOM_MAX_KERNELS, pool + 1))
    return plan(class_size=args.class_size or CLASS_SIZE, pool=args.preheat, max_kernels=args.max_kernels)


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
    if args.preheat is not None and args.preheat < 0:
        problems.append("--preheat cannot be negative")
    if args.class_size is not None and args.class_size < 1:
        problems.append("--class-size must be at least 1")
    if args.max_kernels is not None and args.max_kernels < 1:
        problems.append("--max-kernels must be at least 1")
    if args.max_per_address is not None and args.max_per_address < 0:
        problems.append("--max-per-address cannot be negative (0: no limit)")
    if args.open_slots < 0:
        problems.append("--open-slots cannot be negative (0: no line)")
    if args.max_per_visitor < 0:
        problems.append("--max-per-visitor cannot be negative (0: no limit)")
    if args.max_kernels is not None and args.preheat is not None and args.preheat >= args.max_kernels:
        problems.append(f"--preheat {args.preheat} leaves no kernel for a page under --max-kernels "
                        f"{args.max_kernels}")
    for flag, value in (("--disconnect-grace", args.disconnect_grace),
                        ("--unconnected-timeout", args.unconnected_timeout)):
        if not value > 0:
            problems.append(f"{flag} must be a positive number of seconds")
    nb = notebook_path(served_notebook(args))
    if not nb.is_file():
        problems.append(f"the {served_notebook(args)} notebook is not in this installation ({nb} is missing)")
    problems += _check_roster(args)
    lti_config = getattr(args, "lti_config", None)
    if lti_config is not None and not Path(lti_config).is_file():
        problems.append(f"--lti-config {lti_config}: no such file (pylti1p3's JSON tool config: docs/instructor.md)")
    if args.root is not None:
        root = Path(args.root)
        for sub in ("corpus", "golden"):
            if not (root / sub).is_dir():
                problems.append(f"--root {root}: no {sub}/ folder there")
    return problems


def _check_roster(args: argparse.Namespace) -> list[str]:
    """``--roster``: its names (kept in ``args.roster_names``), and the options it needs or excludes."""
    args.roster_names, args.link_expires = [], None
    if getattr(args, "roster", None) is None:
        return ["--link-expiry is for the student links of --roster"] if getattr(args, "link_expiry", None) else []
    import time

    from ..serving.roster import RosterError, parse_expiry, read_roster

    problems: list[str] = []
    try:
        names = read_roster(args.roster)
    except RosterError as exc:
        return [str(exc)]
    if args.read_only:  # the room: it tells the class to open their personal links, and gives none out
        args.roster_count = len(names)
        return problems
    if args.no_auth:
        problems.append("--roster binds each student's link to a name with a key: it cannot go with --no-auth")
    if not args.links_file:
        problems.append("--roster writes one link per student to --links-file FILE (never to the log): give it")
    args.roster_names = names
    if getattr(args, "link_expiry", None):
        try:
            args.link_expires = parse_expiry(args.link_expiry, time.time())
        except RosterError as exc:
            problems.append(str(exc))
    return problems


def _check_store(args: argparse.Namespace) -> str:
    """Create (or migrate) the store once, before any kernel opens it; check ``--dataset``; returns its location."""
    from ..store import open_store

    with open_store(args.db or None, read_only=args.read_only, create=not args.read_only) as store:
        if args.dataset:
            _check_dataset(args.dataset, store)
        return str(store.url)


def _check_dataset(name: str, store) -> None:
    from ..datasets import dataset_names

    known = dataset_names(store)
    if name not in known:
        raise ValueError(f"--dataset {name}: no such dataset (known: {', '.join(known)})")


def _give_links(args: argparse.Namespace, keys: dict[str, str], secret: str = "") -> None:
    """Print the links, or with ``--links-file`` write them there (owner-only) so no log ever holds a key."""
    lines = student_links(args, keys, secret) if getattr(args, "roster_names", None) else links(args, keys)
    if not lines:
        if served_notebook(args) == "playground" and not args.read_only:
            url = join_url(args.host, args.port, args.base_url)
            print(f"playground: a bookmark with a name: {url}?annotator=THEIR-NAME (a name, not a login)",
                  flush=True)
        return
    if args.links_file:
        from ..files import write_atomic

        target = Path(args.links_file)
        write_atomic(target, "".join(line + "\n" for line in lines))
        target.chmod(0o600)
        said = f" ({len(args.roster_names)} student links)" if getattr(args, "roster_names", None) else ""
        print(f"playground: the links (with their keys) are in the file given with --links-file{said}", flush=True)
        return
    for line in lines:
        print(f"playground: {line}", flush=True)
    token = keys.get("student")
    if served_notebook(args) == "playground" and not args.read_only and token:
        url = join_url(args.host, args.port, args.base_url, token)
        print(f"playground: a bookmark with a name: {url}&annotator=THEIR-NAME (a name, not a login)", flush=True)


def _announce(args: argparse.Namespace, where: str, keys: dict[str, str], sizing) -> None:
    name = served_notebook(args)
    print(f"playground: serving {name} at {join_url(args.host, args.port, args.base_url)}", flush=True)
    if args.read_only:  # the room is shown on a projector: no filesystem path on its screen or in its log
        print("playground: labels in the store given (read-only for students' labels)", flush=True)
    else:
        print(f"playground: labels in {where}", flush=True)
    if args.dataset:
        print(f"playground: dataset {args.dataset}", flush=True)
    print(f"playground: {sizing.describe()}", flush=True)
    if not is_loopback(args.host) and not keys:
        print("playground: WARNING: --no-auth: listening beyond this machine WITHOUT a token; anyone who can "
              "reach it can open the page and label under any name", file=sys.stderr, flush=True)
    print("playground: Ctrl-C stops the server", flush=True)


def _child_env(args: argparse.Namespace, env: dict[str, str], keys: dict[str, str], secret: str) -> dict[str, str]:
    """The server's environment: this one with ``env``, the role keys and the roster secret as ``serve`` decided
    them (none inherited from the shell, nor a roster flag or a bound name)."""
    child_env = {**os.environ, **resolve_env(os.environ, caller_folder()), **env}
    for role, name in KEY_ENVS.items():
        child_env.pop(name, None)
        if role in keys:
            child_env[name] = keys[role]
    for name in (ROSTER_SECRET_ENV, "PLAYGROUND_SIGNED_NAME"):
        child_env.pop(name, None)
    if args.roster is None or args.read_only:
        child_env.pop("PLAYGROUND_ROSTER", None)
        child_env.pop("PLAYGROUND_ROSTER_FILE", None)
    if args.roster is None:
        from ..ui.room_html import PERSONAL_LINKS_ENV

        child_env.pop(PERSONAL_LINKS_ENV, None)
    if secret:
        child_env[ROSTER_SECRET_ENV] = secret
    return child_env


def run_serve(args: argparse.Namespace) -> int:
    """Check, start the server, give out the links once a page is ready (``serve_run``), wait, stop."""
    resolve_paths(args, caller_folder())  # the kernels run in notebooks/: a path means where it was typed
    problems = _check(args)
    if problems:
        print("playground serve: cannot start:\n" + "\n".join(f"  {p}" for p in problems), file=sys.stderr)
        return 1
    sizing = plan_for(args)
    cmd, env = build_command(args, sizing)
    keys = role_keys(args)
    if args.print_command:
        _print_command(args, cmd, env, keys)
        return 0
    if not _port_free(args.host, args.port):
        print(f"playground serve: port {args.port} on {args.host} is in use; choose another with --port",
              file=sys.stderr)
        return 1
    from ..store import StoreError

    try:
        where = _check_store(args)
    except (StoreError, ValueError, OSError) as exc:
        print(f"playground serve: label store: {exc}", file=sys.stderr)
        return 1
    _announce(args, where, keys, sizing)
    secret = roster_secret() if args.roster is not None and not args.read_only else ""
    with tempfile.TemporaryDirectory(prefix="playground-serve-") as folder:
        reports = Path(folder) / "ready.jsonl"
        reports.touch(mode=0o600)
        child_env = _child_env(args, {**env, READY_FILE_ENV: str(reports)}, keys, secret)
        return _run_server(args, cmd, child_env, keys, secret, sizing.pool, reports)


def _print_command(args: argparse.Namespace, cmd: list[str], env: dict[str, str], keys: dict[str, str]) -> None:
    for k, v in sorted(env.items()):
        print(f"{k}={v}")
    for role in sorted(keys):
        print(f"{KEY_ENVS[role]}=(set: the {role} link's key)")
    if args.roster is not None and not args.read_only:
        print(f"{ROSTER_SECRET_ENV}=(set: signs the {len(args.roster_names)} student links)")
    print(" ".join(cmd))


def _run_server(args: argparse.Namespace, cmd: list[str], child_env: dict[str, str], keys: dict[str, str],
                secret: str, pool: int, reports: Path) -> int:
    """Start the server; give out the links once a page is ready, or stop it with the reason; then wait."""
    from . import serve_run

    proc = serve_run.start_server(cmd, child_env)
    termed: list[int] = []

    def on_term(signum, frame):  # a service manager's stop: shut Voila (and its kernels) down cleanly
        termed.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        status = serve_run.status_reader(_local_base(args), _auth_headers(keys))
        progress = serve_run.PoolProgress(pool, lambda line: print(f"playground: {line}", flush=True))
        found = serve_run.wait_until_ready(proc, reports, status, progress)
        if not found.ready:
            print(f"playground serve: stopped before giving out any link: {found.reason}", file=sys.stderr,
                  flush=True)
            serve_run.stop_server(proc)
            return 1
        _give_links(args, keys, secret)
        checked = "a page was built" if found.checked else "the server answers; no pool, so no page built ahead"
        print(f"playground: ready: give out the link now ({checked}; {found.seconds:.0f} s after the start)",
              flush=True)
        serve_run.follow_pool(proc, reports, status, progress)
        return proc.wait()
    except KeyboardInterrupt:
        serve_run.stop_server(proc, told=not termed)  # Ctrl-C in the terminal reached Voila too
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _local_base(args: argparse.Namespace) -> str:
    """The server's own address, as ``serve`` reaches it on this machine."""
    host = "127.0.0.1" if args.host in ("0.0.0.0", "", "localhost") else ("::1" if args.host == "::" else args.host)
    return join_url(host, args.port, args.base_url)


def _auth_headers(keys: dict[str, str]) -> dict[str, str]:
    return {"Authorization": f"token {keys['instructor']}"} if "instructor" in keys else {}
