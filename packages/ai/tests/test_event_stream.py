"""AssistantMessageEventStream (spec ai.md §6)."""

import asyncio

from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.events import DoneEvent, ErrorEvent, StartEvent, TextDeltaEvent
from apex_ai.types import AssistantMessage


def _message(stop: str = "stop") -> AssistantMessage:
    return AssistantMessage.model_validate(
        {"api": "faux", "provider": "faux", "model": "m", "stopReason": stop, "timestamp": 1}
    )


async def test_events_come_out_in_order_and_iteration_stops_at_end() -> None:
    s = AssistantMessageEventStream()
    partial = _message("pending")
    final = _message()
    s.push(StartEvent(partial=partial))
    s.push(TextDeltaEvent(content_index=0, delta="a", partial=partial))
    s.push(DoneEvent(reason="stop", message=final))
    s.end()
    assert [e.type async for e in s] == ["start", "text_delta", "done"]
    assert await s.result() is final


async def test_result_without_iterating() -> None:
    s = AssistantMessageEventStream()
    failed = _message("error")
    s.push(ErrorEvent(reason="error", error=failed))
    assert await s.result() is failed


async def test_consumer_waits_for_a_producer_task() -> None:
    s = AssistantMessageEventStream()
    final = _message()

    async def produce() -> None:
        await asyncio.sleep(0)
        s.push(StartEvent(partial=_message("pending")))
        await asyncio.sleep(0)
        s.push(DoneEvent(reason="stop", message=final))
        s.end()

    s.attach_task(asyncio.create_task(produce()))
    assert [e.type async for e in s] == ["start", "done"]
    assert s.ended


async def test_pushes_after_end_are_ignored_and_first_result_wins() -> None:
    s = AssistantMessageEventStream()
    first = _message()
    s.push(DoneEvent(reason="stop", message=first))
    s.end()
    s.push(ErrorEvent(reason="error", error=_message("error")))
    assert [e.type async for e in s] == ["done"]
    assert await s.result() is first


async def test_end_with_result() -> None:
    s = AssistantMessageEventStream()
    final = _message()
    s.end(final)
    assert [e async for e in s] == []
    assert await s.result() is final
