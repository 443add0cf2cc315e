"""The llama.cpp router: a client for its model-management API and the provider `llama.cpp` that the hidden
built-in extension (`extension.py`) registers (inference goes to `<server>/v1`, API `openai-completions`).

Every request sends `Authorization: Bearer <key>` when a key exists and times out after 15 s (the SSE stream
only while connecting). Failures raise `LlamaRouterError` with the router's `error.message` or
`llama.cpp returned HTTP <status>`.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx2
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from apex_ai.abort import AbortError, AbortSignal
from apex_ai.types import InputKind, Model

LLAMA_PROVIDER_ID: Final = "llama.cpp"
LLAMA_DEFAULT_BASE_URL: Final = "http://127.0.0.1:8080"
API: Final = "openai-completions"
REQUEST_TIMEOUT_S: Final = 15.0
LOAD_POLL_S: Final = 0.25
UNLOAD_POLL_S: Final = 0.1
DEFAULT_CONTEXT_WINDOW: Final = 128000
LLAMA_COMPAT: Final[Mapping[str, Any]] = {
    "supportsStore": False,
    "supportsDeveloperRole": False,
    "supportsReasoningEffort": False,
    "supportsUsageInStreaming": True,
    "supportsStrictMode": False,
    "maxTokensField": "max_tokens",
}
"""What a llama.cpp server's OpenAI-compatible endpoint does not support (or needs spelled its way)."""

Status = Literal["unloaded", "loading", "loaded", "downloading", "sleeping"]
Sleep = Callable[[float], Awaitable[None]]


class LlamaRouterError(Exception):
    """A router request failed; the message is what users see."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class RouterModelStatus(_Lenient):
    value: str = "unloaded"
    failed: bool | None = None
    exit_code: int | None = None
    progress: Any = None  # Any: router-defined progress record (download/load)


class RouterArchitecture(_Lenient):
    input_modalities: list[str] = Field(default_factory=list)


class RouterModelMeta(_Lenient):
    n_ctx: int | None = None
    n_ctx_train: int | None = None
    size: int | None = None


class RouterModel(_Lenient):
    """One entry of `GET /models` `data`."""

    id: str
    status: RouterModelStatus = Field(default_factory=RouterModelStatus)
    architecture: RouterArchitecture | None = None
    meta: RouterModelMeta | None = None

    @property
    def state(self) -> str:
        return self.status.value


class RouterEvent(_Lenient):
    """One `GET /models/sse` frame: `{model, event, data}` (`model_status`, `download_progress`, ...)."""

    model: str | None = None
    event: str
    data: Any = None  # Any: event-specific JSON


# --------------------------------------------------------------------------- configuration


def normalize_llama_url(url: str) -> str:
    """http/https only; query and fragment dropped; trailing `/` and a trailing `/v1` removed."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"llama.cpp URL must be an http or https URL: {url}")
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")].rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


class LlamaConfig(BaseModel):
    base_url: str = LLAMA_DEFAULT_BASE_URL
    api_key: str | None = None
    configured: bool = False
    """True when a stored credential or `LLAMA_BASE_URL` names a server (else the default URL is assumed)."""

    @property
    def inference_url(self) -> str:
        return f"{self.base_url}/v1"


def resolve_llama_config(credential: Mapping[str, Any] | None, env: Mapping[str, str] | None = None) -> LlamaConfig:
    """URL: credential `env.LLAMA_BASE_URL`, else env `LLAMA_BASE_URL`, else the default. Key: credential, else
    `LLAMA_API_KEY`, else `"local"`. Any: the credential is a stored JSON record."""
    environ = os.environ if env is None else env
    stored_env = (credential or {}).get("env") or {}
    raw_url = stored_env.get("LLAMA_BASE_URL") or environ.get("LLAMA_BASE_URL")
    key = (credential or {}).get("key") or environ.get("LLAMA_API_KEY") or "local"
    base_url = normalize_llama_url(raw_url) if raw_url else LLAMA_DEFAULT_BASE_URL
    return LlamaConfig(base_url=base_url, api_key=key, configured=bool(credential) or bool(raw_url))


def to_model(router_model: RouterModel, config: LlamaConfig) -> Model:
    """The `Model` of a router model."""
    meta = router_model.meta or RouterModelMeta()
    window = meta.n_ctx or meta.n_ctx_train or DEFAULT_CONTEXT_WINDOW
    modalities = router_model.architecture.input_modalities if router_model.architecture else []
    inputs: list[InputKind] = ["text", "image"] if "image" in modalities else ["text"]
    return Model(
        id=router_model.id,
        name=router_model.id,
        api=API,
        provider=LLAMA_PROVIDER_ID,
        base_url=config.inference_url,
        reasoning=False,
        input=inputs,
        context_window=window,
        max_tokens=window,
        compat=dict(LLAMA_COMPAT),
    )


ON_DEMAND_STATES: Final = frozenset({"loaded", "loading", "unloaded", "sleeping"})
"""Models a request can use when the router loads on demand (a download in progress is not one of them)."""


def usable_models(models: list[RouterModel], autoload: bool) -> list[RouterModel]:
    """The router models a request may name: every model on disk when the router loads on demand,
    otherwise only the loaded ones (the rest must be loaded with `/llama` first)."""
    if autoload:
        return [m for m in models if m.state in ON_DEMAND_STATES]
    return [m for m in models if m.state == "loaded"]


def provider_config(config: LlamaConfig, models: list[RouterModel]) -> dict[str, Any]:  # Any: provider JSON
    """The `pi.register_provider` config listing `models` (see `usable_models` for which to pass)."""
    return {
        "baseUrl": config.inference_url,
        "api": API,
        "apiKey": config.api_key,
        "compat": dict(LLAMA_COMPAT),
        "models": [to_model(m, config).to_wire() for m in models],
    }


# --------------------------------------------------------------------------- client


def _error_text(response: httpx2.Response) -> str:
    try:
        payload = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str) and message:
            return message
    return f"llama.cpp returned HTTP {response.status_code}"


def _failure_detail(data: Any) -> str:  # Any: event-specific JSON
    if isinstance(data, dict):
        for key in ("message", "error"):
            if isinstance(data.get(key), str) and data[key]:
                return f": {data[key]}"
    return ""


class LlamaClient:
    """Model management against one router. Pass `http_client` to reuse or inject a client (caller closes it);
    otherwise `aclose()` closes the client this object made. `sleep` paces polling (injectable for tests)."""

    def __init__(
        self,
        config: LlamaConfig,
        *,
        http_client: httpx2.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.config = config
        self._owns_client = http_client is None
        self._client = http_client or httpx2.AsyncClient(timeout=REQUEST_TIMEOUT_S)
        self._sleep = sleep

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}

    async def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """The JSON answer of one request (None for an empty body). Any: router JSON."""
        try:
            response = await self._client.request(
                method,
                f"{self.config.base_url}{path}",
                json=dict(body) if body is not None else None,
                headers=self._headers(),
                timeout=REQUEST_TIMEOUT_S,
            )
        except httpx2.TimeoutException as exc:
            raise LlamaRouterError(f"llama.cpp did not answer within {REQUEST_TIMEOUT_S:g} s") from exc
        except httpx2.TransportError as exc:
            raise LlamaRouterError(f"Cannot reach llama.cpp at {self.config.base_url}: {exc}") from exc
        if response.status_code >= 400:
            raise LlamaRouterError(_error_text(response))
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise LlamaRouterError("llama.cpp returned invalid JSON") from exc

    async def health(self) -> bool:
        """True when `GET /health` answers 2xx; raises `LlamaRouterError` otherwise."""
        await self._request("GET", "/health")
        return True

    async def models_autoload(self) -> bool:
        """Whether the router loads a requested model on demand (`GET /props` `models_autoload`).

        Routers start with autoload on; one started with `--no-models-autoload` says false. A router too old
        to report it (no `/props`, or no such field) is taken to autoload, as routers do by default.
        """
        try:
            data = await self._request("GET", "/props")
        except LlamaRouterError:
            return True
        value = data.get("models_autoload") if isinstance(data, dict) else None
        return value if isinstance(value, bool) else True

    async def list_models(self, *, reload: bool = False) -> list[RouterModel]:
        data = await self._request("GET", "/models?reload=1" if reload else "/models")
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise LlamaRouterError("llama.cpp returned no model list (is the server in router mode?)")
        try:
            return [RouterModel.model_validate(item) for item in items]
        except ValidationError as exc:
            raise LlamaRouterError(f"llama.cpp returned an invalid model entry: {exc.errors()[0]['msg']}") from exc

    async def get_model(self, model_id: str) -> RouterModel:
        for model in await self.list_models():
            if model.id == model_id:
                return model
        raise LlamaRouterError(f"llama.cpp does not list model {model_id}")

    async def load_model(self, model_id: str, *, signal: AbortSignal | None = None) -> RouterModel:
        """`POST /models/load`, then poll every 250 ms until `loaded`; a failed load raises."""
        await self._request("POST", "/models/load", {"model": model_id})
        while True:
            model = await self.get_model(model_id)
            if model.state == "loaded":
                return model
            if model.status.failed:
                code = f" (exit code {model.status.exit_code})" if model.status.exit_code is not None else ""
                raise LlamaRouterError(f"llama.cpp failed to load {model_id}{code}")
            await self._pause(LOAD_POLL_S, signal)

    async def request_unload(self, model_id: str) -> None:
        """`POST /models/unload` without waiting: also how a load or a download in progress is stopped."""
        await self._request("POST", "/models/unload", {"model": model_id})

    async def unload_model(self, model_id: str, *, signal: AbortSignal | None = None) -> RouterModel:
        """`POST /models/unload`, then poll every 100 ms until it is neither `loaded` nor `loading`."""
        await self.request_unload(model_id)
        while True:
            model = await self.get_model(model_id)
            if model.state not in ("loaded", "loading"):
                return model
            await self._pause(UNLOAD_POLL_S, signal)

    async def download_model(self, repo: str) -> Any:  # Any: router JSON answer
        """Ask the router to download `owner/repo[:quant]` (progress arrives on the SSE stream)."""
        return await self._request("POST", "/models", {"model": repo})

    @asynccontextmanager
    async def _event_stream(self) -> AsyncIterator[AsyncIterator[RouterEvent]]:
        """Open `GET /models/sse`; the yielded iterator gives its frames (frames that are not JSON skipped)."""
        timeout = httpx2.Timeout(REQUEST_TIMEOUT_S, read=None)
        try:
            async with self._client.stream(
                "GET", f"{self.config.base_url}/models/sse", headers=self._headers(), timeout=timeout
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise LlamaRouterError(_error_text(response))

                async def frames() -> AsyncIterator[RouterEvent]:
                    async for sse in httpx2.EventSource(response):
                        try:
                            yield RouterEvent.model_validate_json(sse.data)
                        except ValidationError:
                            continue

                yield frames()
        except httpx2.TransportError as exc:
            raise LlamaRouterError(f"Lost connection to llama.cpp at {self.config.base_url}: {exc}") from exc

    async def events(self) -> AsyncIterator[RouterEvent]:
        """The `GET /models/sse` frames until the router closes the stream (frames that are not JSON skipped)."""
        async with self._event_stream() as frames:
            async for event in frames:
                yield event

    async def download_and_wait(self, repo: str, on_event: Callable[[RouterEvent], None] | None = None) -> None:
        """Ask the router to download `repo` and follow its events until `download_finished` (returns) or
        `download_failed` (raises). The stream is opened before the request so no frame can be missed;
        `on_event` sees every frame about `repo` (progress included)."""
        async with self._event_stream() as frames:
            await self.download_model(repo)
            async for event in frames:
                if event.model != repo:
                    continue
                if on_event is not None:
                    on_event(event)
                if event.event == "download_finished":
                    return
                if event.event == "download_failed":
                    raise LlamaRouterError(f"llama.cpp failed to download {repo}{_failure_detail(event.data)}")
        raise LlamaRouterError(f"llama.cpp closed its event stream before {repo} finished downloading")

    async def _pause(self, seconds: float, signal: AbortSignal | None) -> None:
        if signal is not None and signal.aborted:
            raise AbortError(signal.reason)
        await self._sleep(seconds)
        if signal is not None and signal.aborted:
            raise AbortError(signal.reason)


__all__ = [
    "API",
    "LLAMA_DEFAULT_BASE_URL",
    "LLAMA_COMPAT",
    "ON_DEMAND_STATES",
    "LLAMA_PROVIDER_ID",
    "LlamaClient",
    "LlamaConfig",
    "LlamaRouterError",
    "RouterEvent",
    "RouterModel",
    "normalize_llama_url",
    "provider_config",
    "resolve_llama_config",
    "to_model",
    "usable_models",
]
