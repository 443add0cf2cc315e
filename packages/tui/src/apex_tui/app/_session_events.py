"""How each session event changes the screen: transcript blocks, the status line, the pending queues and the footer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_agent import events as aev
from apex_ai.types import AssistantMessage, UserMessage
from apex_coding_agent import (
    AgentSettledEvent,
    AutoRetryStartEvent,
    BashExecutionUpdateEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    CustomMessage,
    QueueUpdateEvent,
    SessionEvent,
    SessionInfoChangedEvent,
    SessionWriteErrorEvent,
    ThinkingLevelChangedEvent,
)
from apex_tui.app import _prompt_input as prompt_input
from apex_tui.app._feed import edit_preview, image_refs, result_text

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp


def apply_event(app: InteractiveApp, event: SessionEvent) -> None:
    feed = app.feed
    if isinstance(event, aev.AgentStartEvent):
        app.status.start(app.working_message or "Working...")
    elif isinstance(event, aev.MessageStartEvent):
        if isinstance(event.message, UserMessage):
            feed.add_message(event.message)
        elif isinstance(event.message, CustomMessage):
            feed.add_message(event.message)  # shown only when its `display` is true
        elif isinstance(event.message, AssistantMessage):
            feed.start_assistant()
    elif isinstance(event, aev.MessageUpdateEvent):
        if isinstance(event.message, AssistantMessage):
            feed.sync_assistant(event.message)
    elif isinstance(event, aev.MessageEndEvent):
        if isinstance(event.message, AssistantMessage):
            feed.end_assistant(event.message)
            app.update_footer()
    elif isinstance(event, aev.ToolExecutionStartEvent):
        feed.tool_start(event.tool_call_id, event.tool_name, event.args)
        if event.tool_name == "edit":
            # Before the permission question: the pending block shows the file's own line numbers.
            feed.tool_preview(event.tool_call_id, edit_preview(app.session.cwd, event.args))
    elif isinstance(event, aev.ToolExecutionUpdateEvent):
        feed.tool_update(event.tool_call_id, event.partial_result)
    elif isinstance(event, aev.ToolExecutionEndEvent):
        result = event.result
        text = result_text(getattr(result, "content", None))
        content = getattr(result, "content", None)
        feed.tool_result(
            event.tool_call_id, text, event.is_error, getattr(result, "details", None), image_refs(content)
        )
    elif isinstance(event, QueueUpdateEvent):
        app.pending.set_queues(event.steering, event.follow_up, app.keymap.display("app.message.dequeue"))
    elif isinstance(event, BashExecutionUpdateEvent):
        if feed.bash_block is not None:
            feed.bash_block.append_output(event.delta)
    elif isinstance(event, CompactionStartEvent):
        manual = event.reason == "manual"
        app.status.start("Compacting context..." if manual else "Auto-compacting... (escape to cancel)")
    elif isinstance(event, CompactionEndEvent):
        app.status.stop()
        if event.aborted:
            feed.notice("status", "Compaction cancelled")
        elif event.error_message:
            feed.notice("error", event.error_message)
        prompt_input.release_held(app)
    elif isinstance(event, AutoRetryStartEvent):
        seconds = max(1, round(event.delay_ms / 1000))
        app.status.start(f"Retrying ({event.attempt}/{event.max_attempts}) in {seconds}s... (escape to cancel)")
    elif isinstance(event, AgentSettledEvent):
        app.status.stop()
        app.update_footer()
    elif isinstance(event, SessionWriteErrorEvent):
        feed.notice("error", event.error)  # the run stopped: say why, or the session just looks idle
    elif isinstance(event, ThinkingLevelChangedEvent | SessionInfoChangedEvent):
        app.update_footer()
        app.update_title()
