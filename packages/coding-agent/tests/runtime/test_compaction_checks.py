"""compaction.md acceptance checks 12 and 16 at the session level, through the faux provider.

Check 16: a reply stored before the latest compaction describes the context as it was before that compaction, so
its usage never triggers another one, neither before a new prompt nor through the estimate an error reply falls
back to. Check 12: an extension cancelling `session_before_compact` ends the compaction as aborted, adding nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from runtime_helpers import Harness, Recorder

from apex_ai.providers.faux import faux_assistant_message
from apex_ai.types import AssistantMessage
from apex_coding_agent.compaction import context_tokens
from apex_coding_agent.extensions import ExtensionAPI, InlineExtension
from apex_coding_agent.runtime import AgentSession, to_json_event
from apex_coding_agent.session.entries import CompactionEntry

LONG = "please look at this carefully " * 12
# Later prompts are long too, so each cut lands on the newest prompt and leaves something to summarize.
THREE = "three " * 60
FOUR = "four " * 75
# A small window with a threshold of 1050 tokens (the reserve is at most a quarter of the window): any fresh
# usage, which includes the ~1000-token system prompt and tools, is over it, without exceeding the window.
WINDOW = 1400
RESERVE = WINDOW // 4


def _settings() -> dict[str, Any]:
    return {"compaction": {"keepRecentTokens": 50}, "retry": {"enabled": False}}


def _compactions(session: AgentSession) -> list[CompactionEntry]:
    return [e for e in session.session_manager.get_entries() if isinstance(e, CompactionEntry)]


async def _compacted_session(harness: Harness, *steps: Any) -> AgentSession:
    """Two exchanges, a manual compaction keeping the second one, then a small window: the kept reply is stale."""
    harness.script(
        faux_assistant_message("a1"),
        faux_assistant_message("a2"),
        faux_assistant_message("Summary of the first exchange."),
        *steps,
    )
    session = await harness.session(settings=_settings())
    await session.prompt("one " * 100)
    await session.prompt(LONG)
    await session.compact()
    session.set_model(harness.model().model_copy(update={"context_window": WINDOW}))
    session.settings_manager.set("compaction.reserveTokens", RESERVE)
    kept = session.messages[-1]
    assert [m.role for m in session.messages] == ["compactionSummary", "user", "assistant"]
    # Were it fresh, its usage alone would be over the threshold.
    assert isinstance(kept, AssistantMessage) and context_tokens(kept.usage) > WINDOW - RESERVE
    return session


async def test_stale_reply_does_not_compact_before_the_next_prompt(harness: Harness) -> None:
    session = await _compacted_session(
        harness, faux_assistant_message("a3"), faux_assistant_message("Summary after a3.")
    )
    recorder = Recorder()
    session.subscribe(recorder)

    assert await session.prompt(THREE) == "completed"

    # Nothing before the prompt (the kept reply is stale); the fresh a3 afterwards is over the threshold.
    kinds = [t for t in recorder.compact() if t.startswith(("compaction", "message_start(user)", "agent_end"))]
    assert kinds == ["message_start(user)", "agent_end", "compaction_start", "compaction_end"]
    assert to_json_event(recorder.of("compaction_start")[0]) == {"type": "compaction_start", "reason": "threshold"}
    assert len(_compactions(session)) == 2
    assert harness.faux.pending_count == 0


async def test_stale_usage_is_not_used_for_the_estimate_after_an_error(harness: Harness) -> None:
    error = faux_assistant_message([], stop_reason="error", error_message="400 bad request")
    session = await _compacted_session(
        harness, error, faux_assistant_message("a4"), faux_assistant_message("Summary after a4.")
    )
    errored = Recorder()
    stop = session.subscribe(errored)
    # The error reply has no usage: the estimate would rest on the stale kept reply, so nothing compacts.
    assert await session.prompt(THREE) == "error"
    stop()
    assert not [t for t in errored.compact() if t.startswith("compaction")]

    recorder = Recorder()
    session.subscribe(recorder)
    # Before FOUR the last reply is that (fresh) error: same estimate, same answer; the fresh a4 then compacts.
    assert await session.prompt(FOUR) == "completed"
    kinds = [t for t in recorder.compact() if t.startswith(("compaction", "message_start(user)", "agent_end"))]
    assert kinds == ["message_start(user)", "agent_end", "compaction_start", "compaction_end"]
    assert len(_compactions(session)) == 2
    assert harness.faux.pending_count == 0


def _cancelling(pi: ExtensionAPI) -> None:
    pi.on("session_before_compact", lambda e, ctx: {"cancel": True})


async def test_extension_cancel_of_an_automatic_compaction_is_reported_aborted(harness: Harness) -> None:
    harness.script(faux_assistant_message("a1"), faux_assistant_message("a2"), faux_assistant_message("a3"))
    session = await harness.session(settings=_settings(), extensions=[InlineExtension(_cancelling, "cancel")])
    await session.prompt("one " * 100)
    await session.prompt(LONG)
    session.set_model(harness.model().model_copy(update={"context_window": WINDOW}))
    session.settings_manager.set("compaction.reserveTokens", RESERVE)
    recorder = Recorder()
    session.subscribe(recorder)
    entries_before = len(session.session_manager.get_entries())

    assert await session.prompt(THREE) == "completed"

    # Due before the prompt (a2) and again after it (a3); the extension cancels both.
    events = [to_json_event(e) for e in recorder.events if e.type.startswith("compaction")]
    start = {"type": "compaction_start", "reason": "threshold"}
    end = {"type": "compaction_end", "reason": "threshold", "aborted": True, "willRetry": False}
    assert events == [start, end, start, end]
    assert _compactions(session) == []
    # Only the prompt and its reply were added.
    assert len(session.session_manager.get_entries()) == entries_before + 2
    assert [m.role for m in session.messages] == ["user", "assistant"] * 3
    assert harness.faux.pending_count == 0


async def test_extension_cancel_of_a_manual_compaction_is_reported_aborted(harness: Harness) -> None:
    harness.script(faux_assistant_message("a1"), faux_assistant_message("a2"))
    session = await harness.session(settings=_settings(), extensions=[InlineExtension(_cancelling, "cancel")])
    await session.prompt("one " * 100)
    await session.prompt(LONG)
    recorder = Recorder()
    session.subscribe(recorder)
    entries_before = len(session.session_manager.get_entries())

    with pytest.raises(RuntimeError, match="^Compaction cancelled$"):
        await session.compact()

    ends = [to_json_event(e) for e in recorder.of("compaction_end")]
    assert ends == [{"type": "compaction_end", "reason": "manual", "aborted": True, "willRetry": False}]
    assert len(session.session_manager.get_entries()) == entries_before and _compactions(session) == []
    assert not session.is_compacting
