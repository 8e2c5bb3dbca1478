"""Files written whole or not at all, with the permissions of any other file the user creates.

:func:`write_atomic` is the one write-to-a-temporary-file-then-rename of the
project (exports, ``--write-ids``, imported data set files, run reports and
checkpoints, the notebook cache); :func:`write_all_atomic` does the same for a
group of files that belong together (an export and its side tables).

The rule, for a target ``folder/name``:

1. the data is encoded first (text as UTF-8, no newline translation: ``"\\r\\n"``
   and U+2028 are written as given), so an unencodable text fails before any file
   exists;
2. a new temporary file ``folder/.name.<pid>-<n>.tmp`` is created exclusively
   (``O_CREAT | O_EXCL``; ``n`` a per-process counter, so two threads or two
   processes never share one) in the target's own folder, so the rename below
   stays on one file system;
3. the data is written, flushed and fsynced;
4. ``os.replace`` renames it over the target: a reader sees the old file or the
   new one, never a half-written one;
5. on any failure (``KeyboardInterrupt`` included) the temporary file is removed
   and the target is left as it was.

Permissions: a shared file (the default) gets ``0o666 & ~umask`` — usually
``0644`` — like a file made by any program.  The umask is not read: the
temporary file is created with ``os.open(..., 0o666)`` and the kernel applies the
process's umask (and a folder's default ACL) itself, as it does for every new
file.  Reading the umask in Python means setting it (``os.umask`` returns the old
value only in exchange for a new one), and the umask is process-wide, so another
thread creating a file at that moment would get the wrong mode; reading it once at
import would miss a later change.  ``private=True`` gives exactly ``0o600``
(created so, then ``fchmod`` so that an unusual umask cannot make it ``0o400``):
for per-user caches.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Mapping
from pathlib import Path

__all__ = ["PRIVATE_MODE", "SHARED_MODE", "write_all_atomic", "write_atomic"]

SHARED_MODE = 0o666
"""The mode asked for a shared file; the kernel takes the umask off (``0o644`` under umask ``022``)."""
PRIVATE_MODE = 0o600
"""The exact mode of a file written with ``private=True`` (read and write for its owner only)."""

_counter = itertools.count()
_counter_lock = threading.Lock()
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_ATTEMPTS = 1000  # names are unique per process; only stale files of a crashed process with the same pid collide


def _encode(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def _create_temp(path: Path, private: bool) -> tuple[int, Path]:
    """An open descriptor and the name of a new, empty temporary file beside ``path``."""
    for _ in range(_ATTEMPTS):
        with _counter_lock:
            n = next(_counter)
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{n}.tmp")
        try:
            fd = os.open(tmp, _FLAGS, PRIVATE_MODE if private else SHARED_MODE)
        except FileExistsError:
            continue
        if private:
            try:
                os.fchmod(fd, PRIVATE_MODE)
            except BaseException:
                os.close(fd)
                _remove(tmp)
                raise
        return fd, tmp
    raise FileExistsError(f"{path}: no free temporary name beside it after {_ATTEMPTS} tries")


def _write_temp(path: Path, blob: bytes, private: bool) -> Path:
    """A temporary file beside ``path`` holding ``blob``, flushed and fsynced (removed again on failure)."""
    fd, tmp = _create_temp(path, private)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        _remove(tmp)
        raise
    return tmp


def _remove(tmp: Path) -> None:
    # best effort: a failure to clean up must not hide the error that made us clean up
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *, private: bool = False) -> None:
    """Write ``data`` to ``path`` whole or not at all (the rule and the mode in the module docstring).

    The folder must exist (the caller makes it); text is UTF-8 with no newline
    translation; the mode is ``0o666 & ~umask``, or exactly ``0o600`` with
    ``private=True``.
    """
    target = Path(path)
    tmp = _write_temp(target, _encode(data), private)
    try:
        os.replace(tmp, target)
    except BaseException:
        _remove(tmp)
        raise


def write_all_atomic(files: Mapping[Path, bytes | str] | Mapping[str, bytes | str], *, private: bool = False) -> None:
    """Write every file as :func:`write_atomic` does, renaming only once all are written.

    If any encoding or write fails, no target is touched and every temporary file
    is removed.  The renames themselves follow one another (POSIX has no rename
    of several files at once), in the order of ``files``.
    """
    blobs = [(Path(p), _encode(d)) for p, d in files.items()]
    temps: list[tuple[Path, Path]] = []
    try:
        for target, blob in blobs:
            temps.append((_write_temp(target, blob, private), target))
        for tmp, target in temps:
            os.replace(tmp, target)
    finally:
        for tmp, _target in temps:
            _remove(tmp)
