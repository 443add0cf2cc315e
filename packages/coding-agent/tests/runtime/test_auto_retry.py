"""Automatic retry at the session layer (spec modes.md §8): order of events, dropped failures, limits."""

from __future__ import annotations

import json
from pathlib import Path

from runtime_helpers import OVERLOADED, Harness, Recorder

from apex_agent.types import RunBudget
from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_ai.retry import RETRY_AFTER_DIAGNOSTIC
from apex_ai.types import AssistantMessage, AssistantMessageDiagnostic, UserMessage
from apex_coding_agent.runtime import to_json_event

RETRY = {"retry": {"maxRetries": 3, "baseDelayMs": 100}}


def _error(text: str = OVERLOADED) -> AssistantMessage:
    return faux_assistant_message([], stop_reason="error", error_message=text)


async def test_overloaded_then_success_retries_without_a_new_user_message(harness: Harness) -> None:
    harness.script(_error(), faux_assistant_message("Recovered."))
    session = await harness.session(settings=RETRY, manager=harness.persisted_manager())
    recorder = Recorder()
    session.subscribe(recorder)

    stop = await session.prompt("Say hello")

    assert stop == "completed"
    assert recorder.compact() == [
        "agent_start",
        "turn_start",
        "message_start(system)",  # the new session's leading declaration of its prompt and tools
        "message_end(system)",
        "message_start(user)",
        "message_end(user)",
        "message_start(assistant)",
        "message_end(assistant)",
        "turn_end",
        "agent_end",
        "auto_retry_start",
        "agent_start",
        "turn_start",
        "message_start(assistant)",
        "message_update",
        "message_end(assistant)",
        "auto_retry_end",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    ends = [to_json_event(e) for e in recorder.of("agent_end")]
    assert [(e["stopReason"], e["willRetry"]) for e in ends] == [("error", True), ("completed", False)]
    start = to_json_event(recorder.of("auto_retry_start")[0])
    assert start == {
        "type": "auto_retry_start",
        "attempt": 1,
        "maxAttempts": 3,
        "delayMs": 100,
        "errorMessage": OVERLOADED,
    }
    assert to_json_event(recorder.of("auto_retry_end")[0]) == {"type": "auto_retry_end", "success": True, "attempt": 1}
    assert harness.sleep.delays == [100]

    # The failed reply is gone from the agent's transcript but stays in the file, parent of the retry.
    assert [type(m) for m in session.messages] == [UserMessage, AssistantMessage]
    records = [json.loads(line) for line in Path(session.session_file or "").read_text().splitlines()]
    messages = [r for r in records if r["type"] == "message"]
    assert [m["message"]["role"] for m in messages] == ["system", "user", "assistant", "assistant"]
    assert [m["message"].get("stopReason") for m in messages] == [None, None, "error", "stop"]
    assert messages[3]["parentId"] == messages[2]["id"]


async def test_exhausted_retries_end_with_a_failed_auto_retry_end(harness: Harness) -> None:
    harness.script(_error(), _error(), _error())
    session = await harness.session(settings={"retry": {"maxRetries": 2, "baseDelayMs": 50}})
    recorder = Recorder()
    session.subscribe(recorder)

    stop = await session.prompt("Say hello")

    assert stop == "error"
    assert harness.sleep.delays == [50, 100]
    tail = [t for t in recorder.compact() if t in ("agent_end", "auto_retry_start", "auto_retry_end", "agent_settled")]
    assert tail == [
        "agent_end",
        "auto_retry_start",
        "agent_end",
        "auto_retry_start",
        "agent_end",
        "auto_retry_end",
        "agent_settled",
    ]
    assert [e.will_retry for e in recorder.of("agent_end")] == [True, True, False]
    assert [e.attempt for e in recorder.of("auto_retry_start")] == [1, 2]
    end = to_json_event(recorder.of("auto_retry_end")[0])
    assert end == {"type": "auto_retry_end", "success": False, "attempt": 2, "finalError": OVERLOADED}
    assert harness.faux.state.call_count == 3


def _rate_limited(delay_ms: int) -> AssistantMessage:
    """A 429 whose server asked for `delay_ms` (what the adapters record from `retry-after`)."""
    message = _error('429 {"error":{"message":"Slow down"}}')
    asked = AssistantMessageDiagnostic(type=RETRY_AFTER_DIAGNOSTIC, timestamp=1, details={"delayMs": delay_ms})
    return message.model_copy(update={"diagnostics": [asked]})


async def test_retry_waits_as_long_as_the_server_asked(harness: Harness) -> None:
    harness.script(_rate_limited(1000), _error(), faux_assistant_message("Recovered."))
    session = await harness.session(settings={"retry": {"maxRetries": 3, "baseDelayMs": 2000}})
    recorder = Recorder()
    session.subscribe(recorder)

    assert await session.prompt("Say hello") == "completed"

    assert harness.sleep.delays == [1000, 4000]  # the server's 1 s, then retry 2's own backoff
    assert [e.delay_ms for e in recorder.of("auto_retry_start")] == [1000, 4000]


async def test_a_server_delay_above_the_cap_is_not_retried(harness: Harness) -> None:
    harness.script(_rate_limited(5000), faux_assistant_message("unused"))
    # The legacy key: migrated to retry.provider.maxRetryDelayMs.
    session = await harness.session(settings={"retry": {"maxRetries": 3, "maxDelayMs": 1000}})
    recorder = Recorder()
    session.subscribe(recorder)

    assert await session.prompt("Say hello") == "error"

    assert harness.sleep.delays == []
    assert recorder.of("auto_retry_start") == []
    assert [e.will_retry for e in recorder.of("agent_end")] == [False]
    assert harness.faux.pending_count == 1


async def test_context_overflow_is_never_retried(harness: Harness) -> None:
    harness.script(_error("prompt is too long: 213462 tokens > 200000 maximum"), faux_assistant_message("unused"))
    # Compaction off: overflow recovery (test_auto_compaction.py) would otherwise continue the run.
    session = await harness.session(settings={**RETRY, "compaction": {"enabled": False}})
    recorder = Recorder()
    session.subscribe(recorder)

    stop = await session.prompt("Say hello")

    assert stop == "error"
    assert recorder.of("auto_retry_start") == []
    assert [e.will_retry for e in recorder.of("agent_end")] == [False]
    assert harness.faux.pending_count == 1


async def test_retry_disabled_in_settings(harness: Harness) -> None:
    harness.script(_error(), faux_assistant_message("unused"))
    session = await harness.session(settings={"retry": {"enabled": False}})
    recorder = Recorder()
    session.subscribe(recorder)
    assert await session.prompt("hi") == "error"
    assert recorder.of("auto_retry_start") == []
    assert recorder.compact()[-2:] == ["agent_end", "agent_settled"]


async def test_abort_during_the_backoff_cancels_the_retry(harness: Harness) -> None:
    harness.script(_error(), faux_assistant_message("unused"))
    session = await harness.session(settings=RETRY)
    recorder = Recorder()

    async def abort_on_retry(event: object) -> None:
        if getattr(event, "type", None) == "auto_retry_start":
            session.abort_retry()

    session.subscribe(recorder)
    session.subscribe(abort_on_retry)
    stop = await session.prompt("hi")

    assert stop == "aborted"
    end = to_json_event(recorder.of("auto_retry_end")[0])
    assert end == {"type": "auto_retry_end", "success": False, "attempt": 1, "finalError": "Retry cancelled"}
    assert harness.faux.pending_count == 1
    assert recorder.compact()[-1] == "agent_settled"


async def test_a_retry_continuation_gets_the_remaining_budget(harness: Harness) -> None:
    def tool_call(*_: object) -> AssistantMessage:
        return faux_assistant_message([faux_tool_call("read", {"path": "."})], stop_reason="toolUse")

    harness.script(_error(), tool_call, tool_call, tool_call)
    session = await harness.session(settings=RETRY, run_budget=RunBudget(max_turns=2))
    recorder = Recorder()
    session.subscribe(recorder)

    assert await session.prompt("loop") == "budget-exhausted"

    # The failed request counts: the continuation makes one request, then the budget stops it.
    assert harness.faux.state.call_count == 2
    assert [e.stop_reason for e in recorder.of("agent_end")] == ["error", "budget-exhausted"]
