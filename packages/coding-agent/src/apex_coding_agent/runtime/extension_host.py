"""The runtime side of the extension layer that every session needs: the agent-event -> extension-event mapping
(`to_extension_event`, with the turn numbering the agent's events lack) and `spawn_logged` for background work
extensions trigger. The adapters extensions act through live in extension_binding.py and runtime_actions.py.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

from apex_agent import events as agent_events
from apex_ai.types import now_ms
from apex_coding_agent.extensions import events as ext

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


def spawn_logged(coro: Awaitable[Any], what: str) -> asyncio.Task[None]:  # Any: the awaited result is dropped
    """Run `coro` in a task whose failure is logged (extension-triggered background work)."""

    async def run() -> None:
        try:
            await coro
        except Exception:  # nobody awaits the result: keep a trace instead of an unretrieved-exception warning
            log.exception("extension-triggered %s failed", what)

    return asyncio.ensure_future(run())


__all__ = ["TurnCounter", "advance_turns", "spawn_logged", "to_extension_event"]
