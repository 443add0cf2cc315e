"""Cumulative file-operation tracking.

Summaries lose the detail of which files the agent touched; the lists are kept exactly, carried from one
compaction (or branch summary) to the next through the entry's `details`, and appended to the summary text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apex_agent.messages import AgentMessage
from apex_ai.types import AssistantMessage, ToolCall


@dataclass(slots=True)
class FileOps:
    """Paths seen in `read`, `write` and `edit` tool calls (sets; order is decided when listing)."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_tool_call(self, call: ToolCall) -> None:
        path = call.arguments.get("path")
        if not isinstance(path, str):
            return
        if call.name == "read":
            self.read.add(path)
        elif call.name == "write":
            self.written.add(path)
        elif call.name == "edit":
            self.edited.add(path)

    def add_messages(self, messages: Iterable[AgentMessage]) -> None:
        """Collect from the tool calls of every assistant message."""
        for message in messages:
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, ToolCall):
                        self.add_tool_call(block)

    def add_details(self, details: Any) -> None:  # details: producer-defined JSON value of an entry
        """Merge a previous summary's `details` (`readFiles` -> read, `modifiedFiles` -> edited); other shapes
        are ignored."""
        if not isinstance(details, Mapping):
            return
        for key, target in (("readFiles", self.read), ("modifiedFiles", self.edited)):
            values = details.get(key)
            if isinstance(values, list):
                target.update(v for v in values if isinstance(v, str))

    def modified_files(self) -> list[str]:
        return sorted(self.edited | self.written)

    def read_files(self) -> list[str]:
        """Read-only files: read and never modified."""
        return sorted(self.read - self.edited - self.written)

    def details(self) -> dict[str, list[str]]:
        """The `details` a built-in summary entry stores (both keys, even when empty)."""
        return {"readFiles": self.read_files(), "modifiedFiles": self.modified_files()}

    def format(self) -> str:
        """Text appended to a summary: nothing when both lists are empty, else `\\n\\n` + the tagged blocks."""
        blocks: list[str] = []
        read = self.read_files()
        modified = self.modified_files()
        if read:
            blocks.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
        if modified:
            blocks.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
        return "\n\n" + "\n\n".join(blocks) if blocks else ""


_TRAILING_LISTS = re.compile(
    r"(?:\n\n<read-files>\n.*?\n</read-files>)?(?:\n\n<modified-files>\n.*?\n</modified-files>)?\Z", re.DOTALL
)


def strip_file_lists(summary: str) -> str:
    """`summary` without the file-list blocks `FileOps.format()` appended to its end."""
    return _TRAILING_LISTS.sub("", summary, count=1)


__all__ = ["FileOps", "strip_file_lists"]
