"""`AgentHooks`: the hooks an `AgentSession` installs on its agent, all in one place (`install`).

* every tool call passes the extensions' `tool_call` handlers, then the permission gate; a blocked call becomes
  an error result carrying the reason, and `tool_result` handlers may patch the result;
* before each model call the context drops stale usage and goes through the extensions' `context` handlers;
* the agent's requests go through the session's `ProviderRequests` (request_hooks.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from apex_agent.agent import Agent, Listener
from apex_agent.messages import AgentMessage
from apex_agent.types import AfterToolCallContext, AfterToolCallResult, BeforeToolCallContext, BeforeToolCallResult
from apex_ai.abort import AbortSignal
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.runtime.compaction_policy import stale_test, without_stale_usage
from apex_coding_agent.runtime.request_hooks import ProviderRequests
from apex_coding_agent.session.session_manager import SessionManager


class ToolObserver(Protocol):
    async def before_tool(self, name: str, tool_call_id: str, args: dict[str, Any]) -> None: ...  # Any: arguments

    async def after_tool(self, name: str, tool_call_id: str, args: dict[str, Any]) -> None: ...  # Any: arguments


class AgentHooks:
    def __init__(
        self,
        session_manager: SessionManager,
        extension_runner: ExtensionRunner | None,
        permission_gate: PermissionGate | None,
    ) -> None:
        self._session_manager = session_manager
        self._runner = extension_runner
        self.permission_gate = permission_gate
        self.tool_observer: ToolObserver | None = None
        """Told of every allowed tool call just before it runs and after it ran (file checkpoints)."""

    def install(
        self, agent: Agent, requests: ProviderRequests, model_runtime: ModelRuntime, on_event: Listener
    ) -> Callable[[], None]:
        """Wire the agent to the session; returns the function that unsubscribes `on_event`."""
        agent.before_tool_call = self.before_tool_call
        agent.after_tool_call = self.after_tool_call
        agent.transform_context = self.transform_context
        agent.get_api_key = model_runtime.get_api_key
        agent.stream_fn = requests.agent_stream
        agent.session_id = self._session_manager.session_id
        return agent.subscribe(on_event)

    async def before_tool_call(
        self, context: BeforeToolCallContext, signal: AbortSignal | None
    ) -> BeforeToolCallResult | None:
        decision = await self._gate(context)
        if decision is None and self.tool_observer is not None:
            await self.tool_observer.before_tool(context.tool_call.name, context.tool_call.id, context.args)
        return decision

    async def _gate(self, context: BeforeToolCallContext) -> BeforeToolCallResult | None:
        runner = self._runner
        if runner is not None and runner.has_handlers("tool_call"):
            event = ext.ToolCallEvent(
                tool_name=context.tool_call.name, tool_call_id=context.tool_call.id, input=context.args
            )
            decision = await runner.emit_tool_call(event)
            if event.input is not context.args:
                # Handlers edit `event.input`; the tool runs with the (not re-validated) edited arguments.
                context.args.clear()
                context.args.update(event.input)
            if decision is not None and decision.block:
                return BeforeToolCallResult(block=True, reason=decision.reason, terminate=bool(decision.terminate))
        if self.permission_gate is None:
            return None
        allowed, reason = await self.permission_gate.authorize(context.tool_call.name, context.args)
        if allowed:
            return None
        return BeforeToolCallResult(block=True, reason=reason)

    async def after_tool_call(
        self, context: AfterToolCallContext, signal: AbortSignal | None
    ) -> AfterToolCallResult | None:
        if self.tool_observer is not None:
            await self.tool_observer.after_tool(context.tool_call.name, context.tool_call.id, context.args)
        runner = self._runner
        if runner is None or not runner.has_handlers("tool_result"):
            return None
        result = context.result
        patch = await runner.emit_tool_result(
            ext.ToolResultEvent(
                tool_name=context.tool_call.name,
                tool_call_id=context.tool_call.id,
                input=context.args,
                content=list(result.content),
                details=result.details,
                is_error=context.is_error,
                usage=getattr(result, "usage", None),
            )
        )
        if patch is None:
            return None
        return AfterToolCallResult(
            content=patch.content, details=patch.details, is_error=patch.is_error, usage=patch.usage
        )

    async def transform_context(self, messages: list[AgentMessage], signal: AbortSignal | None) -> list[AgentMessage]:
        """The `context` event before each LLM call: handlers get a deep copy and may replace the list."""
        messages = without_stale_usage(messages, lambda _: stale_test(self._session_manager.get_branch_view()))
        runner = self._runner
        if runner is None or not runner.has_handlers("context"):
            return messages
        replaced: list[AgentMessage] = await runner.emit_context(messages)
        return replaced


__all__ = ["AgentHooks", "ToolObserver"]
