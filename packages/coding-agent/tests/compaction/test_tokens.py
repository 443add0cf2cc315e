"""Token accounting and the threshold rule (compaction.md §2, §3; acceptance 1-2)."""

import pytest
from compaction_helpers import assistant, call, user, user_with_image

from apex_ai.overflow import MIN_OUTPUT_TOKENS, output_margin
from apex_ai.types import Usage
from apex_coding_agent.compaction import (
    CompactionSettings,
    context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    should_compact,
)
from apex_coding_agent.compaction.settings import BranchSummarySettings, retry_policy_from_settings
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.messages import BashExecutionMessage, CompactionSummaryMessage, CustomMessage


def test_should_compact_threshold_is_window_minus_reserve() -> None:
    settings = CompactionSettings()
    assert not should_compact(183616, 200000, settings)
    assert should_compact(183617, 200000, settings)
    disabled = CompactionSettings(enabled=False)
    assert not should_compact(10**9, 200000, disabled)
    assert not should_compact(10**9, 0, settings)  # unknown window


@pytest.mark.parametrize("window", [2048, 4096, 8192, 16384, 32768, 65536, 131072, 200000])
def test_reserve_and_keep_recent_scale_with_the_window(window: int) -> None:
    effective = CompactionSettings().for_window(window)
    assert effective.reserve_tokens == min(16384, window // 4)
    assert effective.keep_recent_tokens == min(20000, window // 8)
    # The threshold leaves room for the output margin and a useful reply: compaction comes before "context full".
    assert effective.reserve_tokens >= output_margin(window) + MIN_OUTPUT_TOKENS
    # What a compaction keeps (plus a summary of at most 0.8 * reserve) is well under the threshold.
    assert effective.keep_recent_tokens + 0.8 * effective.reserve_tokens < 0.5 * (window - effective.reserve_tokens)
    # Below ~17.7k the configured reserve alone would put the threshold near zero: every turn would compact.
    assert should_compact(window - effective.reserve_tokens + 1, window, CompactionSettings())
    assert not should_compact(window - effective.reserve_tokens, window, CompactionSettings())


def test_for_window_keeps_smaller_settings_and_unknown_windows() -> None:
    small = CompactionSettings(reserve_tokens=100, keep_recent_tokens=50)
    assert small.for_window(4096) == small
    assert CompactionSettings().for_window(0) == CompactionSettings()


def test_settings_defaults_and_reading_from_the_settings_manager() -> None:
    assert CompactionSettings() == CompactionSettings(enabled=True, reserve_tokens=16384, keep_recent_tokens=20000)
    manager = SettingsManager.in_memory(
        {
            "compaction": {"enabled": False, "reserveTokens": 1000, "keepRecentTokens": 300},
            "branchSummary": {"reserveTokens": 500, "skipPrompt": True},
            "retry": {"maxRetries": 5, "baseDelayMs": 10},
        }
    )
    assert CompactionSettings.from_settings(manager) == CompactionSettings(False, 1000, 300)
    assert BranchSummarySettings.from_settings(manager) == BranchSummarySettings(500, True)
    policy = retry_policy_from_settings(manager)
    assert (policy.enabled, policy.max_retries, policy.base_delay_ms) == (True, 5, 10)
    assert CompactionSettings.from_settings(SettingsManager.in_memory({})) == CompactionSettings()


def test_user_message_with_image_counts_4800_chars() -> None:
    assert estimate_tokens(user_with_image("0123456789")) == 1203


def test_estimates_per_role() -> None:
    reply = assistant("abcd", thinking="xyzw", calls=[call("read", path="é.py")])
    # text 4 + thinking 4 + "read" 4 + '{"path":"é.py"}' 15 (non-ASCII kept, compact separators) = 27
    assert estimate_tokens(reply) == 7
    bash = BashExecutionMessage(command="ls", output="a\nb", timestamp=0)
    assert estimate_tokens(bash) == 2  # 2 + 3 chars
    custom = CustomMessage(custom_type="note", content="12345678", timestamp=0)
    assert estimate_tokens(custom) == 2
    summary = CompactionSummaryMessage(summary="x" * 9, tokens_before=5, timestamp=0)
    assert estimate_tokens(summary) == 3


def test_context_tokens_prefers_total_then_sum() -> None:
    assert context_tokens(Usage(input=1, output=2, cache_read=3, cache_write=4, total_tokens=99)) == 99
    assert context_tokens(Usage(input=1, output=2, cache_read=3, cache_write=4)) == 10


def test_context_estimate_anchors_on_last_valid_usage() -> None:
    messages = [
        user("a" * 40),
        assistant("ok", total=500),
        user("b" * 40),
        assistant("failed", total=900, stop_reason="error"),
        user("c" * 8),
    ]
    estimate = estimate_context_tokens(messages)
    trailing = sum(estimate_tokens(m) for m in messages[2:])
    assert (estimate.usage_tokens, estimate.last_usage_index) == (500, 1)
    assert estimate.trailing_tokens == trailing
    assert estimate.tokens == 500 + trailing


def test_context_estimate_without_usage_sums_all_messages() -> None:
    messages = [user("a" * 40), assistant("x", total=0), assistant("aborted", total=70, stop_reason="aborted")]
    estimate = estimate_context_tokens(messages)
    assert estimate.last_usage_index is None
    assert estimate.tokens == sum(estimate_tokens(m) for m in messages) == 10 + 1 + 2
