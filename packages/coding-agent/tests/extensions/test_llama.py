"""The llama.cpp router client and built-in extension against a stub router served on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from apex_ai.abort import AbortController, AbortError
from apex_ai.models import ModelRegistry
from apex_coding_agent.extensions import ExtensionRunner, NoUi, load_extensions
from apex_coding_agent.extensions.events import SessionStartEvent
from apex_coding_agent.extensions.llama import (
    LLAMA_COMPAT,
    LlamaClient,
    LlamaConfig,
    LlamaRouterError,
    RouterModel,
    normalize_llama_url,
    resolve_llama_config,
    to_model,
)
from apex_coding_agent.extensions.llama_extension import NOT_CONFIGURED, create_llama_extension
from apex_coding_agent.extensions.llama_flows import WAIT_OPTION


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


@pytest.fixture
def router() -> Iterator[tuple[str, RouterState]]:
    state = RouterState(
        models={
            "qwen-loaded": {
                "id": "qwen-loaded",
                "status": {"value": "loaded"},
                "architecture": {"input_modalities": ["text", "image"]},
                "meta": {"n_ctx": 32768, "n_ctx_train": 131072, "size": 123},
            },
            "gemma-idle": {"id": "gemma-idle", "status": {"value": "unloaded"}, "meta": {"n_ctx_train": 8192}},
        }
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        state.sse_release.set()
        server.shutdown()
        server.server_close()


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def test_url_normalisation_and_config() -> None:
    assert normalize_llama_url("http://h:8080/v1/") == "http://h:8080"
    assert normalize_llama_url("https://h/llama/v1?x=1#frag") == "https://h/llama"
    assert normalize_llama_url("http://h:8080") == "http://h:8080"
    with pytest.raises(ValueError, match="http or https"):
        normalize_llama_url("ftp://h")
    default = resolve_llama_config(None, {})
    assert (default.base_url, default.api_key, default.configured) == ("http://127.0.0.1:8080", "local", False)
    from_env = resolve_llama_config(None, {"LLAMA_BASE_URL": "http://e:1/v1", "LLAMA_API_KEY": "k"})
    assert (from_env.base_url, from_env.api_key, from_env.configured) == ("http://e:1", "k", True)
    stored = resolve_llama_config({"type": "api_key", "env": {"LLAMA_BASE_URL": "http://s:2/"}}, {"LLAMA_API_KEY": "k"})
    assert (stored.base_url, stored.api_key, stored.configured) == ("http://s:2", "k", True)


def test_model_mapping() -> None:
    config = LlamaConfig(base_url="http://h:8080")
    vision = RouterModel.model_validate(
        {"id": "v", "architecture": {"input_modalities": ["image"]}, "meta": {"n_ctx_train": 4096}}
    )
    model = to_model(vision, config)
    assert model.to_wire() == {
        "id": "v",
        "name": "v",
        "api": "openai-completions",
        "provider": "llama.cpp",
        "baseUrl": "http://h:8080/v1",
        "reasoning": False,
        "input": ["text", "image"],
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
        "contextWindow": 4096,
        "maxTokens": 4096,
        "compat": dict(LLAMA_COMPAT),
    }
    bare = to_model(RouterModel(id="b"), config)
    assert (bare.context_window, bare.input) == (128000, ["text"])


async def test_list_load_unload_and_download(router: tuple[str, RouterState]) -> None:
    url, state = router
    sleep = RecordingSleep()
    client = LlamaClient(LlamaConfig(base_url=url, api_key="secret"), sleep=sleep)
    try:
        assert await client.health() is True
        models = await client.list_models(reload=True)
        assert [(m.id, m.state) for m in models] == [("qwen-loaded", "loaded"), ("gemma-idle", "unloaded")]
        assert ("GET", "/models?reload=1", None) in state.requests

        loaded = await client.load_model("gemma-idle")
        assert loaded.state == "loaded"
        assert sleep.delays == [0.25, 0.25]
        unloaded = await client.unload_model("qwen-loaded")
        assert unloaded.state == "unloaded"
        assert sleep.delays[2:] == [0.1]

        assert await client.download_model("org/m:Q4") == {"success": True}
        assert ("POST", "/models", {"model": "org/m:Q4"}) in state.requests
        events = [(e.model, e.event) async for e in client.events()]
        assert events == [
            ("other/x:Q8_0", "download_progress"),
            ("org/m:Q4", "download_progress"),
            ("org/m:Q4", "download_finished"),
        ]
    finally:
        await client.aclose()


async def test_failed_load_abort_and_error_texts(router: tuple[str, RouterState]) -> None:
    url, state = router
    client = LlamaClient(LlamaConfig(base_url=url, api_key="secret"), sleep=RecordingSleep())
    try:
        state.fail_load.add("gemma-idle")
        with pytest.raises(LlamaRouterError, match=r"^llama.cpp failed to load gemma-idle \(exit code 1\)$"):
            await client.load_model("gemma-idle")
        with pytest.raises(LlamaRouterError, match="^model nope not found$"):
            await client.load_model("nope")
        controller = AbortController()
        controller.abort()
        with pytest.raises(AbortError):
            await client.load_model("gemma-idle", signal=controller.signal)
        with pytest.raises(LlamaRouterError, match=r"^llama.cpp returned HTTP 500$"):
            await client._request("GET", "/broken")
    finally:
        await client.aclose()
    wrong_key = LlamaClient(LlamaConfig(base_url=url, api_key="wrong"))
    with pytest.raises(LlamaRouterError, match="^Invalid API Key$"):
        await wrong_key.list_models()
    await wrong_key.aclose()
    unreachable = LlamaClient(LlamaConfig(base_url="http://127.0.0.1:9"))
    with pytest.raises(LlamaRouterError, match=r"^Cannot reach llama.cpp at http://127.0.0.1:9"):
        await unreachable.health()
    await unreachable.aclose()


async def test_builtin_extension_exposes_loaded_models(router: tuple[str, RouterState]) -> None:
    url, _ = router
    env = {"LLAMA_BASE_URL": f"{url}/v1/", "LLAMA_API_KEY": "secret"}
    runtime, result = await load_extensions(inline=[create_llama_extension(env=env)])
    assert result.errors == [] and result.extensions[0].hidden
    registry = ModelRegistry(load_catalog=False)
    runner = ExtensionRunner(runtime, mode="print")
    runner.flush_providers(registry)
    assert registry.list_models("llama.cpp") == []
    await runner.emit(SessionStartEvent(reason="startup"))
    [model] = registry.list_models("llama.cpp")
    assert (model.id, model.base_url, model.context_window, model.max_tokens) == (
        "qwen-loaded",
        f"{url}/v1",
        32768,
        32768,
    )
    provider = registry.get_provider("llama.cpp")
    assert provider is not None and provider.api_key == "secret"
    assert runner.get_command_infos() == []  # /llama is interactive-only
    assert runner.errors == []


Answer = str | None | Callable[[], Awaitable[str | None]]


class ScriptedUi(NoUi):
    """A UI whose dialogs answer from a script, recording what they were asked.

    A waiting dialog (one `Keep waiting` option) stays open until its signal fires, like the real one, unless the
    script's next answer is a coroutine function (it then decides, e.g. Escape = None once something happened).
    """

    def __init__(self, answers: list[Answer]) -> None:
        super().__init__()
        self.answers = answers
        self.asked: list[tuple[str, list[str]]] = []
        self.statuses: list[str | None] = []

    async def _answer(self) -> str | None:
        answer = self.answers.pop(0)
        return await answer() if callable(answer) else answer

    async def select(
        self, title: str, options: list[str], *, timeout: int | None = None, signal: Any = None
    ) -> str | None:
        self.asked.append((title, list(options)))
        if options == [WAIT_OPTION] and not (self.answers and callable(self.answers[0])):
            await signal.wait()
            return None
        return await self._answer()

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: int | None = None, signal: Any = None
    ) -> str | None:
        self.asked.append((title, []))
        return await self._answer()

    async def confirm(self, title: str, message: str, *, timeout: int | None = None, signal: Any = None) -> bool:
        self.asked.append((f"{title} {message}", ["Yes", "No"]))
        return await self._answer() == "Yes"

    def set_status(self, key: str, text: str | None = None) -> None:
        self.statuses.append(text)


async def test_llama_command_asks_before_loading_next_to_a_loaded_model(router: tuple[str, RouterState]) -> None:
    url, state = router
    env = {"LLAMA_BASE_URL": url, "LLAMA_API_KEY": "secret"}

    def fast_client(config: LlamaConfig) -> LlamaClient:
        return LlamaClient(config, sleep=RecordingSleep())

    state.hub_repos["org/m"] = {"id": "org/m", "gated": False, "siblings": [{"rfilename": "m-Q4.gguf", "size": 9}]}
    runtime, _ = await load_extensions(
        inline=[create_llama_extension(env=env, client_factory=fast_client, hub_url=url)]
    )
    ui = ScriptedUi(["gemma-idle (unloaded)", "Unload all and load"])
    runner = ExtensionRunner(runtime, ui=ui, mode="tui")
    registry = ModelRegistry(load_catalog=False)
    runner.flush_providers(registry)
    await runner.emit(SessionStartEvent())
    assert [c["name"] for c in runner.get_command_infos()] == ["llama"]

    assert await runner.execute_command("llama") is True
    assert runner.errors == []
    assert ui.asked == [
        (f"llama.cpp router at {url}", ["qwen-loaded (loaded)", "gemma-idle (unloaded)", "Download model…"]),
        ("Loaded: qwen-loaded", ["Unload all and load", "Keep loaded and load", "Cancel"]),
        ("Loading gemma-idle (Escape to stop)", [WAIT_OPTION]),
    ]
    assert ui.notifications == [("Loaded gemma-idle", "info")]
    assert {k: v["status"]["value"] for k, v in state.models.items()} == {
        "qwen-loaded": "unloaded",
        "gemma-idle": "loaded",
    }
    assert [m.id for m in registry.list_models("llama.cpp")] == ["gemma-idle"]

    # Cancel leaves everything as it was; download sends the repo to the router.
    ui.answers = ["qwen-loaded (unloaded)", "Cancel"]
    await runner.execute_command("llama")
    assert state.models["qwen-loaded"]["status"]["value"] == "unloaded"
    ui.answers = ["Download model…", "org/m:Q4"]
    await runner.execute_command("llama")
    assert runner.errors == []
    assert ui.asked[-1] == ("Downloading org/m:Q4 (Escape to stop)", [WAIT_OPTION])
    assert ("POST", "/models", {"model": "org/m:Q4"}) in state.requests
    assert ui.statuses[-2:] == ["Downloading org/m:Q4: 50%", None]
    assert ui.notifications[-1] == ("Downloaded org/m:Q4", "info")


async def test_llama_command_not_configured_and_connection_loss() -> None:
    runtime, _ = await load_extensions(inline=[create_llama_extension(env={}, interactive=True)])
    ui = ScriptedUi([])
    runner = ExtensionRunner(runtime, ui=ui, mode="tui")
    await runner.execute_command("llama")
    assert ui.notifications == [(NOT_CONFIGURED, "warning")]

    runtime, _ = await load_extensions(
        inline=[create_llama_extension(env={"LLAMA_BASE_URL": "http://127.0.0.1:9"}, interactive=True)]
    )
    ui = ScriptedUi(["Retry", "Close"])
    runner = ExtensionRunner(runtime, ui=ui, mode="tui")
    await runner.execute_command("llama")
    assert [title.split(":")[0] for title, _ in ui.asked] == ["llama.cpp", "llama.cpp"]
    assert ui.asked[0][1] == ["Retry", "Close"]
    assert runner.errors == []


async def _tui_runner(url: str, ui: ScriptedUi, env: dict[str, str] | None = None) -> ExtensionRunner:
    def fast_client(config: LlamaConfig) -> LlamaClient:
        return LlamaClient(config, sleep=RecordingSleep())

    env = env or {"LLAMA_BASE_URL": url, "LLAMA_API_KEY": "secret"}
    extension = create_llama_extension(env=env, client_factory=fast_client, hub_url=url, interactive=True)
    runtime, _ = await load_extensions(inline=[extension])
    return ExtensionRunner(runtime, ui=ui, mode="tui")


async def test_download_searches_the_hub_warns_on_gating_and_offers_quantizations(
    router: tuple[str, RouterState],
) -> None:
    url, state = router
    state.hub_search = [{"id": "org/qwen-GGUF", "downloads": 1_234_567}, {"id": "org/other", "downloads": 12}]
    state.hub_repos["org/qwen-GGUF"] = {
        "id": "org/qwen-GGUF",
        "gated": "auto",
        "siblings": [
            {"rfilename": "qwen-Q8_0.gguf", "size": 8 * 1024**3},
            {"rfilename": "qwen-Q4_K_M.gguf", "size": 4 * 1024**3},
            {"rfilename": "mmproj-F16.gguf", "size": 1},
        ],
    }
    state.sse_model = "org/qwen-GGUF:Q4_K_M"
    env = {"LLAMA_BASE_URL": url, "LLAMA_API_KEY": "secret", "HF_TOKEN": "hf_abc"}
    ui = ScriptedUi(
        ["Download model…", "qwen", "org/qwen-GGUF · 1.2M downloads", "Continue", "Q4_K_M · 4.0 GB · recommended"]
    )
    runner = await _tui_runner(url, ui, env)
    await runner.execute_command("llama")
    assert runner.errors == []
    titles = [title for title, _ in ui.asked]
    assert titles[1] == "Download model: search Hugging Face or enter owner/repository[:quant]"
    assert ui.asked[2] == ("Hugging Face: qwen", ["org/qwen-GGUF · 1.2M downloads", "org/other · 12 downloads"])
    assert ui.asked[3][0].startswith("org/qwen-GGUF is gated: it asks you to accept its access terms at ")
    assert ui.asked[3][1] == ["Continue", "Back"]
    assert ui.asked[4] == ("Quantization of org/qwen-GGUF", ["Q8_0 · 8.0 GB", "Q4_K_M · 4.0 GB · recommended"])
    assert ("POST", "/models", {"model": "org/qwen-GGUF:Q4_K_M"}) in state.requests
    search = next(path for method, path, _ in state.requests if path.startswith("/api/models?"))
    assert parse_qs(urlsplit(search).query) == {
        "search": ["qwen"],
        "filter": ["gguf"],
        "sort": ["downloads"],
        "direction": ["-1"],
        "limit": ["20"],
    }
    assert set(state.hub_auth) == {"Bearer hf_abc"}
    assert ui.notifications[-1] == ("Downloaded org/qwen-GGUF:Q4_K_M", "info")

    # Back at the gating warning downloads nothing; a hub error is a notification, not a crash.
    posts = len([r for r in state.requests if r[:2] == ("POST", "/models")])
    ui.answers = ["Download model…", "org/qwen-GGUF", "Back"]
    await runner.execute_command("llama")
    ui.answers = ["Download model…", "org/missing:Q4_K_M"]
    await runner.execute_command("llama")
    assert len([r for r in state.requests if r[:2] == ("POST", "/models")]) == posts
    assert ui.notifications[-1] == ("Hugging Face: Hugging Face does not know this repository", "error")
    assert runner.errors == []


async def test_escape_during_load_asks_then_stops_and_restores_unloaded_models(
    router: tuple[str, RouterState],
) -> None:
    url, state = router
    state.load_polls = 10**6  # the load never finishes on its own

    async def escape_once_loading() -> None:
        while state.models["gemma-idle"]["status"]["value"] != "loading":
            await asyncio.sleep(0.005)

    async def escape_and_speed_up() -> None:
        await escape_once_loading()
        state.load_polls = 2  # restoring qwen-loaded afterwards loads normally

    ui = ScriptedUi(
        ["gemma-idle (unloaded)", "Unload all and load", escape_once_loading, "No", escape_and_speed_up, "Yes"]
    )
    runner = await _tui_runner(url, ui)
    await runner.execute_command("llama")
    assert runner.errors == []
    assert ui.asked[2:] == [
        ("Loading gemma-idle (Escape to stop)", [WAIT_OPTION]),
        ("Stop loading? gemma-idle", ["Yes", "No"]),
        ("Loading gemma-idle (Escape to stop)", [WAIT_OPTION]),
        ("Stop loading? gemma-idle", ["Yes", "No"]),
    ]
    assert ("POST", "/models/unload", {"model": "gemma-idle"}) in state.requests
    assert ui.notifications == [("Stopped loading gemma-idle", "info"), ("Restored qwen-loaded", "info")]
    statuses = {k: v["status"]["value"] for k, v in state.models.items()}
    assert statuses == {"qwen-loaded": "loaded", "gemma-idle": "unloaded"}


async def test_escape_during_download_stops_it_without_deleting_anything(router: tuple[str, RouterState]) -> None:
    url, state = router
    state.sse_finishes = False
    state.hub_repos["org/m"] = {"id": "org/m", "siblings": []}
    ui = ScriptedUi([])

    async def escape_once_progress() -> None:
        while "Downloading org/m:Q4: 50%" not in ui.statuses:
            await asyncio.sleep(0.005)

    ui.answers = ["Download model…", "org/m:Q4", escape_once_progress, "Yes"]
    runner = await _tui_runner(url, ui)
    await runner.execute_command("llama")
    assert runner.errors == []
    assert ui.asked[-1] == ("Stop downloading? org/m:Q4", ["Yes", "No"])
    assert ("POST", "/models/unload", {"model": "org/m:Q4"}) in state.requests
    assert not any(method == "DELETE" for method, _, _ in state.requests)
    assert ui.notifications == [("Stopped downloading org/m:Q4", "info")]
    assert ui.statuses[-1] is None
