"""The automatic-compaction decision for replies that stop short, and requests after a compaction (issue 13)."""

from __future__ import annotations

from apex_agent.messages import AgentMessage
from apex_ai.types import AssistantMessage, Model, TextContent, Usage, UserMessage
from apex_coding_agent.compaction import CompactionSettings
from apex_coding_agent.messages import CompactionSummaryMessage
from apex_coding_agent.runtime.compaction_policy import CompactionPlan, plan_compaction, without_stale_usage

MODEL = Model(id="m", api="openai-completions", provider="local", context_window=4096, max_tokens=8192)


def _reply(stop: str, *, input: int = 0, output: int = 0, error: str | None = None) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text="partial")],
        api=MODEL.api,
        provider=MODEL.provider,
        model=MODEL.id,
        usage=Usage(input=input, output=output, total_tokens=input + output),
        stop_reason=stop,  # type: ignore[arg-type]  # literal built from the parameter
        error_message=error,
        timestamp=2,
    )


def _plan(message: AssistantMessage, messages: list[AgentMessage]) -> CompactionPlan | None:
    return plan_compaction(
        message,
        model=MODEL,
        messages=messages,
        settings=CompactionSettings(),
        is_stale=lambda m: False,
        after_run=True,
        overflow_attempted=False,
    )


def test_a_length_stop_is_never_dropped_or_retried() -> None:
    prompt = UserMessage(content="hi", timestamp=1)
    for usage in (100, 3000, 4096):  # small, over the threshold, the whole window
        reply = _reply("length", input=usage - 50, output=50)
        plan = _plan(reply, [prompt, reply])
        assert plan is None or (plan.failing is None and plan.will_retry is False)
    empty = _reply("length", input=4090, output=0)  # the window was full: compact, keep the reply
    plan = _plan(empty, [prompt, empty])
    assert plan is not None and plan.failing is None and plan.will_retry is False


def test_only_an_overflow_error_is_dropped_and_retried() -> None:
    prompt = UserMessage(content="hi", timestamp=1)
    error = _reply("error", error="Context full: 3700 of 4096 tokens used; ...")
    plan = _plan(error, [prompt, error])
    assert plan is not None and plan.failing is error and plan.will_retry is True


def test_kept_replies_lose_their_usage_in_requests_until_a_fresh_one_reports() -> None:
    summary = CompactionSummaryMessage(summary="s", tokens_before=3000, timestamp=1)
    kept = _reply("stop", input=3000, output=10)
    later = UserMessage(content="next", timestamp=3)
    messages: list[AgentMessage] = [summary, kept, later]

    sent = without_stale_usage(messages, lambda _: lambda m: m is kept)
    assert isinstance(sent[1], AssistantMessage) and sent[1].usage == Usage() and kept.usage.input == 3000

    fresh = _reply("stop", input=900, output=10)
    assert without_stale_usage([*messages, fresh], lambda _: lambda m: m is kept) == [*messages, fresh]
    assert without_stale_usage([kept, later], lambda _: lambda m: True) == [kept, later]  # no compaction
