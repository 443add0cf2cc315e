"""The faux provider (spec ai.md §18; acceptance checks 2-4)."""

import asyncio
import gc
import itertools
import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apex_ai import api_registry
from apex_ai.abort import AbortController
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.events import AssistantMessageEvent, DoneEvent, ErrorEvent
from apex_ai.models import default_registry
from apex_ai.options import StreamOptions
from apex_ai.providers.faux import (
    FauxProvider,
    FauxState,
    _common_prefix,
    _JsonMemo,
    _serialize_context,
    faux_assistant_message,
    faux_provider,
    faux_text,
    faux_thinking,
    faux_tool_call,
    stream_faux,
)
from apex_ai.stream import complete, stream
from apex_ai.types import AssistantMessage, Context, Model, ModelCost, UserMessage


def _context(text: str = "hello") -> Context:
    return Context(system_prompt="be brief", messages=[UserMessage(content=text, timestamp=1)])


async def _collect(events: AssistantMessageEventStream) -> list[AssistantMessageEvent]:
    return [event async for event in events]


def _collapsed_types(events: list[AssistantMessageEvent]) -> list[str]:
    return [kind for kind, _ in itertools.groupby(event.type for event in events)]


async def test_thinking_text_tool_call_event_sequence() -> None:
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_thinking("Let me think about the files in this directory first."),
                    faux_text("I will read the file a.py now, it should be short."),
                    faux_tool_call("read", {"path": "a.py", "limit": 20}, id="call_1"),
                ],
                stop_reason="toolUse",
            )
        ]
    )
    s = stream(faux.model(), _context())
    events = await _collect(s)
    assert _collapsed_types(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    indexed = [e for e in events if e.type not in ("start", "done", "error")]
    assert {e.type.split("_")[0]: e.content_index for e in indexed} == {"thinking": 0, "text": 1, "toolcall": 2}  # type: ignore[union-attr]
    text_deltas = "".join(e.delta for e in events if e.type == "text_delta")  # type: ignore[union-attr]
    assert text_deltas == "I will read the file a.py now, it should be short."
    assert sum(e.type == "text_delta" for e in events) > 1
    tool_json = "".join(e.delta for e in events if e.type == "toolcall_delta")  # type: ignore[union-attr]
    assert json.loads(tool_json) == {"path": "a.py", "limit": 20}
    tool_end = next(e for e in events if e.type == "toolcall_end")
    assert tool_end.tool_call.arguments == {"path": "a.py", "limit": 20}  # type: ignore[union-attr]
    assert tool_end.tool_call.id == "call_1"  # type: ignore[union-attr]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.reason == "toolUse"
    result = await s.result()
    assert done.message is result
    assert result.stop_reason == "toolUse"
    assert (result.api, result.provider, result.model) == ("faux", "faux", "faux-1")
    assert [block.type for block in result.content] == ["thinking", "text", "toolCall"]
    # every event's partial is the live message that becomes the result
    assert all(e.partial is result for e in events if e.type not in ("done", "error"))  # type: ignore[union-attr]


async def test_tool_call_deltas_parse_partially() -> None:
    faux = FauxProvider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message([faux_tool_call("write", {"path": "x.txt", "content": "abc" * 10})])])
    seen: list[dict[str, object]] = []
    async for event in stream(faux.model(), _context()):
        if event.type == "toolcall_delta":
            block = event.partial.content[event.content_index]
            seen.append(dict(block.arguments))  # type: ignore[union-attr]
    assert len(seen) > 3
    assert seen[-1] == {"path": "x.txt", "content": "abc" * 10}
    assert any(args.get("path") == "x.txt" and args != seen[-1] for args in seen)


async def test_empty_queue_is_a_single_error_event() -> None:
    faux = FauxProvider()
    events = await _collect(stream(faux.model(), _context()))
    assert len(events) == 1
    event = events[0]
    assert isinstance(event, ErrorEvent)
    assert event.reason == "error"
    assert event.error.stop_reason == "error"
    assert event.error.error_message == "No more faux responses queued"
    assert faux.state.call_count == 1


async def test_abort_after_first_text_delta_keeps_partial_text() -> None:
    faux = FauxProvider(token_size=(1, 1))
    full = "This reply is long enough to be split into many small deltas."
    faux.set_responses([faux_assistant_message(full)])
    controller = AbortController()
    events: list[AssistantMessageEvent] = []
    async for event in stream(faux.model(), _context(), StreamOptions(signal=controller.signal)):
        events.append(event)
        if event.type == "text_delta":
            controller.abort()
    last = events[-1]
    assert isinstance(last, ErrorEvent)
    assert last.reason == "aborted"
    assert last.error.stop_reason == "aborted"
    assert last.error.error_message == "Request was aborted"
    kept = last.error.content[0].text  # type: ignore[union-attr]
    assert kept and full.startswith(kept) and kept != full
    assert sum(e.type == "text_delta" for e in events) == 1


async def test_abort_before_start_sends_no_start() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("hi")])
    controller = AbortController()
    controller.abort()
    events = await _collect(stream(faux.model(), _context(), StreamOptions(signal=controller.signal)))
    assert [e.type for e in events] == ["error"]
    assert events[0].error.stop_reason == "aborted"  # type: ignore[union-attr]


async def test_steps_pop_in_order_and_can_be_callables() -> None:
    faux = FauxProvider()
    seen: list[tuple[int, str]] = []

    def sync_step(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        seen.append((state.call_count, model.id))
        return faux_assistant_message(f"sync {len(context.messages)}")

    async def async_step(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        await asyncio.sleep(0)
        return faux_assistant_message(f"async {options.session_id}")

    faux.set_responses([faux_assistant_message("first"), sync_step])
    faux.append_responses([async_step])
    assert faux.pending_count == 3
    texts = []
    for _ in range(3):
        message = await complete(faux.model(), _context(), StreamOptions(session_id="s1"))
        texts.append(message.content[0].text)  # type: ignore[union-attr]
    assert texts == ["first", "sync 1", "async s1"]
    assert seen == [(2, "faux-1")]
    assert faux.pending_count == 0
    assert faux.state.call_count == 3


async def test_step_that_raises_becomes_an_error_event() -> None:
    faux = FauxProvider()

    def broken(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        raise RuntimeError("script bug")

    faux.set_responses([broken])
    message = await complete(faux.model(), _context())
    assert message.stop_reason == "error"
    assert message.error_message == "script bug"


async def test_scripted_error_streams_content_then_error() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("partial", stop_reason="error", error_message="529 overloaded")])
    events = await _collect(stream(faux.model(), _context()))
    assert events[0].type == "start"
    last = events[-1]
    assert isinstance(last, ErrorEvent)
    assert last.reason == "error"
    assert last.error.error_message == "529 overloaded"
    assert last.error.content[0].text == "partial"  # type: ignore[union-attr]


async def test_reply_is_restamped_with_the_request_model() -> None:
    faux = FauxProvider(api="faux-restamp", provider="fauxco", models=[{"id": "a"}, {"id": "b", "reasoning": True}])
    scripted = faux_assistant_message("x")
    faux.set_responses([scripted])
    message = await complete(faux.model("b"), _context())
    assert (message.api, message.provider, message.model) == ("faux-restamp", "fauxco", "b")
    assert message is not scripted
    assert scripted.api == "faux"


def test_default_model_shape() -> None:
    model = FauxProvider().model()
    assert model.id == "faux-1"
    assert model.name == "Faux Model"
    assert model.base_url == "http://localhost:0"
    assert model.reasoning is False
    assert model.input == ["text", "image"]
    assert (model.cost.input, model.cost.output) == (0, 0)
    assert (model.context_window, model.max_tokens) == (128000, 16384)
    with pytest.raises(KeyError):
        FauxProvider().model("missing")


def test_construction_registers_api_and_models() -> None:
    faux = FauxProvider(api="faux-2", provider="faux-two", models=[{"id": "m1", "contextWindow": 1000}])
    assert api_registry.get_api("faux-2") == faux.stream_fn
    registered = default_registry.require_model("faux-two", "m1")
    assert registered.api == "faux-2"
    assert registered.context_window == 1000


async def test_module_stream_faux_serves_the_instance_of_the_api() -> None:
    default = FauxProvider()
    other = FauxProvider(api="faux-3", provider="faux-three")
    default.set_responses([faux_assistant_message("from default")])
    other.set_responses([faux_assistant_message("from other")])
    assert faux_provider() is default
    for faux, expected in ((other, "from other"), (default, "from default")):
        out = AssistantMessageEventStream()
        await stream_faux(faux.model(), _context(), StreamOptions(), out, None)
        out.end()
        message = await out.result()
        assert message.content[0].text == expected  # type: ignore[union-attr]


async def test_usage_estimate_and_session_cache() -> None:
    faux = FauxProvider(models=[Model(id="priced", api="x", provider="y", cost=ModelCost(input=1, output=2))])
    reply = "x" * 40
    faux.set_responses([faux_assistant_message(reply) for _ in range(4)])
    model = faux.model()
    plain = await complete(model, _context())
    assert plain.usage.output == 10
    assert plain.usage.input > 0 and plain.usage.cache_read == 0 and plain.usage.cache_write == 0
    assert plain.usage.total_tokens == plain.usage.input + 10
    assert plain.usage.cost.total == pytest.approx((plain.usage.input * 1 + 10 * 2) / 1e6)

    first = await complete(model, _context(), StreamOptions(session_id="s"))
    assert first.usage.input == 0 and first.usage.cache_read == 0
    assert first.usage.cache_write == plain.usage.input
    longer = _context()
    longer.messages.append(first)
    second = await complete(model, longer, StreamOptions(session_id="s"))
    assert second.usage.cache_read > 0
    assert second.usage.cache_write > 0
    assert second.usage.cache_read + second.usage.cache_write >= first.usage.cache_write
    off = await complete(model, longer, StreamOptions(session_id="s", cache_retention="none"))
    assert off.usage.cache_read == 0 and off.usage.input > 0


async def test_seeded_chunking_is_deterministic() -> None:
    async def deltas(seed: int) -> list[str]:
        faux = FauxProvider(seed=seed)
        faux.set_responses([faux_assistant_message("abcdefghij" * 8)])
        return [e.delta async for e in stream(faux.model(), _context()) if e.type == "text_delta"]  # type: ignore[union-attr]

    first = await deltas(7)
    assert first == await deltas(7)
    assert all(12 <= len(d) <= 20 for d in first[:-1])


async def test_tokens_per_second_paces_with_injected_sleep() -> None:
    delays: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        delays.append(seconds)

    faux = FauxProvider(tokens_per_second=10, token_size=(2, 2), sleep=fake_sleep)
    faux.set_responses([faux_assistant_message("12345678" * 3)])
    message = await complete(faux.model(), _context())
    assert message.stop_reason == "stop"
    assert delays == [0.2, 0.2, 0.2]


async def test_reset_clears_queue_and_count() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("a")])
    await complete(faux.model(), _context())
    faux.append_responses([faux_assistant_message("b")])
    faux.reset()
    assert faux.pending_count == 0
    assert faux.state.call_count == 0


def _naive_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


@given(st.text(alphabet="ab\n", max_size=40), st.text(alphabet="ab\n", max_size=40))
def test_common_prefix_matches_a_character_scan(a: str, b: str) -> None:
    assert _common_prefix(a, b) == _naive_prefix(a, b)
    assert _common_prefix(a + "tail", a + "other") == len(a) + _naive_prefix("tail", "other")


async def test_long_session_usage_equals_the_full_serialization_estimate() -> None:
    # The memoized serialization must give exactly the spec's figures: ceil(chars/4) of the joined
    # context, the prefix shared with the session's previous prompt as cache read.
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message(f"reply {n} " * (n % 5 + 1)) for n in range(40)])
    context = _context()
    previous: str | None = None
    for turn in range(40):
        message = await complete(faux.model(), context, StreamOptions(session_id="long"))
        prompt = "\n".join([context.system_prompt or "", *(m.to_json() for m in context.messages)])
        tokens = -(-len(prompt) // 4)
        cache_read = _naive_prefix(previous, prompt) // 4 if previous is not None else 0
        assert (message.usage.cache_read, message.usage.cache_write) == (cache_read, tokens - cache_read), turn
        previous = prompt
        context.messages.append(message)
        context.messages.append(UserMessage(content=f"next {turn}", timestamp=turn))
    # A new context whose messages are fresh copies costs the same as the memoized one.
    copied = Context(system_prompt=context.system_prompt, messages=[m.model_copy(deep=True) for m in context.messages])
    assert _serialize_context(copied) == _serialize_context(context, _JsonMemo())


def test_json_memo_serializes_each_object_once_and_forgets_dead_ones() -> None:
    memo = _JsonMemo()
    message = UserMessage(content="hello", timestamp=1)
    first = memo.text(message)
    assert first == message.to_json()
    assert memo.text(message) is first  # served from the memo, not serialized again
    other = UserMessage(content="other", timestamp=2)
    assert memo.text(other) == other.to_json()
    del message
    gc.collect()
    assert memo.text(other) == other.to_json()
    assert len(memo._texts) == 1
