"""A session write that fails stops the run as `error` with a `session_write_error` event; switching to a session
another writer holds is refused before anything is replaced."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest
from runtime_helpers import Harness, Recorder

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_coding_agent.runtime import AgentSessionRuntime, CreateAgentSessionResult
from apex_coding_agent.session import SessionLockedError, SessionManager


async def test_a_failed_write_stops_the_run_as_error_with_an_event(harness: Harness) -> None:
    harness.script(
        faux_assistant_message("first"),
        faux_assistant_message([faux_tool_call("read", {"path": "notes.txt"})], stop_reason="toolUse"),
        faux_assistant_message("never asked for"),
    )
    (harness.cwd / "notes.txt").write_text("secret notes")
    session = await harness.session(manager=harness.persisted_manager())
    await session.prompt("one")
    file = session.session_file
    assert file is not None
    size = Path(file).stat().st_size
    recorder = Recorder()
    session.subscribe(recorder)
    # Room for the user line but not the reply: the failure comes mid-run, after a request was sent.
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 400, old[1]))
    try:
        reason = await session.prompt("two")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
    assert reason == "error"
    [failure] = recorder.of("session_write_error")
    assert failure.error.startswith(f"Could not write session file {file}") and "File too large" in failure.error
    [end] = recorder.of("agent_end")
    assert end.stop_reason == "error"
    assert harness.faux.state.call_count == 2  # no request after the failure
    [tool] = recorder.of("tool_execution_end")
    assert tool.is_error and tool.result.content[0].text == "Operation aborted"  # the read never ran
    reopened = SessionManager.open(file)
    assert reopened.issues == []  # nothing half-written


async def test_switching_to_a_session_held_by_another_writer_is_refused_up_front(harness: Harness) -> None:
    other = SessionManager.create(str(harness.cwd), harness.sessions_dir)
    other.append_message(faux_assistant_message("elsewhere"))
    assert other.session_file is not None
    other.lock_for_writing()
    harness.script(faux_assistant_message("mine"), faux_assistant_message("still mine"))
    session = await harness.session(manager=harness.persisted_manager())
    runtime = AgentSessionRuntime(CreateAgentSessionResult(session), sleep=harness.sleep)
    await session.prompt("hello")
    with pytest.raises(SessionLockedError, match="is in use by process"):
        await runtime.switch_session(other.session_file)
    assert runtime.session is session
    assert await session.prompt("still here") == "completed"  # the current session was left as it was
    other.close()
    switched = await runtime.switch_session(other.session_file)
    assert switched.session_file == str(other.session_file)
    await runtime.dispose()
