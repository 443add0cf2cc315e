"""Subscriptions, queues, budgets, session data and the runtime's replacement operations."""

from __future__ import annotations

import asyncio

import pytest
from runtime_helpers import Harness, Recorder

from apex_agent.types import RunBudget
from apex_ai.options import StreamOptions
from apex_ai.providers.faux import FauxState, faux_assistant_message, faux_tool_call
from apex_ai.types import AssistantMessage, Context, Model, UserMessage
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.runtime import AgentSessionRuntime, CreateAgentSessionResult, SessionEvent, to_json_event
from apex_coding_agent.session import SessionManager


def _always_tool(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
    return faux_assistant_message([faux_tool_call("read", {"path": "."})], stop_reason="toolUse")


async def test_subscribe_sync_and_async_and_unsubscribe(harness: Harness) -> None:
    harness.script(faux_assistant_message("one"), faux_assistant_message("two"))
    session = await harness.session()
    sync_events = Recorder()
    async_types: list[str] = []

    async def async_listener(event: SessionEvent) -> None:
        await asyncio.sleep(0)
        async_types.append(event.type)

    def broken(event: SessionEvent) -> None:
        raise ValueError("listener bug")

    unsubscribe = session.subscribe(sync_events)
    session.subscribe(async_listener)
    session.subscribe(broken)
    await session.prompt("first")
    count = len(sync_events.events)
    assert count > 0 and async_types == [e.type for e in sync_events.events]

    unsubscribe()
    await session.prompt("second")
    assert len(sync_events.events) == count
    assert async_types.count("agent_settled") == 2


async def test_runtime_new_session_cuts_off_old_listeners(harness: Harness) -> None:
    harness.script(faux_assistant_message("old"), faux_assistant_message("new"))
    first = await harness.session(manager=harness.persisted_manager())
    runtime = AgentSessionRuntime(CreateAgentSessionResult(first), sleep=harness.sleep)
    old_events = Recorder()
    runtime.session.subscribe(old_events)
    await runtime.session.prompt("hello")
    old_count = len(old_events.events)
    old_file = runtime.session.session_file

    new = await runtime.new_session(parent_session=old_file)

    assert new is runtime.session and new is not first
    assert new.session_id != first.session_id
    assert new.messages == []
    assert new.model is not None and new.model.id == "faux-1"
    new_events = Recorder()
    new.subscribe(new_events)
    await new.prompt("again")
    assert len(old_events.events) == old_count
    assert new_events.compact()[-1] == "agent_settled"
    assert new.session_manager.get_header().parent_session == old_file
    with pytest.raises(RuntimeError, match="disposed"):
        await first.prompt("stale")
    await runtime.dispose()


async def test_runtime_created_from_directories_forks_and_switches(harness: Harness) -> None:
    harness.script(faux_assistant_message("a1"), faux_assistant_message("a2"))
    runtime = await AgentSessionRuntime.create(
        sleep=harness.sleep,
        cwd=str(harness.cwd),
        agent_dir=str(harness.agent_dir),
        model_runtime=harness.model_runtime,
        settings_manager=SettingsManager.in_memory({"sessionDir": str(harness.sessions_dir)}),
        permission_gate=PermissionGate(harness.cwd, flag_mode="bypassPermissions"),
    )
    session = runtime.session
    await session.prompt("first question")
    await session.prompt("second question")
    original_file = session.session_file
    assert original_file is not None and original_file.startswith(str(harness.sessions_dir))
    forks = session.get_user_messages_for_forking()
    assert [f.text for f in forks] == ["first question", "second question"]

    result = await runtime.fork(forks[1].entry_id)

    assert result.selected_text == "second question"
    forked = runtime.session
    assert forked.session_file != original_file
    assert [type(m) for m in forked.messages] == [UserMessage, AssistantMessage]
    with pytest.raises(ValueError, match="Invalid entry ID for forking"):
        await runtime.fork("nope0000")

    switched = await runtime.switch_session(original_file)
    assert switched.session_file == original_file
    assert len(switched.messages) == 4
    await runtime.dispose()


async def test_run_budget_max_turns_from_option_and_settings(harness: Harness) -> None:
    harness.script(_always_tool, _always_tool, _always_tool)
    session = await harness.session(run_budget=RunBudget(max_turns=1))
    recorder = Recorder()
    session.subscribe(recorder)
    assert await session.prompt("loop") == "budget-exhausted"
    end = to_json_event(recorder.of("agent_end")[0])
    assert end["stopReason"] == "budget-exhausted" and end["willRetry"] is False
    assert end["budget"]["limit"] == "maxTurns"  # type: ignore[index]
    assert recorder.compact()[-1] == "agent_settled"

    harness.script(_always_tool, _always_tool, _always_tool, _always_tool)
    configured = await harness.session(settings={"runBudget": {"maxTurns": 2}})
    assert configured.run_budget == RunBudget(max_turns=2)
    assert await configured.prompt("loop") == "budget-exhausted"
    assert harness.faux.state.call_count >= 2
    assert await configured.prompt("again") == "budget-exhausted"  # a fresh budget per user prompt


async def test_streaming_prompt_needs_a_behavior_and_queues_with_display_strings(harness: Harness) -> None:
    gate = asyncio.Event()

    async def slow(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        await gate.wait()
        return faux_assistant_message("first answer")

    harness.script(slow, faux_assistant_message("follow-up answer"))
    session = await harness.session()
    recorder = Recorder()
    session.subscribe(recorder)

    running = asyncio.ensure_future(session.prompt("first"))
    while not session.agent.state.is_streaming:
        await asyncio.sleep(0)
    assert session.is_streaming
    with pytest.raises(RuntimeError, match="streamingBehavior"):
        await session.prompt("second")
    assert await session.prompt("later", streaming_behavior="followUp") is None
    assert session.follow_up_messages == ["later"]
    gate.set()
    assert await running == "completed"

    queues = [(e.steering, e.follow_up) for e in recorder.of("queue_update")]
    assert queues == [([], ["later"]), ([], [])]
    users = [m for m in session.messages if isinstance(m, UserMessage)]
    assert len(users) == 2
    assert session.get_last_assistant_text() == "follow-up answer"


async def test_session_name_and_stats(harness: Harness) -> None:
    harness.script(faux_assistant_message("hi there"))
    session = await harness.session(manager=harness.persisted_manager())
    recorder = Recorder()
    session.subscribe(recorder)
    await session.prompt("hello")

    session.set_session_name("golden-rpc")
    assert session.session_name == "golden-rpc"
    assert to_json_event(recorder.of("session_info_changed")[0]) == {
        "type": "session_info_changed",
        "name": "golden-rpc",
    }
    session.set_session_name("")
    assert to_json_event(recorder.of("session_info_changed")[1]) == {"type": "session_info_changed"}

    stats = session.get_session_stats().to_wire()
    assert stats["sessionFile"] == session.session_file
    assert (stats["userMessages"], stats["assistantMessages"], stats["totalMessages"]) == (1, 1, 2)
    usage = stats["contextUsage"]
    assert usage["contextWindow"] == 200000 and usage["tokens"] > 0
    assert usage["percent"] == usage["tokens"] / 200000 * 100

    in_memory = await harness.session(manager=SessionManager.in_memory(str(harness.cwd)))
    assert "sessionFile" not in in_memory.get_session_stats().to_wire()
    assert in_memory.get_last_assistant_text() is None


async def test_manual_compaction_summarizes_and_rebuilds_the_context(harness: Harness) -> None:
    harness.script(
        faux_assistant_message("first answer " * 40),
        faux_assistant_message("second answer " * 40),
        faux_assistant_message("third answer " * 40),
        faux_assistant_message("Summary of the earlier work."),
        faux_assistant_message("Prefix of the split turn."),
    )
    session = await harness.session(
        manager=harness.persisted_manager(), settings={"compaction": {"keepRecentTokens": 50}}
    )
    for text in ("one", "two", "three"):
        await session.prompt(text)
    recorder = Recorder()
    session.subscribe(recorder)

    result = await session.compact()

    assert result.summary.startswith("Summary of the earlier work.")
    assert [e.type for e in recorder.events] == ["compaction_start", "compaction_end"]
    end = to_json_event(recorder.events[1])
    assert end["reason"] == "manual" and end["aborted"] is False and end["willRetry"] is False
    assert end["result"]["summary"] == result.summary  # type: ignore[index]
    assert session.messages[0].role == "compactionSummary"
    assert len(session.messages) < 6
    assert session.session_manager.get_leaf_entry() is not None
    assert session.session_manager.get_leaf_entry().type == "compaction"  # type: ignore[union-attr]
    assert session.get_session_stats().context_usage is not None
    assert session.get_session_stats().context_usage.tokens is None  # type: ignore[union-attr]

    with pytest.raises(RuntimeError, match="Already compacted"):
        await session.compact()
    assert to_json_event(recorder.events[-1])["errorMessage"] == "Already compacted"

    harness.faux.append_responses([faux_assistant_message("after the summary")])
    await session.prompt("continue")
    assert session.messages[0].role == "compactionSummary"
    assert session.get_session_stats().context_usage.tokens is not None  # type: ignore[union-attr]


async def test_steering_during_a_run_is_injected_and_leaves_the_queue(harness: Harness) -> None:
    gate = asyncio.Event()

    async def slow_tool(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        await gate.wait()
        return faux_assistant_message([faux_tool_call("read", {"path": "."})], stop_reason="toolUse")

    harness.script(slow_tool, faux_assistant_message("steered answer"))
    session = await harness.session()
    recorder = Recorder()
    session.subscribe(recorder)

    running = asyncio.ensure_future(session.prompt("start"))
    while not session.agent.state.is_streaming:
        await asyncio.sleep(0)
    await session.prompt("change course", streaming_behavior="steer")
    assert session.steering_messages == ["change course"]
    gate.set()
    assert await running == "completed"

    assert [(e.steering, e.follow_up) for e in recorder.of("queue_update")] == [(["change course"], []), ([], [])]
    users = [m for m in session.messages if isinstance(m, UserMessage)]
    assert len(users) == 2
    compact = recorder.compact()
    user_starts = [i for i, kind in enumerate(compact) if kind == "message_start(user)"]
    queue_updates = [i for i, kind in enumerate(compact) if kind == "queue_update"]
    assert len(user_starts) == 2 and queue_updates[-1] < user_starts[1]  # dequeued before the steered message
    assert session.steering_messages == []
