"""Voila's page templates compiled once per server, not once per page.

Voila builds a new :class:`voila.exporter.VoilaExporter` for every page (for
every preheated kernel, and for every page opened from a cold kernel), and each
exporter has its own Jinja environment: the lab template and everything it
includes (``index.html.j2``, ``base.html.j2``, nbconvert's ``lab`` and
``base`` cell templates, their macros) were lexed, parsed and compiled to Python
again for every page.  Measured on the project's 2-core machine that is about
0.5 s of the server's one event loop per page against 0.03 s for rendering the
same page with compiled templates: thirty students arriving at once waited for
thirty compilations in a row.

:class:`CompiledOnceExporter` gives every exporter's environment one shared
Jinja bytecode cache (:class:`MemoryBytecodeCache`).  Jinja keys a compiled
template by its name, its file and a checksum of its source, so a template
changed on disk is compiled again, and each page is still rendered from its
own notebook, with its own kernel id and its own cell outputs: only the
compiled template code is shared, never a rendered page.

:func:`install` points Voila's notebook renderer at the exporter (the server
calls it once, before it starts).
"""
from __future__ import annotations

import threading
from typing import Any

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket
from voila.exporter import VoilaExporter

__all__ = ["SHARED_CACHE", "CompiledOnceExporter", "MemoryBytecodeCache", "install"]


class MemoryBytecodeCache(BytecodeCache):
    """Jinja bytecode in memory, keyed by Jinja's bucket key (template name and file) and whether the
    environment renders asynchronously (the two compile to different code)."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self.compiled = 0  # buckets written: templates compiled (a test counts them)

    def get_bucket(self, environment: Any, name: str, filename: str | None, source: str) -> Bucket:
        key = f"{'async' if environment.is_async else 'sync'}:{self.get_cache_key(name, filename)}"
        bucket = Bucket(environment, key, self.get_source_checksum(source))
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        with self._lock:
            data = self._code.get(bucket.key)
        bucket.reset()
        if data is not None:
            bucket.bytecode_from_string(data)  # checks the source checksum: a changed template is compiled again

    def dump_bytecode(self, bucket: Bucket) -> None:
        with self._lock:
            self._code[bucket.key] = bucket.bytecode_to_string()
            self.compiled += 1

    def clear(self) -> None:
        with self._lock:
            self._code.clear()


#: The cache every :class:`CompiledOnceExporter` of this process shares.
SHARED_CACHE = MemoryBytecodeCache()


class CompiledOnceExporter(VoilaExporter):
    """Voila's exporter whose Jinja environment reads compiled templates from :data:`SHARED_CACHE`."""

    def _create_environment(self) -> Any:
        environment = super()._create_environment()
        environment.bytecode_cache = SHARED_CACHE
        return environment


def install() -> None:
    """Make Voila's notebook renderer (``voila.notebook_renderer``) build :class:`CompiledOnceExporter`."""
    import voila.notebook_renderer

    voila.notebook_renderer.VoilaExporter = CompiledOnceExporter
