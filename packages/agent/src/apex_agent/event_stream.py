"""`AgentEventStream`: what the low-level `agent_loop()` returns.

The loop task pushes events without waiting for consumers (the `Agent` class is the layer that
awaits its listeners); a consumer iterates the events or awaits `result()`, the run's new messages.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from apex_agent.events import AgentEvent
from apex_agent.messages import AgentMessage


class AgentEventStream:
    """An async iterator of `AgentEvent`s that ends after `agent_end`; `result()` gives the new messages."""

    def __init__(self) -> None:
        self._queue: deque[AgentEvent] = deque()
        self._ended = False
        self._waiter: asyncio.Future[None] | None = None
        self._result: asyncio.Future[list[AgentMessage]] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[Any] | None = None

    def push(self, event: AgentEvent) -> None:
        if self._ended:
            return
        self._queue.append(event)
        self._wake()

    def end(self, result: list[AgentMessage] | None = None, error: BaseException | None = None) -> None:
        """Close the stream with the run's new messages, or with the exception that ended it."""
        if not self._result.done():
            if error is not None:
                self._result.set_exception(error)
            else:
                self._result.set_result(result or [])
        self._ended = True
        self._wake()

    def attach_task(self, task: asyncio.Task[Any]) -> None:
        """Keep a reference to the loop task so it is not garbage collected mid-run."""
        self._task = task

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def __aiter__(self) -> AsyncIterator[AgentEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[AgentEvent]:
        while True:
            if self._queue:
                yield self._queue.popleft()
                continue
            if self._ended:
                return
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def result(self) -> list[AgentMessage]:
        """The messages the run added (prompts included); re-raises what ended the run abnormally."""
        return await asyncio.shield(self._result)


__all__ = ["AgentEventStream"]
