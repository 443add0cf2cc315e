"""Built-in slash commands. Unknown `/foo` goes to the model as text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from apex_ai.thinking import MODEL_THINKING_LEVELS
from apex_coding_agent import (
    CompactionEndEvent,
    ExportError,
    PackageResource,
    SessionEvent,
    export_session_html,
    export_session_jsonl,
)
from apex_tui.app._clipboard import copy_to_clipboard
from apex_tui.app._mcp_panel import mcp_command
from apex_tui.app._models_flow import open_scoped_models, open_thinking_picker
from apex_tui.keybindings import render_hotkeys
from apex_tui.widgets import CustomMessageBlock

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp


@dataclass(frozen=True)
class Command:
    """A built-in command: `run(app, argument)` returns False to send the text to the model instead."""

    name: str
    description: str
    run: Callable[[InteractiveApp, str], bool]
    argument_hint: str = ""


def _model(app: InteractiveApp, arg: str) -> bool:
    if arg:
        wanted = arg.lower()
        for model in app.session.model_runtime.available_models():
            if wanted in (f"{model.provider}/{model.id}".lower(), model.id.lower()):
                app.select_model(model)
                return True
    app.open_model_picker(arg)
    return True


def _thinking(app: InteractiveApp, arg: str) -> bool:
    session = app.session
    if arg:
        if arg not in MODEL_THINKING_LEVELS:
            app.notify(f"Unknown thinking level: {arg}", "error")
            return True
        level = session.set_thinking_level(arg)
        app.notify(f"Thinking level: {level}")
        app.update_footer()
        return True
    open_thinking_picker(app)
    return True


def _scoped_models(app: InteractiveApp, arg: str) -> bool:
    open_scoped_models(app)
    return True


def _new(app: InteractiveApp, arg: str) -> bool:
    app.spawn(app.new_session())
    return True


def _name(app: InteractiveApp, arg: str) -> bool:
    if arg:
        app.session.set_session_name(arg)
        app.notify(f"Session name set: {arg}")
        app.update_footer()
    elif app.session.session_name:
        app.notify(f"Session name: {app.session.session_name}")
    else:
        app.notify("Usage: /name <name>", "warning")
    return True


def _session(app: InteractiveApp, arg: str) -> bool:
    session = app.session
    stats = session.get_session_stats()
    tokens = stats.tokens
    lines = [
        f"- Name: {session.session_name or '(unnamed)'}",
        f"- File: {session.session_file or '(in memory)'}",
        f"- ID: {session.session_id}",
        f"- Messages: {stats.user_messages} user, {stats.assistant_messages} assistant, "
        f"{stats.tool_calls} tool calls, {stats.tool_results} tool results ({stats.total_messages} total)",
        f"- Tokens: {tokens.input} input, {tokens.output} output, {tokens.cache_read} cache read, "
        f"{tokens.cache_write} cache write",
        f"- Cost: ${stats.cost:.3f}",
    ]
    app.feed.add(CustomMessageBlock(app.ctx, "session", "\n".join(lines)))
    app.redraw()
    return True


def _compact(app: InteractiveApp, arg: str) -> bool:
    session = app.session
    if session.is_streaming or session.is_compacting:
        app.notify("Cannot compact while the agent is working", "warning")
        return True

    ended = False

    def on_event(event: SessionEvent) -> None:
        nonlocal ended
        ended = ended or isinstance(event, CompactionEndEvent)

    async def run() -> None:
        unsubscribe = session.subscribe(on_event)
        try:
            await session.compact(arg or None)
        except Exception as exc:  # compaction failures (nothing to compact, provider error) are shown, not raised
            # A cancel or failure that ended a started compaction was already shown from `compaction_end`.
            if not ended:
                app.notify(str(exc), "error")
        else:
            app.rebind_session()
            app.notify("Compacted context")
        finally:
            unsubscribe()

    app.spawn(run())
    return True


def _copy(app: InteractiveApp, arg: str) -> bool:
    text = app.session.get_last_assistant_text()
    if not text:
        app.notify("No agent message to copy", "error")
        return True
    copy_to_clipboard(text)
    app.notify("Copied last agent message to clipboard")
    return True


def _export(app: InteractiveApp, arg: str) -> bool:
    manager = app.session.session_manager
    try:
        if arg.endswith(".jsonl"):
            path = export_session_jsonl(manager, arg, cwd=app.cwd)
        else:
            path = export_session_html(manager, arg or None, cwd=app.cwd)
    except (ExportError, OSError) as exc:
        app.notify(str(exc), "error")
        return True
    app.notify(f"Session exported to: {path}")
    return True


def _share(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._share import start_share

    start_share(app)
    return True


def _reload(app: InteractiveApp, arg: str) -> bool:
    session = app.session
    if session.is_streaming or session.is_compacting:
        app.notify("Cannot reload while the agent is working", "warning")
        return True
    warnings = app.reload_keybindings()
    session.settings_manager.reload()
    session.model_runtime.reload()
    warnings = (*warnings, *(str(e) for e in session.settings_manager.drain_errors()))
    warnings = (*warnings, *session.model_runtime.drain_warnings())
    for warning in warnings:
        app.notify(warning, "warning")
    app.spawn(_reload_runtime(app))
    return True


async def _reload_runtime(app: InteractiveApp) -> None:
    """The runtime part of `/reload` (extensions, skills, prompts, context files, system prompt), then themes with
    the extensions' `themePaths`. Extension load failures reach the transcript through the runner's error lines."""
    result = await app.runtime.reload()
    themes = app.themes
    kept = tuple(item for item in themes.package_themes if item.source != "extension")
    extra = tuple(PackageResource(Path(path), "extension", "temporary") for path in app.runtime.extension_theme_paths)
    themes.package_themes = kept + extra
    themes.reload()
    app.refresh_shortcuts()
    warnings = [*result.warnings, *(f"{d.message} ({d.path})" for d in result.diagnostics), *themes.warnings]
    for warning in warnings:
        app.notify(warning, "warning")
    app.notify("Reloaded keybindings, extensions, skills, prompts, themes, and context files")


def _hotkeys(app: InteractiveApp, arg: str) -> bool:
    app.feed.add(CustomMessageBlock(app.ctx, "hotkeys", render_hotkeys(app.keymap)))
    app.redraw()
    return True


def _resume(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._sessions_flow import open_resume

    open_resume(app)
    return True


def _tree(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._tree_flow import open_tree

    open_tree(app)
    return True


def _rewind(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._rewind_flow import open_rewind

    open_rewind(app)
    return True


def _redo(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._rewind_flow import redo

    app.spawn(redo(app))
    return True


def _fork(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._tree_flow import open_fork

    open_fork(app)
    return True


def _clone(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._tree_flow import clone

    app.spawn(clone(app))
    return True


def _import(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._sessions_flow import confirm_import

    confirm_import(app, arg)
    return True


def _settings(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._settings_flow import open_settings

    open_settings(app)
    return True


def _login(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._settings_flow import open_login

    open_login(app, arg)
    return True


def _logout(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._settings_flow import open_logout

    open_logout(app, arg)
    return True


def _trust(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._trust_flow import open_trust

    open_trust(app)
    return True


def _changelog(app: InteractiveApp, arg: str) -> bool:
    from apex_tui.app._changelog import installed_changelogs

    for changelog in installed_changelogs():
        label = f"changelog: {changelog.distribution}"
        app.feed.add(CustomMessageBlock(app.ctx, label, changelog.markdown))
    app.redraw()
    return True


def _quit(app: InteractiveApp, arg: str) -> bool:
    app.request_exit(0)
    return True


COMMANDS: tuple[Command, ...] = (
    Command("model", "Select model (opens the model picker)", _model, "[provider/model]"),
    Command("scoped-models", "Choose the models that model cycling goes through", _scoped_models),
    Command("thinking", "Set the thinking level", _thinking, "[level]"),
    Command("settings", "Open the settings list", _settings),
    Command("new", "Start a new session", _new),
    Command("resume", "Resume a session (picker)", _resume),
    Command("tree", "Navigate the session tree", _tree),
    Command("fork", "Fork a new session from an earlier user message", _fork),
    Command("rewind", "Go back to before an earlier message: files, conversation, or both", _rewind),
    Command("redo", "Undo the last rewind", _redo),
    Command("clone", "Copy the active branch into a new session", _clone),
    Command("import", "Import a session JSONL file (replaces the current session)", _import, "<file.jsonl>"),
    Command("name", "Set the session display name", _name, "<name>"),
    Command("session", "Show session info and stats", _session),
    Command("compact", "Compact the session context", _compact, "[instructions]"),
    Command("copy", "Copy the last agent message to the clipboard", _copy),
    Command("export", "Export the session (HTML, or JSONL by extension)", _export, "[file]"),
    Command("share", "Share the session as a secret GitHub gist (needs gh)", _share),
    Command("reload", "Reload keybindings, settings and models", _reload),
    Command("login", "Store an API key for a provider", _login, "[provider]"),
    Command("logout", "Remove a stored provider credential", _logout, "[provider]"),
    Command("trust", "Save this project's trust decision (applies next start)", _trust),
    Command("hotkeys", "Show all keyboard shortcuts", _hotkeys),
    Command("mcp", "MCP servers: status, tools, last error, reconnect", mcp_command, "[reconnect NAME]"),
    Command("changelog", "Show the changelog of apex-coding-agent and apex-tui", _changelog),
    Command("quit", "Quit apex-code", _quit),
)
_BY_NAME = {c.name: c for c in COMMANDS}


def run_command(app: InteractiveApp, text: str) -> bool:
    """Run a built-in `/command`; False when `text` is not one (it then goes to the model)."""
    name, _, arg = text[1:].partition(" ")
    command = _BY_NAME.get(name)
    if command is None:
        return False
    return command.run(app, arg.strip())


def command_names() -> list[str]:
    """Names of the built-in commands."""
    return list(_BY_NAME)
