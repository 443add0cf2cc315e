"""The entry tree of a session as nodes (`SessionManager.get_tree`), and the text of a user message."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from apex_agent.messages import AgentMessage
from apex_ai.types import TextContent, UserMessage
from apex_coding_agent.session.entries import EntryBase
from apex_coding_agent.session.records import Record


@dataclass(slots=True)
class TreeNode:
    """A node of `get_tree()`: the entry, its children (timestamp order) and its label."""

    entry: EntryBase
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None
    label_timestamp: str | None = None


def build_tree(records: Sequence[Record], labels: Mapping[str, tuple[str, str]]) -> list[TreeNode]:
    """Roots (null parent, self parent or orphan) with children in timestamp order; iterative, any depth.

    `labels` maps an entry id to its (label, label timestamp)."""
    nodes: dict[str, TreeNode] = {}
    for record in records:
        label = labels.get(record.id)
        nodes[record.id] = TreeNode(
            record.entry, label=label[0] if label else None, label_timestamp=label[1] if label else None
        )
    roots: list[TreeNode] = []
    for record in records:
        node = nodes[record.id]
        parent = nodes.get(record.parent_id) if record.parent_id not in (None, record.id) else None
        (parent.children if parent is not None else roots).append(node)
    for node in nodes.values():
        if len(node.children) > 1:
            node.children.sort(key=lambda n: n.entry.timestamp)
    roots.sort(key=lambda n: n.entry.timestamp)
    return roots


def first_user_text(message: AgentMessage) -> str | None:
    """The text of a user message (text blocks joined by a space), else None."""
    if not isinstance(message, UserMessage):
        return None
    if isinstance(message.content, str):
        return message.content
    return " ".join(block.text for block in message.content if isinstance(block, TextContent))


__all__ = ["TreeNode", "build_tree", "first_user_text"]
