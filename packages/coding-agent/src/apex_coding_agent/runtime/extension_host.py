"""The runtime side of the extension layer: `SessionBinding`/`RuntimeActions` over an `AgentSession` and its
`AgentSessionRuntime`, and the agent-event -> extension-event mapping.

`AgentSession` already has methods named like the binding's (`set_model`, `abort`, `compact`, ...) with other
signatures (async where the binding is sync, or the reverse), so the binding is a thin adapter rather than the
session itself. Each session replacement builds a new adapter and re-binds the extension runtime, which makes
every `ctx` of the previous session stale.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from apex_agent import events as agent_events
from apex_agent.agent import declarations
from apex_ai.abort import AbortSignal
from apex_ai.models import ModelRegistry
from apex_ai.types import ImageContent, Model, TextContent, now_ms
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.bindings import DeliverAs

if TYPE_CHECKING:
    from apex_coding_agent.runtime.agent_session import AgentSession
    from apex_coding_agent.runtime.session_runtime import AgentSessionRuntime

log = logging.getLogger(__name__)


class TurnCounter:
    """Numbers the turns of one agent run for `turn_start`/`turn_end` (the agent's events carry no index)."""

    def __init__(self) -> None:
        self.index = 0


def advance_turns(event: agent_events.AgentEvent, turns: TurnCounter) -> None:
    """Keep the turn counter right for an agent event no extension listens to (nothing is built)."""
    if isinstance(event, agent_events.AgentStartEvent):
        turns.index = 0
    elif isinstance(event, agent_events.TurnEndEvent):
        turns.index += 1


def to_extension_event(event: agent_events.AgentEvent, turns: TurnCounter) -> ext.ExtensionEvent | None:
    """The extension event for an agent event (`message_end` and `agent_end` are handled by the session)."""
    if isinstance(event, agent_events.AgentStartEvent):
        turns.index = 0
        return ext.AgentStartEvent()
    if isinstance(event, agent_events.TurnStartEvent):
        return ext.TurnStartEvent(turn_index=turns.index, timestamp=now_ms())
    if isinstance(event, agent_events.TurnEndEvent):
        out = ext.TurnEndEvent(turn_index=turns.index, message=event.message, tool_results=list(event.tool_results))
        turns.index += 1
        return out
    if isinstance(event, agent_events.MessageStartEvent):
        return ext.MessageStartEvent(message=event.message)
    if isinstance(event, agent_events.MessageUpdateEvent):
        return ext.MessageUpdateEvent(message=event.message, assistant_message_event=event.assistant_message_event)
    if isinstance(event, agent_events.ToolExecutionStartEvent):
        return ext.ToolExecutionStartEvent(
            tool_call_id=event.tool_call_id, tool_name=event.tool_name, args=dict(event.args)
        )
    if isinstance(event, agent_events.ToolExecutionUpdateEvent):
        return ext.ToolExecutionUpdateEvent(
            tool_call_id=event.tool_call_id,
            tool_name=event.tool_name,
            args=dict(event.args),
            partial_result=event.partial_result,
        )
    if isinstance(event, agent_events.ToolExecutionEndEvent):
        return ext.ToolExecutionEndEvent(
            tool_call_id=event.tool_call_id, tool_name=event.tool_name, result=event.result, is_error=event.is_error
        )
    if isinstance(event, agent_events.AgentEndEvent):
        return ext.AgentEndEvent(messages=list(event.messages))
    return None


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


async def _maybe_await(value: object) -> object:
    if inspect.isawaitable(value):
        return await value
    return value


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


class RuntimeExtensionActions:
    """`RuntimeActions` over an `AgentSessionRuntime`: the session-replacing command-handler actions."""

    def __init__(self, runtime: AgentSessionRuntime) -> None:
        self._runtime = runtime

    def get_system_prompt_options(self) -> Any:  # Any: SystemPromptOptions
        return self._runtime.session.system_prompt_options

    async def wait_for_idle(self) -> None:
        await self._runtime.session.wait_for_idle()

    async def _with_session(self, with_session: Callable[[Any], Any] | None) -> None:
        runner = self._runtime.extension_runner
        if with_session is not None and runner is not None:
            await _maybe_await(with_session(runner.create_command_context()))

    async def new_session(
        self,
        parent_session: str | None,
        setup: Callable[[Any], Any] | None,  # Any: receives the new SessionManager
        with_session: Callable[[Any], Any] | None,  # Any: receives the new command context
    ) -> dict[str, Any]:  # Any: {cancelled}
        await self._runtime.new_session(parent_session)
        if self._runtime.last_change_cancelled:
            return {"cancelled": True}
        if setup is not None:
            await _maybe_await(setup(self._runtime.session.session_manager))
            self._runtime.session.reload_messages()
        await self._with_session(with_session)
        return {"cancelled": False}

    async def fork(
        self, entry_id: str, position: Literal["before", "at"], with_session: Callable[[Any], Any] | None
    ) -> dict[str, Any]:  # Any: {cancelled}
        result = await self._runtime.fork(entry_id, position)
        if result.cancelled:
            return {"cancelled": True}
        await self._with_session(with_session)
        return {"cancelled": False}

    async def navigate_tree(
        self,
        target_id: str,
        summarize: bool,
        custom_instructions: str | None,
        replace_instructions: bool | None,
        label: str | None,
    ) -> dict[str, Any]:  # Any: {cancelled}
        result = await self._runtime.session.navigate_tree(
            target_id, summarize, custom_instructions, bool(replace_instructions), label
        )
        return {"cancelled": result.cancelled}

    async def switch_session(self, path: str, with_session: Callable[[Any], Any] | None) -> dict[str, Any]:
        await self._runtime.switch_session(path)
        if self._runtime.last_change_cancelled:
            return {"cancelled": True}
        await self._with_session(with_session)
        return {"cancelled": False}

    async def reload(self) -> None:
        await self._runtime.reload()


def spawn_logged(coro: Awaitable[Any], what: str) -> asyncio.Task[None]:  # Any: the awaited result is dropped
    """Run `coro` in a task whose failure is logged (extension-triggered background work)."""

    async def run() -> None:
        try:
            await coro
        except Exception:  # nobody awaits the result: keep a trace instead of an unretrieved-exception warning
            log.exception("extension-triggered %s failed", what)

    return asyncio.ensure_future(run())


__all__ = [
    "RuntimeExtensionActions",
    "SessionExtensionBinding",
    "TurnCounter",
    "spawn_logged",
    "to_extension_event",
    "tool_info",
]
