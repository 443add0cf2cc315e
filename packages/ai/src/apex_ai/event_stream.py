"""Event streams: `EventStream`, the generic async queue, and `AssistantMessageEventStream`, the
async-iterable result of `stream()`.

A producer task pushes events and ends the stream; a consumer iterates, or awaits `result()`
for the final value. The buffer is unbounded on purpose: producers are network reads, and a
slow consumer must not stall the HTTP connection's keep-alive.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, Generic, TypeVar

from apex_ai.events import AssistantMessageEvent, DoneEvent, ErrorEvent
from apex_ai.types import AssistantMessage

E = TypeVar("E")


class EventStream(Generic[E]):
    """An unbounded async queue of events `E`: `push` never waits, iteration ends after `end()`.

    Subclasses add the stream's result: they see every accepted event in `_on_push` and call
    `_finish()` to close the stream.
    """

    def __init__(self) -> None:
        self._queue: deque[E] = deque()
        self._ended = False
        self._waiter: asyncio.Future[None] | None = None
        self._task: asyncio.Task[Any] | None = None

    # ----------------------------------------------------------------- producer side

    def push(self, event: E) -> None:
        """Queue one event. Ignored after the stream ended."""
        if self._ended:
            return
        self._queue.append(event)
        self._on_push(event)
        self._wake()

    def _on_push(self, event: E) -> None:
        """Called for each queued event, before a waiting consumer is woken; nothing by default."""

    def _finish(self) -> None:
        """Close the stream; iteration stops once the queued events are consumed."""
        self._ended = True
        self._wake()

    def attach_task(self, task: asyncio.Task[Any]) -> None:
        """Keep a reference to the producer task so it is not garbage collected mid-stream."""
        self._task = task

    @property
    def ended(self) -> bool:
        return self._ended

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # ----------------------------------------------------------------- consumer side

    def __aiter__(self) -> AsyncIterator[E]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[E]:
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


class AssistantMessageEventStream(EventStream[AssistantMessageEvent]):
    """An async iterator of `AssistantMessageEvent`s ending in one `done` or `error` event."""

    def __init__(self) -> None:
        super().__init__()
        self._result: AssistantMessage | None = None
        self._result_ready = asyncio.Event()

    def _on_push(self, event: AssistantMessageEvent) -> None:
        """A `done`/`error` event also sets the result."""
        if isinstance(event, DoneEvent):
            self._set_result(event.message)
        elif isinstance(event, ErrorEvent):
            self._set_result(event.error)

    def end(self, result: AssistantMessage | None = None) -> None:
        """Close the stream; iteration stops once the queued events are consumed."""
        if result is not None:
            self._set_result(result)
        self._finish()

    def _set_result(self, message: AssistantMessage) -> None:
        if self._result is None:
            self._result = message
            self._result_ready.set()

    async def result(self) -> AssistantMessage:
        """The final assistant message (from the terminal event), whether or not anyone iterates."""
        if self._result is None:
            await self._result_ready.wait()
        assert self._result is not None
        return self._result


__all__ = ["AssistantMessageEventStream", "EventStream"]
