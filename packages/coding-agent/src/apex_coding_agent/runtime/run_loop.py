"""What follows an agent run until the session settles: automatic retries and automatic compactions.

A retryable failure waits out its backoff and continues the run; a compaction plan left by `agent_end` is
executed, and an overflow recovery (or, once, messages queued during a threshold compaction) continues the run.
"""

from __future__ import annotations

from collections.abc import Callable

from apex_agent.agent import Agent
from apex_ai.types import AssistantMessage
from apex_coding_agent.runtime.compaction_runner import CompactionRunner
from apex_coding_agent.runtime.retry_runner import RetryRunner


def _drop_failed_tail(agent: Agent) -> None:
    """After overflow recovery: a trailing error reply the rebuilt context restored is not resent."""
    messages = agent.state.messages
    if messages and isinstance(messages[-1], AssistantMessage) and messages[-1].stop_reason == "error":
        agent.state.messages = messages[:-1]


def _can_deliver_queued(agent: Agent) -> bool:
    messages = agent.state.messages
    return agent.has_queued_messages() and bool(messages) and messages[-1].role == "assistant"


async def continue_run(
    agent: Callable[[], Agent],
    retry: RetryRunner,
    compaction: CompactionRunner,
    *,
    disposed: Callable[[], bool],
    abort_requested: Callable[[], bool],
    on_retry_cancelled: Callable[[], None],
) -> None:
    """Run the retries and compactions the ended run asked for (each may continue it) until none is left."""
    threshold_continued = False
    while not disposed():
        if retry.failed is not None:
            failed, retry.failed = retry.failed, None
            if not await retry.wait(failed, on_retry_cancelled):
                break
            await agent().continue_()
            continue
        plan = compaction.take_plan()
        if plan is None or abort_requested():
            break
        outcome = await compaction.auto_compact(plan)
        from apex_coding_agent.compaction.compact import CompactionResult  # loaded by the compaction above

        if not isinstance(outcome, CompactionResult) or abort_requested():
            break
        if plan.will_retry:
            _drop_failed_tail(agent())
        elif threshold_continued or not _can_deliver_queued(agent()):
            break
        else:
            threshold_continued = True  # once, so messages queued during compaction are delivered
        await agent().continue_()
    retry.attempt = 0


__all__ = ["continue_run"]
