"""`openai-responses` through the real `openai` SDK against a scripted server (spec ai.md §12.3, check 9)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import openai  # noqa: F401  # imported at collection: the SDK takes 1-2 s to import, which no single test should carry
import pytest

from apex_ai.abort import AbortController
from apex_ai.cost import calculate_cost
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.events import AssistantMessageEvent, DoneEvent, ErrorEvent, StartEvent
from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.providers.openai_responses import stream_openai_responses
from apex_ai.retry import is_retryable_assistant_error
from apex_ai.stream import stream
from apex_ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

from .responses_sse import (
    Reply,
    ResponsesServer,
    created,
    finished,
    function_call_events,
    message_events,
    reasoning_events,
    sse_frame,
    usage,
)
from .sse import PEER_CLOSED, CutBody, NeverAnswers

DATA = Path(__file__).parent.parent / "data" / "openai_responses"

GPT = Model(
    id="gpt-test",
    name="GPT Test",
    api="openai-responses",
    provider="openai",
    base_url="https://api.openai.com/v1",
    reasoning=True,
    input=["text", "image"],
    cost=ModelCost(input=2, output=8, cache_read=0.5),
    context_window=400000,
    max_tokens=32000,
)


async def run(
    model: Model, context: Context, server: ResponsesServer, options: StreamOptions | None = None
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    options = options or StreamOptions()
    options.api_key = "sk-test"
    async with server.client() as client:
        options.http_client = client
        events = stream(model, context, options)
        seen = [event async for event in events]
        return seen, await events.result()


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def text_reply(response_id: str = "resp_1", pieces: tuple[str, ...] = ("Hello", " there")) -> Reply:
    return Reply(
        [created(response_id), *message_events(0, "msg_1", list(pieces)), finished(response_id, usage_=usage(10, 5))]
    )


# --------------------------------------------------------------------------- the pi capture


def capture_requests() -> list[dict[str, Any]]:
    lines = (DATA / "print_tool_requests.jsonl").read_text().splitlines()
    bodies = [json.loads(line)["body"] for line in lines]
    for body in bodies[1:]:
        body["tools"] = bodies[0]["tools"]  # the capture writes "<same as request seq 1>"
    return bodies


def capture_context(bodies: list[dict[str, Any]]) -> Context:
    tools = [Tool(name=t["name"], description=t["description"], parameters=t["parameters"]) for t in bodies[0]["tools"]]
    return Context(system_prompt="<system prompt text omitted>", messages=[user("Run echo hello")], tools=tools)


def comparable(message: AssistantMessage | dict[str, Any]) -> dict[str, Any]:
    data = message.to_wire() if isinstance(message, AssistantMessage) else dict(message)
    for key in ("timestamp", "rawStopReason"):
        data.pop(key, None)
    return data


async def test_pi_capture_request_bodies_and_messages() -> None:
    """The two requests of pi's `print_tool_openai_responses` run, and the two replies it recorded."""
    bodies = capture_requests()
    recorded = json.loads((DATA / "print_tool_assistant_messages.json").read_text())
    fake = Model(
        id="fake-model", api="openai-responses", provider="fake", base_url="http://127.0.0.1:9/v1", max_tokens=8192
    )
    server = ResponsesServer(
        Reply(
            [
                created("resp_fake_1", "fake-model"),
                *function_call_events(0, "fc_fake_1_0", "call_fake_1_0", "bash", ['{"comman', 'd":"echo', ' hello"}']),
                finished("resp_fake_1", usage_=usage(120, 15), model="fake-model"),
            ]
        ),
        Reply(
            [
                created("resp_fake_2", "fake-model"),
                *message_events(0, "msg_fake_2", ["The", " command", " printed:", " hello"]),
                finished("resp_fake_2", usage_=usage(150, 8), model="fake-model"),
            ]
        ),
    )
    context = capture_context(bodies)
    options = StreamOptions(session_id="01a22b92-cf28-7730-89e3-8e7448bcb6ba")

    _, first = await run(fake, context, server, options)
    assert server.bodies[0] == bodies[0]
    assert comparable(first) == comparable(recorded[0])
    assert first.raw_stop_reason == "completed"

    result = ToolResultMessage(
        tool_call_id=first.content[0].id,
        tool_name="bash",  # type: ignore[union-attr]
        content=[TextContent(text="hello\n")],
        timestamp=2,
    )
    context.messages.extend([first, result])
    _, second = await run(fake, context, server, StreamOptions(session_id=options.session_id))
    assert server.bodies[1] == bodies[1]
    assert comparable(second) == comparable(recorded[1])


# --------------------------------------------------------------------------- acceptance check 9


async def test_incomplete_at_max_output_tokens_is_length_and_input_excludes_cache() -> None:
    server = ResponsesServer(
        Reply(
            [
                created("resp_1"),
                *message_events(0, "msg_1", ["Par", "tial"]),
                finished("resp_1", "incomplete", usage(1000, 50, cached=400), reason="max_output_tokens"),
            ]
        )
    )
    events, message = await run(GPT, Context(messages=[user("hi")]), server)
    assert isinstance(events[-1], DoneEvent) and events[-1].reason == "length"
    assert message.stop_reason == "length"
    assert message.raw_stop_reason == "incomplete.max_output_tokens"
    assert message.content == [TextContent(text="Partial", text_signature='{"v":1,"id":"msg_1"}')]
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (600, 400, 50)
    assert message.usage.total_tokens == 1050
    assert message.usage.cost.input == pytest.approx(600 * 2 / 1e6)
    assert message.usage.cost.cache_read == pytest.approx(400 * 0.5 / 1e6)
    assert message.usage.cost.total == pytest.approx((600 * 2 + 400 * 0.5 + 50 * 8) / 1e6)


async def test_completed_with_function_call_is_tool_use_with_joined_id() -> None:
    pieces = ['{"pa', 'th": "src/', "main.py", '", "lim', 'it": 2', "0}"]
    server = ResponsesServer(
        Reply(
            [
                created("resp_1"),
                *function_call_events(0, "fc_abc", "call_abc", "read", pieces),
                finished("resp_1", usage_=usage(100, 20)),
            ]
        )
    )
    events, message = await run(GPT, Context(messages=[user("read it")]), server)
    assert [type(e).__name__ for e in events] == [
        "StartEvent",
        "ToolCallStartEvent",
        *["ToolCallDeltaEvent"] * len(pieces),
        "ToolCallEndEvent",
        "DoneEvent",
    ]
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    assert "".join(deltas) == "".join(pieces)
    # The partial arguments grow as the pieces arrive.
    first_delta = next(e for e in events if e.type == "toolcall_delta")
    assert first_delta.type == "toolcall_delta"
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.type == "toolcall_end"
    assert end.tool_call == ToolCall(id="call_abc|fc_abc", name="read", arguments={"path": "src/main.py", "limit": 20})
    assert message.stop_reason == "toolUse"
    assert message.content == [end.tool_call]
    assert "partialJson" not in message.to_json()


class SnapshotStream(AssistantMessageEventStream):
    """Keeps a deep copy of every event: `partial` is live, so a consumer that wants history copies it."""

    def push(self, event: AssistantMessageEvent) -> None:
        super().push(event.model_copy(deep=True))


async def test_tool_call_partial_arguments_are_parsed_while_streaming() -> None:
    server = ResponsesServer(
        Reply(
            [
                created("resp_1"),
                *function_call_events(
                    0, "fc_1", "call_1", "bash", ['{"command": "ec', 'ho hi"', ', "timeout": 1', "0}"]
                ),
                finished("resp_1", usage_=usage(1, 1)),
            ]
        )
    )
    out = SnapshotStream()
    async with server.client() as client:
        options = StreamOptions(http_client=client)
        await stream_openai_responses(GPT, Context(messages=[user("x")]), options, out, "sk-test")
    deltas = [event async for event in out if event.type == "toolcall_delta"]
    partials = [event.partial.content[0] for event in deltas]
    assert [call.arguments for call in partials if isinstance(call, ToolCall)] == [
        {"command": "ec"},
        {"command": "echo hi"},
        {"command": "echo hi", "timeout": 1},
        {"command": "echo hi", "timeout": 10},
    ]
    # The live block carries the raw text so far, as the original's partial messages do.
    assert [call.model_extra for call in partials if isinstance(call, ToolCall)][1] == {
        "partialJson": '{"command": "echo hi"'
    }
    assert (await out.result()).content == [
        ToolCall(id="call_1|fc_1", name="bash", arguments={"command": "echo hi", "timeout": 10})
    ]


async def test_other_incomplete_reason_is_an_error() -> None:
    server = ResponsesServer(
        Reply(
            [
                created("resp_1"),
                *message_events(0, "msg_1", ["Some"]),
                finished("resp_1", "incomplete", usage(10, 1), reason="content_filter"),
            ]
        )
    )
    events, message = await run(GPT, Context(messages=[user("hi")]), server)
    assert isinstance(events[-1], ErrorEvent) and events[-1].reason == "error"
    assert message.stop_reason == "error"
    assert message.error_message == "Response incomplete: content_filter"
    assert message.raw_stop_reason == "incomplete.content_filter"
    assert message.content[0] == TextContent(text="Some", text_signature='{"v":1,"id":"msg_1"}')
    assert message.usage.input == 10


# --------------------------------------------------------------------------- reasoning


async def test_reasoning_summary_and_encrypted_content_replay_round_trip() -> None:
    reasoning = reasoning_events(0, "rs_1", [["Think", "ing one"], ["Step two"]], encrypted="gAAAA-secret")
    server = ResponsesServer(
        Reply(
            [
                created("resp_1"),
                *reasoning,
                *message_events(1, "msg_1", ["Answer"], phase="final_answer"),
                finished("resp_1", usage_=usage(50, 30, reasoning=20)),
            ]
        ),
        text_reply("resp_2"),
    )
    context = Context(system_prompt="Be brief.", messages=[user("why?")])
    events, first = await run(GPT, context, server, SimpleStreamOptions(reasoning="high", session_id="s1"))

    body = server.bodies[0]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["input"][0] == {"role": "developer", "content": "Be brief."}
    assert first.provider_thinking_level == "high"

    thinking_deltas = "".join(e.delta for e in events if e.type == "thinking_delta")
    assert thinking_deltas == "Thinking one\n\nStep two\n\n"
    thinking = first.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "Thinking one\n\nStep two"
    stored = json.loads(thinking.thinking_signature or "")
    assert stored["encrypted_content"] == "gAAAA-secret"
    assert stored["id"] == "rs_1"
    assert first.content[1] == TextContent(text="Answer", text_signature='{"v":1,"id":"msg_1","phase":"final_answer"}')
    assert first.usage.reasoning == 20

    context.messages.extend([first, user("and then?")])
    await run(GPT, context, server, SimpleStreamOptions(reasoning="high", session_id="s1"))
    replay = server.bodies[1]["input"]
    done_item = reasoning[-1]["item"]
    assert replay[2] == done_item  # the reasoning item exactly as the server sent it, encrypted content included
    assert replay[3] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Answer", "annotations": []}],
        "status": "completed",
        "id": "msg_1",
        "phase": "final_answer",
    }
    assert replay[4] == {"role": "user", "content": [{"type": "input_text", "text": "and then?"}]}


async def test_reasoning_off_sends_effort_none_unless_the_model_cannot_turn_it_off() -> None:
    server = ResponsesServer(text_reply("r1"), text_reply("r2"), text_reply("r3"))
    await run(GPT, Context(messages=[user("a")]), server, SimpleStreamOptions())
    mapped = GPT.model_copy(update={"thinking_level_map": {"off": None, "high": "max-effort"}})
    await run(mapped, Context(messages=[user("a")]), server, SimpleStreamOptions())
    await run(mapped, Context(messages=[user("a")]), server, SimpleStreamOptions(reasoning="high"))
    assert server.bodies[0]["reasoning"] == {"effort": "none"}
    assert "include" not in server.bodies[0]
    assert "reasoning" not in server.bodies[1]
    assert server.bodies[2]["reasoning"] == {"effort": "max-effort", "summary": "auto"}


# --------------------------------------------------------------------------- failures


async def test_response_failed_keeps_partial_content_and_names_the_error() -> None:
    failed = finished("resp_1", "failed", usage(10, 2))
    failed["response"]["error"] = {"code": "server_error", "message": "The model crashed"}
    server = ResponsesServer(Reply([created("resp_1"), *message_events(0, "msg_1", ["Half"])[:3], failed]))
    events, message = await run(GPT, Context(messages=[user("hi")]), server)
    assert isinstance(events[0], StartEvent)
    assert isinstance(events[-1], ErrorEvent)
    assert message.stop_reason == "error"
    assert message.error_message == "server_error: The model crashed"
    assert message.content == [TextContent(text="Half")]
    assert message.usage.input == 10


async def test_response_failed_without_error_uses_incomplete_details() -> None:
    failed = finished("resp_1", "failed", reason="max_output_tokens")
    server = ResponsesServer(Reply([created("resp_1"), failed]))
    _, message = await run(GPT, Context(messages=[user("hi")]), server)
    assert message.error_message == "incomplete: max_output_tokens"


async def test_top_level_error_event_text() -> None:
    error = {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down", "param": None}
    server = ResponsesServer(Reply([created("resp_1"), error]))
    _, message = await run(GPT, Context(messages=[user("hi")]), server)
    assert message.stop_reason == "error"
    assert message.error_message == "Error Code rate_limit_exceeded: Slow down"


async def test_http_error_is_a_lone_error_event_with_the_prefix_and_raw_body() -> None:
    body = '{"error":{"message":"Invalid value for input","type":"invalid_request_error","code":null}}'
    server = ResponsesServer(Reply(status=400, body=body, headers={"content-type": "application/json"}))
    events, message = await run(GPT, Context(messages=[user("hi")]), server)
    assert [e.type for e in events] == ["error"]
    assert message.error_message == f"OpenAI API error (400): {body}"
    assert message.usage == Usage()
    assert message.content == []


async def test_stream_cut_before_terminal_event_is_an_error() -> None:
    server = ResponsesServer(Reply([created("resp_1"), *message_events(0, "msg_1", ["Hi"])]))
    _, message = await run(GPT, Context(messages=[user("hi")]), server)
    assert message.stop_reason == "error"
    assert message.error_message == "OpenAI Responses stream ended before a terminal response event"
    assert message.content[0] == TextContent(text="Hi", text_signature='{"v":1,"id":"msg_1"}')


async def test_abort_mid_text_keeps_the_partial_text() -> None:
    events = [created("resp_1"), *message_events(0, "msg_1", ["Hel", "lo", " world"]), finished("resp_1")]
    reply = Reply(events, pause_after=4, resume=asyncio.Event())  # created, added, part, first delta
    server = ResponsesServer(reply)
    controller = AbortController()
    seen: list[AssistantMessageEvent] = []
    async with server.client() as client:
        out = stream(
            GPT,
            Context(messages=[user("hi")]),
            StreamOptions(api_key="k", http_client=client, signal=controller.signal),
        )

        async def consume() -> None:
            # One at a time on purpose: the test watches `seen` grow while the stream is open.
            async for event in out:
                seen.append(event)  # noqa: PERF401

        consumer = asyncio.create_task(consume())
        await asyncio.wait_for(reply.paused.wait(), 5)
        while not any(e.type == "text_delta" for e in seen):
            await asyncio.sleep(0.001)
        controller.abort()
        await asyncio.wait_for(consumer, 5)
        message = await out.result()
    assert isinstance(seen[-1], ErrorEvent) and seen[-1].reason == "aborted"
    assert message.stop_reason == "aborted"
    assert message.error_message == "Request was aborted"
    assert message.content == [TextContent(text="Hel")]


# --------------------------------------------------------------------------- pricing and body options


@pytest.mark.parametrize(("tier", "factor"), [("flex", 0.5), ("priority", 2.0), ("default", 1.0)])
async def test_service_tier_prices_the_usage(tier: str, factor: float) -> None:
    server = ResponsesServer(
        Reply(
            [
                created("resp_1"),
                *message_events(0, "msg_1", ["ok"]),
                finished("resp_1", usage_=usage(2000, 100, cached=1000), service_tier=tier),
            ]
        )
    )
    options = StreamOptions(sampling_params={"service_tier": tier})
    _, message = await run(GPT, Context(messages=[user("hi")]), server, options)
    assert server.bodies[0]["service_tier"] == tier
    base = calculate_cost(GPT, Usage(input=1000, output=100, cache_read=1000))
    assert message.usage.cost.input == pytest.approx(base.input * factor)
    assert message.usage.cost.output == pytest.approx(base.output * factor)
    assert message.usage.cost.cache_read == pytest.approx(base.cache_read * factor)
    assert message.usage.cost.total == pytest.approx(base.total * factor)


async def test_requested_tier_prices_when_the_response_names_none() -> None:
    server = ResponsesServer(text_reply())
    _, message = await run(
        GPT, Context(messages=[user("hi")]), server, StreamOptions(sampling_params={"service_tier": "flex"})
    )
    assert message.usage.cost.total == pytest.approx(calculate_cost(GPT, Usage(input=10, output=5)).total * 0.5)


async def test_cache_key_retention_and_payload_hook() -> None:
    server = ResponsesServer(text_reply("r1"), text_reply("r2"))
    seen: list[dict[str, Any]] = []

    def hook(body: dict[str, Any], model: Model) -> dict[str, Any]:
        seen.append(dict(body))
        return {**body, "metadata": {"run": "7"}}

    long_key = "s" * 80
    await run(
        GPT,
        Context(messages=[user("a")]),
        server,
        StreamOptions(session_id=long_key, cache_retention="long", on_payload=hook, max_tokens=4, temperature=0.2),
    )
    await run(GPT, Context(messages=[user("a")]), server, StreamOptions(session_id="abc", cache_retention="none"))
    first, second = server.bodies
    assert first["prompt_cache_key"] == "s" * 64
    assert first["prompt_cache_retention"] == "24h"
    assert first["max_output_tokens"] == 16
    assert first["temperature"] == 0.2
    assert first["metadata"] == {"run": "7"}
    assert "metadata" not in seen[0]
    assert "prompt_cache_key" not in second and "prompt_cache_retention" not in second
    assert first["store"] is False and first["stream"] is True


async def test_response_model_and_refusal_text() -> None:
    events = [
        created("resp_1", "gpt-test-2026-01-01"),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "message", "id": "msg_r", "role": "assistant", "content": []},
        },
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "item_id": "msg_r",
            "content_index": 0,
            "part": {"type": "refusal", "refusal": ""},
        },
        {
            "type": "response.refusal.delta",
            "output_index": 0,
            "item_id": "msg_r",
            "content_index": 0,
            "delta": "I can't help",
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {
                "type": "message",
                "id": "msg_r",
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": "I can't help with that."}],
            },
        },
        finished("resp_1", usage_=usage(5, 5), model="gpt-test-2026-01-01"),
    ]
    server = ResponsesServer(Reply(events))
    seen, message = await run(GPT, Context(messages=[user("hi")]), server)
    assert [e.delta for e in seen if e.type == "text_delta"] == ["I can't help"]
    assert message.content == [TextContent(text="I can't help with that.", text_signature='{"v":1,"id":"msg_r"}')]
    assert message.response_model == "gpt-test-2026-01-01"
    assert message.response_id == "resp_1"


# --------------------------------------------------------------------------- input conversion


async def test_input_conversion_of_images_foreign_calls_and_results() -> None:
    claude_call = ToolCall(id="toolu_01/abc", name="read", arguments={"path": "a.png"})
    foreign = AssistantMessage(
        api="anthropic-messages",
        provider="anthropic",
        model="claude-x",
        stop_reason="toolUse",
        timestamp=2,
        content=[
            ThinkingContent(thinking="let me look", thinking_signature="sig"),
            TextContent(text="Looking."),
            claude_call,
        ],
    )
    other_gpt = AssistantMessage(
        api="openai-responses",
        provider="openai",
        model="gpt-older",
        stop_reason="toolUse",
        timestamp=4,
        content=[
            TextContent(text="Legacy", text_signature="msg_legacy"),
            ToolCall(id="call_9|fc_9", name="ls", arguments={}),
        ],
    )
    image = ImageContent(data="QUJD", mime_type="image/png")
    messages: list[Message] = [
        UserMessage(content=[TextContent(text="see"), image], timestamp=1),
        foreign,
        ToolResultMessage(tool_call_id=claude_call.id, tool_name="read", content=[image], timestamp=3),
        other_gpt,
        ToolResultMessage(tool_call_id="call_9|fc_9", tool_name="ls", content=[TextContent(text="a\nb")], timestamp=5),
    ]
    server = ResponsesServer(text_reply())
    await run(GPT, Context(messages=messages), server)
    sent = server.bodies[0]["input"]
    image_part = {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,QUJD"}
    assert sent[0] == {"role": "user", "content": [{"type": "input_text", "text": "see"}, image_part]}
    # Foreign thinking turns into text; the Anthropic call keeps a sanitized call id and no item id.
    assert [item.get("id") for item in sent[1:3]] == ["msg_pi_1", "msg_pi_1"]
    assert [item["content"][0]["text"] for item in sent[1:3]] == ["let me look", "Looking."]
    assert sent[3] == {
        "type": "function_call",
        "call_id": "toolu_01_abc",
        "name": "read",
        "arguments": '{"path":"a.png"}',
    }
    assert sent[4] == {"type": "function_call_output", "call_id": "toolu_01_abc", "output": [image_part]}
    # Another model's text signature means nothing here: the fallback id is used.
    assert sent[5]["id"] == "msg_pi_3"
    # Same API, other model: the fc_ item id is not replayed.
    assert sent[6] == {"type": "function_call", "call_id": "call_9", "name": "ls", "arguments": "{}"}
    assert sent[7] == {"type": "function_call_output", "call_id": "call_9", "output": "a\nb"}


async def test_system_role_for_non_reasoning_models_and_empty_tool_output() -> None:
    plain = GPT.model_copy(update={"reasoning": False, "input": ["text"]})
    call = ToolCall(id="call_1|fc_1", name="noop", arguments={})
    mine = AssistantMessage(
        api=plain.api,
        provider=plain.provider,
        model=plain.id,
        stop_reason="toolUse",
        timestamp=2,
        content=[TextContent(text="Calling.", text_signature="msg_legacy"), call],
    )
    context = Context(
        system_prompt="Sys",
        messages=[user("go"), mine, ToolResultMessage(tool_call_id=call.id, tool_name="noop", content=[], timestamp=3)],
    )
    server = ResponsesServer(text_reply())
    await run(plain, context, server)
    body = server.bodies[0]
    assert body["input"][0] == {"role": "system", "content": "Sys"}
    assert body["input"][2]["id"] == "msg_legacy"  # a legacy text signature is the bare item id
    assert body["input"][3] == {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "noop",
        "arguments": "{}",
    }
    assert body["input"][4]["output"] == "(no tool output)"
    assert "reasoning" not in body and "include" not in body and "tools" not in body


# --------------------------------------------------------------------------- transport behaviour


async def test_provider_retry_then_success_and_response_hook() -> None:
    server = ResponsesServer(
        Reply(status=429, body='{"error":{"message":"busy"}}', headers={"retry-after-ms": "1"}),
        text_reply(),
    )
    answers: list[tuple[int, str]] = []

    def on_response(status: int, headers: Any) -> None:
        assert type(headers) is dict
        answers.append((status, headers["content-type"]))

    _, message = await run(
        GPT, Context(messages=[user("hi")]), server, StreamOptions(max_retries=1, on_response=on_response)
    )
    assert len(server.bodies) == 2
    assert message.stop_reason == "stop"
    # The 429 is reported too, before the retry (every response reaches the hook).
    assert answers == [(429, "text/plain; charset=utf-8"), (200, "text/event-stream")]


async def test_server_retry_delay_above_the_cap_fails_at_once() -> None:
    server = ResponsesServer(Reply(status=429, body="slow down", headers={"retry-after": "120"}), text_reply())
    _, message = await run(GPT, Context(messages=[user("hi")]), server, StreamOptions(max_retries=2))
    assert len(server.bodies) == 1
    assert message.error_message == "Server requested 120s retry delay (max: 60s). 429 slow down"


async def test_already_aborted_signal_sends_nothing() -> None:
    controller = AbortController()
    controller.abort()
    server = ResponsesServer(text_reply())
    events, message = await run(GPT, Context(messages=[user("hi")]), server, StreamOptions(signal=controller.signal))
    assert server.bodies == []
    assert [e.type for e in events] == ["error"]
    assert (message.stop_reason, message.error_message) == ("aborted", "Request was aborted")


async def test_error_event_with_nested_error_object() -> None:
    # Some servers nest the error; the SDK then raises it instead of yielding the event.
    nested = {"type": "error", "error": {"code": "overloaded", "message": "Try later"}}
    server = ResponsesServer(Reply([created("resp_1"), nested]))
    _, message = await run(GPT, Context(messages=[user("hi")]), server)
    assert message.error_message == "Error Code overloaded: Try later"


async def test_reasoning_text_deltas_from_compatible_servers() -> None:
    where = {"output_index": 0, "item_id": "rs_9"}
    done = {"type": "reasoning", "id": "rs_9", "summary": [], "content": [{"type": "reasoning_text", "text": "a b"}]}
    server = ResponsesServer(
        Reply(
            [
                created("resp_1"),
                {"type": "response.output_item.added", "output_index": 0, "item": {**done, "content": []}},
                {"type": "response.reasoning_text.delta", **where, "content_index": 0, "delta": "a"},
                {"type": "response.reasoning_text.delta", **where, "content_index": 0, "delta": " b"},
                {"type": "response.output_item.done", "output_index": 0, "item": done},
                finished("resp_1", usage_=usage(3, 3)),
            ]
        )
    )
    events, message = await run(GPT, Context(messages=[user("hi")]), server)
    assert [e.type for e in events][1:4] == ["thinking_start", "thinking_delta", "thinking_delta"]
    thinking = message.content[0]
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == "a b"
    assert json.loads(thinking.thinking_signature or "") == done


async def test_unpaired_surrogates_are_stripped_from_outgoing_text() -> None:
    server = ResponsesServer(text_reply())
    await run(GPT, Context(system_prompt="sys\ud800", messages=[user("bad \udc00text")]), server)
    assert server.bodies[0]["input"][0]["content"] == "sys"
    assert server.bodies[0]["input"][1]["content"][0]["text"] == "bad text"


async def test_output_cap_is_clamped_to_the_context_window() -> None:
    small = GPT.model_copy(update={"context_window": 10000})
    server = ResponsesServer(text_reply())
    await run(small, Context(messages=[user("x" * 400)]), server)
    # 10000 window - ~100 prompt tokens - 1250 margin (an eighth of the window), instead of the model's 32000.
    assert 8500 < server.bodies[0]["max_output_tokens"] < 8750


async def test_connection_cut_mid_body_names_the_cause_and_is_retryable() -> None:
    frames = b"".join(sse_frame(event) for event in [created("resp_1"), *message_events(0, "msg_1", ["Hel"])[:3]])

    def cut(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=CutBody(frames))

    transport = httpx2.MockTransport(cut)
    options = StreamOptions(api_key="sk-test", http_client=httpx2.AsyncClient(transport=transport))
    message = await stream(GPT, Context(messages=[user("hi")]), options).result()
    assert message.stop_reason == "error"
    assert message.error_message == f"Connection error (api.openai.com): {PEER_CLOSED}"
    assert [block.type for block in message.content] == ["text"]
    assert is_retryable_assistant_error(message)


async def test_cancelled_caller_cancels_the_request_in_flight() -> None:
    handler = NeverAnswers()
    out = AssistantMessageEventStream()
    options = StreamOptions(api_key="sk-test", signal=AbortController().signal)
    options.http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    task = asyncio.ensure_future(stream_openai_responses(GPT, Context(messages=[user("hi")]), options, out, "sk-test"))
    await asyncio.wait_for(handler.arrived.wait(), 5)
    task.cancel()
    # Before the shared race_abort, the request task was left running when its caller was cancelled.
    await asyncio.wait_for(handler.cancelled.wait(), 5)
    with pytest.raises(asyncio.CancelledError):
        await task
