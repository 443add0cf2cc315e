"""Compaction and branch-summary settings (spec compaction.md §1), read from the settings manager or built directly."""

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
