"""A stub llama.cpp router on 127.0.0.1 for the llama tests: model management, `/props`, a Hugging Face API
part for downloads, and a canned OpenAI-style streaming reply at `/v1/chat/completions`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class RouterState:
    """The stub router's models: id -> status; `pending` counts `GET /models` answers before a transition."""

    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: dict[str, tuple[int, str]] = field(default_factory=dict)
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    api_key: str = "secret"
    fail_load: set[str] = field(default_factory=set)
    load_polls: int = 2
    sse_model: str = "org/m:Q4"
    sse_finishes: bool = True
    sse_release: threading.Event = field(default_factory=threading.Event)
    hub_search: list[dict[str, Any]] = field(default_factory=list)
    hub_repos: dict[str, dict[str, Any]] = field(default_factory=dict)
    hub_auth: list[str | None] = field(default_factory=list)
    autoload: bool | None = True
    """`models_autoload` in `GET /props`; None: the router has no `/props` (older versions)."""
    chat_models: list[str] = field(default_factory=list)
    """The `model` of every `/v1/chat/completions` request."""


def default_models() -> dict[str, dict[str, Any]]:
    """One loaded model (32k window, image input) and one on disk, not loaded."""
    return {
        "qwen-loaded": {
            "id": "qwen-loaded",
            "status": {"value": "loaded"},
            "architecture": {"input_modalities": ["text", "image"]},
            "meta": {"n_ctx": 32768, "n_ctx_train": 131072, "size": 123},
        },
        "gemma-idle": {"id": "gemma-idle", "status": {"value": "unloaded"}, "meta": {"n_ctx_train": 8192}},
    }


def _chat_stream(model: str) -> bytes:
    """A streamed chat completion saying which model answered (the router loads it on demand)."""
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": f"{model} answered"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}},
    ]
    frames = [{"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model, **c} for c in chunks]
    return b"".join(f"data: {json.dumps(f)}\n\n".encode() for f in frames) + b"data: [DONE]\n\n"


def make_handler(state: RouterState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self) -> bool:
            if self.headers.get("Authorization") == f"Bearer {state.api_key}":
                return True
            self._send(401, {"error": {"code": 401, "message": "Invalid API Key", "type": "authentication_error"}})
            return False

        def _hub(self) -> None:
            """The Hugging Face API part of the stub: search and repository details."""
            state.hub_auth.append(self.headers.get("Authorization"))
            parts = urlsplit(self.path)
            if parts.path == "/api/models":
                self._send(200, state.hub_search)
                return
            repo = parts.path.removeprefix("/api/models/")
            if repo in state.hub_repos and parse_qs(parts.query) == {"blobs": ["true"]}:
                self._send(200, state.hub_repos[repo])
            else:
                self._send(404, {"error": "Repository not found"})

        def do_GET(self) -> None:
            state.requests.append(("GET", self.path, None))
            if self.path.startswith("/api/"):
                self._hub()
                return
            if not self._authorized():
                return
            if self.path == "/health":
                self._send(200, {"status": "ok"})
            elif self.path == "/props":
                if state.autoload is None:
                    self._send(404, {"error": {"message": "Not found: /props"}})
                else:
                    self._send(200, {"role": "router", "max_instances": 4, "models_autoload": state.autoload})
            elif self.path.startswith("/models/sse"):
                model = state.sse_model
                frames: list[Any] = [
                    {"model": "other/x:Q8_0", "event": "download_progress", "data": {"downloaded": 1, "total": 2}},
                    {"model": model, "event": "download_progress", "data": {"downloaded": 5, "total": 10}},
                    "not json",
                ]
                if state.sse_finishes:
                    frames.append({"model": model, "event": "download_finished", "data": {}})
                body = "".join(f"data: {f if isinstance(f, str) else json.dumps(f)}\n\n" for f in frames)
                if state.sse_finishes:
                    self._send(200, body.encode(), "text/event-stream")
                    return
                # A download still running: the stream stays open until the test releases it.
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(body.encode())
                self.wfile.flush()
                state.sse_release.wait(5)
            elif self.path.startswith("/models"):
                for model_id, (count, target) in list(state.pending.items()):
                    if count <= 0:
                        state.models[model_id]["status"] = {"value": target}
                        if model_id in state.fail_load:
                            state.models[model_id]["status"] = {"value": "unloaded", "failed": True, "exit_code": 1}
                        del state.pending[model_id]
                    else:
                        state.pending[model_id] = (count - 1, target)
                self._send(200, {"data": list(state.models.values())})
            elif self.path == "/broken":
                self._send(500, b"<html>oops</html>", "text/html")
            else:
                self._send(404, {"error": {"message": f"Not found: {self.path}"}})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"null")
            state.requests.append(("POST", self.path, body))
            if not self._authorized():
                return
            model_id = body.get("model") if isinstance(body, dict) else None
            if self.path == "/v1/chat/completions":
                state.chat_models.append(str(model_id))
                self._send(200, _chat_stream(str(model_id)), "text/event-stream")
                return
            if self.path == "/models":
                self._send(200, {"success": True})
                return
            if self.path == "/models/unload" and model_id not in state.models:
                self._send(200, {"success": True})  # stopping a download of a model the router does not list yet
                return
            if model_id not in state.models:
                self._send(400, {"error": {"code": 400, "message": f"model {model_id} not found"}})
                return
            if self.path == "/models/load":
                state.models[model_id]["status"] = {"value": "loading"}
                state.pending[model_id] = (state.load_polls, "loaded")
            elif self.path == "/models/unload":
                state.pending[model_id] = (1, "unloaded")
            self._send(200, {"success": True})

    return Handler


@contextmanager
def serve_router(state: RouterState | None = None) -> Iterator[tuple[str, RouterState]]:
    """Serve `state` (by default `default_models()`) until the block ends: yields (base URL, state)."""
    state = state if state is not None else RouterState(models=default_models())
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        state.sse_release.set()
        server.shutdown()
        server.server_close()
