"""`SessionExtensionBinding`: the `SessionBinding` extensions act through, over one `AgentSession`.

`AgentSession` already has methods named like the binding's (`set_model`, `abort`, `compact`, ...) with other
signatures (async where the binding is sync, or the reverse), so the binding is a thin adapter rather than the
session itself. Each session replacement builds a new adapter and re-binds the extension runtime, which makes
every `ctx` of the previous session stale.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from apex_agent.agent import declarations
from apex_ai.abort import AbortSignal
from apex_ai.models import ModelRegistry
from apex_ai.types import ImageContent, Model, TextContent
from apex_coding_agent.extensions.bindings import DeliverAs

if TYPE_CHECKING:
    from apex_coding_agent.runtime.agent_session import AgentSession

log = logging.getLogger(__name__)


def tool_info(tool: Any) -> dict[str, Any]:  # Any: AgentTool; the record is JSON
    """`get_all_tools` record: `{name, description, parameters, sourceInfo?}`."""
    declaration = declarations([tool])[0]
    record: dict[str, Any] = {  # Any: JSON values
        "name": declaration.name,
        "description": declaration.description,
        "parameters": declaration.parameters,
    }
    path = getattr(tool, "extension_path", None)
    if isinstance(path, str):
        record["sourceInfo"] = {"path": path, "source": "extension"}
    return record


class SessionExtensionBinding:
    """`SessionBinding` over one `AgentSession` (see the module docstring).

    `on_shutdown` is the mode's deferred shutdown (RPC); without it `shutdown()` does nothing (print mode).
    """

    def __init__(self, session: AgentSession, on_shutdown: Callable[[], None] | None = None) -> None:
        self._session = session
        self._on_shutdown = on_shutdown

    # ----------------------------------------------------------------- pi actions

    def send_message(self, message: dict[str, Any], deliver_as: DeliverAs | None, trigger_turn: bool) -> None:
        self._session.send_custom_message(message, deliver_as, trigger_turn)

    def send_user_message(self, content: str | list[TextContent | ImageContent], deliver_as: DeliverAs | None) -> None:
        self._session.send_user_message(content, deliver_as)

    def append_entry(self, custom_type: str, data: Any) -> None:  # Any: extension JSON
        self._session.append_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self._session.set_session_name(name)

    def get_session_name(self) -> str | None:
        return self._session.session_name

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._session.session_manager.append_label_change(entry_id, label)

    def get_active_tools(self) -> list[str]:
        return [tool.name for tool in self._session.agent.state.tools]

    def get_all_tools(self) -> list[dict[str, Any]]:  # Any: JSON records
        return [tool_info(tool) for tool in self._session.all_tools().values()]

    def set_active_tools(self, names: Sequence[str]) -> None:
        self._session.set_active_tools(names)

    def refresh_tools(self) -> None:
        self._session.refresh_tools()

    async def set_model(self, model: Model) -> bool:
        if not self._session.model_runtime.is_available(model):
            return False
        self._session.set_model(model)
        return True

    def get_thinking_level(self) -> str:
        return self._session.thinking_level

    def set_thinking_level(self, level: str) -> None:
        self._session.set_thinking_level(level)  # type: ignore[arg-type]  # validated by the session (raises)

    def get_resource_commands(self) -> list[dict[str, Any]]:  # Any: JSON records
        return [dict(c) for c in self._session.get_resource_commands()]

    # ----------------------------------------------------------------- ctx members

    @property
    def cwd(self) -> str:
        return self._session.cwd

    @property
    def session_manager(self) -> Any:  # Any: SessionManager (see the protocol)
        return self._session.session_manager

    @property
    def model_registry(self) -> ModelRegistry:
        return self._session.model_runtime.registry

    @property
    def model(self) -> Model | None:
        return self._session.model

    @property
    def scoped_models(self) -> list[Any]:  # Any: ScopedModel records
        return list(self._session.scoped_models)

    @property
    def signal(self) -> AbortSignal | None:
        return self._session.agent.signal

    def is_project_trusted(self) -> bool:
        return self._session.project_trusted

    def is_idle(self) -> bool:
        return not self._session.is_streaming

    def abort(self) -> None:
        self._session.spawn(self._session.abort(), "abort")

    def has_pending_messages(self) -> bool:
        return self._session.agent.has_queued_messages()

    def shutdown(self) -> None:
        if self._on_shutdown is not None:
            self._on_shutdown()

    def get_context_usage(self) -> Any:  # Any: ContextUsage or None
        return self._session.get_session_stats().context_usage

    def compact(
        self,
        custom_instructions: str | None,
        on_complete: Callable[[Any], None] | None,  # Any: CompactionResult
        on_error: Callable[[BaseException], None] | None,
    ) -> None:
        async def run() -> None:
            try:
                result = await self._session.compact(custom_instructions)
            except Exception as exc:  # handed to the extension's callback, or logged without one
                if on_error is not None:
                    on_error(exc)
                else:
                    log.warning("extension compaction failed: %s", exc)
                return
            if on_complete is not None:
                on_complete(result)

        self._session.spawn(run(), "compact")

    def get_system_prompt(self) -> str:
        return self._session.base_system_prompt


__all__ = ["SessionExtensionBinding", "tool_info"]
