"""Compaction and branch-summary settings, read from the settings manager or built directly.

The configured reserve and keep-recent sizes suit large windows; `CompactionSettings.for_window` scales
them down for small ones (the formulas are in the README, section *Local models*).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from apex_ai.retry import RetryPolicy

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000


class SettingsReader(Protocol):
    """What these settings need from `core.settings.SettingsManager`."""

    def get_bool(self, key: str, default: bool) -> bool: ...

    def get_int(self, key: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int: ...


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """`compaction.*`: `enabled` gates automatic compaction only; manual `/compact` ignores it."""

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS

    def for_window(self, context_window: int) -> CompactionSettings:
        """The sizes in effect for a model with `context_window` tokens (unchanged when it is unknown, 0).

        Reserve: at most a quarter of the window, so the threshold `window - reserve` stays above the
        system prompt; keep-recent: at most an eighth, so a compaction leaves room for new turns and frees
        more than it keeps. A 200k window keeps the defaults (16384 and 20000).
        """
        if context_window <= 0:
            return self
        return CompactionSettings(
            enabled=self.enabled,
            reserve_tokens=min(self.reserve_tokens, context_window // 4),
            keep_recent_tokens=min(self.keep_recent_tokens, context_window // 8),
        )

    @classmethod
    def from_settings(cls, settings: SettingsReader) -> CompactionSettings:
        return cls(
            enabled=settings.get_bool("compaction.enabled", True),
            reserve_tokens=settings.get_int("compaction.reserveTokens", DEFAULT_RESERVE_TOKENS, minimum=0),
            keep_recent_tokens=settings.get_int("compaction.keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS, minimum=0),
        )


@dataclass(frozen=True, slots=True)
class BranchSummarySettings:
    """`branchSummary.*`: `reserve_tokens` is subtracted from the window to size the summarizer's input."""

    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    skip_prompt: bool = False

    def reserve_for_window(self, context_window: int) -> int:
        """The reserve in effect: at most a quarter of a known window, as for compaction."""
        return min(self.reserve_tokens, context_window // 4) if context_window > 0 else self.reserve_tokens

    @classmethod
    def from_settings(cls, settings: SettingsReader) -> BranchSummarySettings:
        return cls(
            reserve_tokens=settings.get_int("branchSummary.reserveTokens", DEFAULT_RESERVE_TOKENS, minimum=0),
            skip_prompt=settings.get_bool("branchSummary.skipPrompt", False),
        )


def retry_policy_from_settings(settings: SettingsReader) -> RetryPolicy:
    """`retry.*` as the policy summarization requests are retried with."""
    return RetryPolicy(
        enabled=settings.get_bool("retry.enabled", True),
        max_retries=settings.get_int("retry.maxRetries", 3, minimum=0),
        base_delay_ms=settings.get_int("retry.baseDelayMs", 2000, minimum=0),
    )


__all__ = [
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_RESERVE_TOKENS",
    "BranchSummarySettings",
    "CompactionSettings",
    "SettingsReader",
    "retry_policy_from_settings",
]
