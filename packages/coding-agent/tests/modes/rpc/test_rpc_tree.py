"""`get_tree` over RPC: pi's nested `{entry, children, label?}` nodes, and long chains that any JSON decoder reads."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from rpc_harness import RpcClient, RpcHarness

from apex_coding_agent.modes.rpc.rpc_commands import MAX_TREE_DEPTH, tree_json
from apex_coding_agent.session import SessionManager, TreeNode


def nested(nodes: list[TreeNode]) -> list[dict[str, Any]]:
    """pi's shape, built recursively (only for trees shallow enough to recurse over)."""
    out: list[dict[str, Any]] = []
    for node in nodes:
        item: dict[str, Any] = {"entry": node.entry.to_wire(), "children": nested(node.children)}
        if node.label is not None:
            item["label"] = node.label
        if node.label_timestamp is not None:
            item["labelTimestamp"] = node.label_timestamp
        out.append(item)
    return out


def rebuild(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a client does with continuation items: hang each one under the entry its `parentId` names."""
    by_id: dict[str, dict[str, Any]] = {}
    roots: list[dict[str, Any]] = []
    for item in items:
        parent_id = item["entry"].get("parentId")
        if parent_id in by_id and parent_id != item["entry"]["id"]:
            by_id[parent_id]["children"].append(item)
        else:
            roots.append(item)
        pending = [item]
        while pending:
            node = pending.pop()
            by_id[node["entry"]["id"]] = node
            pending.extend(node["children"])
    return roots


def depth_of(items: list[dict[str, Any]]) -> int:
    deepest, pending = 0, [(item, 1) for item in items]
    while pending:
        node, depth = pending.pop()
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in node["children"])
    return deepest


def branched_session() -> SessionManager:
    manager = SessionManager.in_memory("/tmp")
    first = manager.append_session_info("one")
    manager.append_session_info("two")
    manager.append_label_change(first, "start")
    manager.branch(first)
    manager.append_session_info("other branch")
    return manager


async def test_a_short_tree_has_pi_shape(rpc: RpcHarness) -> None:
    runtime = await rpc.runtime()
    runtime.session.session_manager.append_session_info("one")
    client = RpcClient()
    await client.start(runtime)
    manager = runtime.session.session_manager
    first = manager.get_entries()[0].id
    manager.append_label_change(first, "start")
    manager.branch(first)
    manager.append_session_info("other branch")
    response = await client.request({"id": "t", "type": "get_tree"})
    assert response["data"] == {"tree": nested(manager.get_tree()), "leafId": manager.get_leaf_id()}
    root = response["data"]["tree"][0]
    assert root["label"] == "start" and len(root["children"]) == 2
    assert await client.close() == 0


def test_the_cut_keeps_every_node_once_and_parents_first() -> None:
    manager = branched_session()
    for i in range(10):
        manager.append_session_info(f"chain {i}")
    items = json.loads(tree_json(manager.get_tree(), max_depth=3))
    assert depth_of(items) <= 3
    seen: set[str] = set()
    for item in items:
        parent = item["entry"]["parentId"]
        assert parent is None or parent in seen  # a continuation comes after the node it hangs under
        pending = [item]
        while pending:
            node = pending.pop()
            assert node["entry"]["id"] not in seen
            seen.add(node["entry"]["id"])
            pending.extend(node["children"])
    assert seen == {entry.id for entry in manager.get_entries()}
    assert rebuild(items) == nested(manager.get_tree())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=40), st.integers(1, 4))
def test_rebuilding_the_cut_tree_gives_the_nested_tree(parents: list[int], max_depth: int) -> None:
    # Each step branches from some earlier entry (or continues), so the trees mix chains and branches.
    manager = SessionManager.in_memory("/tmp")
    ids = [manager.append_session_info("root")]
    for step in parents:
        manager.branch(ids[step % len(ids)])
        ids.append(manager.append_session_info(f"after {step}"))
    items = json.loads(tree_json(manager.get_tree(), max_depth=max_depth))
    assert depth_of(items) <= max_depth
    assert rebuild(items) == nested(manager.get_tree())


def test_trees_within_the_depth_are_written_whole() -> None:
    manager = SessionManager.in_memory("/tmp")
    for i in range(MAX_TREE_DEPTH):
        manager.append_session_info(f"n{i}")
    items = json.loads(tree_json(manager.get_tree()))
    assert len(items) == 1 and depth_of(items) == MAX_TREE_DEPTH
