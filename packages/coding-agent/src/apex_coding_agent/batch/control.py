"""State every worker of a batch shares: the stop flag, the money spent, and one rate limiter per provider.

`BatchControl` is a plain object; the engines host one instance where all workers reach it (a
`multiprocessing` manager process for the local pool, a Ray actor on a cluster) and hand the workers a proxy.
Its methods are short and never block, so one host serves many workers: a worker asks `reserve(provider)` how
long to wait before its next request and sleeps on its own side.

The limiter is a token bucket per provider that starts unlimited. A 429 from any worker pauses every worker of
that provider for the server's `retry-after` (or a second), and sets the bucket's rate to half of what the
workers sent over the last ten seconds (or since their first request); each success after that raises the rate by
a tenth. So one worker's 429
slows all of them, and the rate climbs back while the provider keeps answering.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

_WINDOW_SECONDS: Final = 10.0
_MIN_RATE: Final = 0.05
"""Requests per second a provider is never throttled below (one every 20 s)."""
_DEFAULT_PAUSE: Final = 1.0


@dataclass
class _Bucket:
    rate: float | None = None
    """Requests per second; None until the first 429."""
    tokens: float = 1.0
    refilled: float = 0.0
    paused_until: float = 0.0
    sent: deque[float] = field(default_factory=deque)
    throttles: int = 0


class BatchControl:
    """The shared state of one batch run (see the module docstring); `clock` is for tests."""

    def __init__(
        self, spent: float = 0.0, max_cost: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._clock = clock
        self._stopped = False
        self._spent = spent
        self._max_cost = max_cost
        self._buckets: dict[str, _Bucket] = {}
        self._started: list[str] = []

    # ----------------------------------------------------------------- stop and money

    def stop(self) -> None:
        self._stopped = True

    def stopped(self) -> bool:
        return self._stopped

    def budget_reached(self) -> bool:
        return self._max_cost is not None and self._spent >= self._max_cost

    def may_start(self) -> bool:
        """Whether a task may start now: the batch was not stopped and its money is not spent."""
        return not self._stopped and not self.budget_reached()

    def add_cost(self, amount: float) -> None:
        self._spent += amount

    def spent(self) -> float:
        return self._spent

    def task_started(self, task_id: str) -> None:
        """A task began on some worker (the Ray driver times its limit from when it learns of this)."""
        self._started.append(task_id)

    def started_since(self, count: int) -> list[str]:
        """The ids of the tasks that began after the first `count` of them."""
        return self._started[count:]

    # ----------------------------------------------------------------- rate limits

    def _bucket(self, provider: str) -> _Bucket:
        bucket = self._buckets.get(provider)
        if bucket is None:
            bucket = self._buckets[provider] = _Bucket(refilled=self._clock())
        return bucket

    def reserve(self, provider: str) -> float:
        """Take a request slot for `provider`: 0 when the request may go now, else the seconds to wait before
        asking again (nothing was taken then)."""
        now = self._clock()
        bucket = self._bucket(provider)
        if now < bucket.paused_until:
            return bucket.paused_until - now
        if bucket.rate is not None:
            bucket.tokens = min(1.0, bucket.tokens + (now - bucket.refilled) * bucket.rate)
            bucket.refilled = now
            if bucket.tokens < 1.0:
                return (1.0 - bucket.tokens) / bucket.rate
            bucket.tokens -= 1.0
        bucket.sent.append(now)
        while bucket.sent and bucket.sent[0] < now - _WINDOW_SECONDS:
            bucket.sent.popleft()
        return 0.0

    def throttled(self, provider: str, retry_after: float | None) -> None:
        """A request to `provider` was answered 429: pause everyone and halve the rate."""
        now = self._clock()
        bucket = self._bucket(provider)
        bucket.throttles += 1
        bucket.paused_until = max(bucket.paused_until, now + (retry_after if retry_after else _DEFAULT_PAUSE))
        recent = [t for t in bucket.sent if t >= now - _WINDOW_SECONDS]
        # Requests per second over the window, or since the first request when that is shorter (at least a second).
        sent_rate = len(recent) / max(1.0, now - recent[0]) if recent else 0.0
        current = bucket.rate if bucket.rate is not None else sent_rate
        bucket.rate = max(_MIN_RATE, current / 2)
        bucket.tokens = 1.0  # one request may go as soon as the pause ends; the rate paces the ones after it
        bucket.refilled = bucket.paused_until

    def succeeded(self, provider: str) -> None:
        """A request to `provider` was answered: let the rate climb back."""
        bucket = self._bucket(provider)
        if bucket.rate is not None:
            bucket.rate *= 1.1

    def throttle_count(self, provider: str) -> int:
        return self._bucket(provider).throttles

    def rate(self, provider: str) -> float | None:
        return self._bucket(provider).rate


__all__ = ["BatchControl"]
