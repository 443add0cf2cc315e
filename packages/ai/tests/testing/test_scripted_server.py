"""The scripted model server, driven through `stream()`, our adapters and the real SDKs over 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from apex_ai.abort import AbortController
from apex_ai.events import AssistantMessageEvent
from apex_ai.options import StreamOptions
from apex_ai.stream import stream
from apex_ai.testing.scripted_server import ScenarioError, ScriptedModelServer, load_scenario
from apex_ai.types import (
    AssistantMessage,
    Context,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

APIS = ["anthropic-messages", "openai-completions", "openai-responses"]
KEY = "sk-scripted-test"
BASH = Tool(
    name="bash",
    description="Run a shell command.",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
)
HELLO = {"text": "Hello! I am a fake model.", "usage": {"input": 90, "output": 7}}
TOOL = {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hello"}}], "usage": {"input": 120, "output": 15}}
OVERLOADED = {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}, "repeat": True}


def model_for(api: str, server: ScriptedModelServer) -> Model:
    base_url = server.anthropic_base_url if api == "anthropic-messages" else server.openai_base_url
    return Model(id="fake-model", api=api, provider="scripted", base_url=base_url, max_tokens=8192)


def context(*messages: Any) -> Context:
    return Context(
        system_prompt="Be brief.",
        messages=list(messages) or [UserMessage(content="Say hello", timestamp=1)],
        tools=[BASH],
    )


async def run(api: str, server: ScriptedModelServer, ctx: Context | None = None) -> list[AssistantMessageEvent]:
    events = stream(model_for(api, server), ctx or context(), StreamOptions(api_key=KEY))
    return [event async for event in events]


def final(events: list[AssistantMessageEvent]) -> AssistantMessage:
    last = events[-1]
    assert last.type in ("done", "error")
    return last.message if last.type == "done" else last.error


def texts(message: AssistantMessage) -> list[str]:
    """The text blocks' texts (the responses adapter also keeps a text signature we do not compare)."""
    return [block.text for block in message.content if isinstance(block, TextContent)]


def deltas(events: list[AssistantMessageEvent], kind: str) -> list[str]:
    return [event.delta for event in events if event.type == kind]


@pytest.mark.parametrize("api", APIS)
async def test_text_reply(api: str) -> None:
    with ScriptedModelServer([HELLO], api_key=KEY) as server:
        events = await run(api, server)
    message = final(events)
    assert events[-1].type == "done"
    assert message.stop_reason == "stop"
    assert [block.type for block in message.content] == ["text"]
    assert texts(message) == ["Hello! I am a fake model."]
    assert deltas(events, "text_delta") == ["Hello!", " I", " am", " a", " fake", " model."]
    assert (message.usage.input, message.usage.output) == (90, 7)
    assert message.response_id is not None and "fake" in message.response_id
    assert [r["reply_index"] for r in server.requests] == [0]


@pytest.mark.parametrize("api", APIS)
async def test_tool_call_reply_then_tool_result_turn(api: str) -> None:
    second = {"text": "The command printed: hello", "usage": {"input": 150, "output": 8}}
    with ScriptedModelServer([TOOL, second], api_key=KEY) as server:
        events = await run(api, server)
        # The argument pieces pi 0.73.1 received from its scripted server for this reply, per API.
        pieces = ['{"comman', 'd":"echo', ' hello"}']
        assert deltas(events, "toolcall_delta") == ([""] if api == "openai-completions" else []) + pieces
        first = final(events)
        assert first.stop_reason == "toolUse"
        [call] = first.content
        assert isinstance(call, ToolCall)
        assert (call.name, call.arguments) == ("bash", {"command": "echo hello"})
        assert (first.usage.input, first.usage.output) == (120, 15)
        result = ToolResultMessage(
            tool_call_id=call.id, tool_name="bash", content=[TextContent(text="hello\n")], timestamp=3
        )
        ctx = context(UserMessage(content="Run echo hello", timestamp=1), first, result)
        reply = final(await run(api, server, ctx))
    assert texts(reply) == ["The command printed: hello"]
    assert [r["reply_index"] for r in server.requests] == [0, 1]
    assert server.remaining == 0


async def test_thinking_is_streamed_before_text() -> None:
    scenario = [{"thinking": "Let me think.", "text": "Done.", "usage": {"input": 5, "output": 4}}]
    for api in APIS:
        with ScriptedModelServer(scenario) as server:
            message = final(await run(api, server))
        assert [block.type for block in message.content] == ["thinking", "text"], api
        thinking = message.content[0]
        assert isinstance(thinking, ThinkingContent)
        assert thinking.thinking.strip() == "Let me think."


@pytest.mark.parametrize(
    ("api", "expected"),
    [
        (
            "anthropic-messages",
            '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_fake_1"}',
        ),
        (
            "openai-completions",
            '529 {"error":{"message":"Overloaded","type":"overloaded_error","param":null,"code":"overloaded_error"}}',
        ),
        (
            "openai-responses",
            "OpenAI API error (529): "
            '{"error":{"message":"Overloaded","type":"overloaded_error","param":null,"code":"overloaded_error"}}',
        ),
    ],
)
async def test_error_529_reply_repeats(api: str, expected: str) -> None:
    with ScriptedModelServer([OVERLOADED]) as server:
        first = final(await run(api, server))
        second = final(await run(api, server))
    assert first.stop_reason == second.stop_reason == "error"
    assert first.error_message == expected
    assert first.content == []
    assert [r["reply_index"] for r in server.requests] == [0, 0]


@pytest.mark.parametrize("api", APIS)
async def test_cut_stream_is_an_error_keeping_the_partial_text(api: str) -> None:
    # Frames before the first text delta: anthropic message_start, ping, block start; chat role chunk;
    # responses created, in_progress, item added, part added. Two deltas then arrive before the cut.
    before_text = {"anthropic-messages": 3, "openai-completions": 1, "openai-responses": 4}[api]
    scenario = [{**HELLO, "cut_after_chunks": before_text + 2, "delay_ms": 1}]
    with ScriptedModelServer(scenario) as server:
        events = await run(api, server)
    message = final(events)
    assert events[-1].type == "error"
    assert message.stop_reason == "error"
    assert message.error_message
    assert deltas(events, "text_delta") == ["Hello!", " I"]
    assert texts(message) == ["Hello! I"]


@pytest.mark.parametrize(
    ("api", "expected"),
    [
        ("anthropic-messages", '{"type":"error","error":{"type":"overloaded_error","message":"Busy"}}'),
        ("openai-completions", "Busy"),
        ("openai-responses", "overloaded_error: Busy"),
    ],
)
async def test_stream_error_event_keeps_the_streamed_text(api: str, expected: str) -> None:
    scenario = [{"text": "Partial answer", "stream_error": {"type": "overloaded_error", "message": "Busy"}}]
    with ScriptedModelServer(scenario) as server:
        message = final(await run(api, server))
    assert message.stop_reason == "error"
    assert message.error_message is not None and expected in message.error_message
    assert texts(message) == ["Partial answer"]


@pytest.mark.parametrize("api", APIS)
async def test_length_stop_reason(api: str) -> None:
    with ScriptedModelServer([{**HELLO, "stop_reason": "length"}]) as server:
        message = final(await run(api, server))
    assert message.stop_reason == "length"


@pytest.mark.parametrize("api", APIS)
async def test_abort_mid_stream_keeps_the_partial_reply(api: str) -> None:
    words = " ".join(f"w{i}" for i in range(200))
    with ScriptedModelServer([{"text": words, "delay_ms": 5}]) as server:
        controller = AbortController()
        events: list[AssistantMessageEvent] = []
        options = StreamOptions(api_key=KEY, signal=controller.signal)
        async for event in stream(model_for(api, server), context(), options):
            events.append(event)
            if event.type == "text_delta" and len(deltas(events, "text_delta")) == 2:
                controller.abort()
    message = final(events)
    assert events[-1].type == "error"
    assert message.stop_reason == "aborted"
    # The partial reply is exactly what was streamed before the stream ended: it starts with the two words seen
    # when aborting (a word the client had already read may follow on a loaded machine) and stops long before
    # the 200 words the server would have sent.
    [text] = texts(message)
    assert text == "".join(deltas(events, "text_delta"))
    assert text.startswith("w0 w1") and words.startswith(text)
    assert len(text.split()) < 100


async def test_retry_after_is_honoured_by_provider_retries() -> None:
    scenario = [{"error": {"status": 429, "type": "rate_limit_error", "message": "Slow down"}, "retry_after": 0}, HELLO]
    seen: list[tuple[int, str | None]] = []

    def on_response(status: int, headers: Any) -> None:
        seen.append((status, headers.get("retry-after")))

    with ScriptedModelServer(scenario) as server:
        options = StreamOptions(api_key=KEY, max_retries=1, on_response=on_response)
        events = [e async for e in stream(model_for("openai-completions", server), context(), options)]
    assert texts(final(events)) == ["Hello! I am a fake model."]
    assert [r["reply_index"] for r in server.requests] == [0, 1]
    assert seen[-1] == (200, None)


async def test_close_cuts_a_reply_that_is_still_waiting() -> None:
    server = ScriptedModelServer([{**HELLO, "wait_ms": 10_000}]).start()
    task = asyncio.ensure_future(run("openai-completions", server))
    while not server.requests:
        await asyncio.sleep(0.005)
    await asyncio.to_thread(server.close)
    message = final(await task)
    assert message.stop_reason == "error"
    assert message.content == []


async def test_recorded_request_bodies(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    with ScriptedModelServer([{**HELLO, "repeat": True}], requests_path=log) as server:
        for api in APIS:
            await run(api, server)
    recorded = [json.loads(line) for line in log.read_text().splitlines()]
    assert recorded == server.requests
    assert [(r["seq"], r["method"], r["path"], r["api"], r["auth"]) for r in recorded] == [
        (1, "POST", "/v1/messages", "anthropic", "bearer"),
        (2, "POST", "/v1/chat/completions", "chat", "bearer"),
        (3, "POST", "/v1/responses", "responses", "bearer"),
    ]
    assert all(set(r) >= {"seq", "ts", "method", "path", "api", "body", "reply_index"} for r in recorded)
    assert recorded[0]["reply"] == {**HELLO, "repeat": True}
    anthropic, chat, responses = (r["body"] for r in recorded)
    assert anthropic["model"] == "fake-model" and anthropic["stream"] is True
    assert anthropic["messages"][0]["role"] == "user"
    assert anthropic["system"][0]["text"] == "Be brief."
    assert anthropic["tools"][0]["name"] == "bash" and "input_schema" in anthropic["tools"][0]
    assert chat["stream_options"] == {"include_usage": True}
    assert chat["messages"][0] == {"role": "system", "content": "Be brief."}
    assert chat["tools"][0]["type"] == "function" and chat["tools"][0]["function"]["name"] == "bash"
    assert responses["input"][1]["content"][0]["type"] == "input_text"
    assert responses["tools"][0]["name"] == "bash"


async def test_wrong_key_is_rejected_and_x_api_key_accepted() -> None:
    with ScriptedModelServer([HELLO], api_key=KEY) as server:
        model = model_for("anthropic-messages", server)
        wrong = [e async for e in stream(model, context(), StreamOptions(api_key="sk-wrong"))]
        assert final(wrong).error_message is not None and final(wrong).error_message.startswith("401 ")
        headers: dict[str, str | None] = {"x-api-key": KEY}
        right = [e async for e in stream(model, context(), StreamOptions(headers=headers))]
    assert final(right).stop_reason == "stop"
    assert [r["auth"] for r in server.requests] == ["bearer", "x-api-key"]
    assert [r["reply_index"] for r in server.requests] == [None, 0]


async def test_exhausted_scenario_is_explained_and_an_anthropic_v1_base_url_still_reaches_the_route() -> None:
    with ScriptedModelServer([]) as server:
        exhausted = final(await run("openai-completions", server))
        v1_base = model_for("anthropic-messages", server).model_copy(update={"base_url": server.openai_base_url})
        final([e async for e in stream(v1_base, context(), StreamOptions(api_key=KEY))])
    assert exhausted.error_message is not None and "scenario exhausted" in exhausted.error_message
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions", "/v1/messages"]


def test_the_server_explains_a_doubled_v1_path() -> None:
    # Clients other than ours may still send `/v1/v1/messages`; the 404 says what went wrong.
    with ScriptedModelServer([]) as server:
        status, body = post(f"{server.base_url}/v1/v1/messages", b'{"stream": true}')
    assert status == 404
    assert "must not end in /v1" in json.dumps(body)


def post(url: str, body: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as failure:
        with failure:
            return failure.code, json.loads(failure.read())


def test_non_streaming_bad_json_and_unknown_paths_get_json_errors() -> None:
    with ScriptedModelServer([HELLO]) as server:
        plain = post(f"{server.openai_base_url}/chat/completions", b'{"model":"m"}')
        broken = post(f"{server.anthropic_base_url}/v1/messages", b"{not json")
        unknown = post(f"{server.base_url}/v2/complete", b"{}")
    assert plain == (400, {"error": dict(plain[1]["error"], message="only stream: true is scripted")})
    assert broken[0] == 400 and broken[1]["error"]["type"] == "invalid_request_error"
    assert unknown[0] == 404 and unknown[1]["error"]["message"] == "no route POST /v2/complete"
    assert [(r["api"], r["reply_index"]) for r in server.requests] == [
        ("chat", None),
        ("anthropic", None),
        (None, None),
    ]
    assert server.remaining == 1


def test_only_loopback_and_valid_scenarios(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="loopback"):
        ScriptedModelServer([], host="0.0.0.0")
    with pytest.raises(ScenarioError, match="unknown keys"):
        ScriptedModelServer([{"tool_call": []}])
    with pytest.raises(ScenarioError, match="status"):
        ScriptedModelServer([{"error": {"status": 200}}])
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps([HELLO, TOOL]))
    assert [reply.raw for reply in load_scenario(path)] == [HELLO, TOOL]


def test_cli_serves_a_scenario_file(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps([OVERLOADED]))
    log = tmp_path / "requests.jsonl"
    command = [
        sys.executable,
        "-m",
        "apex_ai.testing.scripted_server",
        "--scenario",
        str(scenario),
        "--requests",
        str(log),
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        assert line.startswith("listening on http://127.0.0.1:")
        base_url = line.removeprefix("listening on ")
        request = urllib.request.Request(
            f"{base_url}/v1/messages", data=b'{"model":"m","stream":true}', headers={"x-api-key": KEY}
        )
        with pytest.raises(urllib.error.HTTPError) as failure:
            urllib.request.urlopen(request, timeout=5)
        assert failure.value.code == 529
        assert json.loads(failure.value.read())["error"]["type"] == "overloaded_error"
        failure.value.close()
    finally:
        process.terminate()
        process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()
    assert process.returncode == 0
    [record] = [json.loads(line) for line in log.read_text().splitlines()]
    assert (record["path"], record["api"], record["auth"], record["reply_index"]) == (
        "/v1/messages",
        "anthropic",
        "x-api-key",
        0,
    )


def test_fault_keys_are_checked() -> None:
    with pytest.raises(ScenarioError, match="keepalive must be one of"):
        load_scenario_text('[{"text": "x", "keepalive": "beep"}]')
    with pytest.raises(ScenarioError, match="stall_after_chunks must be a non-negative integer"):
        load_scenario_text('[{"text": "x", "stall_after_chunks": -1}]')


def load_scenario_text(text: str) -> list[Any]:
    path = Path("scenario.json")
    path.write_text(text, encoding="utf-8")
    return load_scenario(path)


@pytest.mark.parametrize("api", APIS)
async def test_when_last_picks_the_reply_by_the_last_message(api: str) -> None:
    scenario = [
        {"when_last": "tool|function_call_output", "text": "after the tool", "repeat": True},
        {"when_last": "<conversation>", "text": "a summary"},
        {**TOOL, "repeat": True},
    ]
    with ScriptedModelServer(scenario) as server:
        summary = final(await run(api, server, context(UserMessage(content="<conversation>x", timestamp=1))))
        first = final(await run(api, server))
        call = next(block for block in first.content if isinstance(block, ToolCall))
        result = ToolResultMessage(
            tool_call_id=call.id, tool_name="bash", content=[TextContent(text="hello")], is_error=False, timestamp=2
        )
        after = final(await run(api, server, context(UserMessage(content="go", timestamp=1), first, result)))
        again = final(await run(api, server, context(UserMessage(content="<conversation>y", timestamp=1))))
    assert texts(summary) == ["a summary"] and first.stop_reason == "toolUse"
    assert texts(after) == ["after the tool"]
    assert again.stop_reason == "toolUse"  # the summary reply was used up; the repeating tool call answers
    assert [r["reply_index"] for r in server.requests] == [1, 2, 0, 2]


@pytest.mark.parametrize("api", APIS)
async def test_a_context_window_counts_prompts_cuts_replies_and_rejects_overflows(api: str) -> None:
    long_text = "word " * 400  # 500 tokens of output
    scenario = [{"text": "counted"}, {"text": long_text}, {"text": "never served"}]
    with ScriptedModelServer(scenario, context_window=1000) as server:
        counted = final(await run(api, server))
        cut = final(await run(api, server, context(UserMessage(content="x" * 2400, timestamp=1))))
        rejected = final(await run(api, server, context(UserMessage(content="x" * 4000, timestamp=1))))
    prompts = [r["prompt_tokens"] for r in server.requests]
    assert prompts[0] < 100 and 600 < prompts[1] < 1000 and prompts[2] >= 1000
    assert counted.usage.input == prompts[0] and counted.usage.output == 2
    # The window's end cuts the reply: prompt + output never exceed it.
    assert cut.stop_reason == "length" and cut.usage.output == 1000 - prompts[1]
    assert rejected.stop_reason == "error" and "exceeds the available context size" in (rejected.error_message or "")
    assert server.remaining == 1
