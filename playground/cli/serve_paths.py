"""Paths given to ``playground serve`` mean what they meant where they were typed.

``serve`` hands its settings to a Voila server whose kernels run the notebooks in ``notebooks/`` (Voila's
``root_dir``), not in the folder the command was typed in: a relative ``--db labels.db`` reached every kernel
as ``notebooks/labels.db`` and no page could open its store (issue 42.1).  So, before anything is started:

* ``--db`` is resolved against the caller's working folder (:func:`resolve_store`): a plain path or a
  ``sqlite:`` URL with a relative path becomes an absolute path (``~`` expanded); a ``postgresql://`` (or
  ``postgres://``) URL is a network address and is left as it is; anything else with ``://`` is left for the
  store to refuse with its own message;
* ``--root``, ``--roster`` and ``--links-file`` become absolute paths (:func:`resolve_paths`);
* the path settings a kernel reads from its environment, :data:`PATH_ENVS`, when inherited from the shell
  with a relative value, are resolved the same way (:func:`resolve_env`).

Every other command opens its files in its own process, in the caller's folder, so a relative path there
already means what it says.
"""
from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["NETWORK_SCHEMES", "PATH_ENVS", "STORE_ENV", "caller_folder", "resolve_env", "resolve_paths",
           "resolve_store"]

#: A store URL with one of these schemes names a server, not a file: it is passed on unchanged.
NETWORK_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")
#: The label store's environment variable.
STORE_ENV = "PLAYGROUND_DB"
#: Environment variables a page's kernel reads as file or folder paths (besides :data:`STORE_ENV`).
PATH_ENVS = ("PLAYGROUND_ROOT", "PLAYGROUND_HARNESS_RUN", "PLAYGROUND_CALIBRATE_RUN", "PLAYGROUND_RAGTRUTH",
             "PLAYGROUND_CACHE")


def _absolute(path: str, cwd: Path) -> str:
    """``path`` with ``~`` expanded, made absolute against ``cwd`` (no symlink resolved: the name stays the
    user's)."""
    expanded = Path(path).expanduser()
    return str(expanded if expanded.is_absolute() else cwd / expanded)


def resolve_store(location: str | None, cwd: Path) -> str | None:
    """The store ``location`` as the caller meant it from ``cwd``: ``None`` and network URLs unchanged,
    ``labels.db`` → ``/cwd/labels.db``, ``sqlite:rel.db`` / ``sqlite://rel.db`` → ``sqlite:////cwd/rel.db``,
    ``sqlite:///abs.db`` unchanged."""
    if location is None or not str(location).strip():
        return location
    text = str(location).strip()
    lower = text.lower()
    if lower.startswith(NETWORK_SCHEMES):
        return text
    if lower.startswith("sqlite:"):
        rest = text[len("sqlite:"):]
        if rest.startswith("//"):
            rest = rest[2:]
        if rest.startswith("//"):
            rest = rest[1:]
        return f"sqlite:///{_absolute(rest, cwd).lstrip('/')}" if rest else text
    if "://" in text:
        return text  # not a store the project knows: open_store names the problem
    return _absolute(text, cwd)


def resolve_paths(args: argparse.Namespace, cwd: Path) -> None:
    """Make ``args.db`` (:func:`resolve_store`), ``args.root``, ``args.roster`` and ``args.links_file``
    absolute against ``cwd``, in place."""
    args.db = resolve_store(args.db, cwd)
    for name in ("root", "roster", "links_file"):
        value = getattr(args, name, None)
        if value is not None and str(value).strip():
            resolved = _absolute(str(value), cwd)
            setattr(args, name, Path(resolved) if isinstance(value, Path) else resolved)


def resolve_env(environ: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """The entries of :data:`STORE_ENV` and :data:`PATH_ENVS` in ``environ`` whose value changes when resolved
    against ``cwd`` (to be laid over the environment a kernel inherits)."""
    changed: dict[str, str] = {}
    store = environ.get(STORE_ENV, "")
    if store.strip():
        resolved = resolve_store(store, cwd)
        if resolved is not None and resolved != store:
            changed[STORE_ENV] = resolved
    for name in PATH_ENVS:
        value = environ.get(name, "")
        if value.strip() and _absolute(value, cwd) != value:
            changed[name] = _absolute(value, cwd)
    return changed


def caller_folder() -> Path:
    """The folder the command was typed in (``$PWD`` when it names the working folder, keeping the user's
    symlinked spelling; else :func:`os.getcwd`)."""
    here = os.getcwd()
    pwd = os.environ.get("PWD", "")
    try:
        if pwd and os.path.samefile(pwd, here):
            return Path(pwd)
    except OSError:
        pass
    return Path(here)
