"""When the session compacts on its own: a pure decision over the last assistant reply.

`plan_compaction` is asked (a) after each agent run that was not retried, with that run's last assistant reply, and
(b) before a new user prompt, with the last assistant reply in the transcript (aborted ones included). It answers
with a `CompactionPlan` or None; the session executes the plan (events, lock, continuation).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from apex_agent.messages import AgentMessage
from apex_ai.overflow import is_context_overflow
from apex_ai.types import AssistantMessage, Model, Usage
from apex_coding_agent.compaction.path import latest_compaction_index
from apex_coding_agent.compaction.settings import CompactionSettings
from apex_coding_agent.compaction.tokens import context_tokens, estimate_context_tokens, has_valid_usage, should_compact
from apex_coding_agent.messages import CompactionSummaryMessage
from apex_coding_agent.session.entries import EntryBase, MessageEntry

OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
FAILURE_PREFIX = {
    "manual": "Compaction failed: ",
    "threshold": "Auto-compaction failed: ",
    "overflow": "Context overflow recovery failed: ",
}

AutoReason = Literal["threshold", "overflow"]


@dataclass(frozen=True)
class CompactionPlan:
    """What to do: compact for `reason`; `will_retry` continues the run afterwards (overflow recovery).

    `failing` is the error reply to take out of the agent's transcript while compacting (it stays in the file,
    and goes back into the transcript when the compaction fails). `recovery_failed` means recovery was already
    tried in this run: only the fixed failure is reported, nothing is compacted. `tokens` is the estimated
    context size when the plan was made.
    """

    reason: AutoReason
    will_retry: bool = False
    failing: AssistantMessage | None = None
    recovery_failed: bool = False
    tokens: int = 0


def stale_test(branch: Sequence[EntryBase]) -> Callable[[AgentMessage], bool]:
    """A test for "this message predates the branch's latest compaction" (its usage describes the old context).

    Decided by position, not by timestamps (a retry can start within the compaction's millisecond): a message
    is fresh when it is stored after the latest compaction entry.
    """
    last = latest_compaction_index(branch)
    if last < 0:
        return lambda message: False
    after = [entry.message for entry in branch[last + 1 :] if isinstance(entry, MessageEntry)]

    def stale(message: AgentMessage) -> bool:
        return not any(message is stored or message == stored for stored in reversed(after))

    return stale


def plan_compaction(
    message: AssistantMessage | None,
    *,
    model: Model | None,
    messages: Sequence[AgentMessage],
    settings: CompactionSettings,
    is_stale: Callable[[AgentMessage], bool],
    after_run: bool,
    overflow_attempted: bool,
) -> CompactionPlan | None:
    """Decide for `message`.

    Only an `error` reply whose text says the context overflowed (a provider's wording, or the `Context full`
    refusal of a request that could not answer) is taken out of the transcript and retried. A `length` stop
    is an answer cut short, never dropped: like a `stop` beyond the window it only makes the next request
    need room, so it compacts without a retry.
    """
    if message is None or model is None or not settings.enabled:
        return None
    if after_run and message.stop_reason == "aborted":
        return None
    if is_stale(message):
        return None  # its usage describes the context before the latest compaction
    window = model.context_window or 0
    same = message.provider == model.provider and message.model == model.id
    if same and is_context_overflow(message, window):
        tokens = _estimate(messages, is_stale)
        if message.stop_reason != "error":
            return CompactionPlan("overflow", tokens=tokens)  # the reply is fine, the next request is not
        if not after_run:
            return CompactionPlan("overflow", failing=message, tokens=tokens)  # the new prompt is the retry
        if overflow_attempted:
            return CompactionPlan("overflow", recovery_failed=True)
        return CompactionPlan("overflow", will_retry=True, failing=message, tokens=tokens)
    tokens = context_tokens(message.usage)
    if message.stop_reason == "error" or tokens == 0:
        estimate = estimate_context_tokens(messages)
        if estimate.last_usage_index is None:
            return None
        if is_stale(messages[estimate.last_usage_index]):
            return None
        tokens = estimate.tokens
    if not should_compact(tokens, window, settings):
        return None
    return CompactionPlan("threshold", tokens=tokens)


def without_stale_usage(
    messages: list[AgentMessage], stale: Callable[[Sequence[AgentMessage]], Callable[[AgentMessage], bool]]
) -> list[AgentMessage]:
    """`messages` for a request, the usage of replies kept from before the latest compaction zeroed.

    A kept reply reports the size of the context it was answered in, before the compaction shrank it; the
    provider layer sizes the output cap from the newest usage report, so it would think the context still full.
    Kept replies precede every newer one, so only the newest reply with usage is tested (`stale(messages)`
    builds the test, and only when a compaction summary is present).
    """
    if not any(isinstance(m, CompactionSummaryMessage) for m in messages):
        return messages
    newest = next(
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if isinstance(messages[i], AssistantMessage) and has_valid_usage(messages[i])
        ),
        None,
    )
    if newest is None or not stale(messages)(messages[newest]):
        return messages
    return [
        m.model_copy(update={"usage": Usage()}) if index <= newest and isinstance(m, AssistantMessage) else m
        for index, m in enumerate(messages)
    ]


def _estimate(messages: Sequence[AgentMessage], is_stale: Callable[[AgentMessage], bool]) -> int:
    estimate = estimate_context_tokens(messages)
    if estimate.last_usage_index is not None and is_stale(messages[estimate.last_usage_index]):
        return estimate.trailing_tokens
    return estimate.tokens


@dataclass
class ThresholdPause:
    """Automatic compaction after one that did not help (nothing to compact, a failure, or < 10% freed).

    Compacting again only helps once new material arrived, so the first automatic compaction due afterwards
    sets the `baseline` (the context as the unhelpful compaction left it) and is skipped; later ones are
    skipped until the context grew by `MIN_GROWTH` over it.
    """

    baseline: int | None = None

    MIN_GROWTH = 0.10

    def allows(self, tokens: int) -> bool:
        if self.baseline is None:
            self.baseline = tokens
            return False
        return tokens > self.baseline * (1 + self.MIN_GROWTH)


__all__ = [
    "FAILURE_PREFIX",
    "OVERFLOW_RECOVERY_FAILED",
    "AutoReason",
    "CompactionPlan",
    "ThresholdPause",
    "stale_test",
    "plan_compaction",
    "without_stale_usage",
]
