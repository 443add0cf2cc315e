"""Read-only questions about a session: its stats with the context usage, the last reply, the messages to fork from."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from apex_agent.messages import AgentMessage
from apex_ai.types import AssistantMessage, Model, TextContent, UserMessage
from apex_coding_agent.compaction.tokens import estimate_context_tokens
from apex_coding_agent.runtime.compaction_runner import compacted_without_reply
from apex_coding_agent.runtime.stats_cache import SessionStatsCache
from apex_coding_agent.session.entries import MessageEntry
from apex_coding_agent.session.session_manager import SessionManager, first_user_text
from apex_coding_agent.session.stats import ContextUsage, SessionStats


@dataclass(frozen=True)
class ForkMessage:
    """A user message one can fork from (`get_fork_messages`): its entry id and text."""

    entry_id: str
    text: str


def session_stats(
    cache: SessionStatsCache,
    session_manager: SessionManager,
    model: Model | None,
    messages: Callable[[], list[AgentMessage]],
) -> SessionStats:
    """The cached stats plus the context usage (`messages` is only read when the model has a context window)."""
    stats = cache.stats()
    if model is not None and model.context_window:
        tokens: int | None = estimate_context_tokens(messages()).tokens
        if compacted_without_reply(session_manager.get_branch_view()):
            tokens = None  # unknown until the first reply after a compaction reports usage
        percent = tokens / model.context_window * 100 if tokens is not None else None
        stats.context_usage = ContextUsage(tokens=tokens, context_window=model.context_window, percent=percent)
    return stats


def last_assistant_text(messages: Sequence[AgentMessage]) -> str | None:
    """Text of the last assistant reply (an aborted empty one is skipped), or None."""
    for message in reversed(messages):
        if not isinstance(message, AssistantMessage):
            continue
        if message.stop_reason == "aborted" and not message.content:
            continue
        text = "".join(block.text for block in message.content if isinstance(block, TextContent)).strip()
        return text or None
    return None


def fork_messages(session_manager: SessionManager) -> list[ForkMessage]:
    """Every user message entry of the session, in file order."""
    out: list[ForkMessage] = []
    for entry in session_manager.get_entries():
        if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
            text = first_user_text(entry.message)
            if text:
                out.append(ForkMessage(entry.id, text))
    return out


__all__ = ["ForkMessage", "fork_messages", "last_assistant_text", "session_stats"]
