"""Automatic compaction through the faux provider (spec compaction.md §3, §8, §10).

The threshold is placed just above the first reply's reported context size, so the second exchange crosses it;
the last user prompt is long so the cut lands on it (one summary request, no split turn).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from runtime_helpers import OVERLOADED, Harness, Recorder, compact_above

from apex_ai.options import StreamOptions
from apex_ai.providers.faux import FauxState, faux_assistant_message
from apex_ai.types import AssistantMessage, Context, Model, TextContent, UserMessage
from apex_coding_agent.compaction import context_tokens
from apex_coding_agent.runtime import AgentSession, to_json_event
from apex_coding_agent.runtime.agent_session import COMPACTING_TEXT
from apex_coding_agent.runtime.compaction_policy import OVERFLOW_RECOVERY_FAILED
from apex_coding_agent.session.entries import CompactionEntry, MessageEntry

LONG = "please look at this carefully " * 12
OVERFLOW = "prompt is too long: 213462 tokens > 200000 maximum"
WINDOW = 200000


def _error(text: str) -> AssistantMessage:
    return faux_assistant_message([], stop_reason="error", error_message=text)


def _last_usage(session: AgentSession) -> int:
    last = next(m for m in reversed(session.messages) if isinstance(m, AssistantMessage))
    return context_tokens(last.usage)


def _threshold_just_above(session: AgentSession, margin: int = 10) -> None:
    """Compaction becomes due once the context exceeds the last reply's size by `margin` tokens."""
    compact_above(session, _last_usage(session) + margin)


def _settings(**compaction: Any) -> dict[str, Any]:
    return {"compaction": {"keepRecentTokens": 50, **compaction}, "retry": {"baseDelayMs": 1}}


def _compaction_entries(session: AgentSession) -> list[CompactionEntry]:
    return [e for e in session.session_manager.get_entries() if isinstance(e, CompactionEntry)]


def _ours(recorder: Recorder) -> list[str]:
    kinds = ("agent_end", "compaction_start", "compaction_end", "agent_settled", "message_start(user)")
    return [t for t in recorder.compact() if t in kinds or t.startswith("summarization_retry")]


async def test_threshold_compaction_after_a_run(harness: Harness) -> None:
    harness.script(
        faux_assistant_message("a1"),
        faux_assistant_message("a2"),
        faux_assistant_message("Summary of the first exchange."),
    )
    session = await harness.session(settings=_settings())
    await session.prompt("one")
    _threshold_just_above(session)
    recorder = Recorder()
    session.subscribe(recorder)

    assert await session.prompt(LONG) == "completed"

    assert _ours(recorder) == [
        "message_start(user)",
        "agent_end",
        "compaction_start",
        "compaction_end",
        "agent_settled",
    ]
    start, end = (to_json_event(e) for e in recorder.events if e.type.startswith("compaction"))
    assert start == {"type": "compaction_start", "reason": "threshold"}
    assert end["reason"] == "threshold" and end["aborted"] is False and end["willRetry"] is False
    assert "errorMessage" not in end and end["result"]["summary"].startswith("Summary of the first exchange.")
    assert [m.role for m in session.messages] == ["compactionSummary", "user", "assistant"]
    assert len(_compaction_entries(session)) == 1
    assert not session.is_compacting


async def test_overflow_error_compacts_and_retries_once(harness: Harness) -> None:
    harness.script(
        faux_assistant_message("a1"),
        _error(OVERFLOW),
        faux_assistant_message("Summary before the overflow."),
        faux_assistant_message("recovered"),
    )
    session = await harness.session(settings=_settings())
    await session.prompt("one")
    recorder = Recorder()
    session.subscribe(recorder)

    assert await session.prompt(LONG) == "completed"

    assert _ours(recorder) == [
        "message_start(user)",
        "agent_end",
        "compaction_start",
        "compaction_end",
        "agent_end",
        "agent_settled",
    ]
    assert [e.will_retry for e in recorder.of("agent_end")] == [True, False]
    end = to_json_event(recorder.of("compaction_end")[0])
    assert end["reason"] == "overflow" and end["willRetry"] is True and "result" in end
    # The failed reply left the transcript but stays in the file; the retry answered the same prompt.
    roles = [m.role for m in session.messages]
    assert roles == ["compactionSummary", "user", "assistant"]
    assert session.get_last_assistant_text() == "recovered"
    stored = [e.message for e in session.session_manager.get_entries() if isinstance(e, MessageEntry)]
    assert any(isinstance(m, AssistantMessage) and m.error_message == OVERFLOW for m in stored)
    assert harness.faux.pending_count == 0


async def test_second_overflow_in_a_run_reports_the_fixed_failure(harness: Harness) -> None:
    harness.script(
        faux_assistant_message("a1"),
        _error(OVERFLOW),
        faux_assistant_message("Summary before the overflow."),
        _error(OVERFLOW),
    )
    session = await harness.session(settings=_settings())
    await session.prompt("one")
    recorder = Recorder()
    session.subscribe(recorder)

    assert await session.prompt(LONG) == "error"

    ends = [to_json_event(e) for e in recorder.of("compaction_end")]
    assert len(ends) == 2 and len(recorder.of("compaction_start")) == 1
    assert ends[1] == {
        "type": "compaction_end",
        "reason": "overflow",
        "aborted": False,
        "willRetry": False,
        "errorMessage": OVERFLOW_RECOVERY_FAILED,
    }
    assert [e.will_retry for e in recorder.of("agent_end")] == [True, False]
    assert recorder.compact()[-1] == "agent_settled"
    assert len(_compaction_entries(session)) == 1


async def test_silent_overflow_compacts_without_retry(harness: Harness) -> None:
    harness.script(faux_assistant_message("a1"), faux_assistant_message("a2"), faux_assistant_message("Summary."))
    session = await harness.session(settings=_settings(reserveTokens=0))
    # Without a routing session id the faux provider reports the whole prompt as input (no cache split).
    session.agent.session_id = None
    await session.prompt("one")
    # A window the next request (the long prompt) no longer fits into, while the first reply still did.
    window = _last_usage(session) + 20
    session.set_model(harness.model().model_copy(update={"context_window": window}))
    recorder = Recorder()
    session.subscribe(recorder)

    assert await session.prompt(LONG) == "completed"

    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "stop" and last.usage.input > window
    end = to_json_event(recorder.of("compaction_end")[0])
    assert end["reason"] == "overflow" and end["willRetry"] is False and "result" in end
    assert [e.will_retry for e in recorder.of("agent_end")] == [False]
    assert [m.role for m in session.messages] == ["compactionSummary", "user", "assistant"]
    assert harness.faux.pending_count == 0


async def test_failed_summary_drops_nothing_and_says_why(harness: Harness) -> None:
    harness.script(
        faux_assistant_message("a1"),
        faux_assistant_message("a2"),
        _error("400 invalid request: bad summary"),
    )
    session = await harness.session(settings=_settings())
    await session.prompt("one")
    _threshold_just_above(session)
    recorder = Recorder()
    session.subscribe(recorder)
    await session.prompt(LONG)

    before = list(session.messages)
    end = to_json_event(recorder.of("compaction_end")[0])
    assert end["reason"] == "threshold" and end["aborted"] is False and "result" not in end
    assert end["errorMessage"] == "Auto-compaction failed: Summarization failed: 400 invalid request: bad summary"
    assert _compaction_entries(session) == [] and session.messages == before
    assert [m.role for m in before] == ["user", "assistant", "user", "assistant"]


async def test_summary_retries_emit_summarization_events(harness: Harness) -> None:
    harness.script(
        faux_assistant_message("a1"),
        faux_assistant_message("a2"),
        _error(OVERLOADED),
        faux_assistant_message("Summary after a retry."),
    )
    session = await harness.session(settings=_settings())
    await session.prompt("one")
    _threshold_just_above(session)
    recorder = Recorder()
    session.subscribe(recorder)
    await session.prompt(LONG)

    assert _ours(recorder)[2:] == [
        "compaction_start",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
        "compaction_end",
        "agent_settled",
    ]
    scheduled = to_json_event(recorder.of("summarization_retry_scheduled")[0])
    assert scheduled == {
        "type": "summarization_retry_scheduled",
        "attempt": 1,
        "maxAttempts": 3,
        "delayMs": 1,
        "errorMessage": OVERLOADED,
    }
    attempt = to_json_event(recorder.of("summarization_retry_attempt_start")[0])
    assert attempt == {"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "threshold"}
    assert harness.sleep.delays == [1]
    assert len(_compaction_entries(session)) == 1


async def test_compaction_that_frees_little_is_reported_and_not_repeated(harness: Harness) -> None:
    bloated = "A summary that is longer than what it summarizes. " * 90
    harness.script(
        faux_assistant_message("a1"),
        faux_assistant_message("a2"),
        faux_assistant_message(bloated),
        faux_assistant_message("a3"),
        faux_assistant_message("a4"),
    )
    session = await harness.session(settings=_settings())
    await session.prompt("one")
    _threshold_just_above(session)
    recorder = Recorder()
    session.subscribe(recorder)

    await session.prompt(LONG)
    await session.prompt("three")
    await session.prompt("four")

    assert len(recorder.of("compaction_start")) == 1
    end = to_json_event(recorder.of("compaction_end")[0])
    assert "less than 10%" in end["warning"] and "result" in end
    assert session.model is not None
    window = session.model.context_window
    assert _last_usage(session) > window - session.settings_manager.get_int("compaction.reserveTokens", 0)
    assert harness.faux.pending_count == 0


async def test_disabled_then_enabled_compacts_before_the_next_prompt(harness: Harness) -> None:
    harness.script(
        faux_assistant_message("a1"),
        faux_assistant_message("a2"),
        faux_assistant_message("Summary."),
        faux_assistant_message("a3"),
    )
    session = await harness.session(settings=_settings())
    session.set_auto_compaction(False)
    assert session.auto_compaction_enabled is False
    await session.prompt("one")
    _threshold_just_above(session)
    await session.prompt(LONG)
    assert _compaction_entries(session) == []

    session.set_auto_compaction(True)
    recorder = Recorder()
    session.subscribe(recorder)
    await session.prompt("three")

    assert _ours(recorder)[:3] == ["compaction_start", "compaction_end", "message_start(user)"]
    assert len(_compaction_entries(session)) == 1
    assert session.settings_manager.get_bool("compaction.enabled", False) is True


async def test_manual_compact_during_overflow_recovery_loses_no_turn(harness: Harness) -> None:
    gate = asyncio.Event()
    summarizing = asyncio.Event()

    async def slow_summary(
        context: Context, options: StreamOptions, state: FauxState, model: Model
    ) -> AssistantMessage:
        summarizing.set()
        await gate.wait()
        return faux_assistant_message("Summary before the overflow.")

    harness.script(faux_assistant_message("a1"), _error(OVERFLOW), slow_summary, faux_assistant_message("recovered"))
    session = await harness.session(settings=_settings())
    await session.prompt("one")
    recorder = Recorder()
    session.subscribe(recorder)

    running = asyncio.ensure_future(session.prompt(LONG))
    await summarizing.wait()
    assert session.is_compacting
    with pytest.raises(RuntimeError) as raised:
        await session.prompt("meanwhile")
    assert str(raised.value) == COMPACTING_TEXT
    manual = asyncio.ensure_future(session.compact())
    await asyncio.sleep(0)
    gate.set()

    result = await manual
    assert await running == "completed"
    assert result.summary.startswith("Summary before the overflow.")
    assert len(_compaction_entries(session)) == 1
    assert [e.reason for e in recorder.of("compaction_start")] == ["overflow"]
    assert session.get_last_assistant_text() == "recovered"
    # The turn that overflowed is still in the context, answered once; the refused prompt never got in.
    texts = [
        m.content if isinstance(m.content, str) else "".join(b.text for b in m.content if isinstance(b, TextContent))
        for m in session.messages
        if isinstance(m, UserMessage)
    ]
    assert texts.count(LONG) == 1 and "meanwhile" not in texts
    assert [m.role for m in session.messages][-2:] == ["user", "assistant"]


async def test_abort_compaction_stops_an_automatic_compaction(harness: Harness) -> None:
    summarizing = asyncio.Event()

    async def hanging_summary(
        context: Context, options: StreamOptions, state: FauxState, model: Model
    ) -> AssistantMessage:
        summarizing.set()
        assert options.signal is not None
        while not options.signal.aborted:
            await asyncio.sleep(0.001)
        return faux_assistant_message("never used")

    harness.script(faux_assistant_message("a1"), faux_assistant_message("a2"), hanging_summary)
    session = await harness.session(settings=_settings())
    await session.prompt("one")
    _threshold_just_above(session)
    recorder = Recorder()
    session.subscribe(recorder)

    running = asyncio.ensure_future(session.prompt(LONG))
    await summarizing.wait()
    session.abort_compaction()
    assert await running == "completed"

    end = to_json_event(recorder.of("compaction_end")[0])
    assert end == {"type": "compaction_end", "reason": "threshold", "aborted": True, "willRetry": False}
    assert _compaction_entries(session) == []
    assert [m.role for m in session.messages] == ["user", "assistant", "user", "assistant"]
