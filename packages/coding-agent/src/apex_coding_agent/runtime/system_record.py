"""The session's record of what the model is told: system messages in the session file.

A new session starts with one system message declaring the prompt and the tools. When either changes
(`/reload`, an extension adding or removing a tool, `set_active_tools`, changed skills or context files, a
resumed session whose freshly built prompt differs), one delta system message is appended at the next turn
boundary — history is never rewritten. Replaying a branch's system messages in order (`current_system_message`)
gives the prompt and tools its next request is sent with. The request itself is still built from the session's
live prompt and tools, so the prefix a provider caches stays the same bytes; the record only says what it was.

Sessions written without system messages (the original product's files, or ours from before) that already hold
conversation when they are opened are left as they are: a leading declaration cannot be added after the fact.
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
from apex_coding_agent.session.records import Record
from apex_coding_agent.session.session_manager import SessionManager

# Entry types that hold conversation: a file with some of them and no system message predates the record.
_CONVERSATION_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})
# Every line holding a system message has this; the few other lines with it are parsed to tell.
_SYSTEM_ROLE = b'"system"'


def _system_message(record: Record) -> SystemMessage | None:
    if record.type != "message" or not (record.is_parsed or _SYSTEM_ROLE in record.raw):
        return None
    entry = record.entry
    return entry.message if isinstance(entry, MessageEntry) and isinstance(entry.message, SystemMessage) else None


def predates_the_record(manager: SessionManager) -> bool:
    """The session holds conversation but no system message anywhere (pi's files, ours from before)."""
    conversation = False
    for record in manager.iter_records():
        if _system_message(record) is not None:
            return False
        conversation = conversation or record.type in _CONVERSATION_TYPES
    return conversation


class SystemRecord:
    """What the active branch's system messages declare, kept in step with the entries this session appends.

    Whether the session keeps a record is decided when it is opened (`predates_the_record`): a `!` command or an
    extension's message written before the first turn of a new session does not stop it. `invalidate()` after
    anything that moves the leaf to another branch or replaces the session; the next `delta()` then replays the
    branch once (reading back only the lines that can hold a system message).
    """

    def __init__(self, manager: SessionManager) -> None:
        self._manager = manager
        self.session_id = manager.session_id
        self._legacy = predates_the_record(manager)
        self._known = False
        self._state: SystemMessage | None = None

    def invalidate(self, manager: SessionManager | None = None) -> None:
        if manager is not None:
            self._manager = manager
        if self._manager.session_id != self.session_id:  # another session in the same manager
            self.session_id = self._manager.session_id
            self._legacy = predates_the_record(self._manager)
        self._known = False

    def _load(self) -> None:
        systems = [m for m in map(_system_message, self._manager.get_branch_records()) if m is not None]
        self._state = current_system_message(systems)
        self._known = True

    @property
    def state(self) -> SystemMessage | None:
        """The replayed declaration of the active branch (None when it has no system message)."""
        if not self._known:
            self._load()
        return self._state

    def delta(self, prompt: str, tools: Sequence[Tool], now: int) -> SystemMessage | None:
        """The system message to append so that replay gives `prompt` and `tools`; None when it already does
        (or when the session predates system messages)."""
        if self._legacy:
            return None
        recorded = self.state
        if recorded is None:
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


__all__ = ["SystemRecord", "predates_the_record"]
