"""The interactive app: owns the session runtime and the widgets, and connects them.

Widgets never hold the session: the editor and pickers emit signals, this class acts on the session, and session
events (on the same asyncio loop) update the blocks and ask for a throttled redraw.

The class holds the app's state and its wiring; the work of its larger methods lives in modules named after it
(`_session_events`, `_prompt_input`, `_app_actions`, `_terminal`, `_footer_title`, `_history_loading`,
`_extension_binding`, `_theme_switching`), each a set of functions of the app, with a one-line method here for the
names other modules, flows and tests call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import urwid

from apex_coding_agent import (
    AgentSession,
    AgentSessionRuntime,
    ExtensionRunner,
    PackageResource,
    SessionEvent,
    ThemeFlags,
    ThemeSource,
    collector_paused,
)
from apex_tui.app import _app_actions as app_actions
from apex_tui.app import _extension_binding as extension_binding
from apex_tui.app import _footer_title as footer_title
from apex_tui.app import _history_loading as history_loading
from apex_tui.app import _prompt_input as prompt_input
from apex_tui.app import _rewind_flow as rewind_flow
from apex_tui.app import _session_events as session_events
from apex_tui.app import _terminal as terminal
from apex_tui.app import _theme_switching as theme_switching
from apex_tui.app._approval import ApprovalResponder
from apex_tui.app._changelog import Changelog, installed_changelogs
from apex_tui.app._extension_ui import ShortcutTable, TuiUi
from apex_tui.app._feed import TranscriptFeed
from apex_tui.app._fullscreen import FullscreenExtras
from apex_tui.app._history import LazyHistory, prompt_history
from apex_tui.app._layout import Root
from apex_tui.app._modal import Modal
from apex_tui.app._themes import ThemeCatalog, ThemeWatcher
from apex_tui.app._whats_new import WhatsNew
from apex_tui.editor import CommandInfo, Editor
from apex_tui.keybindings import KeybindingManager, LoadedKeybindings
from apex_tui.theme import Theme
from apex_tui.widgets import (
    CustomMessageBlock,
    Footer,
    FooterState,
    PendingArea,
    RenderContext,
    StatusLine,
    TranscriptView,
)

REDRAW_SECONDS = 0.03
LOAD_SLICE_RECORDS = 1000
"""Records of a deferred session projected per event-loop turn (~15 ms) while the app completes its messages."""

KeymapLoader = Callable[[], LoadedKeybindings]


class InteractiveApp:
    """See the module docstring. `run_command` (in `_commands`) handles slash commands."""

    def __init__(
        self,
        runtime: AgentSessionRuntime,
        *,
        keymap_loader: KeymapLoader,
        cwd: str,
        agent_dir: Path,
        warnings: list[str] | None = None,
        fullscreen: bool = False,
        theme: Theme | None = None,
        version: str = "",
        clock: Callable[[], float] = time.monotonic,
        quiet: bool = False,
        verbose: bool = False,
        theme_flags: ThemeFlags | None = None,
        package_themes: Sequence[PackageResource] = (),
        changelogs: Callable[[], Sequence[Changelog]] = installed_changelogs,
    ) -> None:
        """`changelogs` gives the installed changelogs, read at start-up only when the version is newer than the
        last one seen (`lastChangelogVersion`)."""
        self.runtime = runtime
        self.keymap_loader = keymap_loader
        loaded = keymap_loader()
        self.keymap: KeybindingManager = loaded.manager
        self.cwd = cwd
        self.agent_dir = agent_dir
        self.clock = clock
        self.version = version
        settings = runtime.session.settings_manager
        self.themes = ThemeCatalog(cwd, agent_dir, settings, flags=theme_flags, package_themes=package_themes)
        self.theme_watcher = ThemeWatcher(self._theme_file_changed, lambda text: self.notify(text, "warning"))
        self._theme_alarm: Any = None  # Any: an opaque alarm handle of the main loop
        theme_warnings: list[str] = []
        if theme is None:
            name = settings.get("theme")
            theme, fallback = self.themes.select(name)
            theme_warnings.extend(self.themes.warnings)
            if fallback is not None:
                theme_warnings.append(fallback)
            self.theme_watcher.watch(self.themes.source(theme.name) if theme.name == name else None)
        else:
            theme_warnings.extend(self.themes.warnings)
        self.theme = theme
        fullscreen_mode = fullscreen
        self.ctx = RenderContext(
            hide_thinking=bool(settings.get_bool("hideThinkingBlock", False)),
            expand_hint=self.keymap.display("app.tools.expand") or "ctrl+o",
        )
        scrollbar = settings.get("fullscreenScrollbar")
        self.transcript = TranscriptView(
            self.ctx,
            keymap=self.keymap,
            scrollbar=scrollbar if fullscreen_mode and scrollbar in ("auto", "always", "hidden") else "hidden",
            mouse_select=fullscreen_mode,
        )
        self.feed = TranscriptFeed(self.transcript, self.ctx)
        self.history = LazyHistory(self.transcript, self.ctx)
        """Older messages of a long session, turned into blocks as the view nears them (`_history`)."""
        self.pending = PendingArea()
        self.status = StatusLine()
        self.working_message: str | None = None
        """An extension's replacement for `Working...` (`ctx.ui.set_working_message`)."""
        self.ui = TuiUi(self)
        self.shortcuts = ShortcutTable()
        self.editor = Editor(
            self.keymap,
            cwd=Path(cwd),
            commands=self.command_infos,
            max_visible_suggestions=int(settings.get_int("autocompleteMaxVisible", 5, minimum=3, maximum=20)),
        )
        self.slot: urwid.WidgetPlaceholder[Any] = urwid.WidgetPlaceholder(self.editor)
        self.footer = Footer(FooterState(cwd=cwd, home=str(Path.home())))
        self.extras = FullscreenExtras(self)
        self.root = Root(
            self.keymap,
            self.transcript,
            self.pending,
            self.status,
            self.slot,
            self.footer,
            fullscreen=fullscreen,
            flash=self.extras.flash,
            above=self.ui.above,
            below=self.ui.below,
        )
        self.root.on_search = self.extras.open_search
        self.root.extension_key = self.run_extension_shortcut
        self.root.before_render = self._before_draw
        self.root.before_viewport_key = self._before_viewport_key
        urwid.connect_signal(self.editor, "submit", self._on_submit)
        urwid.connect_signal(self.editor, "action", self._on_action)
        self.main_loop: urwid.MainLoop | None = None
        self.exit_code = 0
        self.exiting = False
        self.tasks: set[asyncio.Future[Any]] = set()
        self._held: list[tuple[str, bool]] = []
        self._last_clear = -10.0
        self._redraw_pending = False
        self._unsubscribe: Callable[[], None] | None = None
        self.modals: dict[int, Modal] = {}
        self.responder = ApprovalResponder(self)
        self.title_sink: Callable[[str], None] | None = None
        self.custom_title: str | None = None
        """A title set by an extension (`ctx.ui.set_title`); a session-name change replaces it."""
        self.summarizing = False
        self._last_escape = -10.0
        self._extensions_started = False
        self._stats_due = False
        """The footer's usage figures are still to be read (after the next frame)."""
        self._keys_checked = False
        """The notice about a terminal that reports no modified keys was shown (once, when its answers came)."""
        self._stats_alarm: Any = None  # Any: an opaque alarm handle of the main loop
        self.stats_reads = 0
        """How many times the footer read the session's statistics (a full `update_footer`)."""
        extension_binding.bind_extensions(self)
        self._bind_session()
        self.whats_new: WhatsNew | None = None
        """What the start-up transcript showed as new since the last version seen, if anything."""
        self._startup(
            loaded.warnings,
            [*theme_warnings, *(warnings or [])],
            quiet=quiet,
            verbose=verbose,
            changelogs=changelogs,
        )
        self.refresh_shortcuts()
        extension_binding.start_extensions_soon(self)

    # ----------------------------------------------------------------- session binding

    @property
    def session(self) -> AgentSession:
        """The active session (replaced by /new, /resume, ...)."""
        return self.runtime.session

    @property
    def runner(self) -> ExtensionRunner | None:
        """The extension runner of the runtime, if extensions are loaded."""
        return self.runtime.extension_runner

    async def _shutdown_when_idle(self) -> None:
        await self.session.wait_for_idle()
        self.request_exit(0)

    def start_extensions(self) -> None:
        extension_binding.start_extensions(self)

    def refresh_shortcuts(self) -> None:
        extension_binding.refresh_shortcuts(self)

    def run_extension_shortcut(self, key: str) -> bool:
        return extension_binding.run_extension_shortcut(self, key)

    @staticmethod
    async def _await_extension(value: Awaitable[Any], runner: ExtensionRunner, path: str, event: str) -> None:
        # Any: whatever the extension's coroutine returns is ignored.
        try:
            await value
        except Exception as exc:  # reported like a handler's failure
            runner.report_error(path, event, exc)

    def _bind_session(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        session = self.session
        self._unsubscribe = session.subscribe(self._on_event)
        gate = session.permission_gate
        if gate is not None and (gate.responder is None or gate.responder is self.responder):
            # The runtime rebuilds the gate for a session in another cwd: the app answers for every gate.
            gate.responder = self.responder
        deferred = session.deferred_messages
        self.editor.history = type(self.editor.history)(
            prompt_history(deferred.newest_first() if deferred is not None else reversed(session.messages))
        )
        # The usage figures walk the whole session (~0.2 s at 50k entries): the footer shows none of them at first,
        # and they are filled in right after the next frame (`_before_draw`).
        self._stats_due = True
        self.update_footer(stats=False)
        self.update_title()

    def rebind_session(self) -> None:
        """After the runtime replaced the session: fresh transcript from its messages."""
        self.transcript.clear()
        self._bind_session()
        history_loading.open_history(self, head=0)
        history_loading.load_messages_soon(self)
        rewind_flow.announce_pending_restore(self)
        self.redraw()

    async def _load_messages(self) -> None:
        session = self.session
        while True:
            if self.session is not session or self.exiting:
                return
            # Parsed messages live as long as the session: the collector pauses, then they are frozen.
            with collector_paused(freeze=True):
                done = session.load_messages_step(LOAD_SLICE_RECORDS)
            if done:
                break
            await asyncio.sleep(0)
        if self._stats_due:
            history_loading.fill_stats_after_frame(self)
            self.redraw()

    def _before_draw(self) -> None:
        history_loading.before_draw(self)

    def _before_viewport_key(self, key: str) -> None:
        history_loading.before_viewport_key(self, key)

    def load_history(self) -> None:
        history_loading.load_history(self)

    def _startup(
        self,
        key_warnings: tuple[str, ...],
        warnings: list[str],
        *,
        quiet: bool,
        verbose: bool = False,
        changelogs: Callable[[], Sequence[Changelog]] = installed_changelogs,
    ) -> None:
        from apex_tui.app._startup import no_model_help
        from apex_tui.app._startup_blocks import header_block, model_scope_block, resources_block, whats_new_startup

        # Header, resources, scope line, what's new, then the session's messages and the warnings.
        if not quiet:
            self.feed.add(header_block(self, verbose=verbose))
            resources = resources_block(self)
            if resources is not None:
                self.feed.add(resources)
        scope = model_scope_block(self) if verbose or not quiet else None
        if scope is not None:
            self.feed.add(scope)
        self.whats_new, news_block = whats_new_startup(self, quiet=quiet, changelogs=changelogs)
        if news_block is not None:
            self.feed.add(news_block)
        history_loading.open_history(self, head=len(self.transcript))
        for warning in (*key_warnings, *warnings):
            self.feed.notice("warning", warning)
        if self.session.model is None:
            self.feed.add(CustomMessageBlock(self.ctx, "setup", no_model_help(self.agent_dir)))

    # ----------------------------------------------------------------- redraw and tasks

    def attach(self, main_loop: urwid.MainLoop) -> None:
        """Use `main_loop` for alarms and redraws (and start polling the active theme file)."""
        self.main_loop = main_loop
        self.status.attach(main_loop)
        theme_switching.schedule_theme_poll(self)

    def redraw(self) -> None:
        """Ask for a redraw at most every `REDRAW_SECONDS` (only needed for changes outside key handling)."""
        loop = self.main_loop
        if loop is None or self._redraw_pending:
            return
        self._redraw_pending = True

        def draw(_loop: object = None, _data: object = None) -> None:
            self._redraw_pending = False
            if self.main_loop is not None and not self.exiting:
                self.main_loop.draw_screen()

        loop.set_alarm_in(REDRAW_SECONDS, draw)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        """Run `coro` on the loop; an exception shows as an error line."""
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)

        def done(finished: asyncio.Future[Any]) -> None:
            self.tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                self.feed.notice("error", str(finished.exception()))
                self.redraw()

        task.add_done_callback(done)
        return task

    def _spawn_none(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.spawn(coro)

    def request_exit(self, code: int = 0) -> None:
        """Leave the main loop (from keys, commands or tasks)."""
        self.exit_code = code
        self.exiting = True
        if self.main_loop is None:
            return

        def leave(_loop: object = None, _data: object = None) -> None:
            raise urwid.ExitMainLoop()

        self.main_loop.set_alarm_in(0, leave)

    def notify(self, text: str, kind: str = "status") -> None:
        """A status / warning / error line in the transcript."""
        self.feed.notice(kind, text)
        self.redraw()

    # ----------------------------------------------------------------- footer

    def update_footer(self, *, stats: bool = True) -> None:
        footer_title.update_footer(self, stats=stats)

    # ----------------------------------------------------------------- session events

    def _on_event(self, event: SessionEvent) -> None:
        session_events.apply_event(self, event)
        self.extras.transcript_changed()
        self.redraw()

    # ----------------------------------------------------------------- submit

    def _on_submit(self, editor: Editor, text: str) -> None:
        self.submit(text, follow_up=False)

    def submit(self, text: str, *, follow_up: bool) -> None:
        prompt_input.submit(self, text, follow_up=follow_up)

    # ----------------------------------------------------------------- app actions

    def _on_action(self, editor: Editor, action: str) -> None:
        handler = self._actions().get(action)
        if handler is not None:
            handler()

    def _actions(self) -> dict[str, Callable[[], None]]:
        return {
            "app.interrupt": self.interrupt,
            "app.clear": self.clear,
            "app.exit": lambda: self.request_exit(0),
            "app.suspend": self.suspend,
            "app.thinking.cycle": self.cycle_thinking,
            "app.thinking.toggle": self.toggle_thinking,
            "app.model.select": lambda: self.open_model_picker(""),
            "app.model.cycleForward": lambda: self.cycle_model("forward"),
            "app.model.cycleBackward": lambda: self.cycle_model("backward"),
            "app.tools.expand": self.cycle_detail,
            "app.editor.external": self.external_editor,
            "app.message.followUp": self.follow_up,
            "app.message.dequeue": self.dequeue,
            "app.session.new": lambda: self._spawn_none(self.new_session()),
            "app.session.tree": lambda: self.run_slash("/tree"),
            "app.session.fork": lambda: self.run_slash("/fork"),
            "app.session.resume": lambda: self.run_slash("/resume"),
            "app.message.copy": self.copy_message,
        }

    def run_slash(self, text: str) -> None:
        """Run a built-in command as if typed (for keys bound to commands)."""
        from apex_tui.app._commands import run_command

        run_command(self, text)

    def interrupt(self) -> None:
        prompt_input.interrupt(self)

    def _restore_queue(self, *, report: bool) -> None:
        prompt_input.restore_queue(self, report=report)

    def dequeue(self) -> None:
        prompt_input.dequeue(self)

    def follow_up(self) -> None:
        prompt_input.follow_up(self)

    def copy_message(self) -> None:
        app_actions.copy_message(self)

    def clear(self) -> None:
        app_actions.clear(self)

    def cycle_detail(self) -> None:
        app_actions.cycle_detail(self)

    def toggle_thinking(self) -> None:
        app_actions.toggle_thinking(self)

    def cycle_thinking(self) -> None:
        app_actions.cycle_thinking(self)

    def cycle_model(self, direction: str) -> None:
        app_actions.cycle_model(self, direction)

    async def new_session(self) -> None:
        """`/new`."""
        if self.session.is_streaming:
            await self.session.abort()
        await self.runtime.new_session()
        self.rebind_session()
        self.feed.notice("success", "✓ New session started")
        self.redraw()

    # ----------------------------------------------------------------- pickers

    def close_picker(self) -> None:
        """Put the editor back (every open picker and dialog is dropped)."""
        self.modals.clear()
        self.slot.original_widget = self.editor
        self.redraw()

    def close_modal(self, widget: Any) -> None:
        """Take down the picker or dialog `widget` if it is open."""
        modal = self.modals.get(id(widget))
        if modal is not None:
            modal.close()

    def open_widgets(self) -> list[Any]:
        """The editor and every picker or dialog still open."""
        return [self.editor, *(modal.widget for modal in self.modals.values() if not modal.closed)]

    def open_model_picker(self, query: str) -> None:
        app_actions.open_model_picker(self, query)

    def select_model(self, model: Any) -> None:
        app_actions.select_model(self, model)

    # ----------------------------------------------------------------- title and theme

    def update_title(self) -> None:
        footer_title.update_title(self)

    def set_title(self, title: str) -> None:
        footer_title.set_title(self, title)

    def apply_theme(self, theme: Theme) -> None:
        theme_switching.apply_theme(self, theme)

    def use_theme(self, source: ThemeSource) -> Theme:
        return theme_switching.use_theme(self, source)

    def _theme_file_changed(self, theme: Theme) -> None:
        theme_switching.theme_file_changed(self, theme)

    def set_layout(self, fullscreen: bool) -> None:
        terminal.set_layout(self, fullscreen)

    # ----------------------------------------------------------------- terminal hand-offs

    def _screen(self) -> Any:
        # Any: urwid's screen base class has no typed start/stop pair for every display.
        return terminal.screen(self)

    def external_editor(self) -> None:
        terminal.external_editor(self)

    def suspend(self) -> None:
        terminal.suspend(self)

    # ----------------------------------------------------------------- commands for autocomplete

    def command_infos(self) -> list[CommandInfo]:
        """`/` autocomplete: built-in commands, then the session's extension commands, prompt templates and
        `skill:` commands (a name a built-in already has is left out)."""
        from apex_tui.app._commands import COMMANDS

        infos = [CommandInfo(c.name, c.description, c.argument_hint) for c in COMMANDS]
        seen = {c.name for c in COMMANDS}
        try:
            extra = self.session.get_commands()
        except Exception:  # a broken extension must not break typing `/`
            extra = []
        for record in extra:
            name = record.get("name")
            if isinstance(name, str) and name not in seen:
                seen.add(name)
                description = record.get("description")
                infos.append(CommandInfo(name, description if isinstance(description, str) else ""))
        from apex_tui.app._mcp_panel import mcp_prompt_infos

        return [*infos, *mcp_prompt_infos(self.runtime)]

    def reload_keybindings(self) -> tuple[str, ...]:
        """Re-read keybindings.json and hand the new manager to every widget; returns its warnings."""
        loaded = self.keymap_loader()
        self.keymap = loaded.manager
        for holder in (self.editor, self.transcript, self.root):
            holder.keymap = loaded.manager
        self.ctx.expand_hint = self.keymap.display("app.tools.expand") or "ctrl+o"
        return loaded.warnings

    def make_main_loop(self, screen: urwid.BaseScreen, aio_loop: asyncio.AbstractEventLoop) -> urwid.MainLoop:
        return terminal.make_main_loop(self, screen, aio_loop)


__all__ = ["InteractiveApp", "PendingArea", "StatusLine", "TranscriptView"]
