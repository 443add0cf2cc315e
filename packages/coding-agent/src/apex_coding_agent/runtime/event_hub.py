"""`SessionEventHub`: an `AgentSession`'s subscribers and the background tasks `wait_for_idle` waits for."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeAlias

from apex_coding_agent.events import SessionEvent
from apex_coding_agent.runtime.extension_host import spawn_logged

log = logging.getLogger("apex_coding_agent.runtime.agent_session")  # the logger these messages always used

SessionListener: TypeAlias = Callable[[SessionEvent], "Awaitable[None] | None"]


class SessionEventHub:
    """Delivers session events to listeners; a listener's exception is logged, never raised into the session."""

    def __init__(self) -> None:
        self.listeners: list[SessionListener] = []
        self.tasks: list[asyncio.Task[None]] = []

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        self.listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self.listeners:
                self.listeners.remove(listener)

        return unsubscribe

    async def emit(self, event: SessionEvent) -> None:
        for listener in list(self.listeners):
            try:
                result = listener(event)
                if inspect.isawaitable(result):
                    await result
            except Exception:  # a subscriber's bug must never break the session
                log.exception("session listener failed on %s", event.type)

    def emit_soon(self, event: SessionEvent) -> None:
        """Emit from synchronous code: sync listeners run now, async ones in a task `drain` awaits."""
        for listener in list(self.listeners):
            try:
                result = listener(event)
            except Exception:  # same policy as `emit`
                log.exception("session listener failed on %s", event.type)
                continue
            if inspect.isawaitable(result):
                self.tasks.append(asyncio.ensure_future(self._await_listener(result, event.type)))

    @staticmethod
    async def _await_listener(result: Awaitable[None], kind: str) -> None:
        try:
            await result
        except Exception:  # same policy as `emit`
            log.exception("session listener failed on %s", kind)

    def spawn(self, work: Coroutine[Any, Any, Any], what: str) -> None:  # Any: the result is dropped
        """Run async work in the background; `drain` waits for it."""
        self.tasks.append(spawn_logged(work, what))

    async def drain(self) -> None:
        """Wait for every background task, including those started while waiting."""
        while self.tasks:
            tasks, self.tasks = self.tasks, []
            await asyncio.gather(*tasks)

    def clear(self) -> None:
        self.listeners.clear()


__all__ = ["SessionEventHub", "SessionListener"]
