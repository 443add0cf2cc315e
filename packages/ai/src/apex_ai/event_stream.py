"""`AssistantMessageEventStream`: the async-iterable result of `stream()`.

A producer task pushes events and ends the stream; a consumer iterates, or awaits `result()`
for the final message. The buffer is unbounded on purpose: producers are network reads, and a
slow consumer must not stall the HTTP connection's keep-alive.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from apex_ai.events import AssistantMessageEvent, DoneEvent, ErrorEvent
from apex_ai.types import AssistantMessage


class AssistantMessageEventStream:
    """An async iterator of `AssistantMessageEvent`s ending in one `done` or `error` event."""

    def __init__(self) -> None:
        self._queue: deque[AssistantMessageEvent] = deque()
        self._ended = False
        self._waiter: asyncio.Future[None] | None = None
        self._result: AssistantMessage | None = None
        self._result_ready = asyncio.Event()
        self._task: asyncio.Task[Any] | None = None

    # ----------------------------------------------------------------- producer side

    def push(self, event: AssistantMessageEvent) -> None:
        """Queue one event; a `done`/`error` event also sets the result. Ignored after `end()`."""
        if self._ended:
            return
        self._queue.append(event)
        if isinstance(event, DoneEvent):
            self._set_result(event.message)
        elif isinstance(event, ErrorEvent):
            self._set_result(event.error)
        self._wake()

    def end(self, result: AssistantMessage | None = None) -> None:
        """Close the stream; iteration stops once the queued events are consumed."""
        if result is not None:
            self._set_result(result)
        self._ended = True
        self._wake()

    def attach_task(self, task: asyncio.Task[Any]) -> None:
        """Keep a reference to the producer task so it is not garbage collected mid-stream."""
        self._task = task

    @property
    def ended(self) -> bool:
        return self._ended

    def _set_result(self, message: AssistantMessage) -> None:
        if self._result is None:
            self._result = message
            self._result_ready.set()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # ----------------------------------------------------------------- consumer side

    def __aiter__(self) -> AsyncIterator[AssistantMessageEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[AssistantMessageEvent]:
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

    async def result(self) -> AssistantMessage:
        """The final assistant message (from the terminal event), whether or not anyone iterates."""
        if self._result is None:
            await self._result_ready.wait()
        assert self._result is not None
        return self._result


__all__ = ["AssistantMessageEventStream"]
