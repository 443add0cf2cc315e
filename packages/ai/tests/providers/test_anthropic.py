"""The anthropic-messages adapter, driven through `stream()` and the real `anthropic` SDK.

Every reply comes from `ScriptedServer` (an `httpx2.MockTransport`) as SSE bytes; request bodies
are compared with a capture of what pi sent to the Messages API.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import anthropic  # noqa: F401  # the SDK takes seconds to import: pay it at collection, not in the first test
import httpx2
import pytest
from packages.ai.tests.providers.sse import (
    PEER_CLOSED,
    CutBody,
    GatedBody,
    ScriptedServer,
    json_response,
    sse_event,
    sse_response,
    typed_events,
)

from apex_ai.abort import AbortController
from apex_ai.events import AssistantMessageEvent, ErrorEvent
from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.retry import is_retryable_assistant_error
from apex_ai.stream import stream
from apex_ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
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

DATA = Path(__file__).parent.parent / "data" / "anthropic"
OVERLOADED_BODY = (
    '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_fake_1"}'
)
PNG = "iVBORw0KGgo="


def sonnet(**changes: Any) -> Model:
    fields: dict[str, Any] = {
        "id": "claude-sonnet-4-6",
        "name": "Claude Sonnet 4.6",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "base_url": "https://api.anthropic.com",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
        "context_window": 200000,
        "max_tokens": 64000,
    }
    fields.update(changes)
    return Model(**fields)


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def hello() -> Context:
    return Context(system_prompt="Be brief.", messages=[user("Say hello")])


def message_start(*, input_tokens: int = 10, output_tokens: int = 1, **usage: Any) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, **usage},
        },
    }


def text_block(index: int, *pieces: str) -> list[dict[str, Any]]:
    start = {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
    deltas = [
        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
        for piece in pieces
    ]
    return [start, *deltas, {"type": "content_block_stop", "index": index}]


def tool_block(index: int, call_id: str, name: str, *pieces: str) -> list[dict[str, Any]]:
    start = {
        "type": "content_block_start",
        "index": index,
        "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
    }
    deltas = [
        {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}
        for piece in pieces
    ]
    return [start, *deltas, {"type": "content_block_stop", "index": index}]


def message_end(stop_reason: str = "end_turn", output_tokens: int = 5, **delta: Any) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None, **delta},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def text_reply(*pieces: str) -> httpx2.Response:
    return sse_response(typed_events([message_start(), *text_block(0, *pieces), *message_end()]))


async def run(
    server: ScriptedServer,
    context: Context | None = None,
    options: StreamOptions | None = None,
    model: Model | None = None,
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    opts = options or StreamOptions()
    opts.http_client = server.client()
    if opts.api_key is None:
        opts.api_key = "sk-ant-api03-test"
    events_stream = stream(model or sonnet(), context or hello(), opts)
    events = [event async for event in events_stream]
    return events, await events_stream.result()


def kinds(events: list[AssistantMessageEvent]) -> list[str]:
    return [event.type for event in events]


# --------------------------------------------------------------------------- decoding (acceptance 7)


async def test_sse_fixture_signed_thinking_text_and_chunked_tool_call() -> None:
    server = ScriptedServer([sse_response((DATA / "thinking_text_tool.sse").read_text())])
    events, result = await run(server)

    assert kinds(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "toolcall_start",
        *["toolcall_delta"] * 5,
        "toolcall_end",
        "done",
    ]
    assert result.stop_reason == "toolUse"
    assert result.raw_stop_reason == "tool_use"
    assert result.response_id == "msg_01SSE"
    assert result.response_model is None
    thinking, text, call = result.content
    assert thinking == ThinkingContent(
        thinking="The user wants the file listing.", thinking_signature="EqQBCgIYAhIM1gbcDa9GJwZA2b3GGgx0bzoY"
    )
    assert text == TextContent(text="Let me look.")
    assert call == ToolCall(id="toolu_01A", name="bash", arguments={"command": "ls -la", "timeout": 30})
    deltas = "".join(e.delta for e in events if e.type == "toolcall_delta")
    assert json.loads(deltas) == {"command": "ls -la", "timeout": 30}
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.type == "toolcall_end" and end.content_index == 2 and end.tool_call == call
    assert [e.content_index for e in events if e.type.endswith("_end") and e.type != "done"] == [0, 1, 2]
    # `input_tokens: null` in message_delta keeps the message_start value; the other nulls too.
    assert result.usage.model_dump(exclude={"cost"}) == Usage(
        input=1200, output=87, cache_read=800, cache_write=400, cache_write_1h=0, reasoning=20, total_tokens=2487
    ).model_dump(exclude={"cost"})
    cost = result.usage.cost
    assert cost.input == pytest.approx(1200 * 3e-6)
    assert cost.output == pytest.approx(87 * 15e-6)
    assert cost.cache_read == pytest.approx(800 * 0.3e-6)
    assert cost.cache_write == pytest.approx(400 * 3.75e-6)
    assert cost.total == pytest.approx(cost.input + cost.output + cost.cache_read + cost.cache_write)
    done = events[-1]
    assert done.type == "done" and done.reason == "toolUse" and done.message is result


async def test_stream_cut_before_message_stop_is_an_error_keeping_content() -> None:
    full = (DATA / "thinking_text_tool.sse").read_text()
    cut = full[: full.index("event: message_stop")]
    events, result = await run(ScriptedServer([sse_response(cut)]))

    assert kinds(events)[-1] == "error"
    assert result.stop_reason == "error"
    assert result.error_message == "Anthropic stream ended before message_stop"
    assert len(result.content) == 3
    assert result.usage.input == 1200 and result.usage.output == 87


async def test_stream_cut_before_stop_reason_is_an_error() -> None:
    reply = sse_response(typed_events([message_start(input_tokens=42), *text_block(0, "Hi")]))
    events, result = await run(ScriptedServer([reply]))

    assert kinds(events) == ["start", "text_start", "text_delta", "text_end", "error"]
    assert result.error_message == "Anthropic stream ended without a stop reason"
    assert result.content == [TextContent(text="Hi")]
    assert result.usage.input == 42


@pytest.mark.parametrize(
    ("raw", "delta", "stop_reason", "error"),
    [
        ("end_turn", {}, "stop", None),
        ("pause_turn", {}, "stop", None),
        ("stop_sequence", {}, "stop", None),
        ("max_tokens", {}, "length", None),
        ("refusal", {"stop_details": {"type": "refusal", "explanation": "Not allowed."}}, "error", "Not allowed."),
        ("refusal", {}, "error", "The model refused to complete the request"),
        ("sensitive", {}, "error", "Provider stopped with: sensitive"),
        (
            "model_context_window_exceeded",
            {},
            "error",
            "Unhandled stop reason: model_context_window_exceeded",
        ),
    ],
)
async def test_stop_reasons(raw: str, delta: dict[str, Any], stop_reason: str, error: str | None) -> None:
    reply = sse_response(typed_events([message_start(), *text_block(0, "x"), *message_end(raw, **delta)]))
    events, result = await run(ScriptedServer([reply]))

    assert result.stop_reason == stop_reason
    assert result.raw_stop_reason == raw
    assert result.error_message == error
    assert kinds(events)[-1] == ("error" if error else "done")


async def test_redacted_thinking_usage_overwrites_and_response_model() -> None:
    start = message_start(
        input_tokens=100,
        cache_creation_input_tokens=50,
        cache_creation={"ephemeral_5m_input_tokens": 20, "ephemeral_1h_input_tokens": 30},
    )
    start["message"]["model"] = "claude-sonnet-4-6-20250929"
    redacted = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking", "data": "ENC"}},
        {"type": "content_block_stop", "index": 0},
    ]
    end = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn"},
        "usage": {"input_tokens": 120, "output_tokens": 9, "cache_read_input_tokens": 7},
    }
    reply = sse_response(typed_events([start, *redacted, end, {"type": "message_stop"}]))
    events, result = await run(ScriptedServer([reply]))

    assert kinds(events) == ["start", "thinking_start", "thinking_end", "done"]
    assert result.content == [ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="ENC", redacted=True)]
    assert result.response_model == "claude-sonnet-4-6-20250929"
    usage = result.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.cache_write_1h) == (120, 9, 7, 50, 30)
    assert usage.total_tokens == 186
    assert usage.cost.cache_write == pytest.approx((20 * 3.75 + 30 * 2 * 3) / 1e6)


async def test_tool_arguments_arriving_in_many_pieces() -> None:
    arguments = {"path": "src/main.py", "edits": [{"oldText": 'print("hi")\n', "newText": "print('héllo ✓')\n"}]}
    text = json.dumps(arguments, ensure_ascii=False)
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    reply = sse_response(
        typed_events([message_start(), *tool_block(0, "toolu_9", "edit", *pieces), *message_end("tool_use")])
    )
    events, result = await run(ScriptedServer([reply]))

    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert len(deltas) == len(pieces) > 20
    assert "".join(e.delta for e in deltas) == text
    assert result.content == [ToolCall(id="toolu_9", name="edit", arguments=arguments)]
    assert result.stop_reason == "toolUse"


# --------------------------------------------------------------------------- request body


def pi_tools(capture: dict[str, Any]) -> list[Tool]:
    return [Tool(name=t["name"], description=t["description"], parameters=t["input_schema"]) for t in capture["tools"]]


async def test_request_body_matches_pi_capture() -> None:
    capture = json.loads((DATA / "pi_print_text_request.json").read_text())
    model = Model(
        id="fake-model", api="anthropic-messages", provider="fake", base_url="http://127.0.0.1:9", max_tokens=8192
    )
    context = Context(
        system_prompt=capture["system"][0]["text"],
        messages=[UserMessage(content=[TextContent(text="Say hello")], timestamp=1)],
        tools=pi_tools(capture),
    )
    server = ScriptedServer([text_reply("Hello!")])
    _, result = await run(server, context, model=model)

    assert result.stop_reason == "stop"
    sent = server.requests[0]
    assert sent.method == "POST" and sent.path == "/v1/messages"
    assert sent.body == capture
    assert sent.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert sent.headers["authorization"] == "Bearer sk-ant-api03-test"
    assert "thinking" not in sent.body  # not a reasoning model: nothing to switch off


async def test_tool_results_merge_into_one_user_message_with_images() -> None:
    model = sonnet()
    assistant = AssistantMessage(
        content=[
            ThinkingContent(thinking="Two reads.", thinking_signature="sig-1"),
            TextContent(text="Reading both."),
            ToolCall(id="call|1", name="read", arguments={"path": "a.txt"}),
            ToolCall(id="toolu_2", name="read", arguments={"path": "b.png"}),
        ],
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="toolUse",
        timestamp=2,
    )
    context = Context(
        messages=[
            user("Read a.txt and b.png"),
            assistant,
            ToolResultMessage(
                tool_call_id="call|1",
                tool_name="read",
                content=[TextContent(text="line 1"), TextContent(text="line 2")],
                timestamp=3,
            ),
            ToolResultMessage(
                tool_call_id="toolu_2",
                tool_name="read",
                content=[ImageContent(data=PNG, mime_type="image/png")],
                is_error=False,
                timestamp=4,
            ),
            UserMessage(
                content=[TextContent(text="And this?"), ImageContent(data=PNG, mime_type="image/png")], timestamp=5
            ),
        ]
    )
    server = ScriptedServer([text_reply("ok")])
    await run(server, context, model=model)

    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    assert server.requests[0].body["messages"] == [
        {"role": "user", "content": "Read a.txt and b.png"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Two reads.", "signature": "sig-1"},
                {"type": "text", "text": "Reading both."},
                {"type": "tool_use", "id": "call|1", "name": "read", "input": {"path": "a.txt"}},
                {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "b.png"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call|1", "content": "line 1\nline 2", "is_error": False},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": [{"type": "text", "text": "(see attached image)"}, image],
                    "is_error": False,
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "text", "text": "And this?"}, {**image, "cache_control": {"type": "ephemeral"}}],
        },
    ]


async def test_foreign_tool_call_ids_are_normalized_and_images_dropped_for_text_models() -> None:
    model = sonnet(input=["text"])
    foreign = AssistantMessage(
        content=[ToolCall(id="call_abc|fc_1", name="read", arguments={})],
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason="toolUse",
        timestamp=2,
    )
    result_message = ToolResultMessage(
        tool_call_id="call_abc|fc_1",
        tool_name="read",
        content=[ImageContent(data=PNG, mime_type="image/png")],
        timestamp=3,
    )
    server = ScriptedServer([text_reply("ok")])
    await run(server, Context(messages=[user("go"), foreign, result_message]), model=model)

    messages = server.requests[0].body["messages"]
    assert messages[1]["content"][0]["id"] == "call_abc_fc_1"
    tool_result = messages[2]["content"][0]
    assert tool_result["tool_use_id"] == "call_abc_fc_1"
    assert tool_result["content"] == "(tool image omitted: model does not support images)"


async def test_unpaired_surrogates_are_stripped_from_outgoing_text() -> None:
    server = ScriptedServer([text_reply("a")])
    await run(server, Context(system_prompt="sys\ud800tem", messages=[user("ab\udc00c")]))
    body = server.requests[0].body
    assert body["system"][0]["text"] == "system"
    assert body["messages"][0]["content"][0]["text"] == "abc"


async def test_cache_retention_long_and_none() -> None:
    tools = [Tool(name="read", description="Read a file", parameters={"type": "object", "properties": {}})]
    context = Context(system_prompt="sys", messages=[user("hi")], tools=tools)
    server = ScriptedServer([text_reply("a"), text_reply("b")])
    await run(server, context, StreamOptions(cache_retention="long"))
    await run(server, context, StreamOptions(cache_retention="none"))

    long_body, none_body = server.requests[0].body, server.requests[1].body
    one_hour = {"type": "ephemeral", "ttl": "1h"}
    assert long_body["system"][0]["cache_control"] == one_hour
    assert long_body["tools"][-1]["cache_control"] == one_hour
    assert long_body["messages"][-1]["content"] == [{"type": "text", "text": "hi", "cache_control": one_hour}]
    assert "cache_control" not in json.dumps(none_body)
    assert none_body["messages"] == [{"role": "user", "content": "hi"}]


async def test_cache_retention_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APEX_CODE_CACHE_RETENTION", "long")
    server = ScriptedServer([text_reply("a")])
    await run(server)
    assert server.requests[0].body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


async def test_metadata_tool_choice_temperature_and_headers() -> None:
    server = ScriptedServer([text_reply("a")])
    options = StreamOptions(
        metadata={"user_id": "user-7", "other": "ignored"},
        tool_choice="any",
        temperature=0.2,
        headers={"x-extra": "1", "anthropic-beta": None},
    )
    await run(server, options=options, model=sonnet(headers={"x-model": "m"}))

    sent = server.requests[0]
    assert sent.body["metadata"] == {"user_id": "user-7"}
    assert sent.body["tool_choice"] == {"type": "any"}
    assert sent.body["temperature"] == 0.2
    assert sent.body["thinking"] == {"type": "disabled"}
    assert sent.headers["x-extra"] == "1" and sent.headers["x-model"] == "m"
    assert "anthropic-beta" not in sent.headers


async def test_payload_hook_replaces_body_and_response_hook_sees_status() -> None:
    seen: list[tuple[int, str]] = []

    async def on_payload(body: dict[str, Any], model: Model) -> dict[str, Any]:
        return {**body, "max_tokens": 77}

    def on_response(status: int, headers: Any) -> None:
        seen.append((status, headers["content-type"]))

    server = ScriptedServer([text_reply("a")])
    await run(server, options=StreamOptions(on_payload=on_payload, on_response=on_response))
    assert server.requests[0].body["max_tokens"] == 77
    assert seen == [(200, "text/event-stream")]


async def test_oauth_token_uses_bearer_and_claude_code_identity() -> None:
    tools = [Tool(name="bash", description="Run", parameters={"type": "object", "properties": {}})]
    context = Context(system_prompt="Be brief.", messages=[user("hi")], tools=tools)
    reply = sse_response(
        typed_events([message_start(), *tool_block(0, "toolu_1", "Bash", '{"command":"ls"}'), *message_end("tool_use")])
    )
    server = ScriptedServer([reply])
    _, result = await run(server, context, StreamOptions(api_key="sk-ant-oat01-token"))

    sent = server.requests[0]
    assert sent.headers["authorization"] == "Bearer sk-ant-oat01-token"
    assert sent.headers["anthropic-beta"].startswith("claude-code-20250219,oauth-2025-04-20,")
    assert sent.headers["x-app"] == "cli"
    assert sent.headers["user-agent"].startswith("claude-cli/")
    assert [block["text"] for block in sent.body["system"]] == [
        "You are Claude Code, Anthropic's official CLI for Claude.",
        "Be brief.",
    ]
    assert sent.body["tools"][0]["name"] == "Bash"
    assert result.content == [ToolCall(id="toolu_1", name="bash", arguments={"command": "ls"})]


async def test_caller_x_api_key_header_without_key() -> None:
    server = ScriptedServer([text_reply("a")])
    options = StreamOptions(headers={"x-api-key": "from-header"}, env={})
    options.http_client = server.client()
    events_stream = stream(sonnet(provider="my-proxy"), hello(), options)
    result = await events_stream.result()

    assert result.stop_reason == "stop"
    assert server.requests[0].headers["x-api-key"] == "from-header"
    assert "authorization" not in server.requests[0].headers


# --------------------------------------------------------------------------- thinking (acceptance 15)


async def test_budget_thinking_raises_max_tokens_and_drops_temperature() -> None:
    server = ScriptedServer([text_reply("a"), text_reply("b")])
    _, result = await run(server, options=SimpleStreamOptions(reasoning="medium", max_tokens=32000, temperature=0.5))
    await run(server, options=SimpleStreamOptions(max_tokens=32000, temperature=0.5))

    thinking_body, plain_body = server.requests[0].body, server.requests[1].body
    assert thinking_body["max_tokens"] == 40192
    assert thinking_body["thinking"] == {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}
    assert "temperature" not in thinking_body
    assert result.provider_thinking_level == "medium"
    assert server.requests[0].headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert plain_body["thinking"] == {"type": "disabled"}
    assert plain_body["max_tokens"] == 32000
    assert plain_body["temperature"] == 0.5


async def test_budget_shrinks_when_max_tokens_cannot_hold_it() -> None:
    server = ScriptedServer([text_reply("a")])
    await run(server, options=SimpleStreamOptions(reasoning="xhigh"), model=sonnet(max_tokens=4000))
    body = server.requests[0].body
    assert body["max_tokens"] == 4000
    assert body["thinking"]["budget_tokens"] == 2976


async def test_thinking_budget_override_and_off_unsupported() -> None:
    server = ScriptedServer([text_reply("a"), text_reply("b")])
    await run(server, options=SimpleStreamOptions(reasoning="low", thinking_budgets={"low": 3000}, max_tokens=5000))
    await run(server, model=sonnet(thinking_level_map={"off": None}))
    assert server.requests[0].body["thinking"]["budget_tokens"] == 3000
    assert server.requests[0].body["max_tokens"] == 8000
    assert "thinking" not in server.requests[1].body


async def test_adaptive_thinking_sends_effort_without_interleaved_beta() -> None:
    model = sonnet(id="claude-opus-4-6", compat={"forceAdaptiveThinking": True}, thinking_level_map={"minimal": None})
    server = ScriptedServer([text_reply("a"), text_reply("b")])
    _, result = await run(server, options=SimpleStreamOptions(reasoning="xhigh"), model=model)
    _, clamped = await run(server, options=SimpleStreamOptions(reasoning="minimal"), model=model)

    body = server.requests[0].body
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "high"}
    assert result.provider_thinking_level == "high"
    assert "anthropic-beta" not in server.requests[0].headers
    assert server.requests[1].body["output_config"] == {"effort": "low"}
    assert clamped.provider_thinking_level == "low"


async def test_context_window_clamps_max_tokens_and_then_the_budget() -> None:
    # 40000 characters estimate as 10000 tokens; 20000 - 10000 - 2500 (an eighth of the window) leaves 7500.
    context = Context(messages=[user("x" * 40000)])
    server = ScriptedServer([text_reply("a"), text_reply("b")])
    await run(server, context, model=sonnet(context_window=20000))
    await run(server, context, SimpleStreamOptions(reasoning="medium"), model=sonnet(context_window=20000))

    assert server.requests[0].body["max_tokens"] == 7500
    assert server.requests[1].body["max_tokens"] == 7500
    assert server.requests[1].body["thinking"]["budget_tokens"] == 7500 - 1024


async def test_a_full_context_is_an_overflow_error_and_nothing_is_sent() -> None:
    from apex_ai.overflow import is_context_overflow

    context = Context(messages=[user("x" * 4 * 3700)])  # 3700 of 4096: less than 256 left after the margin
    server = ScriptedServer([text_reply("never")])
    _, result = await run(server, context, model=sonnet(context_window=4096))

    assert result.stop_reason == "error" and server.requests == []
    assert (result.error_message or "").startswith("Context full: 3700 of 4096 tokens used")
    assert is_context_overflow(result, 4096)


async def test_catalog_opus_4_6_thinks_adaptively() -> None:
    from apex_ai.models import default_registry

    model = default_registry.get_model("anthropic", "claude-opus-4-6")
    assert model is not None
    server = ScriptedServer([text_reply("a")])
    _, result = await run(server, options=SimpleStreamOptions(reasoning="medium"), model=model)

    assert result.stop_reason == "stop"
    assert server.requests[0].body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert server.requests[0].body["output_config"] == {"effort": "medium"}
    assert result.provider_thinking_level == "medium"


async def test_stream_options_thinking_enabled_with_explicit_budget() -> None:
    server = ScriptedServer([text_reply("a")])
    await run(server, options=StreamOptions(thinking_enabled=True, thinking_budget_tokens=5000, max_tokens=9000))
    body = server.requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 5000, "display": "summarized"}
    assert body["max_tokens"] == 9000


async def test_eager_streaming_disabled_uses_fine_grained_beta() -> None:
    tools = [Tool(name="read", description="Read", parameters={"type": "object", "properties": {}})]
    server = ScriptedServer([text_reply("a")])
    model = sonnet(compat={"supportsEagerToolInputStreaming": False})
    await run(server, Context(messages=[user("hi")], tools=tools), model=model)
    sent = server.requests[0]
    assert "eager_input_streaming" not in sent.body["tools"][0]
    assert sent.headers["anthropic-beta"] == "fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14"


# --------------------------------------------------------------------------- HTTP errors and retries


async def test_529_without_retries_reports_status_and_raw_body() -> None:
    server = ScriptedServer([json_response(529, OVERLOADED_BODY)])
    events, result = await run(server)

    assert kinds(events) == ["error"]
    assert result.error_message == (DATA / "pi_529_error_message.txt").read_text()
    assert result.stop_reason == "error"
    assert result.content == [] and result.usage == Usage()
    assert len(server.requests) == 1


class FakeClock:
    """Stands in for `asyncio.sleep`: records the delays and yields without waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self._real_sleep = asyncio.sleep

    async def sleep(self, delay: float, result: Any = None) -> Any:
        self.delays.append(delay)
        return await self._real_sleep(0, result)


async def test_529_is_retried_with_backoff_then_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(asyncio, "sleep", clock.sleep)
    server = ScriptedServer(
        [
            json_response(529, OVERLOADED_BODY),
            json_response(529, OVERLOADED_BODY, headers={"retry-after-ms": "3"}),
            text_reply("Hello"),
        ]
    )
    events, result = await run(server, options=StreamOptions(max_retries=2))

    assert result.stop_reason == "stop" and result.content == [TextContent(text="Hello")]
    assert kinds(events)[0] == "start" and "error" not in kinds(events)
    assert len(server.requests) == 3
    backoff, server_asked = [d for d in clock.delays if d > 0]
    assert 0.375 <= backoff <= 0.5
    assert server_asked == pytest.approx(0.003)


async def test_529_after_retries_are_exhausted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(asyncio, "sleep", FakeClock().sleep)
    server = ScriptedServer([json_response(529, OVERLOADED_BODY), json_response(529, OVERLOADED_BODY)])
    events, result = await run(server, options=StreamOptions(max_retries=1))

    assert kinds(events) == ["error"]
    assert result.error_message == f"529 {OVERLOADED_BODY}"
    assert len(server.requests) == 2


async def test_retry_after_above_cap_fails_at_once() -> None:
    body = '{"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}'
    server = ScriptedServer([json_response(429, body, headers={"retry-after": "120"})])
    events, result = await run(server, options=StreamOptions(max_retries=2))

    assert kinds(events) == ["error"]
    assert result.error_message == f"Server requested 120s retry delay (max: 60s). 429 {body}"
    assert len(server.requests) == 1


async def test_client_error_is_not_retried_and_long_bodies_are_truncated() -> None:
    body = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": "x" * 5000}})
    server = ScriptedServer([json_response(400, body)])
    _, result = await run(server, options=StreamOptions(max_retries=3))

    assert len(server.requests) == 1
    assert result.error_message is not None
    assert result.error_message.startswith('400 {"type": "error"')
    assert result.error_message.endswith(f"... [truncated {len(body) - 4000} chars]")


async def test_overloaded_error_event_after_http_200_keeps_partial_text() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = typed_events([message_start(input_tokens=30), *text_block(0, "Hel")[:2]]) + sse_event("error", error)
    events, result = await run(ScriptedServer([sse_response(body)]))

    assert kinds(events) == ["start", "text_start", "text_delta", "error"]
    assert result.stop_reason == "error"
    assert result.error_message == '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    assert result.content == [TextContent(text="Hel")]
    assert result.usage.input == 30


async def test_malformed_sse_json_is_an_error() -> None:
    body = typed_events([message_start()]) + sse_event("content_block_start", '{"type": "content_block_start", "ind')
    events, result = await run(ScriptedServer([sse_response(body)]))

    assert kinds(events) == ["start", "error"]
    assert result.error_message is not None
    assert result.error_message.startswith("Malformed Anthropic stream event: ")


# --------------------------------------------------------------------------- abort (§8)


async def test_abort_before_the_request_sends_nothing() -> None:
    controller = AbortController()
    controller.abort()
    server = ScriptedServer([text_reply("never")])
    events, result = await run(server, options=StreamOptions(signal=controller.signal))

    assert kinds(events) == ["error"]
    assert result.stop_reason == "aborted"
    assert result.error_message == "Request was aborted"
    assert server.requests == []


async def test_abort_while_the_server_has_not_answered() -> None:
    controller = AbortController()
    arrived = asyncio.Event()

    async def never_answers(request: httpx2.Request) -> httpx2.Response:
        arrived.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    options = StreamOptions(signal=controller.signal, api_key="sk-ant-api03-test")
    options.http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(never_answers))
    events_stream = stream(sonnet(), hello(), options)
    await asyncio.wait_for(arrived.wait(), 5)
    controller.abort()
    result = await asyncio.wait_for(events_stream.result(), 5)

    assert result.stop_reason == "aborted"
    assert [event.type async for event in events_stream] == ["error"]


async def abort_when(
    body: GatedBody, trigger: str, *, count: int = 1
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    """Stream `body`, abort once `count` events of type `trigger` arrived; return events and result."""
    controller = AbortController()
    server = ScriptedServer([sse_response(body)])
    options = StreamOptions(signal=controller.signal, api_key="sk-ant-api03-test")
    options.http_client = server.client()
    events_stream = stream(sonnet(), hello(), options)
    events: list[AssistantMessageEvent] = []
    seen = 0
    async for event in events_stream:
        events.append(event)
        if event.type == trigger:
            seen += 1
            if seen == count:
                controller.abort()
    return events, await events_stream.result()


async def test_abort_after_start_keeps_message_start_usage() -> None:
    events, result = await abort_when(GatedBody(typed_events([message_start(input_tokens=321)])), "start")

    assert kinds(events) == ["start", "error"]
    final = events[-1]
    assert isinstance(final, ErrorEvent) and final.reason == "aborted"
    assert result.stop_reason == "aborted" and result.error_message == "Request was aborted"
    assert result.usage.input == 321
    assert result.usage.cost.input == pytest.approx(321 * 3e-6)


async def test_abort_mid_text_keeps_partial_text() -> None:
    before = typed_events([message_start(), *text_block(0, "Hello", " wor")[:3]])
    after = typed_events([*text_block(0, "ld")[1:], *message_end()])
    gate = asyncio.Event()
    body = GatedBody(before, after, gate)
    events, result = await abort_when(body, "text_delta", count=2)

    assert result.stop_reason == "aborted"
    assert result.content == [TextContent(text="Hello wor")]
    assert kinds(events)[-1] == "error" and "done" not in kinds(events)
    assert body.closed  # the SDK stream was closed on abort
    gate.set()  # letting the server go on changes nothing: the reply is final
    await asyncio.sleep(0)
    assert result.content == [TextContent(text="Hello wor")]


async def test_abort_mid_tool_arguments_keeps_parsed_prefix() -> None:
    before = typed_events([message_start(), *tool_block(0, "toolu_5", "bash", '{"command": "ls', " -l")[:3]])
    events, result = await abort_when(GatedBody(before), "toolcall_delta", count=2)

    assert result.stop_reason == "aborted"
    assert result.content == [ToolCall(id="toolu_5", name="bash", arguments={"command": "ls -l"})]
    assert "toolcall_end" not in kinds(events)


# --------------------------------------------------------------------------- import cost


def test_importing_the_adapter_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = "import sys, apex_ai.providers.anthropic; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_response_hook_sees_the_error_response_before_the_retry_as_a_plain_dict() -> None:
    seen: list[tuple[int, str]] = []

    def on_response(status: int, headers: Any) -> None:
        assert type(headers) is dict
        seen.append((status, headers["content-type"]))

    server = ScriptedServer([json_response(529, OVERLOADED_BODY, headers={"retry-after-ms": "1"}), text_reply("Hello")])
    _, result = await run(server, options=StreamOptions(max_retries=1, on_response=on_response))
    assert result.stop_reason == "stop"
    assert seen == [(529, "application/json"), (200, "text/event-stream")]


async def test_response_hook_sees_a_final_error_response_once() -> None:
    seen: list[int] = []
    server = ScriptedServer([json_response(400, OVERLOADED_BODY)])
    _, result = await run(server, options=StreamOptions(on_response=lambda status, headers: seen.append(status)))
    assert result.stop_reason == "error"
    assert seen == [400]


async def test_connection_cut_mid_body_names_the_cause_and_is_retryable() -> None:
    before = typed_events([message_start(), *text_block(0, "Hi")]).encode()
    _, result = await run(ScriptedServer([sse_response(CutBody(before))]))
    assert result.stop_reason == "error"
    assert result.error_message == f"Connection error (api.anthropic.com): {PEER_CLOSED}"
    assert result.content == [TextContent(text="Hi")]
    assert is_retryable_assistant_error(result)


@pytest.mark.parametrize("model_id", ["claude-sonnet-4-5", "claude-opus-4-5"])
async def test_sdk_deprecation_warning_does_not_fail_the_request(model_id: str) -> None:
    # pytest runs with filterwarnings=error: the SDK's DeprecationWarning for these catalog models
    # would become an exception inside messages.create if the adapter let it through.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, result = await run(ScriptedServer([text_reply("Hello")]), model=sonnet(id=model_id))
        assert result.stop_reason == "stop", result.error_message
        assert result.content == [TextContent(text="Hello")]
        # The filter was only in place while the SDK call started: nothing of it is left behind.
        with pytest.raises(DeprecationWarning):
            warnings.warn(f"The model '{model_id}' is deprecated", DeprecationWarning, stacklevel=1)
