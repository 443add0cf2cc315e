"""The editor's app actions that change what is shown or used: copy, clear, tool detail, thinking level, model cycling
and picking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apex_tui.app._prompt_input import DOUBLE_PRESS_SECONDS

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp


def copy_message(app: InteractiveApp) -> None:
    """`app.message.copy`: the kept mouse selection (fullscreen, `fullscreenCopyOnSelect: false`), else the
    last assistant message."""
    if app.root.fullscreen and app.extras.copy_selection():
        return
    text = app.session.get_last_assistant_text()
    if not text:
        app.notify("No agent message to copy", "error")
        return
    if app.root.fullscreen:
        app.extras.copy(text)
    else:
        from apex_tui.app._clipboard import copy_to_clipboard

        copy_to_clipboard(text)
        app.notify("Copied last agent message to clipboard")


def clear(app: InteractiveApp) -> None:
    """`app.clear`: clear the editor; a second press within 500 ms quits."""
    now = app.clock()
    if now - app._last_clear <= DOUBLE_PRESS_SECONDS:
        app.request_exit(0)
        return
    app._last_clear = now
    app.editor.clear()


def cycle_detail(app: InteractiveApp) -> None:
    """`app.tools.expand`: overview → details → all."""
    level = app.transcript.cycle_detail()
    app.notify(f"Conversation detail: {level.value}")


def toggle_thinking(app: InteractiveApp) -> None:
    """`app.thinking.toggle`: flip and persist `hideThinkingBlock`."""
    hide = not app.ctx.hide_thinking
    app.session.settings_manager.set("hideThinkingBlock", hide)
    app.transcript.set_hide_thinking(hide)
    app.notify(f"Thinking blocks: {'hidden' if hide else 'visible'}")


def cycle_thinking(app: InteractiveApp) -> None:
    """`app.thinking.cycle`."""
    level = app.session.cycle_thinking_level()
    app.notify("Current model does not support thinking" if level is None else f"Thinking level: {level}")
    app.update_footer()


def cycle_model(app: InteractiveApp, direction: str) -> None:
    """`app.model.cycleForward` / `cycleBackward`."""
    try:
        result = app.session.cycle_model("forward" if direction == "forward" else "backward")
    except RuntimeError as exc:
        app.notify(str(exc), "error")
        return
    if result is None:
        app.notify("Only one model in scope")
    else:
        thinking = f" (thinking: {result.thinking_level})" if result.model.reasoning else ""
        app.notify(f"Switched to {result.model.name or result.model.id}{thinking}")
    app.update_footer()


def open_model_picker(app: InteractiveApp, query: str) -> None:
    """`/model` and `app.model.select`."""
    from apex_tui.app._models_flow import open_model_picker

    open_model_picker(app, query)


def select_model(app: InteractiveApp, model: Any) -> None:
    """Switch the session model (settings untouched)."""
    try:
        app.session.set_model(model)
    except RuntimeError as exc:
        app.notify(str(exc), "error")
        return
    app.notify(f"Model: {model.id}")
    app.update_footer()
