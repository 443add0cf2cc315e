"""`MessageQueues`: the display side of the agent's steering and follow-up queues (`queue_update` events).

The agent holds the queued messages; this keeps their texts in the order shown to the user, drops a text once
its message starts, and empties both lists whenever the agent's queues are dropped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from apex_agent.messages import AgentMessage
from apex_ai.types import TextContent, UserMessage
from apex_coding_agent.events import QueueUpdateEvent, SessionEvent


def _user_text(message: AgentMessage) -> str | None:
    if not isinstance(message, UserMessage):
        return None
    if isinstance(message.content, str):
        return message.content
    return "".join(block.text for block in message.content if isinstance(block, TextContent))


class MessageQueues:
    def __init__(self, emit: Callable[[SessionEvent], Awaitable[None]], emit_soon: Callable[[SessionEvent], None]):
        self._emit = emit
        self._emit_soon = emit_soon
        self.steering: list[str] = []
        self.follow_up: list[str] = []

    def event(self) -> QueueUpdateEvent:
        return QueueUpdateEvent(steering=list(self.steering), follow_up=list(self.follow_up))

    async def added(self, queue: list[str], text: str) -> None:
        queue.append(text)
        await self._emit(self.event())

    async def message_started(self, message: AgentMessage) -> None:
        """A queued message went to the model: its text leaves the display."""
        text = _user_text(message)
        if text is None:
            return
        for queue in (self.steering, self.follow_up):
            if text in queue:
                queue.remove(text)
                await self._emit(self.event())
                return

    def clear(self) -> None:
        if self.steering or self.follow_up:
            self.steering.clear()
            self.follow_up.clear()
            self._emit_soon(self.event())


__all__ = ["MessageQueues"]
