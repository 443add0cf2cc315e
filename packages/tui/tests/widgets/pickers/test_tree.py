"""Tree navigator: drawing, filters, search, fold/unfold, labels, copy, selection with the summary question."""

from urwid.testing import press, render_text

from apex_tui.keybindings import KeybindingManager
from apex_tui.widgets.pickers import TreeNavigator, TreeNode, TreeSelection
from apex_tui.widgets.pickers._tree_model import flatten

from .conftest import Signals

SIZE = (50,)


def _nodes() -> list[TreeNode]:
    return [
        TreeNode("r", None, "user", "hello", timestamp="1", is_leaf_path=True),
        TreeNode("mc", "r", "model_change", "claude", timestamp="1b", is_leaf_path=True),
        TreeNode("a1", "mc", "assistant", "hi there\nsecond line", timestamp="2", is_leaf_path=True),
        TreeNode("u2", "a1", "user", "first branch", timestamp="3"),
        TreeNode("a2", "u2", "assistant", "reply one", timestamp="3b", label="keep", label_timestamp="10:42"),
        TreeNode("u3", "a1", "user", "second branch", timestamp="4", is_leaf_path=True),
        TreeNode("t3", "u3", "tool_result", "output", timestamp="5", is_leaf_path=True),
        TreeNode("a3", "t3", "assistant", "done", timestamp="6", is_leaf_path=True),
    ]


def _tree(keymap: KeybindingManager, **kwargs: object) -> TreeNavigator:
    return TreeNavigator(_nodes(), keymap, **kwargs)  # type: ignore[arg-type]


def _selected(tree: TreeNavigator) -> str:
    node = tree.selected()
    assert node is not None
    return node.id


def test_renders_branches_active_path_first_with_leaf_highlighted(keymap: KeybindingManager) -> None:
    tree = _tree(keymap)
    assert render_text(tree, SIZE, strip=True) == [
        "── Session tree ──────────────────────────────────",
        "> type to search",
        "  • user: hello",
        "  • assistant: hi there",
        "  ├─ • user: second branch",
        "  │  • tool: output",
        "› │  • assistant: done ← current",
        "  └─   user: first branch",
        "       [keep] assistant: reply one",
        "  (5/7)",
        "──────────────────────────────────────────────────",
    ]
    assert _selected(tree) == "a3"


def test_filter_modes_toggle_and_cycle(keymap: KeybindingManager) -> None:
    tree = _tree(keymap)
    shown = lambda: [tree.tree_rows[i].node.id for i in tree.shown]  # noqa: E731
    assert "mc" not in shown()
    press(tree, SIZE, "ctrl a")
    assert tree.filter_mode == "all" and "mc" in shown()
    assert render_text(tree, SIZE, strip=True)[-2] == "  (6/8) [all]"
    press(tree, SIZE, "ctrl a")
    assert tree.filter_mode == "default"
    press(tree, SIZE, "ctrl t")
    assert "t3" not in shown()
    press(tree, SIZE, "ctrl u")
    # The current leaf always stays visible so the position is never lost.
    assert shown() == ["r", "u3", "a3", "u2"]
    press(tree, SIZE, "ctrl l")
    assert shown() == ["a3", "a2"]
    press(tree, SIZE, "ctrl d")
    assert tree.filter_mode == "default"
    press(tree, SIZE, "ctrl o", "ctrl o")
    assert tree.filter_mode == "user-only"
    press(tree, SIZE, "ctrl O", "ctrl O", "ctrl O")
    assert tree.filter_mode == "all"


def test_search_and_escape_clears_query_before_closing(keymap: KeybindingManager) -> None:
    tree = _tree(keymap)
    signals = Signals(tree, "cancel")
    press(tree, SIZE, "b", "r", "a", "n")
    assert [tree.tree_rows[i].node.id for i in tree.shown] == ["u3", "u2"]
    assert render_text(tree, SIZE, strip=True)[1] == "> bran"
    press(tree, SIZE, "backspace")
    assert tree.query.text == "bra"
    press(tree, SIZE, "esc")
    assert tree.query.text == "" and signals.events == []
    press(tree, SIZE, "esc")
    assert signals.events == [("cancel", None)]


def test_moves_and_pages(keymap: KeybindingManager) -> None:
    tree = _tree(keymap, max_visible=2)
    press(tree, SIZE, "down")
    assert _selected(tree) == "u2"
    press(tree, SIZE, "down", "down")
    assert _selected(tree) == "r"
    press(tree, SIZE, "right")
    assert _selected(tree) == "u3"
    press(tree, SIZE, "page down", "page down")
    assert _selected(tree) == "a2"
    press(tree, SIZE, "left")
    assert _selected(tree) == "a3"


def test_fold_unfold_and_segment_jumps(keymap: KeybindingManager) -> None:
    tree = _tree(keymap)
    press(tree, SIZE, "ctrl left")  # a3 is inside a segment: jump to its start
    assert _selected(tree) == "u3"
    press(tree, SIZE, "ctrl left")  # a segment start with children: fold it
    assert "u3" in tree.folded
    rows = render_text(tree, SIZE, strip=True)
    assert "› ├─ • ▸ user: second branch (+2)" in rows
    assert not any("tool: output" in row for row in rows)
    press(tree, SIZE, "ctrl right")  # unfold
    assert not tree.folded
    press(tree, SIZE, "ctrl right")  # next segment start or branch end below
    assert _selected(tree) == "a3"
    press(tree, SIZE, "meta right")
    assert _selected(tree) == "u2"
    press(tree, SIZE, "meta left", "meta left")  # u2 is a start with a child: fold; then up to the previous start
    assert tree.folded == {"u2"}
    press(tree, SIZE, "meta left")
    assert _selected(tree) == "u3"


def test_label_edit_timestamps_and_copy(keymap: KeybindingManager) -> None:
    tree = _tree(keymap)
    signals = Signals(tree, "label_edit", "copy")
    press(tree, SIZE, "L", "ctrl x")
    assert signals.events == [("label_edit", ("a3", None)), ("copy", ("a3", "done"))]
    tree.set_label("a3", "final", "11:00")
    press(tree, SIZE, "T")
    rows = render_text(tree, SIZE, strip=True)
    assert "› │  • [final 11:00] assistant: done ← current" in rows
    assert "       [keep 10:42] assistant: reply one" in rows
    tree.set_label("a3", None)
    assert "› │  • assistant: done ← current" in render_text(tree, SIZE, strip=True)


def test_enter_asks_summary_question_and_emits_choice(keymap: KeybindingManager) -> None:
    tree = _tree(keymap)
    signals = Signals(tree, "select")
    tree.select_id("u2")
    press(tree, SIZE, "enter")
    assert render_text(tree, SIZE, strip=True)[:4] == [
        "── Summarize branch? ─────────────────────────────",
        "› No summary",
        "  Summarize",
        "  Summarize with custom prompt",
    ]
    press(tree, SIZE, "esc")  # back to the tree, nothing chosen
    assert tree.prompt is None and signals.events == []
    press(tree, SIZE, "enter", "down", "down", "enter")
    assert signals.events == [("select", TreeSelection("u2", "custom"))]
    assert render_text(tree, SIZE, strip=True)[0].startswith("── Session tree")


def test_enter_on_current_leaf_and_skip_prompt(keymap: KeybindingManager) -> None:
    tree = _tree(keymap, skip_summary_prompt=True)
    signals = Signals(tree, "select")
    press(tree, SIZE, "enter", "up", "enter")
    assert signals.events == [
        ("select", TreeSelection("a3", "none", is_current_leaf=True)),
        ("select", TreeSelection("t3", "none")),
    ]


def test_orphans_and_multiple_roots_are_roots() -> None:
    rows = flatten([TreeNode("a", None, "user"), TreeNode("b", "missing", "user"), TreeNode("c", "c", "user")])
    assert [(row.node.id, row.indent, row.parent_index) for row in rows] == [("a", 0, -1), ("b", 0, -1), ("c", 0, -1)]


def test_ten_thousand_deep_session_builds_one_window(keymap: KeybindingManager) -> None:
    depth = 10_000
    nodes = [
        TreeNode(
            f"n{i}",
            f"n{i - 1}" if i else None,
            "user" if i % 2 == 0 else "assistant",
            f"message {i}",
            timestamp=f"{i:06d}",
            is_leaf_path=True,
        )
        for i in range(depth)
    ]
    nodes.append(TreeNode("side", "n5000", "user", "side branch", timestamp="005001"))
    tree = TreeNavigator(nodes, keymap, max_visible=20)
    assert len(tree.tree_rows) == depth + 1
    assert tree.leaf_id == "n9999" and _selected(tree) == "n9999"
    rows = render_text(tree, (60,), strip=True)
    assert tree.rows_built == 20
    assert len(rows) == 2 + 20 + 2
    assert "› │  • assistant: message 9999 ← current" in rows
    press(tree, (60,), "ctrl left")  # jump to the start of the active segment below the branch
    assert _selected(tree) == "n5001"
    press(tree, (60,), "ctrl left")  # fold its 4999-deep subtree
    assert len(tree.shown) == 5001 + 1 + 1
    render_text(tree, (60,))
    assert tree.rows_built == 20


def test_nested_branches_draw_gutters(keymap: KeybindingManager) -> None:
    nodes = [
        TreeNode("r", None, "user", "root", timestamp="0", is_leaf_path=True),
        TreeNode("a", "r", "assistant", "A", timestamp="1", is_leaf_path=True),
        TreeNode("b", "r", "assistant", "B", timestamp="2"),
        TreeNode("a1", "a", "user", "A1", timestamp="3", is_leaf_path=True),
        TreeNode("a2", "a", "user", "A2", timestamp="4"),
        TreeNode("a1x", "a1", "assistant", "A1x", timestamp="5", is_leaf_path=True),
        TreeNode("b1", "b", "user", "B1", timestamp="6"),
    ]
    assert render_text(TreeNavigator(nodes, keymap), (40,), strip=True)[2:9] == [
        "  • user: root",
        "  ├─ • assistant: A",
        "  │  ├─ • user: A1",
        "› │  │  • assistant: A1x ← current",
        "  │  └─   user: A2",
        "  └─   assistant: B",
        "       user: B1",
    ]
