"""`StreamOptions.connection_pool`: the requests of one owner share keep-alive connections, through the real SDKs
against the local scripted server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx2
import pytest

from apex_ai.connection_pool import ConnectionPool
from apex_ai.events import AssistantMessageEvent
from apex_ai.options import StreamOptions
from apex_ai.stream import stream
from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_ai.types import Context, Model, TextContent, UserMessage

APIS = ["anthropic-messages", "openai-completions", "openai-responses"]
KEY = "sk-pool-test"
HELLO = {"text": "Hello!", "usage": {"input": 9, "output": 2}, "repeat": True}


def model_for(api: str, server: ScriptedModelServer) -> Model:
    base_url = server.anthropic_base_url if api == "anthropic-messages" else server.openai_base_url
    return Model(id="fake-model", api=api, provider="scripted", base_url=base_url, max_tokens=1024)


async def ask(api: str, server: ScriptedModelServer, options: StreamOptions) -> list[AssistantMessageEvent]:
    context = Context(messages=[UserMessage(content="hi", timestamp=1)])
    return [event async for event in stream(model_for(api, server), context, options)]


@pytest.mark.parametrize("api", APIS)
async def test_requests_with_a_pool_reuse_one_connection(api: str) -> None:
    pool = ConnectionPool()
    with ScriptedModelServer([HELLO], api_key=KEY) as server:
        try:
            for _ in range(3):
                events = await ask(api, server, StreamOptions(api_key=KEY, connection_pool=pool))
                assert events[-1].type == "done"
        finally:
            await pool.aclose()
        assert len(server.requests) == 3
        assert server.connections_opened == 1


@pytest.mark.parametrize("api", APIS)
async def test_requests_without_a_pool_open_a_connection_each(api: str) -> None:
    with ScriptedModelServer([HELLO], api_key=KEY) as server:
        for _ in range(2):
            events = await ask(api, server, StreamOptions(api_key=KEY))
            assert events[-1].type == "done"
        assert server.connections_opened == 2


async def test_a_closed_pool_leaves_requests_to_their_own_clients() -> None:
    pool = ConnectionPool()
    with ScriptedModelServer([HELLO], api_key=KEY) as server:
        assert (await ask("openai-completions", server, StreamOptions(api_key=KEY, connection_pool=pool)))[-1].type == (
            "done"
        )
        await pool.aclose()
        assert pool.closed and pool.client() is None
        events = await ask("openai-completions", server, StreamOptions(api_key=KEY, connection_pool=pool))
        assert events[-1].type == "done"
        assert server.connections_opened == 2


async def test_the_pool_survives_a_failed_request_and_keeps_serving() -> None:
    failing: dict[str, object] = {"error": {"status": 500, "type": "api_error", "message": "boom"}}
    recovered: dict[str, object] = {"text": "Recovered", "usage": {"input": 1, "output": 1}}
    pool = ConnectionPool()
    with ScriptedModelServer([failing, recovered], api_key=KEY) as server:
        try:
            first = await ask("anthropic-messages", server, StreamOptions(api_key=KEY, connection_pool=pool))
            second = await ask("anthropic-messages", server, StreamOptions(api_key=KEY, connection_pool=pool))
        finally:
            await pool.aclose()
    assert first[-1].type == "error"
    assert second[-1].type == "done"


def test_a_pool_used_from_a_new_event_loop_gets_a_new_client() -> None:
    pool = ConnectionPool()

    async def grab() -> object:
        return pool.client()

    first = asyncio.run(grab())
    second = asyncio.run(grab())
    assert first is not None and second is not None and first is not second


async def test_the_http_client_keeps_tcp_connections_alive() -> None:
    pool = ConnectionPool()
    client = pool.client()
    assert client is not None and client.follow_redirects
    await pool.aclose()
    assert client.is_closed


class _BodyThatStaysOpen(httpx2.AsyncByteStream):
    """An SSE body that sends its events and `[DONE]`, then never ends (a server that keeps the stream open)."""

    def __init__(self, events: list[bytes]) -> None:
        self.events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self.events:
            yield event
        await asyncio.Event().wait()


async def test_a_body_that_stays_open_after_done_does_not_hold_up_the_reply() -> None:
    chunks = [
        b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n',
        b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{},"finish_reason":"stop"}]}\n\n',
        b"data: [DONE]\n\n",
    ]

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=_BodyThatStaysOpen(chunks))

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
        model = Model(id="m", api="openai-completions", provider="p", base_url="http://model.test/v1", max_tokens=64)
        context = Context(messages=[UserMessage(content="hi", timestamp=1)])
        events = await asyncio.wait_for(ask_raw(model, context, StreamOptions(api_key=KEY, http_client=client)), 10)
    last = events[-1]
    assert last.type == "done"
    assert [block.text for block in last.message.content if isinstance(block, TextContent)] == ["Hi"]


async def ask_raw(model: Model, context: Context, options: StreamOptions) -> list[AssistantMessageEvent]:
    return [event async for event in stream(model, context, options)]
