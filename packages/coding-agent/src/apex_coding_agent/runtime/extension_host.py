"""The runtime side of the extension layer that every session needs: the agent-event -> handler-view mapping
(`to_extension_event`, with the turn numbering the agent's events lack) and `spawn_logged` for background work
extensions trigger. The adapters extensions act through live in extension_binding.py and runtime_actions.py.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

from apex_ai.types import now_ms
from apex_coding_agent.events import AgentEvent, AgentStartEvent, TurnEndEvent, TurnStartEvent
from apex_coding_agent.extensions import events as ext

log = logging.getLogger(__name__)


class TurnCounter:
    """Numbers the turns of one agent run for `turn_start`/`turn_end` (the agent's events carry no index)."""

    def __init__(self) -> None:
        self.index = 0


def advance_turns(event: AgentEvent, turns: TurnCounter) -> None:
    """Keep the turn counter right for an agent event no extension listens to (nothing is built)."""
    if isinstance(event, AgentStartEvent):
        turns.index = 0
    elif isinstance(event, TurnEndEvent):
        turns.index += 1


def to_extension_event(event: AgentEvent, turns: TurnCounter) -> ext.HandlerEvent:
    """The handler's view of an agent event, numbering the turns (`message_end` is handled by the session)."""
    if isinstance(event, TurnStartEvent):
        return ext.extension_view(event, turn_index=turns.index, timestamp=now_ms())
    if isinstance(event, TurnEndEvent):
        view = ext.extension_view(event, turn_index=turns.index)
        turns.index += 1
        return view
    advance_turns(event, turns)
    return ext.extension_view(event)


def spawn_logged(coro: Awaitable[Any], what: str) -> asyncio.Task[None]:  # Any: the awaited result is dropped
    """Run `coro` in a task whose failure is logged (extension-triggered background work)."""

    async def run() -> None:
        try:
            await coro
        except Exception:  # nobody awaits the result: keep a trace instead of an unretrieved-exception warning
            log.exception("extension-triggered %s failed", what)

    return asyncio.ensure_future(run())


__all__ = ["TurnCounter", "advance_turns", "spawn_logged", "to_extension_event"]
