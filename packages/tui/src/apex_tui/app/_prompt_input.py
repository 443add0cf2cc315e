"""What happens to submitted editor text (slash commands, `!` bash, prompts queued while streaming or compacting), and
interrupting or taking back queued messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

DOUBLE_PRESS_SECONDS = 0.5
"""Two presses of Escape (interrupt, tree) or of the clear key (exit) within this many seconds are a double press."""


def submit(app: InteractiveApp, text: str, *, follow_up: bool) -> None:
    """Commands run locally, `!` runs bash, else a prompt (queued while streaming)."""
    from apex_tui.app._commands import run_command

    stripped = text.strip()
    if not stripped:
        return
    if stripped.startswith("/") and run_command(app, stripped):
        app.editor.clear(submitted=text)
        return
    if stripped.startswith("!"):
        run_bash(app, stripped, text)
        return
    session = app.session
    if session.model is None and not is_extension_command(app, stripped):
        app.notify("No model selected. Set a provider key or add a models.json provider, then /model.", "error")
        return
    app.editor.clear(submitted=text)
    if session.is_compacting:
        app._held.append((text, follow_up))
        app.notify("Queued message for after compaction")
    elif session.is_streaming:
        app.spawn(session.prompt(text, streaming_behavior="followUp" if follow_up else "steer"))
    else:
        app.spawn(prompt(app, text))


def is_extension_command(app: InteractiveApp, text: str) -> bool:
    """Whether `text` runs an extension command (those work without a model)."""
    runner = app.runner
    if runner is None or not text.startswith("/"):
        return False
    return runner.get_command(text[1:].split(None, 1)[0] if len(text) > 1 else "") is not None


async def prompt(app: InteractiveApp, text: str) -> None:
    try:
        await app.session.prompt(text)
    except RuntimeError as exc:
        app.notify(str(exc), "error")
    finally:
        app.status.stop()
        app.update_footer()
        app.redraw()


def release_held(app: InteractiveApp) -> None:
    held, app._held = app._held, []
    for text, follow_up in held:
        app.submit(text, follow_up=follow_up)


def run_bash(app: InteractiveApp, command_text: str, original: str) -> None:
    session = app.session
    if session.is_bash_running:
        app.notify("A bash command is already running. Press Esc to cancel it first.", "warning")
        return
    exclude = command_text.startswith("!!")
    command = command_text[2:] if exclude else command_text[1:]
    if not command.strip():
        return
    app.editor.clear(submitted=original)
    block = app.feed.start_bash(command.strip(), exclude=exclude)

    async def run() -> None:
        result = await session.execute_bash(command.strip(), exclude_from_context=exclude)
        block.finish(result.exit_code, cancelled=result.cancelled, full_output_path=result.full_output_path)
        app.redraw()

    app.spawn(run())


def interrupt(app: InteractiveApp) -> None:
    """`app.interrupt`."""
    session = app.session
    if app.summarizing:
        session.abort_branch_summary()
    elif session.is_bash_running:
        session.abort_bash()
    elif session.is_compacting:
        session.abort_compaction()
    elif session.is_streaming:
        app._restore_queue(report=False)
        if session.is_retrying:
            session.abort_retry()
        app.spawn(session.abort())
    elif app.editor.text.startswith("!"):
        app.editor.clear()
    elif not app.editor.text:
        now = app.clock()
        if now - app._last_escape <= DOUBLE_PRESS_SECONDS:
            from apex_tui.app._tree_flow import double_escape

            app._last_escape = -10.0
            double_escape(app)
        else:
            app._last_escape = now


def restore_queue(app: InteractiveApp, *, report: bool) -> None:
    cleared = app.session.clear_queue()
    texts = [*cleared.steering, *cleared.follow_up]
    if texts:
        current = app.editor.text
        app.editor.set_text("\n\n".join([*texts, current] if current else texts))
    app.pending.set_queues([], [], "")
    if report:
        if texts:
            noun = "message" if len(texts) == 1 else "messages"
            app.notify(f"Restored {len(texts)} queued {noun} to editor")
        else:
            app.notify("No queued messages to restore")


def dequeue(app: InteractiveApp) -> None:
    """`app.message.dequeue`: queued texts back into the editor."""
    app._restore_queue(report=True)


def follow_up(app: InteractiveApp) -> None:
    """`app.message.followUp`: queue as follow-up while streaming, else submit."""
    text = app.editor.expanded_text()
    app.submit(text, follow_up=True)
