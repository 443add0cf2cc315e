"""Summary generation and applying a compaction, driven by the faux provider (compaction.md §6, §8; acceptance 5,
6, 10, 11, 18 and the rules for failures, small gains and bookkeeping)."""

import uuid
from typing import Any

import pytest
from compaction_helpers import Recorder, assistant, call, faux_with, result, tool_turn, user

from apex_ai.abort import AbortController
from apex_ai.providers.faux import FauxProvider, faux_assistant_message
from apex_ai.retry import RetryCallbacks, RetryPolicy
from apex_ai.stream import stream_simple
from apex_ai.types import AssistantMessage, TextContent
from apex_coding_agent.compaction import (
    CompactionResult,
    CompactionSettings,
    SummaryFailure,
    SummaryRequestOptions,
    apply_compaction,
    compact,
    compact_branch,
    complete_fn_from_stream,
    estimate_tokens,
    prepare_compaction,
    result_from_summary,
)
from apex_coding_agent.compaction.prompts import SUMMARIZER_SYSTEM_PROMPT
from apex_coding_agent.messages import CompactionSummaryMessage
from apex_coding_agent.session.entries import CompactionEntry
from apex_coding_agent.session.session_manager import SessionManager


def _session(turns: int = 4) -> SessionManager:
    sm = SessionManager.in_memory("/w")
    for turn in range(turns):
        steps = [(call("read", path=f"src/m{turn}.py"), "x" * 800), (call("edit", path="src/main.py"), "ok")]
        tool_turn(sm, f"request {turn} " + "w" * 200, steps, f"done {turn}")
    return sm


async def test_compaction_request_options_and_result() -> None:
    recorder = Recorder(lambda prompt: "## Goal\nKeep going")
    faux = faux_with(recorder, reasoning=True, max_tokens=20000)
    sm = _session()
    path = sm.get_branch()
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=250))
    assert prep is not None
    options = SummaryRequestOptions(api_key="k", thinking_level="high", headers={"x-a": "1"})
    outcome = await compact(prep, faux.model(), options, custom_instructions="focus on tests", trigger="threshold")
    assert isinstance(outcome, CompactionResult)

    request = recorder.options[0]
    assert request.max_tokens == 13107  # floor(0.8 * 16384) < 20000
    assert request.cache_retention == "none"
    assert uuid.UUID(request.session_id).version == 7
    assert request.reasoning == "high"
    assert (request.api_key, request.headers) == ("k", {"x-a": "1"})
    context = recorder.contexts[0]
    assert context.system_prompt == SUMMARIZER_SYSTEM_PROMPT
    prompt = recorder.prompts[0]
    assert prompt.startswith("<conversation>\n[User]: request 0")
    assert "\n</conversation>\n\n" in prompt and "<previous-summary>" not in prompt
    for section in (
        "## Goal",
        "## Constraints & Preferences",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ):
        assert section in prompt
    assert prompt.endswith("\n\nAdditional focus: focus on tests")

    assert outcome.summary.startswith("## Goal\nKeep going\n\n<read-files>\n")
    assert outcome.summary.endswith("<modified-files>\nsrc/main.py\n</modified-files>")
    assert outcome.details == prep.file_ops.details()
    assert outcome.first_kept_entry_id == prep.first_kept_entry_id
    assert (outcome.trigger, outcome.model, outcome.from_hook) == ("threshold", "faux/faux-1", False)
    assert outcome.tokens_before == prep.tokens_before
    assert outcome.tokens_after == estimate_tokens(
        CompactionSummaryMessage(summary=outcome.summary, tokens_before=0, timestamp=0)
    ) + sum(estimate_tokens(m) for m in prep.kept_messages)
    assert outcome.tokens_after < outcome.tokens_before and not outcome.insufficient
    assert outcome.usage is not None and outcome.usage.output > 0
    wire = outcome.to_wire()
    assert set(wire) == {"summary", "firstKeptEntryId", "tokensBefore", "estimatedTokensAfter", "usage", "details"}

    entry_id = apply_compaction(sm, outcome)
    entry = sm.get_entry(entry_id)
    assert isinstance(entry, CompactionEntry)
    assert entry.from_hook is False and entry.retained_tail is not None
    assert (entry.trigger, entry.tokens_before, entry.tokens_after, entry.model) == (
        "threshold",
        outcome.tokens_before,
        outcome.tokens_after,
        "faux/faux-1",
    )
    messages = sm.build_session_context().messages
    assert isinstance(messages[0], CompactionSummaryMessage) and messages[0].summary == outcome.summary
    assert messages[1:] == prep.kept_messages
    assert sum(estimate_tokens(m) for m in messages) == outcome.tokens_after


async def test_max_tokens_is_capped_by_the_model_and_reasoning_off() -> None:
    recorder = Recorder()
    faux = faux_with(recorder, reasoning=True, max_tokens=4000)
    prep = prepare_compaction(_session().get_branch(), CompactionSettings(keep_recent_tokens=250))
    assert prep is not None
    outcome = await compact(prep, faux.model(), SummaryRequestOptions(thinking_level="off"))
    assert isinstance(outcome, CompactionResult)
    assert recorder.options[0].max_tokens == 4000
    assert recorder.options[0].reasoning is None


async def test_split_turn_without_history() -> None:
    recorder = Recorder(lambda prompt: "## Original Request\nfix" if "## Original Request" in prompt else "HIST")
    faux = faux_with(recorder, count=2)
    sm = SessionManager.in_memory("/w")
    tool_turn(sm, "fix everything", [(call("bash", command=f"step {i}"), "o" * 400) for i in range(6)], "done")
    prep = prepare_compaction(sm.get_branch(), CompactionSettings(reserve_tokens=1000, keep_recent_tokens=150))
    assert prep is not None and prep.is_split_turn and prep.messages_to_summarize == []
    outcome = await compact(prep, faux.model())
    assert isinstance(outcome, CompactionResult)
    assert len(recorder.prompts) == 1  # no history request: there is no history
    assert recorder.options[0].max_tokens == 500  # floor(0.5 * reserve)
    assert "[User]: fix everything" in recorder.prompts[0]
    assert outcome.summary.startswith("No prior history.")
    assert "\n\n---\n\n**Turn Context (split turn):**\n\n## Original Request\nfix" in outcome.summary


async def test_split_turn_with_history_sums_usage() -> None:
    recorder = Recorder(lambda prompt: "PREFIX" if "## Original Request" in prompt else "HISTORY")
    faux = faux_with(recorder, count=2)
    sm = _session(2)
    tool_turn(sm, "big turn", [(call("bash", command=f"s{i}"), "o" * 400) for i in range(6)], "done")
    prep = prepare_compaction(sm.get_branch(), CompactionSettings(keep_recent_tokens=150))
    assert prep is not None and prep.is_split_turn and prep.messages_to_summarize
    outcome = await compact(prep, faux.model())
    assert isinstance(outcome, CompactionResult)
    assert outcome.summary.startswith("HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX")
    assert outcome.usage is not None
    assert len(recorder.contexts) == 2
    assert outcome.usage.output == 2 * 2  # "HISTORY" and "PREFIX": 2 tokens each at 4 chars per token


async def test_second_compaction_sends_previous_summary_with_update_instructions() -> None:
    recorder = Recorder(lambda prompt: f"SUMMARY {prompt.count('<previous-summary>')}")
    faux = faux_with(recorder, count=2)
    sm = _session(3)
    settings = CompactionSettings(keep_recent_tokens=250)
    first = await compact_branch(sm.get_branch(), faux.model(), settings)
    assert isinstance(first, CompactionResult)
    apply_compaction(sm, first)
    tool_turn(sm, "next " + "n" * 2000, [(call("write", path="new.py"), "z" * 900)], "ok")
    second = await compact_branch(sm.get_branch(), faux.model(), settings)
    assert isinstance(second, CompactionResult)
    prompt = recorder.prompts[1]
    assert f"<previous-summary>\n{first.summary}\n</previous-summary>\n\n" in prompt
    assert "Move items that are now finished" in prompt
    # The summarized span starts at the first compaction's first kept entry.
    kept_first = sm.get_entry(first.first_kept_entry_id)
    assert kept_first is not None and kept_first.type == "message"
    assert prompt.startswith("<conversation>\n[User]: request 2 ")
    # Cumulative lists: m0/m1 come from the first compaction's details, m2 from the newly summarized turn.
    assert second.details == {"readFiles": ["src/m0.py", "src/m1.py", "src/m2.py"], "modifiedFiles": ["src/main.py"]}


async def test_already_compacted_and_nothing_to_compact() -> None:
    faux = faux_with(Recorder())
    sm = SessionManager.in_memory("/w")
    sm.append_message(user("hi"))
    sm.append_message(assistant("hello"))
    assert await compact_branch(sm.get_branch(), faux.model()) == SummaryFailure(
        "nothing_to_compact", "Nothing to compact (session too small)"
    )
    sm.append_compaction("s", sm.get_branch()[0].id, 5)
    assert await compact_branch(sm.get_branch(), faux.model()) == SummaryFailure(
        "already_compacted", "Already compacted"
    )
    assert faux.state.call_count == 0


async def test_failed_summary_drops_nothing() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message([], stop_reason="error", error_message="invalid api key")])
    sm = _session()
    before = [e.id for e in sm.get_entries()]
    context_before = sm.build_session_context().messages
    outcome = await compact_branch(sm.get_branch(), faux.model(), CompactionSettings(keep_recent_tokens=250))
    assert outcome == SummaryFailure("error", "Summarization failed: invalid api key")
    assert [e.id for e in sm.get_entries()] == before
    assert sm.build_session_context().messages == context_before


async def test_failed_turn_prefix_summary_reports_its_own_prefix() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message([], stop_reason="error", error_message="bad request")])
    sm = SessionManager.in_memory("/w")
    tool_turn(sm, "fix", [(call("bash", command=f"s{i}"), "o" * 400) for i in range(6)], "done")
    outcome = await compact_branch(sm.get_branch(), faux.model(), CompactionSettings(keep_recent_tokens=150))
    assert outcome == SummaryFailure("error", "Turn prefix summarization failed: bad request")


async def test_transient_errors_are_retried_with_the_policy() -> None:
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message([], stop_reason="error", error_message="529 overloaded"),
            faux_assistant_message("## Goal\nretried"),
        ]
    )
    waits: list[int] = []
    scheduled: list[tuple[Any, ...]] = []

    async def no_sleep(delay_ms: int, signal: Any) -> None:
        waits.append(delay_ms)

    options = SummaryRequestOptions(
        retry_policy=RetryPolicy(max_retries=2, base_delay_ms=7),
        retry_callbacks=RetryCallbacks(on_retry_scheduled=lambda *args: scheduled.append(args)),
        sleep=no_sleep,
    )
    outcome = await compact_branch(
        _session().get_branch(), faux.model(), CompactionSettings(keep_recent_tokens=250), options
    )
    assert isinstance(outcome, CompactionResult)
    assert outcome.summary.startswith("## Goal\nretried")
    assert waits == [7]
    assert scheduled == [(1, 2, 7, "529 overloaded")]


async def test_abort_returns_a_failure() -> None:
    controller = AbortController()

    def abort_then_reply(context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
        controller.abort()
        return faux_assistant_message("never used")

    faux = FauxProvider()
    faux.set_responses([abort_then_reply])
    sm = _session()
    outcome = await compact_branch(
        sm.get_branch(),
        faux.model(),
        CompactionSettings(keep_recent_tokens=250),
        SummaryRequestOptions(signal=controller.signal),
    )
    assert isinstance(outcome, SummaryFailure) and outcome.reason == "aborted"


async def test_compaction_that_frees_little_is_flagged() -> None:
    faux = faux_with(Recorder(lambda prompt: "S" * 6000))
    sm = _session()
    prep = prepare_compaction(sm.get_branch(), CompactionSettings(keep_recent_tokens=250))
    assert prep is not None
    outcome = await compact(prep, faux.model(), trigger="overflow")
    assert isinstance(outcome, CompactionResult)
    assert outcome.insufficient
    assert outcome.warning is not None and "less than 10%" in outcome.warning
    assert outcome.trigger == "overflow"


async def test_result_cannot_be_applied_after_the_leaf_moved() -> None:
    faux = faux_with(Recorder())
    sm = _session()
    outcome = await compact_branch(sm.get_branch(), faux.model(), CompactionSettings(keep_recent_tokens=250))
    assert isinstance(outcome, CompactionResult)
    sm.append_message(user("typed while summarizing"))
    count = len(sm.get_entries())
    with pytest.raises(ValueError, match="changed"):
        apply_compaction(sm, outcome)
    assert len(sm.get_entries()) == count


async def test_session_stream_function_can_be_used() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message([TextContent(text="## Goal\nvia stream")])])
    options = SummaryRequestOptions(complete_fn=complete_fn_from_stream(stream_simple))
    outcome = await compact_branch(
        _session().get_branch(), faux.model(), CompactionSettings(keep_recent_tokens=250), options
    )
    assert isinstance(outcome, CompactionResult)
    assert outcome.summary.startswith("## Goal\nvia stream")


async def test_split_turn_right_after_a_compaction_keeps_the_previous_summary() -> None:
    recorder = Recorder(lambda prompt: "PREFIX" if "## Original Request" in prompt else "FIRST")
    faux = faux_with(recorder, count=2)
    sm = _session(1)
    sm.append_message(user("huge " + "h" * 800))
    for i in range(2):
        c = call("bash", command=f"s{i}")
        sm.append_message(assistant(calls=[c]))
        sm.append_message(result(c, "o" * 400))
    first = await compact_branch(sm.get_branch(), faux.model(), CompactionSettings(keep_recent_tokens=300))
    assert isinstance(first, CompactionResult)
    apply_compaction(sm, first)
    for i in range(2, 6):  # the same turn goes on after the compaction
        c = call("bash", command=f"s{i}")
        sm.append_message(assistant(calls=[c]))
        sm.append_message(result(c, "o" * 400))
    sm.append_message(assistant("done"))
    prep = prepare_compaction(sm.get_branch(), CompactionSettings(keep_recent_tokens=150))
    assert prep is not None and prep.is_split_turn and prep.messages_to_summarize == []
    assert prep.previous_summary == first.summary
    second = await compact(prep, faux.model())
    assert isinstance(second, CompactionResult)
    assert len(recorder.prompts) == 2  # first compaction + the turn prefix; the history is carried, not re-requested
    assert second.summary.startswith("FIRST\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX")
    assert second.summary.count("<read-files>") == 1


def test_extension_supplied_summary_is_marked_and_its_lists_not_carried() -> None:
    sm = _session()
    prep = prepare_compaction(sm.get_branch(), CompactionSettings(keep_recent_tokens=250))
    assert prep is not None
    supplied = result_from_summary(
        prep, "from an extension", trigger="manual", model="ext", from_hook=True, details={"readFiles": ["secret.py"]}
    )
    assert supplied.from_hook and supplied.retained_tail == prep.kept_messages
    entry = sm.get_entry(apply_compaction(sm, supplied))
    assert isinstance(entry, CompactionEntry) and entry.from_hook is True
    tool_turn(sm, "more " + "m" * 2000, [(call("read", path="next.py"), "n" * 900)], "ok")
    following = prepare_compaction(sm.get_branch(), CompactionSettings(keep_recent_tokens=250))
    assert following is not None and following.previous_summary == "from an extension"
    assert "secret.py" not in following.file_ops.details()["readFiles"]
