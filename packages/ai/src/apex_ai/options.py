"""Request options of `stream()` / `stream_simple()`.

Plain dataclasses, not wire types: they hold callables, a signal and an HTTP client.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from apex_ai.abort import AbortSignal
from apex_ai.types import CacheRetention, Model, ThinkingLevel

if TYPE_CHECKING:  # httpx2 costs ~135 ms to import; only type checkers need it here.
    import httpx2

    from apex_ai.connection_pool import ConnectionPool

PayloadHook = Callable[[dict[str, Any], Model], "dict[str, Any] | None | Awaitable[dict[str, Any] | None]"]
ResponseHook = Callable[[int, Mapping[str, str]], "None | Awaitable[None]"]


class CredentialStore(Protocol):
    """Where stored API keys come from; the caller injects it (apex_ai never reads auth.json).

    An `apex_ai.credentials.Credentials` is one too, and then the only source of keys and credential headers.
    """

    def get_api_key(self, provider: str) -> str | None: ...


@dataclass(kw_only=True)
class StreamOptions:
    """Options of one request. Unset (None) values fall back to the model's or the API's defaults."""

    signal: AbortSignal | None = None
    api_key: str | None = None
    headers: dict[str, str | None] | None = None
    """Extra headers; a None value deletes a default header."""
    timeout_ms: int | None = None
    max_retries: int = 0
    """Provider-level HTTP retries, off by default: the session layer retries whole replies."""
    max_retry_delay_ms: int = 60000
    idle_timeout_ms: int = 300000
    """Fail a request (retryably) when the server sends no content for this long: no response headers, or no
    event of the body; keep-alive pings do not count. 0 disables it."""
    temperature: float | None = None
    max_tokens: int | None = None
    sampling_params: dict[str, Any] | None = None
    cache_retention: CacheRetention | None = None
    """None means the default: `short`, or `long` when APEX_CODE_CACHE_RETENTION=long."""
    session_id: str | None = None
    metadata: dict[str, Any] | None = None
    on_payload: PayloadHook | None = None
    on_response: ResponseHook | None = None
    env: Mapping[str, str] | None = None
    """Looked up before `os.environ` for API keys and other settings."""
    credentials: CredentialStore | None = None
    credentials_applied: bool = False
    """Set by `apex_ai.credentials.apply_credentials`: the key and credential headers are resolved and merged."""
    http_client: httpx2.AsyncClient | None = None
    """An HTTP client for the SDK (tests inject a mock transport); the caller owns and closes it."""
    connection_pool: ConnectionPool | None = None
    """Keep-alive connections shared with the caller's other requests (used when `http_client` is None); the
    caller owns and closes it. Without either, each request opens and closes connections of its own."""
    # API-specific options.
    thinking_enabled: bool | None = None
    """anthropic-messages: turn extended thinking on or off."""
    thinking_budget_tokens: int | None = None
    effort: str | None = None
    """anthropic-messages adaptive thinking effort."""
    reasoning_effort: str | None = None
    """openai-completions / openai-responses effort value, sent as given."""
    reasoning_summary: str | None = None
    tool_choice: Any = None


@dataclass(kw_only=True)
class SimpleStreamOptions(StreamOptions):
    """`StreamOptions` plus a provider-neutral thinking level, mapped per API."""

    reasoning: ThinkingLevel | None = None
    thinking_budgets: dict[str, int] | None = None


__all__ = ["CredentialStore", "PayloadHook", "ResponseHook", "SimpleStreamOptions", "StreamOptions"]
