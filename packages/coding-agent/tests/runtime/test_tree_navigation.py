"""In-place tree navigation with optional branch summaries, HTML export and JSONL import (sessions.md §9-10)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from runtime_helpers import Harness, Recorder

from apex_ai.options import StreamOptions
from apex_ai.providers.faux import FauxState, FauxStep, faux_assistant_message
from apex_ai.types import AssistantMessage, Context, Model, TextContent, UserMessage
from apex_coding_agent.runtime import AgentSession, AgentSessionRuntime, CreateAgentSessionResult
from apex_coding_agent.runtime.agent_session import NAVIGATE_WHILE_STREAMING
from apex_coding_agent.session import SessionManager
from apex_coding_agent.session.entries import BranchSummaryEntry, MessageEntry


def _message_entries(session: AgentSession) -> list[MessageEntry]:
    """The branch's message entries after its leading system message (checked to be there)."""
    entries = [e for e in session.session_manager.get_branch() if isinstance(e, MessageEntry)]
    assert entries[0].message.role == "system"
    return entries[1:]


async def _two_exchanges(harness: Harness, *extra: FauxStep) -> AgentSession:
    harness.script(faux_assistant_message("a1"), faux_assistant_message("a2"), *extra)
    session = await harness.session()
    await session.prompt("one")
    await session.prompt("two")
    return session


async def test_user_target_moves_to_its_parent_and_returns_its_text(harness: Harness) -> None:
    session = await _two_exchanges(harness)
    user_one, a1, user_two, a2 = _message_entries(session)

    assert (await session.navigate_tree(a2.id)).to_wire() == {"cancelled": False}  # already the leaf
    result = await session.navigate_tree(user_two.id)

    assert result.to_wire() == {"cancelled": False, "editorText": "two"}
    assert session.session_manager.get_leaf_id() == a1.id
    assert [m.role for m in session.messages] == ["user", "assistant"]

    result = await session.navigate_tree(user_one.id, label="start over")
    assert result.editor_text == "one" and session.messages == []
    # Above the first user message is the leading system message: a new prompt from here keeps its declaration.
    kept = [e for e in session.session_manager.get_branch() if isinstance(e, MessageEntry)]
    assert [(e.id, e.message.role) for e in kept] == [(user_one.parent_id, "system")]
    assert session.session_manager.get_label(user_one.id) == "start over"

    with pytest.raises(ValueError, match="not found"):
        await session.navigate_tree("nope")


async def test_assistant_target_becomes_the_leaf_with_a_branch_summary(harness: Harness) -> None:
    prompts: list[str] = []

    def summary(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        message = context.messages[0]
        assert isinstance(message, UserMessage) and not isinstance(message.content, str)
        block = message.content[0]
        assert isinstance(block, TextContent)
        prompts.append(block.text)
        return faux_assistant_message("They asked a second question.")

    session = await _two_exchanges(harness, summary)
    _, a1, user_two, _ = _message_entries(session)

    result = await session.navigate_tree(
        a1.id, summarize=True, custom_instructions="Only the question.", replace_instructions=True, label="saved"
    )

    entry = result.summary_entry
    assert isinstance(entry, BranchSummaryEntry) and entry.parent_id == a1.id
    assert "They asked a second question." in entry.summary
    assert result.to_wire()["summaryEntry"] == entry.to_wire()
    assert session.session_manager.get_label(entry.id) == "saved"
    assert [m.role for m in session.messages] == ["user", "assistant", "branchSummary"]
    assert "two" in prompts[0] and "Only the question." in prompts[0] and "## Goal" not in prompts[0]
    assert user_two.id not in {e.id for e in session.session_manager.get_branch()}


async def test_aborted_branch_summary_changes_nothing(harness: Harness) -> None:
    started = asyncio.Event()

    async def hanging(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        started.set()
        assert options.signal is not None
        while not options.signal.aborted:
            await asyncio.sleep(0.001)
        return faux_assistant_message("unused")

    session = await _two_exchanges(harness, hanging)
    leaf = session.session_manager.get_leaf_id()
    _, a1, _, _ = _message_entries(session)

    navigation = asyncio.ensure_future(session.navigate_tree(a1.id, summarize=True))
    await started.wait()
    session.abort_branch_summary()
    result = await navigation

    assert result.to_wire() == {"cancelled": True, "aborted": True}
    assert session.session_manager.get_leaf_id() == leaf
    assert len(session.messages) == 4


async def test_navigation_is_refused_while_streaming(harness: Harness) -> None:
    gate = asyncio.Event()

    async def slow(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        await gate.wait()
        return faux_assistant_message("late")

    session = await _two_exchanges(harness, slow)
    first = _message_entries(session)[0]
    running = asyncio.ensure_future(session.prompt("three"))
    while not session.agent.state.is_streaming:
        await asyncio.sleep(0)
    with pytest.raises(RuntimeError) as raised:
        await session.navigate_tree(first.id)
    assert str(raised.value) == NAVIGATE_WHILE_STREAMING
    gate.set()
    await running


async def test_summary_retry_events_name_the_branch_summary_source(harness: Harness) -> None:
    overloaded = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    session = await _two_exchanges(
        harness,
        faux_assistant_message([], stop_reason="error", error_message=overloaded),
        faux_assistant_message("Summary after a retry."),
    )
    recorder = Recorder()
    session.subscribe(recorder)
    _, a1, _, _ = _message_entries(session)

    result = await session.navigate_tree(a1.id, summarize=True)

    assert result.summary_entry is not None
    starts = recorder.of("summarization_retry_attempt_start")
    assert [e.to_wire() for e in starts] == [{"type": "summarization_retry_attempt_start", "source": "branchSummary"}]
    assert len(recorder.of("summarization_retry_scheduled")) == 1
    assert len(recorder.of("summarization_retry_finished")) == 1


async def test_export_to_html_writes_the_active_branch(harness: Harness) -> None:
    session = await _two_exchanges(harness)
    path = Path(session.export_to_html("out/transcript.html"))
    assert path == harness.cwd / "out" / "transcript.html"
    html = path.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html") and "a2" in html


async def test_runtime_imports_a_jsonl_session_and_switches_to_it(harness: Harness, tmp_path: Path) -> None:
    harness.script(faux_assistant_message("elsewhere answer"), faux_assistant_message("home answer"))
    elsewhere_dir = tmp_path / "elsewhere"
    source_session = await harness.session(manager=SessionManager.create(str(harness.cwd), elsewhere_dir))
    await source_session.prompt("question from elsewhere")
    source_file = source_session.session_file
    assert source_file is not None

    home = await harness.session(manager=harness.persisted_manager())
    runtime = AgentSessionRuntime(CreateAgentSessionResult(home), sleep=harness.sleep)
    imported = await runtime.import_from_jsonl(source_file)

    assert runtime.session is imported and imported is not home
    assert imported.session_file == str(harness.sessions_dir / Path(source_file).name)
    assert [m.role for m in imported.messages] == ["user", "assistant"]
    assert imported.get_last_assistant_text() == "elsewhere answer"
    await runtime.dispose()
