"""`/tree`, `/fork`, `/clone` and the double-Escape action through the real app (tui.md §7, §9; acceptance 12)."""

from pathlib import Path

from app_helpers import AppHarness

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_ai.types import AssistantMessage
from apex_coding_agent.session import BranchSummaryEntry
from apex_tui.app._tree_flow import entry_node, tree_nodes
from apex_tui.widgets.pickers import InputDialog, SelectList, TreeNavigator


async def _two_turns(harness: AppHarness, **start: object) -> None:
    harness.script(faux_assistant_message("reply one"), faux_assistant_message("reply two"))
    await harness.start(**start)  # type: ignore[arg-type]
    for prompt in ("first question", "second question"):
        harness.type(prompt)
        harness.press("enter")
        await harness.settle()


async def test_tree_enter_on_an_earlier_user_message_puts_its_text_in_the_editor(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await _two_turns(harness)
    app = harness.running
    harness.type("/tree")
    harness.press("enter")
    navigator = app.slot.original_widget
    assert isinstance(navigator, TreeNavigator)
    assert "first question" in harness.text() and "reply two" in harness.text()
    harness.press("up", "up", "up")
    harness.press("enter")
    assert "Summarize branch?" in harness.text()
    harness.press("enter")  # No summary
    await harness.settle()
    assert app.slot.original_widget is app.editor
    assert app.editor.text == "first question"
    assert "Navigated to selected point" in harness.text()
    assert "reply two" not in harness.text()  # the transcript shows the new (empty) path
    assert app.session.messages == []


async def test_tree_summarize_writes_a_branch_summary_and_current_leaf_is_reported(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await _two_turns(harness)
    app = harness.running
    harness.script(faux_assistant_message("the summary of the abandoned branch"))
    harness.type("/tree")
    harness.press("enter")
    harness.press("enter")  # the current leaf
    assert "Already at this point" in harness.text()
    harness.type("/tree")
    harness.press("enter")
    harness.press("up")  # second question
    harness.press("enter", "down", "enter")  # Summarize
    await harness.settle()
    assert app.editor.text == "second question"
    summaries = [e for e in app.session.session_manager.get_entries() if isinstance(e, BranchSummaryEntry)]
    assert len(summaries) == 1 and "the summary of the abandoned branch" in summaries[0].summary
    assert "Navigated to selected point" in harness.text()


async def test_tree_label_edit_goes_through_an_input_dialog_and_back(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await _two_turns(harness, settings={"branchSummary": {"skipPrompt": True}})
    app = harness.running
    harness.type("/tree")
    harness.press("enter")
    navigator = app.slot.original_widget
    assert isinstance(navigator, TreeNavigator)
    leaf = app.session.session_manager.get_leaf_id()
    harness.press("L")
    assert isinstance(app.slot.original_widget, InputDialog)
    harness.type("checkpoint")
    harness.press("enter")
    assert app.slot.original_widget is navigator
    assert leaf is not None and app.session.session_manager.get_label(leaf) == "checkpoint"
    assert "[checkpoint]" in harness.text()
    harness.press("up", "enter")  # skipPrompt: no question
    await harness.settle()
    assert app.editor.text == "second question"


async def test_double_escape_opens_the_tree_or_the_fork_picker_or_nothing(tmp_path: Path) -> None:
    for action, widget in (("tree", TreeNavigator), ("fork", SelectList), ("none", None)):
        (tmp_path / action).mkdir()
        harness = AppHarness(tmp_path / action)
        await _two_turns(harness, settings={"doubleEscapeAction": action})
        app = harness.running
        harness.press("esc")
        harness.clock.now += 0.2
        harness.press("esc")
        if widget is None:
            assert app.slot.original_widget is app.editor
        else:
            assert isinstance(app.slot.original_widget, widget)
        harness.press("esc")
        harness.clock.now += 2
        harness.press("esc")  # a lone press later does nothing
        assert app.slot.original_widget is app.editor


async def test_fork_from_an_earlier_message_and_clone(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await _two_turns(harness)
    app = harness.running
    old_id = app.session.session_id
    harness.type("/fork")
    harness.press("enter")
    assert "Fork from message" in harness.text()
    harness.press("up", "enter")  # newest preselected; up → the first question
    await harness.settle()
    assert app.session.session_id != old_id
    assert app.editor.text == "first question"
    assert "Forked to new session" in harness.text()
    assert app.session.messages == []
    app.editor.set_text("")
    harness.type("/clone")
    harness.press("enter")
    await harness.settle()
    assert "Nothing to clone yet" in harness.text()


async def test_clone_copies_the_active_branch(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await _two_turns(harness)
    app = harness.running
    old_id = app.session.session_id
    harness.type("/clone")
    harness.press("enter")
    await harness.settle()
    assert app.session.session_id != old_id
    assert "Cloned to new session" in harness.text()
    assert len(app.session.messages) == 4 and "reply two" in harness.text()


async def test_fork_with_no_messages(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await harness.start()
    harness.type("/fork")
    harness.press("enter")
    assert "No messages to fork from" in harness.text()


async def test_tool_call_only_assistant_entries_get_text(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    harness.script(
        faux_assistant_message([faux_tool_call("bash", {"command": "echo hi"})], "toolUse"),
        faux_assistant_message("done"),
    )
    app = await harness.start()
    harness.type("go")
    harness.press("enter")
    await harness.settle()
    manager = app.session.session_manager
    assert "expert coding assistant" not in harness.text()  # the system message's events show nothing
    nodes = tree_nodes(manager.get_tree(), {e.id for e in manager.get_branch()})
    calls = [n for n in nodes if n.kind == "assistant" and n.text.startswith("→")]
    assert [n.text for n in calls] == ["→ bash echo hi"]
    assert all(n.is_leaf_path for n in nodes)
    assert [n.kind for n in nodes if n.kind in ("user", "tool_result")] == ["user", "tool_result"]
    with_message = [e for e in manager.get_entries() if getattr(e, "message", None) is not None]
    # The session's record of the prompt and tools comes first; the navigator names it, the default filter hides it.
    assert [entry_node(e)[0] for e in with_message[:2]] == ["system", "user"]
    assert entry_node(with_message[0])[1].startswith("system prompt +read +bash")
    assert isinstance(app.session.messages[1], AssistantMessage)
    harness.type("/tree")
    harness.press("enter")
    assert isinstance(app.slot.original_widget, TreeNavigator)
    assert "go" in harness.text() and "system prompt" not in harness.text()


async def test_tree_on_a_branched_session_goes_back_to_the_old_path(tmp_path: Path) -> None:
    """Acceptance 12 on a session with two branches: the earlier branch's user message is chosen."""
    harness = AppHarness(tmp_path)
    harness.script(
        faux_assistant_message("reply one"), faux_assistant_message("reply two"), faux_assistant_message("reply other")
    )
    app = await harness.start()
    for prompt in ("first question", "second question"):
        harness.type(prompt)
        harness.press("enter")
        await harness.settle()
    # Branch: back to before "second question", then a different prompt from there.
    harness.type("/tree")
    harness.press("enter")
    harness.type("second question")
    harness.press("enter", "enter")  # the entry, then "No summary"
    await harness.settle()
    assert app.editor.text == "second question"
    app.editor.set_text("")
    harness.type("other path")
    harness.press("enter")
    await harness.settle()
    assert "reply other" in harness.text() and "reply two" not in harness.text()

    harness.type("/tree")
    harness.press("enter")
    assert "reply two" in harness.text()  # the tree lists both branches
    harness.type("second question")
    harness.press("enter", "enter")
    await harness.settle()
    assert app.slot.original_widget is app.editor and app.editor.text == "second question"
    text = harness.text()
    assert "Navigated to selected point" in text
    assert "first question" in text and "reply one" in text  # the old path, up to the chosen message
    assert "other path" not in text and "reply other" not in text
