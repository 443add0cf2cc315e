"""The session's record of what the model is told: system messages in the session file.

A new session starts with one system message declaring the prompt and the tools. When either changes
(`/reload`, an extension adding or removing a tool, `set_active_tools`, changed skills or context files, a
resumed session whose freshly built prompt differs), one delta system message is appended at the next turn
boundary — history is never rewritten. Replaying a branch's system messages in order (`current_system_message`)
gives the prompt and tools its next request is sent with. The request itself is still built from the session's
live prompt and tools, so the prefix a provider caches stays the same bytes; the record only says what it was.

Sessions written without system messages (the original product's files, or ours from before) that already hold
messages are left as they are: a leading declaration cannot be added after the fact.
See docs/sessions.md ("System messages").
"""

from __future__ import annotations

from collections.abc import Sequence

from apex_ai.transcript import (
    current_system_message,
    initial_system_message,
    render_system_prompt,
    tool_state_changes,
)
from apex_ai.types import SystemMessage, Tool
from apex_coding_agent.session.entries import MessageEntry
from apex_coding_agent.session.session_manager import SessionManager

# Entry types that make a session "already started" (a leading declaration would no longer lead).
_CONVERSATION_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})


class SystemRecord:
    """What the active branch's system messages declare, kept in step with the entries this session appends.

    `invalidate()` after anything that moves the leaf to another branch or replaces the session; the next
    `delta()` then replays the branch once (reading back only the lines that can hold a system message).
    """

    def __init__(self, manager: SessionManager) -> None:
        self._manager = manager
        self.session_id = manager.session_id
        self._known = False
        self._state: SystemMessage | None = None
        self._started = False

    def invalidate(self, manager: SessionManager | None = None) -> None:
        if manager is not None:
            self._manager = manager
        self.session_id = self._manager.session_id
        self._known = False

    def _load(self) -> None:
        systems: list[SystemMessage] = []
        started = False
        for record in self._manager.get_branch_records():
            if record.type not in _CONVERSATION_TYPES:
                continue
            if record.type == "message" and (record.is_parsed or b'"system"' in record.raw):
                entry = record.entry
                if isinstance(entry, MessageEntry) and isinstance(entry.message, SystemMessage):
                    systems.append(entry.message)
                    continue
            started = True
        self._state = current_system_message(systems)
        self._started = started or self._state is not None
        self._known = True

    @property
    def state(self) -> SystemMessage | None:
        """The replayed declaration of the active branch (None when it has no system message)."""
        if not self._known:
            self._load()
        return self._state

    def delta(self, prompt: str, tools: Sequence[Tool], now: int) -> SystemMessage | None:
        """The system message to append so that replay gives `prompt` and `tools`; None when it already does
        (or when the branch predates system messages)."""
        recorded = self.state
        if recorded is None:
            if self._started:
                return None
            # Asked at a turn boundary: the turn's messages follow, so a later declaration would no longer lead.
            self._started = True
            initial = initial_system_message(prompt, list(tools))
            return initial.model_copy(update={"timestamp": now}) if initial is not None else None
        if render_system_prompt(recorded) != prompt:
            return SystemMessage(content=prompt, tools_added=list(tools) or None, replace=True, timestamp=now)
        changes = tool_state_changes(recorded.tools_added or [], list(tools))
        if not changes.tools_added and not changes.tools_removed:
            return None
        return SystemMessage(
            tools_added=changes.tools_added or None, tools_removed=changes.tools_removed or None, timestamp=now
        )

    def appended(self, message: SystemMessage) -> None:
        """`message` was appended to the active branch."""
        previous = self.state
        self._state = current_system_message([m for m in (previous, message) if m is not None])
        self._started = True


__all__ = ["SystemRecord"]
