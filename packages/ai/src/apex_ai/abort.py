"""Cooperative abort: one signal flows through requests, retry sleeps and tools.

Task cancellation is never the abort mechanism: a cancelled task cannot record what it had
streamed so far, an aborted request can.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final

log = logging.getLogger(__name__)

ABORTED_MESSAGE: Final = "Request was aborted"
"""The errorMessage of a reply ended by the caller's abort signal, whichever layer ends it."""


class AbortError(Exception):
    """Raised by helpers such as `AbortSignal.sleep` when the signal fires."""

    def __init__(self, reason: Any = None) -> None:
        super().__init__(ABORTED_MESSAGE if reason is None else str(reason))
        self.reason = reason


class AbortSignal:
    """Read side of an abort: check `aborted`, await `wait()`, or register a callback."""

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._callbacks: list[Callable[[], None]] = []
        self._events: list[asyncio.Event] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> Any:
        return self._reason

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` once on abort (at once if already aborted); returns a remover."""
        if self._aborted:
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        if self._aborted:
            return
        event = asyncio.Event()
        self._events.append(event)
        try:
            await event.wait()
        finally:
            if event in self._events:
                self._events.remove(event)

    async def sleep(self, seconds: float) -> None:
        """Sleep, but raise `AbortError` as soon as the signal fires."""
        if self._aborted:
            raise AbortError(self._reason)
        if seconds <= 0:
            return
        waiter = asyncio.ensure_future(self.wait())
        try:
            await asyncio.wait_for(asyncio.shield(waiter), timeout=seconds)
        except TimeoutError:
            return
        finally:
            waiter.cancel()
        raise AbortError(self._reason)

    def throw_if_aborted(self) -> None:
        if self._aborted:
            raise AbortError(self._reason)

    def _fire(self, reason: Any) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a broken listener must not stop the others from hearing the abort
                log.exception("abort callback failed")
        for event in self._events:
            event.set()

    @staticmethod
    def any(*signals: AbortSignal | None) -> AbortSignal:
        """A signal that fires when any of `signals` does."""
        controller = AbortController()
        for signal in signals:
            if signal is not None:
                signal.add_callback(_forward(signal, controller))
        return controller.signal


def _forward(source: AbortSignal, target: AbortController) -> Callable[[], None]:
    return lambda: target.abort(source.reason)


class AbortController:
    """Write side of an abort: owns a signal and fires it."""

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = None) -> None:
        self.signal._fire(reason)


async def sleep_abortable(seconds: float, signal: AbortSignal | None) -> None:
    """`asyncio.sleep` that raises `AbortError` early when `signal` fires."""
    if signal is None:
        await asyncio.sleep(seconds)
    else:
        await signal.sleep(seconds)


__all__ = ["AbortController", "AbortError", "AbortSignal", "sleep_abortable"]
