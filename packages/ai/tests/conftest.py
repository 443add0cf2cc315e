"""Shared fixtures: no real network, every test runs in its own temporary directory, and a recording API."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from apex_ai import api_registry
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.events import DoneEvent, StartEvent
from apex_ai.options import StreamOptions
from apex_ai.testing import block_network
from apex_ai.testing.hypothesis_profiles import register_profiles
from apex_ai.types import AssistantMessage, Context, Model, TextContent

register_profiles()  # property tests try the same examples on every run unless a profile says otherwise


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    with block_network():
        yield


@pytest.fixture
def test_api() -> Iterator[list[tuple[str | None, StreamOptions]]]:
    """Registers API `test-api`, which records (api_key, options) and answers "ok"."""
    calls: list[tuple[str | None, StreamOptions]] = []

    async def fn(
        model: Model, context: Context, options: StreamOptions, out: AssistantMessageEventStream, key: str | None
    ) -> None:
        calls.append((key, options))
        message = AssistantMessage(
            content=[TextContent(text="ok")],
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="stop",
            timestamp=1,
        )
        out.push(StartEvent(partial=message))
        out.push(DoneEvent(reason="stop", message=message))

    api_registry.register_api("test-api", fn)
    yield calls
    api_registry.unregister_api("test-api")
