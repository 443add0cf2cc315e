"""The `/tree` view model: session entries flattened into display rows without recursion (deep sessions).

Rows come in depth-first order with the active branch first among siblings, so a node's subtree is the contiguous
range `index .. subtree_end`. Folding hides that range; filters and the search query hide single rows. A run of
nodes between branch points is a *segment*: it starts at a root or at a child of a node with several children,
and ends at a node whose child count is not one.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

FilterMode = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
FILTER_MODES: Final[tuple[FilterMode, ...]] = ("default", "no-tools", "user-only", "labeled-only", "all")

#: Bookkeeping entries hidden by the default filter. Decision: `session_info` (names) counts as bookkeeping too, and
#: so does `system` (the session's record of the prompt and tools).
SETTINGS_KINDS: Final = frozenset(
    {"label", "custom", "model_change", "thinking_level_change", "session_info", "system"}
)


@dataclass(frozen=True)
class TreeNode:
    """One session entry as the navigator shows it (the app builds these from the session's entries).

    `kind`: `user`, `assistant`, `tool_result`, `bash`, `custom_message`, `compaction`, `branch_summary`,
    `model_change`, `thinking_level_change`, `label`, `custom`, `session_info`, `system` (others are shown as
    given).
    `text`: what to show and search (first line is displayed). `is_leaf_path`: on the active branch root→leaf.
    """

    id: str
    parent_id: str | None
    kind: str
    text: str = ""
    label: str | None = None
    timestamp: str = ""
    is_leaf_path: bool = False
    label_timestamp: str | None = None


@dataclass(slots=True)
class TreeRow:
    """A node placed in the flattened tree."""

    node: TreeNode
    indent: int
    connector: str
    gutters: tuple[tuple[int, bool], ...]
    parent_index: int
    child_count: int = 0
    subtree_end: int = 0

    @property
    def segment_start(self) -> bool:
        """A root, or a child of a branch point."""
        return self.connector != "" or self.parent_index < 0

    @property
    def segment_end(self) -> bool:
        """A branch point or a leaf."""
        return self.child_count != 1


def flatten(nodes: Iterable[TreeNode]) -> list[TreeRow]:
    """Rows in display order. Roots: no parent, self-parented, or parent unknown. Siblings ordered by timestamp,
    the one on the active path first. Iterative: depth is unbounded."""
    node_list = list(nodes)
    by_id = {node.id: node for node in node_list}
    children: dict[str, list[TreeNode]] = {}
    roots: list[TreeNode] = []
    for node in node_list:
        if node.parent_id is None or node.parent_id == node.id or node.parent_id not in by_id:
            roots.append(node)
        else:
            children.setdefault(node.parent_id, []).append(node)

    def ordered(siblings: list[TreeNode]) -> list[TreeNode]:
        # Stable sorts: timestamp order, then the active-path sibling moved to the front.
        return sorted(sorted(siblings, key=lambda n: n.timestamp), key=lambda n: not n.is_leaf_path)

    rows: list[TreeRow] = []
    # Stack items: node, indent, connector, gutters, parent row index.
    stack: list[tuple[TreeNode, int, str, tuple[tuple[int, bool], ...], int]] = [
        (root, 0, "", (), -1) for root in reversed(ordered(roots))
    ]
    while stack:
        node, indent, connector, gutters, parent_index = stack.pop()
        index = len(rows)
        kids = ordered(children.get(node.id, []))
        rows.append(TreeRow(node, indent, connector, gutters, parent_index, child_count=len(kids)))
        branching = len(kids) > 1
        child_indent = indent + 1 if branching else indent
        for position in range(len(kids) - 1, -1, -1):
            last = position == len(kids) - 1
            if branching:
                # The connector sits in the column of the new indent level; its gutter continues unless last.
                child_gutters = (*gutters, (indent, not last))
                stack.append((kids[position], child_indent, "└─ " if last else "├─ ", child_gutters, index))
            else:
                stack.append((kids[position], child_indent, "", gutters, index))
    sizes = [1] * len(rows)
    for index in range(len(rows) - 1, 0, -1):
        parent = rows[index].parent_index
        if parent >= 0:
            sizes[parent] += sizes[index]
    for index, row in enumerate(rows):
        row.subtree_end = index + sizes[index]
    return rows


def prefix(row: TreeRow) -> str:
    """The tree-drawing columns before a row's text: gutters `│`, then the connector."""
    if row.indent == 0:
        return ""
    cells = [" "] * (row.indent * 3)
    for column, show in row.gutters[:-1] if row.connector else row.gutters:
        if show and column * 3 < len(cells):
            cells[column * 3] = "│"
    text = "".join(cells)
    if row.connector:
        text = text[: (row.indent - 1) * 3] + row.connector
    return text


def passes(node: TreeNode, mode: FilterMode, label: str | None) -> bool:
    """Whether the filter mode shows `node`."""
    match mode:
        case "all":
            return True
        case "user-only":
            return node.kind == "user"
        case "labeled-only":
            return bool(label)
        case "no-tools":
            return node.kind not in SETTINGS_KINDS and node.kind != "tool_result"
        case _:
            return node.kind not in SETTINGS_KINDS


def visible_rows(
    rows: Sequence[TreeRow],
    *,
    mode: FilterMode,
    query: str,
    folded: set[str],
    labels: dict[str, str],
    leaf_id: str | None,
    search_text: dict[str, str],
) -> list[int]:
    """Indexes of the rows on display, in order. Folded subtrees are skipped whole; the current leaf always passes
    the filter mode (so the position stays visible) but not the search query."""
    tokens = query.lower().split()
    shown: list[int] = []
    skip_until = 0
    for index, row in enumerate(rows):
        if index < skip_until:
            continue
        node = row.node
        if row.node.id in folded:
            skip_until = row.subtree_end
        if node.id != leaf_id and not passes(node, mode, labels.get(node.id)):
            continue
        if tokens:
            haystack = search_text.get(node.id)
            if haystack is None:
                haystack = f"{labels.get(node.id, '')} {node.kind} {node.text}".lower()
                search_text[node.id] = haystack
            if not all(token in haystack for token in tokens):
                continue
        shown.append(index)
    return shown


def nearest(shown: Sequence[int], row_index: int) -> int:
    """Position in `shown` of `row_index`, else of the closest shown row before it, else 0."""
    position = bisect.bisect_right(shown, row_index) - 1
    return max(0, position)
