"""`ProviderRequests`: how an `AgentSession`'s model requests are made.

Every request (agent turns, compaction and branch summaries) goes through `stream`: `stream_simple` with the
models.json headers, the provider-level retry and timeout settings and the session's keep-alive connections. The
agent's turns go through `agent_stream`, which adds the extensions' provider events (`before_provider_headers`,
`before_provider_request`, `after_provider_response`).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from apex_ai.connection_pool import ConnectionPool
from apex_ai.credentials import apply_credentials
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.options import SimpleStreamOptions
from apex_ai.stream import stream_simple
from apex_ai.types import Context, Model
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.runner import ExtensionRunner


class ProviderRequests:
    """The request path of one session (its `connection_pool` may be handed to the next session)."""

    def __init__(
        self,
        settings_manager: SettingsManager,
        model_runtime: ModelRuntime,
        extension_runner: ExtensionRunner | None,
        connection_pool: ConnectionPool | None = None,
    ) -> None:
        self._settings = settings_manager
        self._model_runtime = model_runtime
        self._runner = extension_runner
        self.connection_pool = connection_pool or ConnectionPool()

    async def agent_stream(
        self, model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        """The agent's stream function: `stream` plus the provider events of extensions."""
        runner = self._runner
        if runner is None:
            return self.stream(model, context, options)
        self._merge_headers(model, options)
        if runner.has_handlers("before_provider_headers"):
            before = {k: v for k, v in (options.headers or {}).items() if v is not None}
            after = await runner.emit_before_provider_headers(before)
            merged: dict[str, str | None] = {k: None for k in before if k not in after}  # None deletes a default
            merged.update(after)
            options.headers = merged
        if runner.has_handlers("before_provider_request"):
            previous_payload_hook = options.on_payload

            async def on_payload(payload: dict[str, Any], payload_model: Model) -> dict[str, Any] | None:
                if previous_payload_hook is not None:
                    earlier = previous_payload_hook(payload, payload_model)
                    earlier = await earlier if inspect.isawaitable(earlier) else earlier
                    payload = earlier if earlier is not None else payload
                replaced: dict[str, Any] | None = await runner.emit_before_provider_request(payload)
                return replaced

            options.on_payload = on_payload
        if runner.has_handlers("after_provider_response"):
            previous_response_hook = options.on_response

            async def on_response(status: int, headers: Mapping[str, str]) -> None:
                if previous_response_hook is not None:
                    earlier = previous_response_hook(status, headers)
                    if inspect.isawaitable(earlier):
                        await earlier
                await runner.emit(ext.AfterProviderResponseEvent(status=status, headers=dict(headers)))

            options.on_response = on_response
        return self.stream(model, context, options, headers_merged=True)

    def _merge_headers(self, model: Model, options: SimpleStreamOptions) -> None:
        # The one credential path (apex_ai.credentials): the session's model runtime resolves the key and the
        # models.json headers once per request; extension header hooks then edit the result, and nothing falls
        # back to a global registry.
        options.credentials = self._model_runtime
        apply_credentials(model, options)

    def stream(
        self, model: Model, context: Context, options: SimpleStreamOptions, *, headers_merged: bool = False
    ) -> AssistantMessageEventStream:
        """`stream_simple` with models.json headers and the provider-level retry settings."""
        if not headers_merged:
            self._merge_headers(model, options)
        settings = self._settings
        options.max_retries = settings.get_int("retry.provider.maxRetries", 0, minimum=0)
        options.idle_timeout_ms = settings.get_int("httpIdleTimeoutMs", 300000, minimum=0)
        timeout = settings.get_int("retry.provider.timeoutMs", 0, minimum=0)
        if timeout:
            options.timeout_ms = timeout
        if options.http_client is None and options.connection_pool is None:
            # Every turn of a run goes to the same provider: reusing the connection saves a TCP + TLS handshake
            # and a TLS context (~23 ms of CPU) per request.
            options.connection_pool = self.connection_pool
        return stream_simple(model, context, options)


__all__ = ["ProviderRequests"]
