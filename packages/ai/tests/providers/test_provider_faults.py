"""Servers misbehaving: silence, keep-alives without content, invalid UTF-8, retry-after, a dead port and
an Anthropic base URL written with `/v1`. Each runs the real SDKs against the scripted server on 127.0.0.1."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from apex_ai.abort import AbortSignal
from apex_ai.events import AssistantMessageEvent
from apex_ai.options import StreamOptions
from apex_ai.retry import (
    RETRY_AFTER_DIAGNOSTIC,
    RetryPolicy,
    is_retryable_assistant_error,
    retry_assistant_call,
    server_retry_delay_ms,
)
from apex_ai.stream import stream
from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_ai.types import AssistantMessage, Context, Model, TextContent, UserMessage

APIS = ["anthropic-messages", "openai-completions", "openai-responses"]
TEXT = "one two three four five six"
# Generous: the scripted server runs in this process, and on a loaded machine (CI runs two test workers on two
# cores) a 0.3 s limit fired before the first chunks arrived.
IDLE_MS = 1000
LONG_MS = 20000  # far beyond the idle limit: the client gives up long before the server would go on
RATE_LIMITED = {"error": {"status": 429, "type": "rate_limit_error", "message": "Slow down"}}


def model_for(api: str, base_url: str) -> Model:
    return Model(id="fake-model", api=api, provider="scripted", base_url=base_url, max_tokens=8192)


def base_url(api: str, server: ScriptedModelServer) -> str:
    return server.anthropic_base_url if api == "anthropic-messages" else server.openai_base_url


async def reply(api: str, url: str, **options: Any) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    ctx = Context(system_prompt="Be brief.", messages=[UserMessage(content="Say hello", timestamp=1)])
    events_stream = stream(model_for(api, url), ctx, StreamOptions(api_key="k", **options))
    events = [event async for event in events_stream]
    return events, await events_stream.result()


def text_of(message: AssistantMessage) -> str:
    return "".join(block.text for block in message.content if isinstance(block, TextContent))


def host_port(server: ScriptedModelServer) -> str:
    return f"127.0.0.1:{server.port}"


# --------------------------------------------------------------------------- idle timeout


@pytest.mark.parametrize("api", APIS)
async def test_a_server_silent_mid_stream_times_out_naming_it_and_keeps_the_partial_text(api: str) -> None:
    scenario = [{"text": TEXT, "stall_after_chunks": 6, "stall_ms": LONG_MS}]
    with ScriptedModelServer(scenario) as server:
        events, message = await reply(api, base_url(api, server), idle_timeout_ms=IDLE_MS)
    assert events[-1].type == "error"
    assert message.stop_reason == "error"
    assert message.error_message == f"Request timed out: no data from {host_port(server)} for {IDLE_MS / 1000:g} s"
    assert is_retryable_assistant_error(message)
    assert TEXT.startswith(text_of(message)) and text_of(message)


@pytest.mark.parametrize(
    ("api", "keepalive"),
    [
        ("anthropic-messages", "ping"),
        ("anthropic-messages", "comment"),
        ("openai-completions", "comment"),
        ("openai-responses", "comment"),
    ],
)
async def test_keep_alives_without_content_do_not_hold_the_stream_open(api: str, keepalive: str) -> None:
    scenario = [
        {"text": TEXT, "stall_after_chunks": 4, "stall_ms": LONG_MS, "keepalive_ms": 30, "keepalive": keepalive}
    ]
    with ScriptedModelServer(scenario) as server:
        _, message = await reply(api, base_url(api, server), idle_timeout_ms=IDLE_MS)
    assert message.error_message == f"Request timed out: no data from {host_port(server)} for {IDLE_MS / 1000:g} s"


@pytest.mark.parametrize("api", APIS)
async def test_a_short_pause_with_keep_alives_is_not_a_timeout(api: str) -> None:
    scenario = [{"text": TEXT, "stall_after_chunks": 4, "stall_ms": 100, "keepalive_ms": 20}]
    with ScriptedModelServer(scenario) as server:
        _, message = await reply(api, base_url(api, server), idle_timeout_ms=10000)
    assert message.stop_reason == "stop", message.error_message
    assert text_of(message) == TEXT


@pytest.mark.parametrize("api", APIS)
async def test_a_server_that_never_answers_times_out_before_the_headers(api: str) -> None:
    with ScriptedModelServer([{"text": TEXT, "wait_ms": LONG_MS}]) as server:
        _, message = await reply(api, base_url(api, server), idle_timeout_ms=IDLE_MS)
    assert message.error_message == f"Request timed out: no data from {host_port(server)} for {IDLE_MS / 1000:g} s"
    assert is_retryable_assistant_error(message)


async def test_provider_retries_follow_an_idle_timeout() -> None:
    scenario = [{"text": TEXT, "wait_ms": LONG_MS}, {"text": "Hello"}]
    with ScriptedModelServer(scenario) as server:
        _, message = await reply(
            "openai-completions", base_url("openai-completions", server), idle_timeout_ms=IDLE_MS, max_retries=1
        )
    assert message.stop_reason == "stop" and text_of(message) == "Hello"
    assert [r["reply_index"] for r in server.requests] == [0, 1]


# --------------------------------------------------------------------------- invalid UTF-8


@pytest.mark.parametrize("api", APIS)
async def test_invalid_utf8_in_a_data_line_becomes_replacement_characters(api: str) -> None:
    # "\udce9" goes out as the lone byte 0xE9 (Latin-1 "é"), which is not UTF-8.
    with ScriptedModelServer([{"text": "caf\udce9 au lait", "invalid_utf8": True}]) as server:
        _, message = await reply(api, base_url(api, server))
    assert message.stop_reason == "stop", message.error_message
    assert text_of(message) == "caf\ufffd au lait"


# --------------------------------------------------------------------------- retry-after


@pytest.mark.parametrize("api", APIS)
async def test_retry_after_is_kept_with_the_failed_reply(api: str) -> None:
    with ScriptedModelServer([{**RATE_LIMITED, "retry_after": 1}]) as server:
        _, message = await reply(api, base_url(api, server))
    assert message.stop_reason == "error"
    assert message.error_message is not None and "429" in message.error_message
    assert server_retry_delay_ms(message) == 1000
    assert [d.type for d in message.diagnostics or []] == [RETRY_AFTER_DIAGNOSTIC]
    assert RetryPolicy().wait_ms(1, message) == 1000  # not the 2000 ms backoff


@pytest.mark.parametrize("api", APIS)
async def test_retry_after_above_the_cap_fails_at_once_without_provider_retries(api: str) -> None:
    with ScriptedModelServer([{**RATE_LIMITED, "retry_after": 2}]) as server:
        _, message = await reply(api, base_url(api, server), max_retry_delay_ms=1000)
    assert message.error_message is not None
    assert message.error_message.startswith("Server requested 2s retry delay (max: 1s). ")
    assert RetryPolicy(max_delay_ms=1000).wait_ms(1, message) is None
    assert RetryPolicy(max_delay_ms=0).wait_ms(1, message) == 2000  # 0: no cap


async def test_assistant_retry_waits_as_long_as_the_server_asked() -> None:
    slept: list[int] = []

    async def sleep(delay_ms: int, signal: AbortSignal | None) -> None:
        slept.append(delay_ms)

    scenario = [{**RATE_LIMITED, "retry_after": 1}, RATE_LIMITED, {"text": "Hello"}]
    with ScriptedModelServer(scenario) as server:

        async def produce() -> AssistantMessage:
            return (await reply("anthropic-messages", base_url("anthropic-messages", server)))[1]

        message = await retry_assistant_call(produce, RetryPolicy(base_delay_ms=2000), sleep=sleep)
    assert text_of(message) == "Hello"
    assert slept == [1000, 4000]  # the server's 1 s, then the backoff of retry 2


async def test_assistant_retry_gives_up_when_the_server_asks_for_too_long() -> None:
    slept: list[int] = []

    async def sleep(delay_ms: int, signal: AbortSignal | None) -> None:
        slept.append(delay_ms)

    with ScriptedModelServer([{**RATE_LIMITED, "retry_after": 120}, {"text": "Hello"}]) as server:

        async def produce() -> AssistantMessage:
            return (await reply("openai-completions", base_url("openai-completions", server)))[1]

        message = await retry_assistant_call(produce, RetryPolicy(), sleep=sleep)
    assert message.stop_reason == "error"
    assert message.error_message is not None and message.error_message.startswith("Server requested 120s")
    assert slept == [] and len(server.requests) == 1


# --------------------------------------------------------------------------- server names and base URLs


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("api", APIS)
async def test_a_dead_server_is_named_in_the_connection_error(api: str) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}" + ("" if api == "anthropic-messages" else "/v1")
    _, message = await reply(api, url)
    assert message.error_message is not None
    assert message.error_message.startswith(f"Connection error (127.0.0.1:{port}): ")
    assert is_retryable_assistant_error(message)


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
async def test_anthropic_base_url_with_or_without_v1(suffix: str) -> None:
    with ScriptedModelServer([{"text": "Hello"}]) as server:
        _, message = await reply("anthropic-messages", server.base_url + suffix)
    assert message.stop_reason == "stop", message.error_message
    assert [r["path"] for r in server.requests] == ["/v1/messages"]
