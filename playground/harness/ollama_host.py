"""Where the Ollama server is: the host URL by the official client's rules, and whether it is this machine."""
from __future__ import annotations

import ipaddress
import os
import urllib.parse
from collections.abc import Mapping

__all__ = ["DEFAULT_HOST", "is_loopback", "parse_host", "resolve_host"]

DEFAULT_HOST = "http://127.0.0.1:11434"


def parse_host(host: str | None) -> str:
    """The base URL for ``host`` by the official client's rules (``ollama._client._parse_host``).

    ``None``/``""`` → ``http://127.0.0.1:11434``; ``host`` → ``http://host:11434``;
    ``host:port`` and ``:port`` (host 127.0.0.1) as written; ``http://host`` → port 80,
    ``https://host`` → port 443; IPv6 in brackets; a path is kept without its trailing ``/``.
    """
    text, port = (host or "").strip(), 11434
    scheme, _, hostport = text.partition("://")
    if not hostport:
        scheme, hostport = "http", text
    elif scheme == "http":
        port = 80
    elif scheme == "https":
        port = 443
    split = urllib.parse.urlsplit(f"{scheme}://{hostport}")
    name = split.hostname or "127.0.0.1"
    port = split.port or port
    try:
        if isinstance(ipaddress.ip_address(name), ipaddress.IPv6Address):
            name = f"[{name}]"
    except ValueError:
        pass
    path = split.path.strip("/")
    return f"{scheme}://{name}:{port}/{path}" if path else f"{scheme}://{name}:{port}"


def resolve_host(configured: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The Ollama URL a run uses: the configuration's ``ollama.host``, else ``$OLLAMA_HOST``, else the default."""
    env = os.environ if environ is None else environ
    return parse_host(configured or env.get("OLLAMA_HOST") or None)


def is_loopback(host: str) -> bool:
    """``host`` (a URL or ``host[:port]``) is this machine: ``localhost``, no name, or a loopback address."""
    netloc = urllib.parse.urlsplit(host if "://" in host else f"http://{host}").hostname or ""
    if netloc in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(netloc).is_loopback
    except ValueError:
        return False
