"""`AgentEventStream`: what the low-level `agent_loop()` returns.

The loop task pushes events without waiting for consumers (the `Agent` class is the layer that
awaits its listeners); a consumer iterates the events or awaits `result()`, the run's new messages.
"""

from __future__ import annotations

import asyncio

from apex_agent.events import AgentEvent
from apex_agent.messages import AgentMessage
from apex_ai.event_stream import EventStream


class AgentEventStream(EventStream[AgentEvent]):
    """An async iterator of `AgentEvent`s that ends after `agent_end`; `result()` gives the new messages."""

    def __init__(self) -> None:
        super().__init__()
        self._result: asyncio.Future[list[AgentMessage]] = asyncio.get_running_loop().create_future()

    def end(self, result: list[AgentMessage] | None = None, error: BaseException | None = None) -> None:
        """Close the stream with the run's new messages, or with the exception that ended it."""
        if not self._result.done():
            if error is not None:
                self._result.set_exception(error)
            else:
                self._result.set_result(result or [])
        self._finish()

    async def result(self) -> list[AgentMessage]:
        """The messages the run added (prompts included); re-raises what ended the run abnormally."""
        return await asyncio.shield(self._result)


__all__ = ["AgentEventStream"]
