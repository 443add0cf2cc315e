"""The llama.cpp router client and built-in extension against a stub router served on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from llama_router_stub import RouterState

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
from apex_coding_agent.extensions.llama.extension import NOT_CONFIGURED, create_llama_extension
from apex_coding_agent.extensions.llama.flows import WAIT_OPTION


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


async def _registered(url: str, state: RouterState | None = None, **kwargs: Any) -> tuple[ModelRegistry, Any]:
    """The models the built-in extension registers while it loads (before any `session_start`)."""
    env = {"LLAMA_BASE_URL": f"{url}/v1/", "LLAMA_API_KEY": "secret"}
    runtime, result = await load_extensions(inline=[create_llama_extension(env=env, **kwargs)])
    assert result.errors == [] and result.extensions[0].hidden
    registry = ModelRegistry(load_catalog=False)
    runner = ExtensionRunner(runtime, mode="print")
    runner.flush_providers(registry)
    return registry, runner


async def test_builtin_extension_lists_the_routers_models_while_loading(router: tuple[str, RouterState]) -> None:
    url, state = router
    registry, runner = await _registered(url)
    # The router loads on demand: a model on disk is as usable as a loaded one.
    models = {m.id: m for m in registry.list_models("llama.cpp")}
    assert sorted(models) == ["gemma-idle", "qwen-loaded"]
    model = models["qwen-loaded"]
    assert (model.base_url, model.context_window, model.max_tokens) == (f"{url}/v1", 32768, 32768)
    assert models["gemma-idle"].context_window == 8192
    provider = registry.get_provider("llama.cpp")
    assert provider is not None and provider.api_key == "secret"
    assert runner.get_command_infos() == []  # /llama is interactive-only
    # A fresh answer at load time is not fetched again at session start.
    asked = [path for _, path, _ in state.requests if path.startswith("/models")]
    await runner.emit(SessionStartEvent(reason="startup"))
    assert [path for _, path, _ in state.requests if path.startswith("/models")] == asked
    assert runner.errors == []


@pytest.mark.parametrize(("autoload", "listed"), [(False, ["qwen-loaded"]), (None, ["gemma-idle", "qwen-loaded"])])
async def test_without_autoload_only_loaded_models_are_listed(
    router: tuple[str, RouterState], autoload: bool | None, listed: list[str]
) -> None:
    url, state = router
    state.autoload = autoload  # False: started with --no-models-autoload; None: a router without /props
    registry, _ = await _registered(url)
    assert sorted(m.id for m in registry.list_models("llama.cpp")) == listed


async def test_a_router_down_at_start_lists_the_models_it_listed_last_time(
    router: tuple[str, RouterState], tmp_path: Path
) -> None:
    url, state = router
    cache = tmp_path / "agent" / "llama-models.json"
    await _registered(url, cache_path=cache)
    remembered = json.loads(cache.read_text())["routers"][url]
    assert sorted(m["id"] for m in remembered["models"]) == ["gemma-idle", "qwen-loaded"]

    # Down: nothing listens at the URL any more. The remembered models are listed, for that URL only.
    state.api_key = "other"  # any request now fails (401) like a router that went away
    registry, runner = await _registered(url, cache_path=cache)
    assert sorted(m.id for m in registry.list_models("llama.cpp")) == ["gemma-idle", "qwen-loaded"]
    other, _ = await _registered("http://127.0.0.1:9", cache_path=cache)
    assert other.list_models("llama.cpp") == []
    # The router is asked again at session start: back up, its new answer replaces the remembered one.
    state.api_key = "secret"
    state.models["qwen-loaded"]["status"] = {"value": "downloading"}
    await runner.emit(SessionStartEvent(reason="startup"))
    runner.flush_providers(registry)
    assert [m.id for m in registry.list_models("llama.cpp")] == ["gemma-idle"]
    assert [m["id"] for m in json.loads(cache.read_text())["routers"][url]["models"]][0] == "qwen-loaded"


async def test_a_corrupt_model_memory_is_ignored_and_replaced(router: tuple[str, RouterState], tmp_path: Path) -> None:
    url, _ = router
    cache = tmp_path / "llama-models.json"
    cache.write_text("{not json")
    registry, _ = await _registered(url, cache_path=cache)
    assert len(registry.list_models("llama.cpp")) == 2
    assert url in json.loads(cache.read_text())["routers"]


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
    state.autoload = False  # started with --no-models-autoload: the provider lists what is loaded
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
