"""The dates of kernel messages read with the standard library's ISO 8601 parser, not dateutil's.

The server reads every message every kernel sends, twice or more (Voila's renderer, jupyter_server's activity
watch, a page's websocket), and jupyter_client's ``Session.deserialize`` turns the ``date`` of each header and
parent header into a ``datetime`` with ``dateutil.parser.isoparse``.  Profiled with py-spy while thirty pages
opened at once (``bench/bench_class.py --at-once``, 2026-12-02), that date parsing was 17 % of the server
process's samples.  :func:`iso_datetime` parses the same strings with :meth:`datetime.fromisoformat` (a
C function), and falls back on dateutil for anything it refuses; jupyter_client only calls it on strings its
own pattern ``ISO8601_PAT`` has matched (``YYYY-MM-DDTHH:MM:SS[.ffffff][Z|±HH[:]MM]``).  The result is the same
instant with the same UTC offset; a ``Z`` gives ``timezone.utc`` where dateutil gave its ``tzutc()``, which
compare and print alike.

:func:`install` puts it in ``jupyter_client.jsonutil`` (the server calls it once, before it starts).
"""
from __future__ import annotations

from datetime import datetime

from dateutil.parser import isoparse  # type: ignore[import-untyped]

__all__ = ["install", "iso_datetime"]


def iso_datetime(text: str) -> datetime:
    """``text`` (an ISO 8601 timestamp) as a ``datetime``: :meth:`datetime.fromisoformat`, else dateutil's."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return isoparse(text)


def install() -> None:
    """Make jupyter_client's ``parse_date`` (every message's header dates) use :func:`iso_datetime`."""
    import jupyter_client.jsonutil

    jupyter_client.jsonutil._dateutil_parse = iso_datetime
