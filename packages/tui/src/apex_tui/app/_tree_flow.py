"""`/tree`, `/fork`, `/clone` and the double-Escape action.

The session tree (`SessionManager.get_tree()`) is flattened without recursion into the navigator's `TreeNode`
records. An assistant entry that holds only tool calls gets a text naming them, so no row is blank.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, cast

from apex_ai.types import AssistantMessage, SystemMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from apex_coding_agent import (
    BashExecutionMessage,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessage,
    CustomMessageEntry,
    EntryBase,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
)
from apex_coding_agent import TreeNode as SessionTreeNode
from apex_tui.app._clipboard import copy_to_clipboard
from apex_tui.app._modal import show_modal
from apex_tui.widgets.pickers import FILTER_MODES, InputDialog, SelectItem, SelectList, TreeNavigator, TreeNode

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp
    from apex_tui.widgets.pickers import FilterMode

MAX_TEXT = 500
DOUBLE_ESCAPE_ACTIONS: Final = ("tree", "fork", "none")


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(block.text for block in content if isinstance(block, TextContent))
    return ""


def _assistant_text(message: AssistantMessage) -> str:
    text = " ".join(block.text for block in message.content if isinstance(block, TextContent)).strip()
    if text:
        return text
    calls = [block for block in message.content if isinstance(block, ToolCall)]
    if calls:
        return "→ " + ", ".join(_call_text(call) for call in calls)
    return "(no text)"


def _call_text(call: ToolCall) -> str:
    args = call.arguments
    key = next((args[k] for k in ("command", "path", "pattern") if isinstance(args.get(k), str)), None)
    return f"{call.name} {key}" if key else call.name


def _system_text(message: SystemMessage) -> str:
    """The session's record of the prompt and tools: which of the two it declares or changes."""
    parts = ["new system prompt" if message.replace else "system prompt"] if _content_text(message.content) else []
    parts += [f"+{tool.name}" for tool in message.tools_added or []]
    parts += [f"-{tool.name}" for tool in message.tools_removed or []]
    return " ".join(parts)


def entry_node(entry: EntryBase) -> tuple[str, str]:
    """(kind, text) of one session entry as the navigator shows it."""
    if isinstance(entry, MessageEntry):
        message = entry.agent_message
        if isinstance(message, UserMessage):
            return "user", _content_text(message.content)
        if isinstance(message, AssistantMessage):
            return "assistant", _assistant_text(message)
        if isinstance(message, ToolResultMessage):
            return "tool_result", f"{message.tool_name}: {_content_text(message.content)}"
        if isinstance(message, BashExecutionMessage):
            return "bash", f"!{message.command}"
        if isinstance(message, CustomMessage):
            return "custom_message", _content_text(message.content)
        if isinstance(message, SystemMessage):
            return "system", _system_text(message)
        return "message", ""
    if isinstance(entry, CompactionEntry):
        return "compaction", f"compaction ({entry.tokens_before} tokens before)"
    if isinstance(entry, BranchSummaryEntry):
        return "branch_summary", entry.summary
    if isinstance(entry, ModelChangeEntry):
        return "model_change", f"{entry.provider}/{entry.model_id}"
    if isinstance(entry, ThinkingLevelChangeEntry):
        return "thinking_level_change", entry.thinking_level
    if isinstance(entry, LabelEntry):
        return "label", entry.label or "(label cleared)"
    if isinstance(entry, SessionInfoEntry):
        return "session_info", entry.name or ""
    if isinstance(entry, CustomMessageEntry):
        return "custom_message", _content_text(entry.content)
    if isinstance(entry, CustomEntry):
        return "custom", entry.custom_type
    return entry.type, ""


def tree_nodes(roots: list[SessionTreeNode], leaf_path: set[str]) -> list[TreeNode]:
    """Flatten `get_tree()` roots (iteratively) into navigator records."""
    out: list[TreeNode] = []
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        entry = node.entry
        kind, text = entry_node(entry)
        text = " ".join(text.split())
        out.append(
            TreeNode(
                entry.id,
                entry.parent_id,
                kind,
                text[:MAX_TEXT],
                label=node.label,
                timestamp=entry.timestamp,
                is_leaf_path=entry.id in leaf_path,
                label_timestamp=node.label_timestamp,
            )
        )
        stack.extend(reversed(node.children))
    return out


def open_tree(app: InteractiveApp) -> None:
    """The tree navigator over the session; Enter navigates (with the `Summarize branch?` question)."""
    session = app.session
    manager = session.session_manager
    roots = manager.get_tree()
    if not roots:
        app.notify("No entries in session")
        return
    leaf_path = {entry.id for entry in manager.get_branch()}
    settings = session.settings_manager
    mode = settings.get_choice("treeFilterMode", FILTER_MODES, "default")
    navigator = TreeNavigator(
        tree_nodes(roots, leaf_path),
        app.keymap,
        leaf_id=manager.get_leaf_id(),
        filter_mode=cast("FilterMode", mode),  # cast: get_choice returned one of FILTER_MODES
        skip_summary_prompt=settings.get_bool("branchSummary.skipPrompt", False),
    )

    def select(selection: Any) -> None:
        # Any: a TreeSelection.
        if selection.is_current_leaf:
            app.notify("Already at this point")
        elif selection.summary == "custom":
            ask_custom_summary(app, selection.target_id)
        else:
            app.spawn(navigate(app, selection.target_id, summarize=selection.summary == "summarize"))

    def label_edit(payload: Any) -> None:
        # Any: (entry id, current label or None).
        entry_id, current = payload
        dialog = InputDialog("Label", app.keymap, text=current or "", placeholder="empty clears the label")

        def submit(text: Any) -> None:
            label = " ".join(str(text).split()) or None
            manager.append_label_change(entry_id, label)
            navigator.set_label(entry_id, label)

        show_modal(app, dialog, {"submit": submit})

    def copy(payload: Any) -> None:
        # Any: (entry id, text).
        copy_to_clipboard(str(payload[1]))
        app.notify("Copied entry text to clipboard")

    show_modal(app, navigator, {"select": select, "label_edit": label_edit, "copy": copy})


def ask_custom_summary(app: InteractiveApp, target_id: str) -> None:
    """`Summarize with custom prompt`: the focus text, then navigate."""
    dialog = InputDialog("Custom summary instructions", app.keymap, placeholder="what the summary should focus on")
    show_modal(
        app,
        dialog,
        {"submit": lambda text: app.spawn(navigate(app, target_id, summarize=True, instructions=str(text) or None))},
    )


async def navigate(app: InteractiveApp, target_id: str, *, summarize: bool, instructions: str | None = None) -> None:
    """Move the session leaf (a running stream is aborted first); the target's text goes into the editor."""
    session = app.session
    if session.is_streaming:
        await session.abort()
    if summarize:
        app.summarizing = True
        app.status.start("Summarizing branch... (escape to cancel)")
        app.redraw()
    try:
        result = await session.navigate_tree(target_id, summarize=summarize, custom_instructions=instructions)
    except (RuntimeError, ValueError) as exc:
        app.notify(str(exc), "error")
        return
    finally:
        app.summarizing = False
        app.status.stop()
    if result.cancelled:
        app.notify("Branch summarization cancelled" if result.aborted else "Navigation cancelled")
        return
    app.rebind_session()
    app.editor.set_text(result.editor_text or "")
    app.notify("Navigated to selected point")


def open_fork(app: InteractiveApp) -> None:
    """User messages, newest preselected; Enter forks before it into a new session file."""
    messages = app.session.get_user_messages_for_forking()
    if not messages:
        app.notify("No messages to fork from")
        return
    items = [SelectItem(m.entry_id, " ".join(m.text.split())) for m in messages]
    picker: SelectList[str] = SelectList(items, app.keymap, title="Fork from message", selected=messages[-1].entry_id)
    show_modal(app, picker, {"select": lambda entry_id: app.spawn(fork(app, str(entry_id)))})


async def fork(app: InteractiveApp, entry_id: str) -> None:
    """`runtime.fork` before `entry_id`; its text goes into the editor."""
    if app.session.is_streaming:
        await app.session.abort()
    result = await app.runtime.fork(entry_id)
    if result.cancelled:
        app.notify("Fork cancelled")
        return
    app.rebind_session()
    app.editor.set_text(result.selected_text)
    app.notify("Forked to new session")


async def clone(app: InteractiveApp) -> None:
    """`/clone`: the active branch into a new session file."""
    leaf = app.session.session_manager.get_leaf_id()
    if leaf is None or not app.session.messages:
        app.notify("Nothing to clone yet")
        return
    if app.session.is_streaming:
        await app.session.abort()
    result = await app.runtime.fork(leaf, "at")
    if result.cancelled:
        app.notify("Clone cancelled")
        return
    app.rebind_session()
    app.notify("Cloned to new session")


def double_escape(app: InteractiveApp) -> None:
    """`doubleEscapeAction`: `tree` (default), `fork` or `none`."""
    action = app.session.settings_manager.get_choice("doubleEscapeAction", DOUBLE_ESCAPE_ACTIONS, "tree")
    if action == "tree":
        open_tree(app)
    elif action == "fork":
        open_fork(app)
