"""Local models through Ollama: one cached, seeded, bounded-retry gateway.

Everything the harness asks a model goes through :class:`OllamaModels`:

* ``chat(model, messages, options, format)`` -> the assistant's text;
* ``embed(model, texts)`` -> one vector per text.

This module holds the gateway; its parts have a module each and every public
name is importable from here too: :mod:`~playground.harness.model_cache` (the
cache and its key), :mod:`~playground.harness.model_errors` (the one-line
errors), :mod:`~playground.harness.model_names` (when two names are one model)
and :mod:`~playground.harness.ollama_host` (the server's URL).

Both go through a :class:`ModelCache` (a SQLite file).  The cache key is the
SHA-256 of the canonical JSON (sorted keys, no spaces, UTF-8) of::

    chat:  {"kind": "chat",  "model": m, "messages": [...], "options": {...}, "format": f}
    embed: {"kind": "embed", "model": m, "input": "<one text>", "options": {...}}

``format`` is ``null`` for free text, ``"json"`` or the JSON schema dict the
judge asks for (it changes the output, so it is part of the key).  Embeddings
are cached one text at a time, so adding a passage to the corpus embeds only
that passage.  The value is the canonical JSON of the result (``{"content":
text}`` for chat, the vector for embed); a re-run with the same inputs is
served entirely from the file, reproduces byte-identical results and sends no
request.  ``hits``/``misses`` are counted for the run report.

**Repeats** (an LLM judge rerun K times to measure how often its verdicts
flip, :mod:`playground.calibrate.repeats`): ``chat(..., repeat=r)`` with
``r >= 1`` sends the seed ``seed + r`` and adds ``"repeat": r`` to the cache
key's JSON, so a cached first run never makes a rerun identical and each rerun
is cached on its own (a second ``--repeats`` run is served from the file).
``repeat=0`` is the ordinary call: its key is unchanged.

Chat options always carry ``temperature: 0``, a fixed ``seed`` (42) and
``num_ctx: 8192`` (Ollama's smaller default context would silently cut the
passages off a long prompt) unless the configuration overrides them.

Failures become one-line :class:`ModelError` messages that name the fix:

==========================  ===============================================  ==========
what happened               error                                            retried?
==========================  ===============================================  ==========
connection refused          :class:`OllamaUnavailable` (``ollama serve``)    no
HTTP 404                    :class:`ModelNotFound` (``ollama pull <model>``) no
HTTP 400 / other 4xx        :class:`ModelError` (bad request)                no
HTTP 5xx, connection reset  :class:`ModelError` after the last attempt       yes, 3x
read timeout                :class:`ModelTimeout` (raise the timeout)        yes, 1x
==========================  ===============================================  ==========

Retries back off exponentially (0.5 s, 1 s, 2 s); timeouts are retried only
once because the usual cause on a laptop is a cold model load, and waiting
four full timeouts before telling the user helps nobody.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import httpx
import ollama

from .model_cache import DEFAULT_CACHE_RELPATH, ModelCache, cache_key, canonical_json, sha256_hex
from .model_errors import (
    CacheMiss,
    JudgeOutputError,
    ModelError,
    ModelNotFound,
    ModelTimeout,
    OllamaUnavailable,
    seconds_text,
)
from .model_names import normalize_model_name, same_model
from .ollama_host import DEFAULT_HOST, is_loopback, parse_host, resolve_host

__all__ = [
    "DEFAULT_CACHE_RELPATH", "DEFAULT_EMBED_MODEL", "DEFAULT_GENERATOR_MODEL", "DEFAULT_HOST",
    "DEFAULT_JUDGE_MODEL", "DEFAULT_NUM_CTX", "DEFAULT_SEED", "DEFAULT_TEMPERATURE", "DEFAULT_TIMEOUT", "CacheMiss",
    "JudgeOutputError", "ModelCache", "ModelError", "ModelNotFound", "ModelTimeout", "OllamaModels",
    "OllamaUnavailable", "cache_key", "canonical_json", "normalize_model_name", "parse_host", "resolve_host",
    "same_model", "sha256_hex",
]


DEFAULT_TIMEOUT = 60.0
DEFAULT_SEED = 42
DEFAULT_TEMPERATURE = 0.0
#: Ollama's own default context (2048 tokens on many installs) silently cuts a
#: prompt with five passages; 8192 fits the harness prompts on a laptop.
DEFAULT_NUM_CTX = 8192
DEFAULT_GENERATOR_MODEL = "qwen2.5:7b"
DEFAULT_JUDGE_MODEL = "llama3.1:8b"
DEFAULT_EMBED_MODEL = "nomic-embed-text"


# --------------------------------------------------------------------------- client


class _Transient(Exception):
    """Internal: a failure worth another attempt (carries the error to raise at the end)."""

    def __init__(self, error: ModelError, timeout: bool = False):
        super().__init__(str(error))
        self.error = error
        self.timeout = timeout


class OllamaModels:
    """The gateway to a local Ollama server: cached, seeded, bounded retries.

    ``client`` may be given (anything with the ``ollama.Client`` methods);
    otherwise one is built for ``host`` with ``timeout`` seconds.  ``sleep`` is
    injectable so tests do not wait for the backoff.  With ``cache_only`` a
    call missing from the cache raises :class:`CacheMiss` instead of reaching
    for a server (replaying a committed cache in CI).
    """

    def __init__(
        self,
        host: str = DEFAULT_HOST,
        timeout: float | None = DEFAULT_TIMEOUT,
        cache: ModelCache | None = None,
        *,
        seed: int = DEFAULT_SEED,
        temperature: float = DEFAULT_TEMPERATURE,
        num_ctx: int | None = DEFAULT_NUM_CTX,
        max_retries: int = 3,
        timeout_retries: int = 1,
        backoff: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        client: Any = None,
        cache_only: bool = False,
    ):
        self.host = host
        self.timeout = timeout
        self.cache = cache
        self.seed = seed
        self.temperature = temperature
        self.num_ctx = num_ctx
        self.max_retries = max_retries
        self.timeout_retries = min(timeout_retries, max_retries)
        self.backoff = backoff
        self.sleep = sleep
        self.cache_only = cache_only
        #: Requests actually sent to the server (attempts, retries included).
        self.requests = 0
        #: Of those, how many were retries after a transient failure.
        self.retries = 0
        if client is None:
            kwargs: dict[str, Any] = {"host": host, "timeout": timeout}
            if is_loopback(host):
                # A corporate HTTP(S)_PROXY must not swallow requests to the local server.
                kwargs["trust_env"] = False
            client = ollama.Client(**kwargs)
        self.client = client

    @classmethod
    def from_config(cls, config: Any, cache: ModelCache | None = None, **kwargs: Any) -> OllamaModels:
        """Build from the ``ollama`` section of a harness config: ``{host, timeout, seed[, num_ctx]}``.

        A missing or null ``host`` means ``$OLLAMA_HOST``, else the default (:func:`resolve_host`).
        """
        section = config["ollama"]
        return cls(
            host=resolve_host(section.get("host")),
            timeout=section.get("timeout", DEFAULT_TIMEOUT),
            seed=section.get("seed", DEFAULT_SEED),
            num_ctx=section.get("num_ctx", DEFAULT_NUM_CTX),
            cache=cache,
            **kwargs,
        )

    # -- options ------------------------------------------------------------------

    def effective_options(self, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Generation options: ``temperature``, ``seed`` and ``num_ctx`` defaults, overridden by ``options``."""
        merged: dict[str, Any] = {"temperature": self.temperature, "seed": self.seed}
        if self.num_ctx is not None:
            merged["num_ctx"] = self.num_ctx
        merged.update(dict(options or {}))
        return merged

    def stats(self) -> dict[str, int]:
        """For the run report: cache hits/misses, requests sent, retries."""
        return {
            "cache_hits": self.cache.hits if self.cache else 0,
            "cache_misses": self.cache.misses if self.cache else 0,
            "requests": self.requests,
            "retries": self.retries,
        }

    # -- calls ---------------------------------------------------------------------

    def chat(
        self,
        model: str,
        messages: Sequence[Mapping[str, str]],
        options: Mapping[str, Any] | None = None,
        format: Any = None,
        repeat: int = 0,
    ) -> str:
        """The assistant's reply to ``messages`` (cached; temperature 0 and seed by default); ``repeat`` r >= 1:
        the r-th rerun of the same call, with the seed ``seed + r`` and its own cache entry (module docstring)."""
        if repeat < 0:
            raise ValueError(f"repeat must be 0 or more, got {repeat}")
        msgs = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
        opts = self.effective_options(options)
        if repeat and isinstance(opts.get("seed"), int):
            opts["seed"] = opts["seed"] + repeat
        key = cache_key("chat", model, msgs, opts, format, repeat)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return str(hit["content"])
        if self.cache_only:
            raise CacheMiss("chat", model, str(self.cache.path if self.cache else "(none)"))

        def call() -> str:
            response = self.client.chat(model=model, messages=msgs, options=opts, format=format, stream=False)
            content = response["message"]["content"]
            if not isinstance(content, str):
                raise ModelError(
                    f"Ollama at {self.host} sent a chat reply without text for '{model}'",
                    "check the server version (`ollama --version`)",
                )
            return content

        content = str(self._with_retries(model, call))
        if self.cache is not None:
            request = {"kind": "chat", "model": model, "messages": msgs, "options": opts, "format": format,
                       **({"repeat": repeat} if repeat else {})}
            self.cache.put(key, "chat", model, request, {"content": content})
        return content

    def embed(self, model: str, texts: Sequence[str], options: Mapping[str, Any] | None = None) -> list[list[float]]:
        """One vector per text; texts already in the cache are not sent again."""
        texts = [str(t) for t in texts]
        opts = dict(options or {})
        keys = [cache_key("embed", model, t, opts) for t in texts]
        found: dict[str, list[float]] = {}
        missing: list[str] = []
        for text, key in zip(texts, keys, strict=True):
            if key in found or text in missing:
                continue
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None:
                found[key] = [float(x) for x in hit]
            else:
                missing.append(text)
        if missing:
            if self.cache_only:
                raise CacheMiss("embed", model, str(self.cache.path if self.cache else "(none)"))

            def call() -> list[list[float]]:
                response = self.client.embed(model=model, input=missing, options=opts or None)
                vectors = [[float(x) for x in v] for v in response["embeddings"]]
                if len(vectors) != len(missing):
                    raise ModelError(
                        f"Ollama returned {len(vectors)} embeddings for {len(missing)} texts from '{model}'",
                        "check that the model is an embedding model (e.g. nomic-embed-text)",
                    )
                return vectors

            vectors = self._with_retries(model, call)
            for text, vector in zip(missing, vectors, strict=True):
                key = cache_key("embed", model, text, opts)
                if self.cache is not None:
                    self.cache.put(
                        key, "embed", model, {"kind": "embed", "model": model, "input": text, "options": opts}, vector
                    )
                found[key] = vector
        return [list(found[k]) for k in keys]

    # -- preflight -----------------------------------------------------------------

    def preflight(self, models: Iterable[str]) -> None:
        """Before any work: the server answers and every model is pulled (one-line error otherwise).

        Raises :class:`OllamaUnavailable` or :class:`ModelNotFound` naming
        *every* missing model.  Not cached, not retried.
        """
        wanted = list(dict.fromkeys(m for m in models if m))
        try:
            listed = self.client.list()
            pulled = {normalize_model_name(m["model"] or "") for m in listed["models"]}
        except httpx.TimeoutException:
            raise ModelError(
                f"Ollama at {self.host} did not answer within {seconds_text(self.timeout)}",
                "check that `ollama serve` is running and responsive, or raise --timeout",
            ) from None
        except Exception as exc:
            raise self._final(exc, model="") from None
        missing: list[str] = []
        for model in wanted:
            if normalize_model_name(model) in pulled:
                continue
            try:  # the server resolves names the list spells differently
                self.client.show(model)
            except ollama.ResponseError as exc:
                if exc.status_code == 404:
                    missing.append(model)
                    continue
                raise self._final(exc, model=model) from None
            except Exception as exc:
                raise self._final(exc, model=model) from None
        if missing:
            raise ModelNotFound(missing)

    # -- internals -----------------------------------------------------------------

    def _with_retries(self, model: str, call: Callable[[], Any]) -> Any:
        attempt = 0
        timeouts = 0
        while True:
            self.requests += 1
            try:
                return call()
            except ModelError:
                raise
            except Exception as exc:
                error = self._translate(exc, model=model)
                if not isinstance(error, _Transient):
                    raise error from None
                if error.timeout:
                    timeouts += 1
                    if timeouts > self.timeout_retries:
                        raise error.error from None
                if attempt >= self.max_retries:
                    raise error.error from None
                self.sleep(self.backoff * (2**attempt))
                attempt += 1
                self.retries += 1

    def _final(self, exc: BaseException, model: str) -> ModelError:
        error = self._translate(exc, model=model)
        return error.error if isinstance(error, _Transient) else error

    def _translate(self, exc: BaseException, model: str) -> ModelError | _Transient:
        """Map a client exception to a one-line error, or to ``_Transient`` (retry)."""
        if isinstance(exc, ollama.ResponseError):
            status = exc.status_code
            detail = str(exc.error).strip().splitlines()[0] if str(exc.error).strip() else "no detail"
            if status == 404 and model and "page not found" not in detail:
                return ModelNotFound(model)
            if status == 404:  # the endpoint itself is missing: not Ollama, or a very old one
                return ModelError(
                    f"Ollama at {self.host} answered 404 ({detail})",
                    "check ollama.host in the config (or $OLLAMA_HOST, --ollama-host) and update Ollama "
                    "(https://ollama.com/download)",
                )
            if status >= 500:
                return _Transient(
                    ModelError(
                        f"Ollama failed on '{model}' (HTTP {status}: {detail})",
                        "see the Ollama server log; if the model does not fit in memory, use a smaller one",
                    )
                )
            return ModelError(
                f"Ollama rejected the request to '{model}' (HTTP {status}: {detail})",
                "check the model name and generation.options in the config",
            )
        if isinstance(exc, httpx.ConnectTimeout):
            return OllamaUnavailable(self.host)
        if isinstance(exc, httpx.TimeoutException):
            return _Transient(ModelTimeout(model, self.timeout), timeout=True)
        if isinstance(exc, ConnectionError) and not isinstance(
            exc, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)
        ):
            # The client raises the built-in ConnectionError when nothing listens.
            return OllamaUnavailable(self.host)
        if isinstance(exc, (httpx.TransportError, ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):
            return _Transient(
                ModelError(
                    f"the connection to Ollama at {self.host} broke while '{model}' was answering "
                    f"({type(exc).__name__})",
                    "check that `ollama serve` is still running, then rerun with --resume",
                )
            )
        if isinstance(exc, (ValueError, KeyError, TypeError)):  # undecodable body, pydantic validation, ...
            return ModelError(
                f"Ollama at {self.host} sent a reply the client could not read ({type(exc).__name__})",
                "check that ollama.host (or $OLLAMA_HOST, --ollama-host) points at an Ollama server that is up to date",
            )
        raise exc
