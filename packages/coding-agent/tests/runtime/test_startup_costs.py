"""Startup and footer costs on long sessions: the context is built once when a session opens, the model and
thinking level come from a cheap scan, the provider SDK preload starts once the model is known, and the session
stats are counted incrementally (always equal to a fresh `compute_session_stats`)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_helpers import Harness

from apex_ai import api_registry
from apex_ai.models import ModelRegistry
from apex_ai.types import AssistantMessage, Cost, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.session import SessionManager
from apex_coding_agent.session.context import SessionContext
from apex_coding_agent.session.stats import compute_session_stats


@pytest.fixture(autouse=True)
def _collect_sessions() -> Iterator[None]:
    """Sessions sit in reference cycles; collecting them here closes the read descriptors of the files these
    tests opened, so later tests that count open descriptors do not see them go away mid-test."""
    yield
    gc.collect()


class CountingManager(SessionManager):
    """A real session manager that counts how often the full context is built."""

    builds = 0

    def build_session_context(self) -> SessionContext:
        self.builds += 1
        return super().build_session_context()


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def _assistant(text: str, model: str = "faux-1", cost: float = 0.0, tool_call: bool = False) -> AssistantMessage:
    content: list[TextContent | ToolCall] = [TextContent(text=text)]
    if tool_call:
        content.append(ToolCall(id=f"call-{text}", name="read", arguments={"path": "a"}))
    return AssistantMessage(
        content=content,
        api="faux",
        provider="faux",
        model=model,
        usage=Usage(input=90, output=7, cache_read=3, total_tokens=100, cost=Cost(total=cost)),
        stop_reason="toolUse" if tool_call else "stop",
        timestamp=2,
    )


def _long_session(harness: Harness, pairs: int) -> Path:
    """A session file with `2 * pairs` message entries; ends with model `faux-think` at thinking level `high`."""
    manager = harness.persisted_manager()
    manager.append_model_change("faux", "faux-1")
    manager.append_thinking_level_change("low")
    for index in range(pairs):
        manager.append_message(_user(f"question {index}"))
        manager.append_message(_assistant(f"answer {index}"))
    manager.append_model_change("faux", "faux-think")
    manager.append_thinking_level_change("high")
    path = manager.session_file
    manager.close()
    assert path is not None
    return path


async def test_reopening_a_5k_entry_session_builds_its_context_once(harness: Harness) -> None:
    path = _long_session(harness, 2500)
    manager = CountingManager.open(path, harness.sessions_dir)
    entries_before = sum(1 for _ in manager.iter_records())
    assert entries_before == 5004

    session = await harness.session(manager=manager)

    assert manager.builds == 1
    assert session.model is not None and session.model.id == "faux-think"
    assert session.thinking_level == "high"
    assert len(session.messages) == 5000
    assert session.messages[-1].role == "assistant"
    # Model and level were restored unchanged: nothing is appended on open.
    assert sum(1 for _ in manager.iter_records()) == entries_before
    session.session_manager.close()


async def test_restored_model_follows_the_last_assistant_reply_after_a_model_change(harness: Harness) -> None:
    manager = harness.persisted_manager()
    manager.append_model_change("faux", "faux-think")
    manager.append_thinking_level_change("minimal")
    manager.append_message(_user("hi"))
    manager.append_message(_assistant("hello", model="faux-1"))  # the reply names the model that answered
    path = manager.session_file
    manager.close()
    assert path is not None

    reopened = CountingManager.open(path, harness.sessions_dir)
    session = await harness.session(manager=reopened)

    assert reopened.builds == 1
    assert session.model is not None and session.model.id == "faux-1"
    # faux-1 has no reasoning: the stored `minimal` clamps to `off`, and the change is recorded.
    assert session.thinking_level == "off"
    last = reopened.get_leaf_entry()
    assert last is not None and last.type == "thinking_level_change"
    reopened.close()


async def test_an_explicit_model_is_recorded_when_it_differs_from_the_stored_one(harness: Harness) -> None:
    path = _long_session(harness, 2)
    manager = CountingManager.open(path, harness.sessions_dir)

    session = await harness.session(manager=manager, model=harness.model("faux-1"), thinking_level="off")

    assert manager.builds == 1
    assert session.model is not None and session.model.id == "faux-1"
    types = [record.type for record in manager.iter_records()][-2:]
    assert types == ["thinking_level_change", "model_change"]
    manager.close()


def _registry_with_openai_model(harness: Harness) -> ModelRuntime:
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider("faux", api="faux", base_url="http://localhost:0", models=harness.faux.models)
    registry.register_provider(
        "local-openai",
        api="openai-responses",
        base_url="http://127.0.0.1:9/v1",
        models=[{"id": "local-1", "contextWindow": 1000}],
    )
    auth = AuthStorage(harness.cwd.parent / "auth.json")
    auth.set("local-openai", {"type": "api_key", "key": "key"})
    return ModelRuntime(None, auth, registry=registry)


async def test_the_sdk_preload_starts_with_the_restored_model_and_on_a_model_switch(harness: Harness) -> None:
    harness.model_runtime = _registry_with_openai_model(harness)
    local = harness.model_runtime.registry.get_model("local-openai", "local-1")
    assert local is not None

    session = await harness.session(model=harness.model("faux-1"))
    assert "faux" in api_registry._preloads or api_registry._registered.get("faux") is not None
    session.set_model(local)

    # The preload thread of the new API was started (one per API per process); get_api waits for it.
    assert "openai-responses" in api_registry._preloads or "openai-responses" in api_registry._registered
    assert api_registry.get_api("openai-responses") is not None


def _stats_without_context(session_stats: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in session_stats.items() if key != "contextUsage"}


async def test_session_stats_stay_equal_to_a_fresh_computation_across_appends(harness: Harness) -> None:
    path = _long_session(harness, 50)
    manager = SessionManager.open(path, harness.sessions_dir)
    session = await harness.session(manager=manager)

    def check() -> None:
        cached = _stats_without_context(session.get_session_stats().to_wire())
        assert cached == compute_session_stats(manager).to_wire()

    check()
    manager.append_message(_user("more"))
    manager.append_message(_assistant("with a tool", cost=0.25, tool_call=True))
    manager.append_message(
        ToolResultMessage(
            tool_call_id="call-with a tool",
            tool_name="read",
            content=[TextContent(text="file")],
            is_error=False,
            timestamp=3,
            usage=Usage(input=5, output=1, total_tokens=6, cost=Cost(total=0.5)),
        )
    )
    check()
    stats = session.get_session_stats()
    assert (stats.user_messages, stats.assistant_messages, stats.tool_calls, stats.tool_results) == (51, 51, 1, 1)
    assert stats.cost == 0.75
    leaf = manager.get_leaf_id()
    assert leaf is not None
    manager.branch_with_summary(leaf, "abandoned", usage=Usage(input=10, output=2, total_tokens=12))
    check()
    check()  # a second call with nothing appended gives the same figures

    manager.new_session()  # the record list is replaced: the cache starts over
    check()
    assert session.get_session_stats().total_messages == 0
    manager.append_message(_user("fresh"))
    check()
    manager.close()
