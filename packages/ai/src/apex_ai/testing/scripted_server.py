"""A scripted local model server: the Anthropic Messages, OpenAI Chat Completions and OpenAI Responses
APIs over HTTP on a loopback address, answering from a scenario instead of a model.

Tests of every layer, benchmarks and offline demos point a model's `baseUrl` at it and get real SSE
through the real SDKs. Only streamed requests (`"stream": true`) are answered; others get a 400.
Replies are consumed in request order (a `repeat` reply forever; a `when_last` reply only by a
request whose last message matches); the scenario format is described in `apex_ai.testing._scripted_wire`.
Every request is recorded as `{"seq", "ts", "method", "path", "api", "auth", "headers", "body",
"reply_index", "reply"}` (`headers` without the credentials, names lower-cased), in memory (`.requests`)
and, optionally, as one JSON line per request in a file.

With `context_window` the server behaves like a local server started with that context size: it
counts each prompt (recorded as `prompt_tokens`; about 4 characters a token), answers a prompt that
does not fit with llama.cpp's 400 error, reports counted usage for replies whose scenario gives none,
and cuts a reply at the output cap or the window's end (stop reason `length`).

    with ScriptedModelServer([{"text": "Hello!", "usage": {"input": 9, "output": 2}}]) as server:
        model = Model(..., api="anthropic-messages", base_url=server.anthropic_base_url)

CLI: `python -m apex_ai.testing.scripted_server --scenario FILE [--port N] [--requests FILE] [--context-window N]` prints
`listening on http://127.0.0.1:PORT` as its first line and serves until killed.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Final
from urllib.parse import urlsplit

from apex_ai.testing._scripted_sse import ENCODERS
from apex_ai.testing._scripted_wire import (
    CONTEXT_EXCEEDED,
    Api,
    JsonObject,
    RequestInfo,
    ScenarioError,
    ScriptedError,
    ScriptedReply,
    count_prompt_tokens,
    error_body,
    fit_reply,
    last_message_text,
    load_scenario,
    parse_scenario,
)

ROUTES: Final[Mapping[str, Api]] = {
    "/v1/messages": "anthropic",
    "/v1/chat/completions": "chat",
    "/v1/responses": "responses",
}
_REASONS: Final[Mapping[int, str]] = {529: "Overloaded"}
"""Reason phrases http.server does not know."""
_POLL_SECONDS: Final = 0.02
_JOIN_SECONDS: Final = 2.0
"""How often the accept loop checks for shutdown: stopping a server costs at most this long."""


def _loopback_family(host: str) -> socket.AddressFamily:
    """The address family of `host`; `ValueError` unless it is a loopback address."""
    if host == "localhost":
        return socket.AF_INET
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"the scripted server binds loopback addresses only, got {host!r}") from None
    if not address.is_loopback:
        raise ValueError(f"the scripted server binds loopback addresses only, got {host!r}")
    return socket.AF_INET6 if address.version == 6 else socket.AF_INET


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: ScriptedModelServer, address: tuple[str, int], family: socket.AddressFamily) -> None:
        self.owner = owner
        self.address_family = family
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:  # Any: mirrors the base signature
        """A connection the client or `close()` dropped is normal here; anything else is reported."""
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """One connection; HTTP/1.1 keep-alive, SSE bodies in chunked encoding so a cut is visible."""

    protocol_version = "HTTP/1.1"
    server: _HttpServer
    timeout = 60  # an idle keep-alive connection the client forgot is closed after this long

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, threading.current_thread())

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, None)

    def log_message(self, format: str, *args: Any) -> None:  # Any: mirrors the base signature
        """Silent: the request log is the record."""

    # ----------------------------------------------------------------- plain responses

    def _send_json(self, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status, _REASONS.get(status))
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if urlsplit(self.path).path in ("/", "/health"):
            self._send_json(200, b'{"status":"ok"}')
        else:
            self._send_json(404, error_body(None, ScriptedError(404, "not_found_error", f"no route {self.path}"), 0))

    def do_POST(self) -> None:
        owner = self.server.owner
        path = urlsplit(self.path).path
        api = ROUTES.get(path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body: object = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        auth = _auth_kind(self.headers)
        seen = _recorded_headers(self.headers)
        if api is None:
            owner._record("POST", path, None, auth, body, None, headers=seen)
            hint = " (an anthropic base_url must not end in /v1)" if path.endswith("/v1/messages") else ""
            error = ScriptedError(404, "not_found_error", f"no route POST {path}{hint}")
            self._send_json(404, error_body(None, error, 0))
            return
        if not isinstance(body, dict) or body.get("stream") is not True:
            seq = owner._record("POST", path, api, auth, body, None, headers=seen)
            problem = "body must be a JSON object" if not isinstance(body, dict) else "only stream: true is scripted"
            self._send_json(400, error_body(api, ScriptedError(400, "invalid_request_error", problem), seq))
            return
        if not owner._authorized(self.headers):
            seq = owner._record("POST", path, api, auth, body, None, headers=seen)
            error = ScriptedError(401, "authentication_error", "invalid x-api-key or bearer token")
            self._send_json(401, error_body(api, error, seq))
            return
        window = owner.context_window
        prompt_tokens = count_prompt_tokens(body) if window is not None else None
        if window is not None and prompt_tokens is not None and prompt_tokens >= window:
            seq = owner._record("POST", path, api, auth, body, None, prompt_tokens, headers=seen)
            self._send_json(
                400, error_body(api, ScriptedError(400, "exceed_context_size_error", CONTEXT_EXCEEDED), seq)
            )
            return
        seq, reply_index, reply = owner._take_reply("POST", path, api, auth, body, prompt_tokens, headers=seen)
        if reply is not None and window is not None and prompt_tokens is not None:
            reply = fit_reply(reply, body, prompt_tokens, window)
        if reply is None:
            error = ScriptedError(500, "api_error", f"scenario exhausted: no reply left for request {seq}")
            self._send_json(500, error_body(api, error, seq))
            return
        if reply.wait_ms and owner._wait(reply.wait_ms / 1000):
            self._cut()
            return
        if reply.error is not None:
            self._send_json(reply.error.status, error_body(api, reply.error, seq), _reply_headers(reply, api, seq))
            return
        info = RequestInfo(
            seq=seq,
            model=str(body.get("model") or "scripted-model"),
            created=int(time.time()),
            include_usage=bool((body.get("stream_options") or {}).get("include_usage")),
        )
        self._stream(ENCODERS[api](reply, info), reply, api, seq)

    # ----------------------------------------------------------------- streaming

    def _stream(self, frames: list[bytes], reply: ScriptedReply, api: Api, seq: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in _reply_headers(reply, api, seq).items():
            self.send_header(name, value)
        self.end_headers()
        owner = self.server.owner
        try:
            for sent, frame in enumerate(frames):
                if reply.cut_after_chunks is not None and sent >= reply.cut_after_chunks:
                    self._cut()
                    return
                if sent and reply.delay_ms and owner._wait(reply.delay_ms / 1000):
                    self._cut()
                    return
                if sent == reply.stall_after_chunks and self._stall(reply, api):
                    self._cut()
                    return
                self._write_chunk(_raw_bytes(frame) if reply.invalid_utf8 else frame)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (an abort): nothing left to send

    def _write_chunk(self, frame: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
        self.wfile.flush()

    def _stall(self, reply: ScriptedReply, api: Api) -> bool:
        """Send no content for `stall_ms`, only keep-alives every `keepalive_ms`; True when the server is stopping."""
        owner = self.server.owner
        kind = reply.keepalive or ("ping" if api == "anthropic" else "comment")
        keepalive = b'event: ping\ndata: {"type":"ping"}\n\n' if kind == "ping" else b": ping\n\n"
        deadline = time.monotonic() + reply.stall_ms / 1000
        while (left := deadline - time.monotonic()) > 0:
            step = min(left, reply.keepalive_ms / 1000) if reply.keepalive_ms else left
            if owner._wait(step):
                return True
            if reply.keepalive_ms and deadline - time.monotonic() > 0:
                self._write_chunk(keepalive)
        return False

    def _cut(self) -> None:
        """Drop the connection without finishing the chunked body: the client sees a broken stream."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already gone


def _recorded_headers(headers: Message) -> dict[str, str]:
    """The request's headers, names lower-cased, without the credentials (`auth` says which kind came)."""
    return {name.lower(): value for name, value in headers.items() if name.lower() not in _CREDENTIAL_HEADERS}


_CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key"})


def _auth_kind(headers: Message) -> str | None:
    if headers.get("x-api-key"):
        return "x-api-key"
    if (headers.get("authorization") or "").lower().startswith("bearer "):
        return "bearer"
    return None


_ESCAPED_BYTE: Final = re.compile(rb"\\udc([89a-f][0-9a-f])")


def _raw_bytes(frame: bytes) -> bytes:
    """`frame` with each escaped lone surrogate U+DC80-U+DCFF replaced by the byte it stands for."""
    return _ESCAPED_BYTE.sub(lambda match: bytes([int(match.group(1), 16)]), frame)


def _reply_headers(reply: ScriptedReply, api: Api, seq: int) -> dict[str, str]:
    headers = {"request-id": f"req_fake_{seq}"} if api == "anthropic" else {"x-request-id": f"req_fake_{seq}"}
    if reply.retry_after is not None:
        seconds = reply.retry_after
        headers["retry-after"] = str(int(seconds)) if seconds == int(seconds) else str(seconds)
    headers.update(reply.headers)
    return headers


class ScriptedModelServer:
    """A scripted model server on a loopback address, served from a background thread.

    `scenario`: parsed replies, their JSON list, or a path to a JSON file. `api_key`: when set, requests
    must carry it as `x-api-key` or `Authorization: Bearer` (else 401); when None any or no key passes.
    `requests_path`: a file (truncated on start) that gets one JSON line per request.
    `context_window`: behave like a local server with that context size (see the module docstring).
    Use as a context manager, or call `start()` and `close()`.
    """

    def __init__(
        self,
        scenario: Sequence[ScriptedReply] | Sequence[Mapping[str, Any]] | str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        requests_path: str | Path | None = None,
        api_key: str | None = None,
        context_window: int | None = None,
    ) -> None:
        self._family = _loopback_family(host)
        self.host = host
        self.port = port
        self.requests_path = Path(requests_path) if requests_path is not None else None
        self.api_key = api_key
        self.context_window = context_window
        self.replies = _as_replies(scenario)
        self._served: set[int] = set()
        self._requests: list[JsonObject] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._connections_opened = 0
        self._httpd: _HttpServer | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> ScriptedModelServer:
        """Bind and serve in a daemon thread; returns self. `port=0` picks a free port."""
        if self._httpd is not None:
            raise RuntimeError("the scripted server is already started")
        if self.requests_path is not None:
            self.requests_path.parent.mkdir(parents=True, exist_ok=True)
            self.requests_path.write_text("", encoding="utf-8")
        self._stopping.clear()
        self._httpd = _HttpServer(self, (self.host, self.port), self._family)
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": _POLL_SECONDS},
            name=f"scripted-model-server:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, drop open connections (a stream in progress is cut) and release the port."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections.items())
        for connection, _ in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # closed by its handler meanwhile
        httpd.server_close()
        if thread is not None:
            thread.join()
        for _, handler in connections:
            # Their sockets are shut down and their waits interrupted, so they end at once.
            handler.join(timeout=_JOIN_SECONDS)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ----------------------------------------------------------------- addresses and record

    @property
    def base_url(self) -> str:
        """`http://HOST:PORT`, without a path."""
        if self._httpd is None:
            raise RuntimeError("the scripted server is not started")
        host = f"[{self.host}]" if self._family == socket.AF_INET6 else self.host
        return f"http://{host}:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        """For the anthropic SDK, which appends `/v1/messages` itself."""
        return self.base_url

    @property
    def openai_base_url(self) -> str:
        """For the openai SDK, which appends `/chat/completions` or `/responses`."""
        return f"{self.base_url}/v1"

    @property
    def requests(self) -> list[JsonObject]:
        """Every request so far, oldest first (a copy of the list)."""
        with self._lock:
            return list(self._requests)

    @property
    def connections_opened(self) -> int:
        """How many TCP connections clients have opened so far (keep-alive reuse shows as fewer than requests)."""
        with self._lock:
            return self._connections_opened

    @property
    def remaining(self) -> int:
        """Replies not yet served (a `repeat` reply counts once)."""
        with self._lock:
            return len(self.replies) - len(self._served)

    # ----------------------------------------------------------------- used by the handler

    def _track(self, connection: socket.socket, thread: threading.Thread | None) -> None:
        """Remember the thread serving `connection` (None: the connection is done)."""
        with self._lock:
            if thread is not None:
                self._connections[connection] = thread
                self._connections_opened += 1
            else:
                self._connections.pop(connection, None)

    def _authorized(self, headers: Message) -> bool:
        if self.api_key is None:
            return True
        return headers.get("x-api-key") == self.api_key or headers.get("authorization") == f"Bearer {self.api_key}"

    def _wait(self, seconds: float) -> bool:
        """Sleep `seconds`; True when the server is stopping meanwhile."""
        return self._stopping.wait(seconds)

    def _take_reply(
        self,
        method: str,
        path: str,
        api: Api,
        auth: str | None,
        body: object,
        prompt_tokens: int | None = None,
        *,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, int | None, ScriptedReply | None]:
        """(seq, reply index, reply) for the next request; the reply is None once no remaining reply fits."""
        last = last_message_text(body)
        with self._lock:
            index: int | None = None
            for candidate, reply in enumerate(self.replies):
                if candidate in self._served or (reply.when_last is not None and not reply.when_last.search(last)):
                    continue
                index = candidate
                if not reply.repeat:
                    self._served.add(candidate)
                break
            chosen = self.replies[index] if index is not None else None
            seq = self._record_locked(method, path, api, auth, body, index, chosen, prompt_tokens, headers=headers)
        return seq, index, chosen

    def _record(
        self,
        method: str,
        path: str,
        api: Api | None,
        auth: str | None,
        body: object,
        index: None,
        prompt_tokens: int | None = None,
        *,
        headers: dict[str, str] | None = None,
    ) -> int:
        with self._lock:
            return self._record_locked(method, path, api, auth, body, index, None, prompt_tokens, headers=headers)

    def _record_locked(
        self,
        method: str,
        path: str,
        api: Api | None,
        auth: str | None,
        body: object,
        index: int | None,
        reply: ScriptedReply | None,
        prompt_tokens: int | None = None,
        *,
        headers: dict[str, str] | None = None,
    ) -> int:
        seq = len(self._requests) + 1
        record: JsonObject = {
            "seq": seq,
            "ts": time.time(),
            "method": method,
            "path": path,
            "api": api,
            "auth": auth,
            "body": body,
            "reply_index": index,
            "reply": reply.raw if reply is not None else None,
        }
        if prompt_tokens is not None:
            record["prompt_tokens"] = prompt_tokens
        if headers is not None:
            record["headers"] = dict(headers)
        self._requests.append(record)
        if self.requests_path is not None:
            # One write per line, flushed: a CLI server killed at any moment leaves whole lines behind.
            with self.requests_path.open("a", encoding="utf-8") as file:
                file.write(json.dumps(record, ensure_ascii=False) + "\n")
        return seq


def _as_replies(scenario: Sequence[ScriptedReply] | Sequence[Mapping[str, Any]] | str | Path) -> list[ScriptedReply]:
    if isinstance(scenario, str | Path):
        return load_scenario(scenario)
    if all(isinstance(entry, ScriptedReply) for entry in scenario):
        return [entry for entry in scenario if isinstance(entry, ScriptedReply)]
    return parse_scenario([dict(entry) if isinstance(entry, Mapping) else entry for entry in scenario])


# --------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a scenario file until SIGINT or SIGTERM; exit status 2 for a bad scenario or address."""
    parser = argparse.ArgumentParser(
        prog="python -m apex_ai.testing.scripted_server", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--scenario", required=True, help="JSON file: a list of replies")
    parser.add_argument("--host", default="127.0.0.1", help="a loopback address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    parser.add_argument("--requests", help="append every request to this JSON-lines file")
    parser.add_argument("--api-key", help="require this key (x-api-key or Authorization: Bearer)")
    parser.add_argument(
        "--context-window", type=int, help="behave like a local server with this context size (in tokens)"
    )
    args = parser.parse_args(argv)
    try:
        server = ScriptedModelServer(
            args.scenario,
            host=args.host,
            port=args.port,
            requests_path=args.requests,
            api_key=args.api_key,
            context_window=args.context_window,
        )
        server.start()
    except (ScenarioError, ValueError, OSError) as exc:
        print(f"scripted_server: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    print(f"listening on {server.base_url}", flush=True)
    try:
        stop.wait()
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["ROUTES", "ScenarioError", "ScriptedModelServer", "ScriptedReply", "load_scenario", "main", "parse_scenario"]
