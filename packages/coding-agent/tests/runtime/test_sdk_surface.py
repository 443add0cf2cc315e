"""SDK members of modes.md §9 that no other runtime test drives: the factory form of
`create_agent_session_runtime`, `new_session(setup, with_session)`, `fork(position="at")`, forking the first user
message, `abort_compaction` of a manual compaction and `abort_bash`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from runtime_helpers import Harness, Recorder

from apex_ai.options import StreamOptions
from apex_ai.providers.faux import FauxState, faux_assistant_message
from apex_ai.types import AssistantMessage, Context, Model, UserMessage
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions import ExtensionAPI, InlineExtension
from apex_coding_agent.runtime import (
    AgentSession,
    AgentSessionRuntime,
    CreateAgentSessionResult,
    create_agent_session,
    create_agent_session_runtime,
    to_json_event,
)
from apex_coding_agent.session import SessionManager
from apex_coding_agent.session.entries import CompactionEntry, MessageEntry


class CountingFactory:
    """A runtime factory over the harness: records each manager it was given and adds one warning per call."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.calls: list[tuple[str, str, SessionManager]] = []

    async def __call__(self, *, cwd: str, agent_dir: str, session_manager: SessionManager) -> CreateAgentSessionResult:
        self.calls.append((cwd, agent_dir, session_manager))
        result = await create_agent_session(
            cwd=cwd,
            agent_dir=agent_dir,
            session_manager=session_manager,
            settings_manager=SettingsManager.in_memory({}),
            model_runtime=self.harness.model_runtime,
            permission_gate=PermissionGate(Path(cwd), flag_mode="bypassPermissions"),
            sleep=self.harness.sleep,
        )
        result.warnings.append(f"built #{len(self.calls)}")
        return result


async def test_factory_builds_the_first_session_and_every_replacement(harness: Harness) -> None:
    harness.script(faux_assistant_message("a1"), faux_assistant_message("a2"))
    factory = CountingFactory(harness)
    manager = harness.persisted_manager()
    runtime = await create_agent_session_runtime(factory, str(harness.cwd), str(harness.agent_dir), manager)

    assert [(cwd, agent) for cwd, agent, _ in factory.calls] == [(str(harness.cwd), str(harness.agent_dir))]
    assert factory.calls[0][2] is manager and runtime.session.session_manager is manager
    await runtime.session.prompt("hello")
    first_file = runtime.session.session_file
    assert first_file is not None

    fresh = await runtime.new_session()
    assert len(factory.calls) == 2
    assert fresh is runtime.session and fresh.session_manager is factory.calls[1][2]
    assert fresh.session_manager is not manager and fresh.messages == []

    back = await runtime.switch_session(first_file)
    assert len(factory.calls) == 3
    assert back.session_file == first_file and [m.role for m in back.messages] == ["user", "assistant"]
    assert runtime.diagnostics == ["built #1", "built #2", "built #3"]
    await runtime.dispose()


async def test_factory_form_takes_no_create_options(harness: Harness) -> None:
    with pytest.raises(TypeError, match="takes no options: model"):
        await create_agent_session_runtime(CountingFactory(harness), str(harness.cwd), model=harness.model())


async def test_keyword_form_builds_a_runtime_from_directories(harness: Harness) -> None:
    harness.script(faux_assistant_message("ok"))
    runtime = await create_agent_session_runtime(
        cwd=str(harness.cwd),
        agent_dir=str(harness.agent_dir),
        session_manager=SessionManager.in_memory(str(harness.cwd)),
        model_runtime=harness.model_runtime,
        settings_manager=SettingsManager.in_memory({}),
        permission_gate=PermissionGate(harness.cwd, flag_mode="bypassPermissions"),
        sleep=harness.sleep,
    )
    await runtime.session.prompt("hi")
    assert runtime.session.get_last_assistant_text() == "ok"
    assert runtime.session.cwd == str(harness.cwd)
    await runtime.dispose()


async def test_new_session_setup_fills_the_manager_and_with_session_sees_the_replacement(harness: Harness) -> None:
    harness.script(faux_assistant_message("old"), faux_assistant_message("seen the note"))
    runtime = await create_agent_session_runtime(CountingFactory(harness), str(harness.cwd), str(harness.agent_dir))
    await runtime.session.prompt("before")
    old = runtime.session
    seen_in_setup: list[int] = []
    seen_after: list[AgentSession] = []

    def setup(manager: SessionManager) -> None:
        seen_in_setup.append(len(manager.get_entries()))
        manager.append_session_info("handoff")
        manager.append_message(UserMessage(content="note carried over", timestamp=1))

    async def with_session(session: AgentSession) -> None:
        await asyncio.sleep(0)
        seen_after.append(session)

    new = await runtime.new_session(setup=setup, with_session=with_session)

    assert seen_in_setup == [0]
    assert seen_after == [new] and new is runtime.session and new is not old
    assert new.session_name == "handoff"
    assert [m.role for m in new.messages] == ["user"]
    await new.prompt("go on")
    assert [m.role for m in new.messages] == ["user", "user", "assistant"]
    assert new.get_last_assistant_text() == "seen the note"
    await runtime.dispose()


async def test_new_session_callbacks_do_not_run_when_an_extension_cancels(harness: Harness) -> None:
    def cancel_switches(pi: ExtensionAPI) -> None:
        pi.on("session_before_switch", lambda event, ctx: {"cancel": True})

    result = await create_agent_session(
        cwd=str(harness.cwd),
        agent_dir=str(harness.agent_dir),
        session_manager=SessionManager.in_memory(str(harness.cwd)),
        settings_manager=SettingsManager.in_memory({}),
        model_runtime=harness.model_runtime,
        permission_gate=PermissionGate(harness.cwd, flag_mode="bypassPermissions"),
        extensions=[InlineExtension(cancel_switches, "cancel")],
        sleep=harness.sleep,
    )
    runtime = AgentSessionRuntime(result, sleep=harness.sleep)
    calls: list[str] = []
    kept = await runtime.new_session(setup=lambda m: calls.append("setup"), with_session=lambda s: calls.append("with"))
    assert kept is result.session and runtime.last_change_cancelled is True
    assert calls == []
    await runtime.dispose()


async def _two_exchanges(harness: Harness) -> tuple[AgentSessionRuntime, list[str]]:
    harness.script(faux_assistant_message("a1"), faux_assistant_message("a2"))
    runtime = await create_agent_session_runtime(
        CountingFactory(harness), str(harness.cwd), str(harness.agent_dir), harness.persisted_manager()
    )
    await runtime.session.prompt("first question")
    await runtime.session.prompt("second question")
    entries = [e for e in runtime.session.session_manager.get_entries() if isinstance(e, MessageEntry)]
    assert [e.message.role for e in entries] == ["system", "user", "assistant", "user", "assistant"]
    return runtime, [e.id for e in entries]


async def test_fork_at_clones_the_path_up_to_and_including_the_entry(harness: Harness) -> None:
    runtime, ids = await _two_exchanges(harness)
    original = runtime.session
    original_file = original.session_file
    first_answer = ids[2]  # system, user, assistant, user, assistant

    result = await runtime.fork(first_answer, position="at")

    assert result.selected_text == "" and result.cancelled is False
    clone = runtime.session
    assert clone is not original and clone.session_id != original.session_id
    assert clone.session_file is not None and clone.session_file != original_file
    assert [m.role for m in clone.messages] == ["user", "assistant"]
    assert clone.session_manager.get_leaf_id() == first_answer  # entries are copied with their ids
    assert clone.session_manager.get_header().parent_session == original_file
    lines = [json.loads(line) for line in Path(clone.session_file).read_text().splitlines()]
    # The clone carries the system message of the path it copies.
    assert [line.get("id") for line in lines[1:] if line["type"] == "message"] == ids[:3]
    # The original file still holds both exchanges.
    assert len([line for line in Path(original_file).read_text().splitlines() if '"type":"message"' in line]) == 5
    await runtime.dispose()


async def test_fork_before_the_first_user_message_starts_an_empty_child_session(harness: Harness) -> None:
    runtime, ids = await _two_exchanges(harness)
    original_file = runtime.session.session_file

    result = await runtime.fork(ids[1])

    assert result.selected_text == "first question"
    forked = runtime.session
    assert forked.messages == []
    # The path before the first user message: the model settings and the leading system message.
    kept = forked.session_manager.get_entries()
    assert [e.type for e in kept] == ["model_change", "thinking_level_change", "message"]
    assert isinstance(kept[-1], MessageEntry) and kept[-1].id == ids[0]
    assert forked.session_manager.get_header().parent_session == original_file
    with pytest.raises(ValueError, match="Invalid entry ID for forking"):
        await runtime.fork(forked.session_manager.get_leaf_id() or "missing0")
    await runtime.dispose()


async def test_abort_compaction_cancels_a_manual_compaction_and_keeps_history(harness: Harness) -> None:
    summarizing = asyncio.Event()

    async def hanging_summary(
        context: Context, options: StreamOptions, state: FauxState, model: Model
    ) -> AssistantMessage:
        summarizing.set()
        assert options.signal is not None
        while not options.signal.aborted:
            await asyncio.sleep(0.001)
        return faux_assistant_message("never used")

    harness.script(
        faux_assistant_message("first answer " * 40),
        faux_assistant_message("second answer " * 40),
        hanging_summary,
    )
    session = await harness.session(settings={"compaction": {"keepRecentTokens": 50}})
    for text in ("one", "two"):
        await session.prompt(text)
    before = [m.role for m in session.messages]
    recorder = Recorder()
    session.subscribe(recorder)

    running = asyncio.ensure_future(session.compact())
    await summarizing.wait()
    assert session.is_compacting
    session.abort_compaction()
    with pytest.raises(RuntimeError, match="Compaction cancelled"):
        await running

    assert not session.is_compacting
    end = to_json_event(recorder.of("compaction_end")[0])
    assert end["reason"] == "manual" and end["aborted"] is True and "result" not in end
    assert [e for e in session.session_manager.get_entries() if isinstance(e, CompactionEntry)] == []
    assert [m.role for m in session.messages] == before


async def test_abort_bash_cancels_a_running_user_command(harness: Harness) -> None:
    session = await harness.session()
    chunks: list[str] = []
    started = asyncio.Event()

    def on_chunk(delta: str) -> None:
        chunks.append(delta)
        started.set()

    running = asyncio.ensure_future(session.execute_bash("echo started; sleep 30", on_chunk=on_chunk))
    await asyncio.wait_for(started.wait(), 10)
    assert session.is_bash_running
    session.abort_bash()
    result = await asyncio.wait_for(running, 10)

    assert result.cancelled is True and result.exit_code is None
    assert "started" in "".join(chunks)
    assert not session.is_bash_running
    recorded = session.messages[-1]
    assert recorded.role == "bashExecution" and recorded.cancelled is True  # type: ignore[union-attr]
    session.abort_bash()  # nothing running: a no-op


async def test_set_auto_compaction_enabled_is_the_sdk_spelling(harness: Harness) -> None:
    session = await harness.session()
    session.set_auto_compaction_enabled(False)
    assert session.auto_compaction_enabled is False
    assert session.settings_manager.get_bool("compaction.enabled", True) is False
    session.set_auto_compaction_enabled(True)
    assert session.auto_compaction_enabled is True
