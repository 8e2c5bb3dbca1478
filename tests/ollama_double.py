"""A protocol-level test double of Ollama's REST API (no model, stdlib only).

It speaks the endpoints the official ``ollama`` client uses — ``POST
/api/chat``, ``POST /api/generate``, ``POST /api/embed`` (and the legacy
``/api/embeddings``), ``GET /api/tags`` (``Client.list``), ``POST /api/show``,
``GET /api/version`` and ``GET /`` — with the JSON shapes a real server sends,
on ``127.0.0.1`` and a free port, in a background thread.

Scriptable behaviour:

* ``models``: the pulled models; any other name gets a 404
  ``{"error": "model \\"x\\" not found, try pulling it first"}`` like Ollama;
* ``chat_reply(request) -> str``: the assistant content for a chat request
  (default: a deterministic cited sentence derived from the request);
* embeddings: a deterministic hashed bag of words (``dim`` buckets, L2-normed);
* ``delay``: seconds to wait before answering model calls (timeouts);
* ``fail_next(status, times, path)``: answer the next matching requests with an
  HTTP error (e.g. 500 once, then OK) or ``"drop"`` the connection unanswered;
* ``requests``: the log of every request (method, path, parsed body), with
  :meth:`count` to count calls by path and model.

Like Ollama, a chat/generate request without ``"stream": false`` is answered
as a stream of NDJSON lines; the client sends ``stream: false`` for
non-streaming calls, and the log lets tests check that.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_CALL_PATHS = ("/api/chat", "/api/generate", "/api/embed", "/api/embeddings")
_CREATED = "2024-01-01T00:00:00Z"
_WORD = re.compile(r"[a-z0-9]+")


def normalize(name: str) -> str:
    name = name.strip().lower()
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


def fake_embedding(text: str, dim: int = 64) -> list[float]:
    """Hashed bag of words: each word adds ±1 to one bucket; L2-normalised, 6 decimals."""
    vec = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vec[int.from_bytes(digest[:4], "big") % dim] += 1.0 if digest[4] % 2 == 0 else -1.0
    norm = math.sqrt(sum(x * x for x in vec))
    return [round(x / norm, 6) for x in vec] if norm else vec


def default_chat_reply(request: dict[str, Any]) -> str:
    """A deterministic, cited answer that depends on the whole request."""
    digest = hashlib.sha256(json.dumps(request.get("messages"), sort_keys=True).encode()).hexdigest()[:8]
    return f"According to the passages, the answer is documented [1]. Reference {digest}."


@dataclass
class LoggedRequest:
    method: str
    path: str
    body: Any

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None


@dataclass
class _Failure:
    status: int | str
    times: int
    path: str | None
    message: str | None = None


class OllamaDouble:
    """Start with ``with OllamaDouble() as double:``; ``double.host`` is its URL."""

    def __init__(
        self,
        models: tuple[str, ...] | list[str] = ("qwen2.5:7b", "llama3.1:8b", "nomic-embed-text"),
        chat_reply: Callable[[dict[str, Any]], str] | None = None,
        dim: int = 64,
        delay: float = 0.0,
    ):
        self.models: set[str] = {normalize(m) for m in models}
        self.chat_reply = chat_reply or default_chat_reply
        self.dim = dim
        self.delay = delay
        self.requests: list[LoggedRequest] = []
        self._failures: list[_Failure] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- control ------------------------------------------------------------------

    def start(self) -> OllamaDouble:
        double = self

        class Handler(_Handler):
            owner = double

        server = _Server(("127.0.0.1", 0), Handler)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OllamaDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "the double is not running"
        return self._server.server_address[1]

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fail_next(
        self, status: int | str = 500, times: int = 1, path: str | None = None, message: str | None = None
    ) -> None:
        """Answer the next ``times`` requests (to ``path``, if given) with ``status`` or ``"drop"``.

        The error body is ``{"error": message}`` (default ``"injected failure <status>"``).
        """
        with self._lock:
            self._failures.append(_Failure(status, times, path, message))

    def add_model(self, name: str) -> None:
        with self._lock:
            self.models.add(normalize(name))

    def remove_model(self, name: str) -> None:
        with self._lock:
            self.models.discard(normalize(name))

    def count(self, path: str | None = None, model: str | None = None) -> int:
        """Requests logged so far to ``path`` (default: any model call) for ``model`` (default: any)."""
        with self._lock:
            return sum(
                1
                for r in self.requests
                if (r.path == path if path else r.path in MODEL_CALL_PATHS)
                and (model is None or (r.model and normalize(r.model) == normalize(model)))
            )

    def bodies(self, path: str) -> list[Any]:
        with self._lock:
            return [r.body for r in self.requests if r.path == path]

    # -- used by the handler -------------------------------------------------------

    def _log(self, method: str, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append(LoggedRequest(method, path, body))

    def _take_failure(self, path: str) -> _Failure | None:
        with self._lock:
            for failure in self._failures:
                if failure.path is None or failure.path == path:
                    failure.times -= 1
                    if failure.times <= 0:
                        self._failures.remove(failure)
                    return failure
        return None

    def _known(self, name: str) -> bool:
        with self._lock:
            return normalize(name) in self.models

    def _wait(self) -> None:
        if self.delay > 0:
            self._stopping.wait(self.delay)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is expected here; stay quiet.
        pass


class _Handler(BaseHTTPRequestHandler):
    owner: OllamaDouble
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- plumbing -----------------------------------------------------------------

    def _send_json(self, status: int, payload: Any, content_type: str = "application/json; charset=utf-8") -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_ndjson(self, lines: list[dict[str, Any]]) -> None:
        data = b"".join(json.dumps(line).encode("utf-8") + b"\n" for line in lines)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send_json(status, {"error": message})

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except ValueError:
            return {"__invalid__": raw.decode("utf-8", "replace")}

    def _begin(self, method: str) -> tuple[str, Any] | None:
        path = self.path.split("?", 1)[0]
        body = self._read_body() if method == "POST" else None
        self.owner._log(method, path, body)
        failure = self.owner._take_failure(path)
        if failure is not None and failure.status == "drop":
            self.close_connection = True
            return None
        if failure is not None:
            self._error(int(failure.status), failure.message or f"injected failure {failure.status}")
            return None
        if isinstance(body, dict) and "__invalid__" in body:
            self._error(400, "invalid character in request body")
            return None
        return path, body

    # -- routes -------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        begun = self._begin("GET")
        if begun is None:
            return
        path, _ = begun
        if path == "/":
            data = b"Ollama is running"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif path == "/api/version":
            self._send_json(200, {"version": "0.0.0-double"})
        elif path == "/api/tags":
            with self.owner._lock:
                names = sorted(self.owner.models)
            self._send_json(200, {"models": [_model_entry(n) for n in names]})
        else:
            self._error(404, "404 page not found")

    def do_POST(self) -> None:
        begun = self._begin("POST")
        if begun is None:
            return
        path, body = begun
        if path not in ("/api/chat", "/api/generate", "/api/embed", "/api/embeddings", "/api/show"):
            self._error(404, "404 page not found")
            return
        model = body.get("model") or body.get("name") or ""
        if not model:
            self._error(400, "model is required")
            return
        if not self.owner._known(model):
            if path == "/api/show":
                self._error(404, f"model '{model}' not found")
            else:
                self._error(404, f'model "{model}" not found, try pulling it first')
            return
        if path == "/api/show":
            self._send_json(200, _show(model))
            return
        self.owner._wait()
        if path == "/api/chat":
            self._chat(model, body)
        elif path == "/api/generate":
            self._generate(model, body)
        elif path == "/api/embed":
            inputs = body.get("input", "")
            texts = [inputs] if isinstance(inputs, str) else list(inputs)
            self._send_json(
                200,
                {
                    "model": model,
                    "embeddings": [fake_embedding(t, self.owner.dim) for t in texts],
                    "total_duration": 1000,
                    "load_duration": 10,
                    "prompt_eval_count": sum(len(t.split()) for t in texts),
                },
            )
        else:  # legacy /api/embeddings
            self._send_json(200, {"embedding": fake_embedding(body.get("prompt", ""), self.owner.dim)})

    def _chat(self, model: str, body: dict[str, Any]) -> None:
        messages = body.get("messages") or []
        if not isinstance(messages, list) or any(not isinstance(m, dict) or "role" not in m for m in messages):
            self._error(400, "invalid message format")
            return
        content = self.owner.chat_reply(body)
        done = {
            "model": model,
            "created_at": _CREATED,
            "message": {"role": "assistant", "content": content},
            "done": True,
            "done_reason": "stop",
            "total_duration": 1000,
            "load_duration": 10,
            "prompt_eval_count": 10,
            "prompt_eval_duration": 100,
            "eval_count": len(content.split()),
            "eval_duration": 100,
        }
        if body.get("stream", True) is False:
            self._send_json(200, done)
        else:
            first = {
                "model": model,
                "created_at": _CREATED,
                "message": {"role": "assistant", "content": content},
                "done": False,
            }
            last = {**done, "message": {"role": "assistant", "content": ""}}
            self._send_ndjson([first, last])

    def _generate(self, model: str, body: dict[str, Any]) -> None:
        request = {"model": model, "messages": [{"role": "user", "content": body.get("prompt") or ""}], **body}
        content = self.owner.chat_reply(request)
        done = {"model": model, "created_at": _CREATED, "response": content, "done": True, "done_reason": "stop"}
        if body.get("stream", True) is False:
            self._send_json(200, done)
        else:
            self._send_ndjson([{**done, "done": False}, {**done, "response": ""}])


def _details(name: str) -> dict[str, Any]:
    family = name.split(":", 1)[0].split(".", 1)[0]
    return {
        "parent_model": "",
        "format": "gguf",
        "family": family,
        "families": [family],
        "parameter_size": "7B",
        "quantization_level": "Q4_K_M",
    }


def _model_entry(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "modified_at": _CREATED,
        "size": 4_000_000_000,
        "digest": hashlib.sha256(name.encode()).hexdigest(),
        "details": _details(name),
    }


def _show(name: str) -> dict[str, Any]:
    embedding = "embed" in name
    return {
        "modelfile": f"FROM {name}\n",
        "parameters": "",
        "template": "{{ .Prompt }}",
        "details": _details(name),
        "model_info": {"general.architecture": "double"},
        "capabilities": ["embedding"] if embedding else ["completion"],
        "modified_at": _CREATED,
    }
