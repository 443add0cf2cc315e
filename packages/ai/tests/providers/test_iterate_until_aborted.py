"""`iterate_until_aborted`: the idle limit and the abort signal around a provider's stream reads.

The reads are interrupted by cancelling the reading task from one re-arming timer or the signal's callback,
so these tests pin what that must never get wrong: the clock counts only time spent waiting for the server,
a cancellation that is not ours passes through untouched, and the source is left cancelled, not leaked.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from apex_ai.abort import AbortController, AbortError
from apex_ai.providers._shared import IdleTimeoutError, iterate_until_aborted


async def _steady(count: int, every: float) -> AsyncIterator[int]:
    for index in range(count):
        await asyncio.sleep(every)
        yield index


async def _silent_after(count: int, cancelled: list[bool]) -> AsyncIterator[int]:
    for index in range(count):
        yield index
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        cancelled.append(True)
        raise
    yield count  # never reached


async def test_the_clock_restarts_with_each_item() -> None:
    # 8 items 0.1 s apart take longer than the 0.5 s limit in all, but no single wait comes near it.
    got = [item async for item in iterate_until_aborted(_steady(8, 0.1), None, idle=0.5, server="s")]
    assert got == list(range(8))


async def test_time_the_consumer_spends_between_reads_does_not_count() -> None:
    got: list[int] = []
    async for item in iterate_until_aborted(_steady(3, 0), None, idle=0.05, server="s"):
        got.append(item)
        await asyncio.sleep(0.2)  # four idle limits spent outside the read
    assert got == [0, 1, 2]


async def test_a_silent_server_raises_idle_timeout_and_the_read_is_cancelled() -> None:
    cancelled: list[bool] = []
    got: list[int] = []
    with pytest.raises(IdleTimeoutError) as raised:
        async for item in iterate_until_aborted(_silent_after(2, cancelled), None, idle=0.1, server="srv"):
            got.append(item)  # noqa: PERF401 -- a comprehension would lose the items read before the error
    assert got == [0, 1]
    assert cancelled == [True]
    assert "srv" in str(raised.value)
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0  # our own cancellation is not left counted


async def test_abort_during_a_read_raises_abort_error() -> None:
    controller = AbortController()
    cancelled: list[bool] = []
    loop = asyncio.get_running_loop()
    loop.call_later(0.05, controller.abort, "stop")
    with pytest.raises(AbortError):
        async for _ in iterate_until_aborted(_silent_after(1, cancelled), controller.signal, idle=None):
            pass
    assert cancelled == [True]
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0


async def test_an_already_aborted_signal_reads_nothing() -> None:
    controller = AbortController()
    controller.abort("before")
    got: list[int] = []
    with pytest.raises(AbortError):
        async for item in iterate_until_aborted(_steady(3, 0), controller.signal, idle=1.0):
            got.append(item)  # noqa: PERF401 -- a comprehension would lose the items read before the error
    assert got == []


async def test_a_cancellation_from_outside_passes_through_unchanged() -> None:
    controller = AbortController()
    cancelled: list[bool] = []

    async def consume() -> None:
        async for _ in iterate_until_aborted(_silent_after(1, cancelled), controller.signal, idle=10.0):
            pass

    task = asyncio.ensure_future(consume())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled == [True]
    # A later abort of the signal finds no reader and no callback left behind.
    controller.abort("late")


async def test_a_source_that_swallows_the_cancellation_still_ends_in_idle_timeout() -> None:
    async def stubborn() -> AsyncIterator[str]:
        yield "first"
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            pass  # some client libraries turn a cancelled read into one more item
        yield "after cancel"

    got: list[str] = []
    with pytest.raises(IdleTimeoutError):
        async for item in iterate_until_aborted(stubborn(), None, idle=0.1, server="s"):
            got.append(item)  # noqa: PERF401 -- a comprehension would lose the items read before the error
    assert got == ["first"]
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0
