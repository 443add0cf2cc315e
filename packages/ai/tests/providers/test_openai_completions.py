"""`openai-completions` through the real `openai` SDK against scripted SSE (spec ai.md §12.2, acceptance check 8)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2

from apex_ai.abort import AbortController
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.events import AssistantMessageEvent
from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.providers.openai_completions import stream_openai_completions
from apex_ai.retry import is_retryable_assistant_error
from apex_ai.stream import stream, stream_simple
from apex_ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    MessagesAdapter,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

from .completions_sse import ScriptedServer, chunk, sse, sse_response, stalled_response, tool_delta
from .sse import PEER_CLOSED, CutBody, NeverAnswers

DATA = Path(__file__).parent.parent / "data" / "openai_completions"


def make_model(**overrides: Any) -> Model:
    fields: dict[str, Any] = {
        "id": "test-model",
        "api": "openai-completions",
        "provider": "fake",
        "base_url": "http://fake.local/v1",
        "max_tokens": 8192,
    }
    fields.update(overrides)
    return Model(**fields)


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


async def run(
    server: ScriptedServer, context: Context, *, model: Model | None = None, options: StreamOptions | None = None
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    opts = options or StreamOptions()
    opts.api_key = opts.api_key or "test-key"
    opts.http_client = server.client()
    events_stream = (
        stream_simple(model or make_model(), context, opts)
        if isinstance(opts, SimpleStreamOptions)
        else stream(model or make_model(), context, opts)
    )
    events = [event async for event in events_stream]
    return events, await events_stream.result()


def kinds(events: list[AssistantMessageEvent]) -> list[str]:
    return [e.type for e in events]


def text_reply(*pieces: str, finish: str | None = "stop") -> httpx2.Response:
    chunks = [chunk({"content": p}) for p in pieces]
    if finish is not None:
        chunks.append(chunk(finish=finish))
    return sse_response([*chunks])


# --------------------------------------------------------------------------- acceptance check 8


async def test_reasoning_content_and_interleaved_tool_calls_from_fixture() -> None:
    fixture = (DATA / "reasoning_two_tools.sse").read_bytes()
    server = ScriptedServer(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=fixture))
    model = make_model(cost={"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75})

    events, message = await run(server, Context(messages=[user("read a and b")]), model=model)

    assert kinds(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_delta",
        "toolcall_delta",
        "toolcall_end",
        "toolcall_end",
        "done",
    ]
    assert message.content == [
        ThinkingContent(thinking="Let me check both files.", thinking_signature="reasoning_content"),
        TextContent(text="Reading both."),
        ToolCall(id="call_a", name="read", arguments={"path": "a.py"}),
        ToolCall(id="call_b", name="read", arguments={"path": "b.py"}),
    ]
    # Scratch buffers never reach the final message.
    assert "partialArgs" not in message.to_json()
    assert message.stop_reason == "toolUse"
    assert message.raw_stop_reason == "tool_calls"
    assert message.response_id == "chatcmpl-r1"
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (200, 85, 1000, 0)
    assert (usage.reasoning, usage.total_tokens) == (40, 1285)
    assert message.usage.cost.total == (200 * 3 + 85 * 15 + 1000 * 0.3) / 1e6
    done = events[-1]
    assert done.type == "done" and done.reason == "toolUse" and done.message is message
    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert [(e.content_index, e.delta) for e in deltas] == [
        (2, ""),
        (3, '{"pa'),
        (2, '{"path": "a.py"}'),
        (3, 'th": "b.py"}'),
    ]


async def test_content_filter_is_an_error_with_partial_text() -> None:
    server = ScriptedServer(text_reply("Some ", "text", finish="content_filter"))

    events, message = await run(server, Context(messages=[user("hi")]))

    assert events[-1].type == "error" and events[-1].reason == "error"
    assert message.stop_reason == "error"
    assert message.error_message == "Provider finish_reason: content_filter"
    assert message.raw_stop_reason == "content_filter"
    assert message.content == [TextContent(text="Some text")]


async def test_stream_without_finish_reason_is_an_error() -> None:
    server = ScriptedServer(text_reply("cut ", "off", finish=None))

    events, message = await run(server, Context(messages=[user("hi")]))

    assert kinds(events)[-2:] == ["text_end", "error"]
    assert message.stop_reason == "error"
    assert message.error_message == "Stream ended without finish_reason"
    assert message.content == [TextContent(text="cut off")]


async def test_without_finish_reason_support_the_stop_reason_is_inferred() -> None:
    server = ScriptedServer(
        sse_response([chunk(tool_delta(0, call_id="c1", name="ls", args="{}"))]),
        text_reply("done", finish=None),
    )
    model = make_model(compat={"supportsFinishReason": False})

    _, first = await run(server, Context(messages=[user("hi")]), model=model)
    _, second = await run(server, Context(messages=[user("hi")]), model=model)

    assert first.stop_reason == "toolUse"
    assert second.stop_reason == "stop"
    assert first.raw_stop_reason is None


# --------------------------------------------------------------------------- the pi capture


def capture_requests() -> list[dict[str, Any]]:
    lines = (DATA / "pi_capture_requests.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def capture_context(messages: list[Message]) -> Context:
    first = capture_requests()[0]["body"]
    tools = [
        Tool(
            name=t["function"]["name"], description=t["function"]["description"], parameters=t["function"]["parameters"]
        )
        for t in first["tools"]
    ]
    return Context(system_prompt=first["messages"][0]["content"], messages=messages, tools=tools)


async def test_request_bodies_match_the_pi_capture() -> None:
    captured = json.loads((DATA / "pi_capture_events.json").read_text())
    transcript = MessagesAdapter.validate_python(captured["messages"])
    requests = capture_requests()
    server = ScriptedServer(text_reply("x"), text_reply("y"))
    model = make_model(id="fake-model")

    await run(server, capture_context(transcript[:1]), model=model)
    await run(server, capture_context(transcript[:3]), model=model)

    first, second = server.bodies
    assert first == requests[0]["body"]
    expected_second = dict(requests[1]["body"], tools=requests[0]["body"]["tools"])
    assert second == expected_second
    # The facts the capture pins down, spelled out.
    assert first["stream_options"] == {"include_usage": True}
    assert first["store"] is False
    assert first["max_completion_tokens"] == 8192
    assert all(t["function"]["strict"] is False for t in first["tools"])
    assert second["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_fake_1_0",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command":"echo hello"}'},
            }
        ],
    }
    assert second["messages"][3] == {"role": "tool", "content": "hello\n", "tool_call_id": "call_fake_1_0"}
    assert server.requests[0].url.path == "/v1/chat/completions"


async def test_events_match_the_pi_capture() -> None:
    captured = json.loads((DATA / "pi_capture_events.json").read_text())
    tool_turn = [
        chunk(tool_delta(0, call_id="call_fake_1_0", name="bash"), chunk_id="chatcmpl-fake-1", model="fake-model"),
        *(
            chunk(tool_delta(0, args=piece), chunk_id="chatcmpl-fake-1", model="fake-model")
            for piece in ('{"comman', 'd":"echo', ' hello"}')
        ),
        chunk(finish="tool_calls", chunk_id="chatcmpl-fake-1", model="fake-model"),
        chunk(no_choice=True, usage={"prompt_tokens": 120, "completion_tokens": 15}, chunk_id="chatcmpl-fake-1"),
    ]
    server = ScriptedServer(sse_response(tool_turn))
    model = make_model(id="fake-model")

    events, message = await run(server, capture_context([user("Run echo hello")]), model=model)

    block_events = [e.to_wire() for e in events if e.type not in ("start", "done")]
    for event in block_events:
        event.pop("partial")
    assert block_events == captured["events"][:6]
    expected = AssistantMessage.model_validate(captured["messages"][1])
    assert message.content == expected.content
    assert message.usage == expected.usage
    assert message.stop_reason == expected.stop_reason == "toolUse"
    assert message.response_id == "chatcmpl-fake-1"


# --------------------------------------------------------------------------- errors and retries


async def test_rate_limit_and_server_error_are_retried_then_succeed() -> None:
    fast = {"retry-after-ms": "1"}
    server = ScriptedServer(
        httpx2.Response(429, headers=fast, json={"error": {"message": "slow down"}}),
        httpx2.Response(500, headers=fast, text="upstream broke"),
        text_reply("finally"),
    )

    events, message = await run(server, Context(messages=[user("hi")]), options=StreamOptions(max_retries=2))

    assert len(server.requests) == 3
    assert kinds(events)[0] == "start"
    assert message.stop_reason == "stop"
    assert message.content == [TextContent(text="finally")]


async def test_http_error_is_status_and_raw_body() -> None:
    body = '{"error":{"message":"Invalid model","type":"invalid_request_error"}}'
    server = ScriptedServer(httpx2.Response(400, text=body), httpx2.Response(503))

    events, message = await run(server, Context(messages=[user("hi")]))
    _, no_body = await run(server, Context(messages=[user("hi")]))

    assert kinds(events) == ["error"]
    assert message.error_message == f"400 {body}"
    assert message.usage == Usage()
    assert no_body.error_message == "503 status code (no body)"
    assert len(server.requests) == 2  # max_retries defaults to 0


async def test_malformed_chunk_json_is_an_error_keeping_partial_text() -> None:
    server = ScriptedServer(
        httpx2.Response(
            200,
            headers={"content-type": "text/event-stream"},
            content=sse([chunk({"content": "partial"}), '{"id": "chatcmpl-1", "choices": [}'], done=False),
        )
    )

    events, message = await run(server, Context(messages=[user("hi")]))

    assert events[-1].type == "error"
    assert message.stop_reason == "error"
    assert message.content == [TextContent(text="partial")]
    assert message.error_message


async def test_error_event_inside_the_stream_is_reported() -> None:
    server = ScriptedServer(
        sse_response([chunk({"content": "a"}), {"error": {"message": "model overloaded", "code": 529}}], done=False)
    )

    _, message = await run(server, Context(messages=[user("hi")]))

    assert message.stop_reason == "error"
    assert "model overloaded" in (message.error_message or "")
    assert message.content == [TextContent(text="a")]


# --------------------------------------------------------------------------- tool calls, abort


async def test_tool_call_arguments_in_many_pieces() -> None:
    arguments = {"path": "src/main.py", "edits": [{"oldText": "a\nb", "newText": "ü"}], "limit": 10}
    text = json.dumps(arguments)
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    first, *rest = pieces
    server = ScriptedServer(
        sse_response(
            [
                chunk(tool_delta(0, call_id="call_1", name="edit", args=first)),
                *(chunk(tool_delta(0, args=p)) for p in rest),
                chunk(finish="tool_calls"),
            ]
        )
    )

    events, message = await run(server, Context(messages=[user("edit")]))

    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert "".join(e.delta for e in deltas) == text
    assert len(deltas) == len(pieces)
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call == ToolCall(id="call_1", name="edit", arguments=arguments)
    assert message.content == [ToolCall(id="call_1", name="edit", arguments=arguments)]


async def test_abort_mid_text_keeps_the_partial_reply() -> None:
    release = asyncio.Event()
    server = ScriptedServer(stalled_response([chunk({"content": "Hello"}), chunk({"content": " wor"})], release))
    controller = AbortController()
    options = StreamOptions(api_key="k", signal=controller.signal, http_client=server.client())

    events_stream = stream(make_model(), Context(messages=[user("hi")]), options)
    events: list[AssistantMessageEvent] = []
    async for event in events_stream:
        events.append(event)
        if event.type == "text_delta" and event.delta == " wor":
            controller.abort()
    message = await events_stream.result()

    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert message.stop_reason == "aborted"
    assert message.error_message == "Request was aborted"
    assert message.content == [TextContent(text="Hello wor")]
    assert not release.is_set()


async def test_abort_before_sending_makes_no_request() -> None:
    server = ScriptedServer(text_reply("never"))
    controller = AbortController()
    controller.abort()

    events, message = await run(server, Context(messages=[user("hi")]), options=StreamOptions(signal=controller.signal))

    assert kinds(events) == ["error"]
    assert message.stop_reason == "aborted"
    assert server.requests == []


# --------------------------------------------------------------------------- compat flags


def reasoning_model(**overrides: Any) -> Model:
    return make_model(reasoning=True, **overrides)


async def test_llama_cpp_compat() -> None:
    server = ScriptedServer(text_reply("ok"))
    model = reasoning_model(provider="llama.cpp", base_url="http://127.0.0.1:8080/v1")
    tools = [Tool(name="ls", description="list", parameters={"type": "object", "properties": {}})]

    await run(server, Context(system_prompt="be brief", messages=[user("hi")], tools=tools), model=model)

    body = server.bodies[0]
    assert body["max_tokens"] == 8192
    assert "max_completion_tokens" not in body
    assert "store" not in body
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert "strict" not in body["tools"][0]["function"]
    assert "reasoning_effort" not in body


async def test_developer_role_for_reasoning_models_only() -> None:
    server = ScriptedServer(text_reply("a"), text_reply("b"))
    context = Context(system_prompt="rules", messages=[user("hi")])

    await run(server, context, model=reasoning_model())
    await run(server, context, model=make_model())

    assert server.bodies[0]["messages"][0] == {"role": "developer", "content": "rules"}
    assert server.bodies[1]["messages"][0] == {"role": "system", "content": "rules"}


def tool_turn_transcript() -> list[Message]:
    call = ToolCall(id="call_1", name="ls", arguments={"dir": "."})
    assistant = AssistantMessage(
        content=[ThinkingContent(thinking="look", thinking_signature="reasoning_content"), call],
        api="openai-completions",
        provider="fake",
        model="test-model",
        stop_reason="toolUse",
        timestamp=2,
    )
    result = ToolResultMessage(
        tool_call_id="call_1", tool_name="ls", content=[TextContent(text="a.py")], timestamp=3, is_error=False
    )
    return [user("list"), assistant, result, user("thanks")]


async def test_requires_assistant_after_tool_result_and_tool_result_name() -> None:
    server = ScriptedServer(text_reply("ok"))
    model = make_model(compat={"requiresAssistantAfterToolResult": True, "requiresToolResultName": True})

    await run(server, Context(messages=tool_turn_transcript()), model=model)

    messages = server.bodies[0]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert messages[2] == {"role": "tool", "content": "a.py", "tool_call_id": "call_1", "name": "ls"}
    assert messages[3] == {"role": "assistant", "content": "I have processed the tool results."}
    # Without tool declarations but with tool history, an empty list is still sent.
    assert server.bodies[0]["tools"] == []


async def test_thinking_is_replayed_under_its_field_or_as_text() -> None:
    server = ScriptedServer(text_reply("a"), text_reply("b"))

    await run(server, Context(messages=tool_turn_transcript()))
    await run(
        server, Context(messages=tool_turn_transcript()), model=make_model(compat={"requiresThinkingAsText": True})
    )

    native = server.bodies[0]["messages"][1]
    as_text = server.bodies[1]["messages"][1]
    assert native["reasoning_content"] == "look"
    assert native["content"] is None
    assert as_text["content"] == "look"
    assert "reasoning_content" not in as_text


async def test_tool_result_images_follow_in_a_user_message() -> None:
    image = ImageContent(data="aGk=", mime_type="image/png")
    transcript = tool_turn_transcript()[:2] + [
        ToolResultMessage(tool_call_id="call_1", tool_name="ls", content=[image], timestamp=3)
    ]
    server = ScriptedServer(text_reply("ok"))

    await run(server, Context(messages=transcript), model=make_model(input=["text", "image"]))

    messages = server.bodies[0]["messages"]
    assert messages[2] == {"role": "tool", "content": "(see attached image)", "tool_call_id": "call_1"}
    assert messages[3] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Attached image(s) from tool result:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}},
        ],
    }


async def test_usage_with_cached_tokens_and_moonshot_choice_usage() -> None:
    raw_usage = {"prompt_tokens": 500, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 300}}
    server = ScriptedServer(
        sse_response([chunk({"content": "x"}), chunk(finish="stop"), chunk(no_choice=True, usage=raw_usage)]),
        sse_response([chunk({"content": "y"}), chunk(finish="stop", choice_extra={"usage": raw_usage})]),
        sse_response(
            [
                chunk(
                    {"content": "z"},
                    finish="stop",
                    usage={"prompt_tokens": 90, "completion_tokens": 3, "prompt_cache_hit_tokens": 80},
                )
            ]
        ),
    )

    _, standard = await run(server, Context(messages=[user("hi")]))
    _, moonshot = await run(server, Context(messages=[user("hi")]))
    _, deepseek = await run(server, Context(messages=[user("hi")]))

    for message in (standard, moonshot):
        assert (message.usage.input, message.usage.cache_read, message.usage.output) == (200, 300, 7)
        assert message.usage.total_tokens == 507
    assert (deepseek.usage.input, deepseek.usage.cache_read, deepseek.usage.total_tokens) == (10, 80, 93)


# --------------------------------------------------------------------------- thinking levels, caching, hooks


async def test_thinking_level_mapping_per_format() -> None:
    server = ScriptedServer(*(text_reply(str(i)) for i in range(5)))
    context = Context(messages=[user("hi")])

    mapped = reasoning_model(thinking_level_map={"minimal": None, "high": "max-ish"})
    _, openai_msg = await run(server, context, model=mapped, options=SimpleStreamOptions(reasoning="minimal"))
    await run(server, context, model=mapped, options=SimpleStreamOptions(reasoning="high"))
    _, router_msg = await run(
        server,
        context,
        model=reasoning_model(provider="openrouter", base_url="https://openrouter.ai/api/v1"),
        options=SimpleStreamOptions(reasoning="medium"),
    )
    await run(
        server,
        context,
        model=reasoning_model(provider="deepseek", base_url="https://api.deepseek.com/v1"),
        options=SimpleStreamOptions(),
    )
    await run(server, context, model=make_model(), options=SimpleStreamOptions(reasoning="high"))

    bodies = server.bodies
    assert bodies[0]["reasoning_effort"] == "low"  # minimal is unsupported: clamped up
    assert openai_msg.provider_thinking_level == "low"
    assert bodies[1]["reasoning_effort"] == "max-ish"
    assert bodies[2]["reasoning"] == {"effort": "medium"}
    assert router_msg.provider_thinking_level == "medium"
    assert bodies[3]["thinking"] == {"type": "disabled"}
    assert not {"reasoning_effort", "reasoning", "thinking"} & set(bodies[4])


async def test_anthropic_cache_control_markers() -> None:
    server = ScriptedServer(text_reply("a"), text_reply("b"))
    model = make_model(provider="openrouter", id="anthropic/claude-sonnet-4", base_url="https://openrouter.ai/api/v1")
    tools = [
        Tool(name="a", description="A", parameters={"type": "object"}),
        Tool(name="b", description="B", parameters={"type": "object"}),
    ]
    context = Context(system_prompt="sys", messages=[user("first"), user("second")], tools=tools)

    await run(server, context, model=model, options=StreamOptions(cache_retention="long", session_id="s-1"))
    await run(server, context, model=model, options=StreamOptions(cache_retention="none"))

    marked, unmarked = server.bodies
    marker = {"type": "ephemeral", "ttl": "1h"}
    assert marked["messages"][0]["content"] == [{"type": "text", "text": "sys", "cache_control": marker}]
    assert marked["messages"][1]["content"] == "first"
    assert marked["messages"][2]["content"] == [{"type": "text", "text": "second", "cache_control": marker}]
    assert "cache_control" not in marked["tools"][0] and marked["tools"][1]["cache_control"] == marker
    assert marked["prompt_cache_key"] == "s-1" and marked["prompt_cache_retention"] == "24h"
    assert "cache_control" not in json.dumps(unmarked)
    assert "prompt_cache_key" not in unmarked


async def test_payload_and_response_hooks_headers_and_sampling_params() -> None:
    server = ScriptedServer(
        httpx2.Response(
            200,
            headers={"content-type": "text/event-stream", "x-request-id": "req-9"},
            content=sse([chunk({"content": "ok"}, model="test-model-2025"), chunk(finish="stop")]),
        )
    )
    seen: list[tuple[int, str | None]] = []

    def on_payload(body: dict[str, Any], model: Model) -> dict[str, Any]:
        return {**body, "seed": 7}

    async def on_response(status: int, headers: Any) -> None:
        seen.append((status, headers.get("x-request-id")))

    options = StreamOptions(
        on_payload=on_payload,
        on_response=on_response,
        headers={"X-Extra": "1"},
        sampling_params={"top_p": 0.5},
        temperature=0.2,
        max_tokens=100,
    )
    model = make_model(headers={"X-Model": "m"}, sampling_params={"top_k": 4})

    _, message = await run(server, Context(messages=[user("hi")]), model=model, options=options)

    body = server.bodies[0]
    assert (body["seed"], body["top_p"], body["top_k"], body["temperature"]) == (7, 0.5, 4, 0.2)
    assert body["max_completion_tokens"] == 100
    assert seen == [(200, "req-9")]
    request = server.requests[0]
    assert (request.headers["x-extra"], request.headers["x-model"]) == ("1", "m")
    assert request.headers["authorization"] == "Bearer test-key"
    assert message.response_model == "test-model-2025"


async def test_compat_detection_and_overrides() -> None:
    from apex_ai.providers.openai_compat import resolve_compat

    openai_compat = resolve_compat(make_model(provider="openai", base_url="https://api.openai.com/v1"))
    mistral = resolve_compat(make_model(provider="mistral", base_url="https://api.mistral.ai/v1"))
    overridden = resolve_compat(
        make_model(
            provider="llama.cpp", compat={"maxTokensField": "max_completion_tokens", "supportsStore": True, "bogus": 1}
        )
    )

    assert openai_compat.supports_store and openai_compat.max_tokens_field == "max_completion_tokens"
    assert mistral.requires_tool_result_name and mistral.requires_thinking_as_text
    assert mistral.max_tokens_field == "max_tokens"
    assert overridden.max_tokens_field == "max_completion_tokens" and overridden.supports_store
    assert not overridden.supports_developer_role


async def test_max_tokens_is_clamped_to_the_context_window() -> None:
    from apex_ai.overflow import estimate_context_tokens, output_margin

    server = ScriptedServer(text_reply("ok"))
    model = make_model(context_window=10000)
    context = Context(system_prompt="sys", messages=[user("hi " * 1200)])

    await run(server, context, model=model)

    expected = 10000 - estimate_context_tokens(context) - output_margin(10000)
    assert 0 < expected < model.max_tokens
    assert server.bodies[0]["max_completion_tokens"] == expected


async def test_called_directly_the_stream_is_ended_after_the_terminal_event() -> None:
    from apex_ai.event_stream import AssistantMessageEventStream
    from apex_ai.providers.openai_completions import stream_openai_completions

    server = ScriptedServer(text_reply("direct"))
    out = AssistantMessageEventStream()
    options = StreamOptions(http_client=server.client())

    await stream_openai_completions(make_model(), Context(messages=[user("hi")]), options, out, None)

    events = [event async for event in out]
    assert kinds(events)[-1] == "done"
    assert (await out.result()).content == [TextContent(text="direct")]
    # No key known: a placeholder goes out (keyless local servers), never a real-looking secret.
    assert server.requests[0].headers["authorization"] == "Bearer none"


async def test_reused_index_with_a_new_id_starts_a_new_call_and_reasoning_field_names() -> None:
    server = ScriptedServer(
        sse_response(
            [
                chunk({"reasoning": "plan", "reasoning_content": ""}),
                chunk(tool_delta(0, call_id="first", name="a", args='{"n":1}')),
                chunk(tool_delta(0, call_id="second", name="b", args='{"n":2}')),
                chunk({"content": "after"}),
                chunk(finish="tool_calls"),
            ]
        )
    )

    events, message = await run(server, Context(messages=[user("hi")]))

    assert message.content == [
        ThinkingContent(thinking="plan", thinking_signature="reasoning"),
        ToolCall(id="first", name="a", arguments={"n": 1}),
        ToolCall(id="second", name="b", arguments={"n": 2}),
        TextContent(text="after"),
    ]
    ends = [(e.type, e.content_index) for e in events if e.type.endswith("_end")]
    assert ends == [("thinking_end", 0), ("toolcall_end", 1), ("toolcall_end", 2), ("text_end", 3)]


async def test_more_thinking_formats_and_a_raw_reasoning_effort() -> None:
    server = ScriptedServer(*(text_reply(str(i)) for i in range(4)))
    context = Context(messages=[user("hi")])
    router = reasoning_model(provider="openrouter", base_url="https://openrouter.ai/api/v1")

    await run(server, context, model=router, options=SimpleStreamOptions())
    await run(
        server,
        context,
        model=reasoning_model(compat={"thinkingFormat": "qwen"}),
        options=SimpleStreamOptions(reasoning="low"),
    )
    await run(server, context, model=reasoning_model(provider="zai"), options=SimpleStreamOptions(reasoning="low"))
    _, raw = await run(server, context, model=reasoning_model(), options=StreamOptions(reasoning_effort="medium"))

    bodies = server.bodies
    assert bodies[0]["reasoning"] == {"effort": "none"}
    assert bodies[1]["enable_thinking"] is True
    assert bodies[2]["thinking"] == {"type": "enabled"}
    assert bodies[3]["reasoning_effort"] == "medium"
    assert raw.provider_thinking_level == "medium"


async def test_response_hook_sees_the_error_response_before_the_retry_as_a_plain_dict() -> None:
    server = ScriptedServer(
        httpx2.Response(503, headers={"x-request-id": "req-1", "retry-after-ms": "1"}, text="busy"),
        httpx2.Response(
            200,
            headers={"content-type": "text/event-stream", "x-request-id": "req-2"},
            content=sse([chunk({"content": "ok"}), chunk(finish="stop")]),
        ),
    )
    seen: list[tuple[int, str]] = []

    def on_response(status: int, headers: Any) -> None:
        assert type(headers) is dict
        seen.append((status, headers["x-request-id"]))

    _, message = await run(
        server, Context(messages=[user("hi")]), options=StreamOptions(max_retries=1, on_response=on_response)
    )
    assert message.stop_reason == "stop"
    assert seen == [(503, "req-1"), (200, "req-2")]


async def test_connection_cut_mid_body_names_the_cause_and_is_retryable() -> None:
    body = sse([chunk({"content": "partial"})], done=False)
    server = ScriptedServer(httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=CutBody(body)))
    _, message = await run(server, Context(messages=[user("hi")]))
    assert message.stop_reason == "error"
    assert message.error_message == f"Connection error (fake.local): {PEER_CLOSED}"
    assert message.content == [TextContent(text="partial")]
    assert is_retryable_assistant_error(message)


async def test_cancelled_caller_cancels_the_request_in_flight() -> None:
    handler = NeverAnswers()
    out = AssistantMessageEventStream()
    options = StreamOptions(api_key="k", signal=AbortController().signal)
    options.http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    task = asyncio.ensure_future(
        stream_openai_completions(make_model(), Context(messages=[user("hi")]), options, out, "k")
    )
    await asyncio.wait_for(handler.arrived.wait(), 5)
    task.cancel()
    await asyncio.wait_for(handler.cancelled.wait(), 5)
    assert task.cancelled() or task.done()
