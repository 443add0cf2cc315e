"""stream()/complete() dispatch (spec ai.md §6, §9, §10; acceptance checks 3 and 5)."""

import asyncio

import httpx2
import pytest

from apex_ai import api_registry
from apex_ai.abort import AbortController
from apex_ai.env_api_keys import ENV_API_KEYS
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.events import AssistantMessageEvent, ErrorEvent, StartEvent, TextStartEvent
from apex_ai.models import require_model
from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.stream import complete, complete_simple, stream, stream_simple
from apex_ai.types import AssistantMessage, Context, Model, TextContent, Usage, UserMessage

CTX = Context(messages=[UserMessage(content="hi", timestamp=1)])


@pytest.fixture
def no_env_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for names in ENV_API_KEYS.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)


def _model(api: str = "test-api", provider: str = "testco") -> Model:
    return Model(id="m1", api=api, provider=provider)


async def _events(s: AssistantMessageEventStream) -> list[AssistantMessageEvent]:
    return [event async for event in s]


def _assert_setup_error(message: AssistantMessage, model: Model, text: str) -> None:
    assert message.stop_reason == "error"
    assert message.error_message == text
    assert message.content == []
    assert (message.api, message.provider, message.model) == (model.api, model.provider, model.id)
    assert message.usage == Usage()
    assert message.timestamp > 1_600_000_000_000


async def test_unknown_api_is_one_error_event() -> None:
    model = _model(api="no-such-api")
    events = await _events(stream(model, CTX))
    assert len(events) == 1
    assert isinstance(events[0], ErrorEvent)
    _assert_setup_error(events[0].error, model, 'Provider testco has no API implementation for "no-such-api"')


async def test_missing_key_is_an_error_without_http(no_env_keys: None) -> None:
    requests: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        requests.append(request)
        return httpx2.Response(500)

    model = require_model("anthropic", "claude-sonnet-4-5")
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
        s = stream(model, CTX, StreamOptions(http_client=client))
        events = await _events(s)
    assert [e.type for e in events] == ["error"]
    _assert_setup_error(await s.result(), model, "No API key for provider: anthropic")
    assert requests == []


async def test_key_reaches_the_api(test_api: list[tuple[str | None, StreamOptions]], no_env_keys: None) -> None:
    message = await complete(_model(), CTX, StreamOptions(api_key="k1"))
    assert message.stop_reason == "stop"
    assert test_api[0][0] == "k1"
    await complete(_model(provider="openai"), CTX, StreamOptions(env={"OPENAI_API_KEY": "from-env"}))
    assert test_api[1][0] == "from-env"


@pytest.mark.parametrize("header", ["Authorization", "x-api-key", "X-Api-Key"])
async def test_auth_header_counts_as_a_key(
    header: str, test_api: list[tuple[str | None, StreamOptions]], no_env_keys: None
) -> None:
    message = await complete(_model(), CTX, StreamOptions(headers={header: "Bearer abc"}))
    assert message.stop_reason == "stop"
    assert test_api[0][0] is None


async def test_model_auth_header_counts_unless_the_caller_deletes_it(
    test_api: list[tuple[str | None, StreamOptions]], no_env_keys: None
) -> None:
    model = _model().model_copy(update={"headers": {"Authorization": "Bearer from-model"}})
    assert (await complete(model, CTX)).stop_reason == "stop"
    deleted = await complete(model, CTX, StreamOptions(headers={"authorization": None}))
    assert deleted.error_message == "No API key for provider: testco"
    assert len(test_api) == 1


async def test_deleted_auth_header_does_not_count(
    test_api: list[tuple[str | None, StreamOptions]], no_env_keys: None
) -> None:
    message = await complete(_model(), CTX, StreamOptions(headers={"Authorization": None}))
    assert message.error_message == "No API key for provider: testco"
    assert test_api == []


async def test_stream_returns_before_the_api_runs(test_api: list[tuple[str | None, StreamOptions]]) -> None:
    s = stream(_model(), CTX, StreamOptions(api_key="k"))
    assert test_api == []
    assert (await s.result()).content[0].text == "ok"  # type: ignore[union-attr]
    assert len(test_api) == 1


async def test_stream_simple_passes_simple_options(test_api: list[tuple[str | None, StreamOptions]]) -> None:
    options = SimpleStreamOptions(api_key="k", reasoning="high")
    message = await complete_simple(_model(), CTX, options)
    assert message.stop_reason == "stop"
    assert test_api[0][1] is options
    events = await _events(stream_simple(_model(), CTX, SimpleStreamOptions(api_key="k")))
    assert [e.type for e in events] == ["start", "done"]


async def test_exception_in_api_becomes_lone_error_event() -> None:
    async def broken(
        model: Model, context: Context, options: StreamOptions, out: AssistantMessageEventStream, key: str | None
    ) -> None:
        raise ValueError("bad request shape")

    api_registry.register_api("test-broken", broken)
    try:
        model = _model(api="test-broken")
        events = await _events(stream(model, CTX, StreamOptions(api_key="k")))
    finally:
        api_registry.unregister_api("test-broken")
    assert [e.type for e in events] == ["error"]
    _assert_setup_error(events[0].error, model, "bad request shape")  # type: ignore[union-attr]


async def test_exception_while_aborted_is_an_abort_keeping_partial() -> None:
    controller = AbortController()

    async def aborting(
        model: Model, context: Context, options: StreamOptions, out: AssistantMessageEventStream, key: str | None
    ) -> None:
        partial = AssistantMessage(
            content=[TextContent(text="half")],
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="pending",
            timestamp=1,
        )
        out.push(StartEvent(partial=partial))
        out.push(TextStartEvent(content_index=0, partial=partial))
        controller.abort()
        raise ConnectionError("socket closed")

    api_registry.register_api("test-aborting", aborting)
    try:
        events = await _events(
            stream(_model(api="test-aborting"), CTX, StreamOptions(api_key="k", signal=controller.signal))
        )
    finally:
        api_registry.unregister_api("test-aborting")
    last = events[-1]
    assert isinstance(last, ErrorEvent)
    assert last.reason == "aborted"
    assert last.error.stop_reason == "aborted"
    assert last.error.error_message == "Request was aborted"
    assert last.error.content == [TextContent(text="half")]
    assert [e.type for e in events] == ["start", "text_start", "error"]


async def test_api_returning_without_terminal_event_is_an_error() -> None:
    async def silent(
        model: Model, context: Context, options: StreamOptions, out: AssistantMessageEventStream, key: str | None
    ) -> None:
        await asyncio.sleep(0)

    api_registry.register_api("test-silent", silent)
    try:
        message = await complete(_model(api="test-silent"), CTX, StreamOptions(api_key="k"))
    finally:
        api_registry.unregister_api("test-silent")
    assert message.stop_reason == "error"
    assert message.error_message == 'API "test-silent" ended without a terminal event'


async def test_second_terminal_event_is_dropped() -> None:
    async def chatty(
        model: Model, context: Context, options: StreamOptions, out: AssistantMessageEventStream, key: str | None
    ) -> None:
        from apex_ai.events import DoneEvent

        message = AssistantMessage(api="a", provider="p", model="m", stop_reason="stop", timestamp=1)
        out.push(DoneEvent(reason="stop", message=message))
        raise RuntimeError("after done")

    api_registry.register_api("test-chatty", chatty)
    try:
        events = await _events(stream(_model(api="test-chatty"), CTX, StreamOptions(api_key="k")))
    finally:
        api_registry.unregister_api("test-chatty")
    assert [e.type for e in events] == ["done"]


async def test_faux_needs_no_key(no_env_keys: None) -> None:
    from apex_ai.providers.faux import FauxProvider, faux_assistant_message

    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("hello")])
    message = await complete(faux.model(), CTX)
    assert message.stop_reason == "stop"
    assert message.content == [TextContent(text="hello")]


async def test_complete_drains_a_stream_whose_consumer_iterates_nothing() -> None:
    from apex_ai.providers.faux import FauxProvider

    faux = FauxProvider()
    message = await complete(faux.model(), CTX)
    assert message.error_message == "No more faux responses queued"
