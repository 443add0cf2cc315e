"""The interactive app: owns the session runtime and the widgets, and connects them.

Widgets never hold the session: the editor and pickers emit signals, this class acts on the session, and session
events (on the same asyncio loop) update the blocks and ask for a throttled redraw.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import urwid

from apex_agent import events as aev
from apex_ai.types import AssistantMessage, Model, UserMessage
from apex_coding_agent.collector import collector_paused
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.messages import CustomMessage
from apex_coding_agent.resources.loader import PackageResource
from apex_coding_agent.resources.themes import ThemeFlags, ThemeSource
from apex_coding_agent.runtime import AgentSession, AgentSessionRuntime, SessionEvent
from apex_coding_agent.runtime import events as ev
from apex_tui.app._approval import ApprovalResponder
from apex_tui.app._changelog import Changelog, installed_changelogs
from apex_tui.app._extension_ui import ShortcutTable, TuiUi
from apex_tui.app._feed import TranscriptFeed, edit_preview, image_refs, result_text
from apex_tui.app._fullscreen import FullscreenExtras
from apex_tui.app._history import LazyHistory, prompt_history
from apex_tui.app._layout import Root
from apex_tui.app._modal import Modal
from apex_tui.app._screen import input_filter, terminal_keys_notice
from apex_tui.app._themes import POLL_SECONDS, ThemeCatalog, ThemeWatcher
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

DOUBLE_PRESS_SECONDS = 0.5
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
        self._bind_extensions()
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
        self._start_extensions_soon()

    # ----------------------------------------------------------------- session binding

    @property
    def session(self) -> AgentSession:
        """The active session (replaced by /new, /resume, ...)."""
        return self.runtime.session

    @property
    def runner(self) -> ExtensionRunner | None:
        """The extension runner of the runtime, if extensions are loaded."""
        return self.runtime.extension_runner

    def _bind_extensions(self) -> None:
        """Extensions talk to this app: `ctx.ui` is `self.ui`, failures are error lines, `ctx.shutdown()` quits."""
        runner = self.runner
        if runner is None:
            return
        runner.set_ui(self.ui, "tui")
        runner.on_error(
            lambda error: self.notify(
                f"Extension error ({error.extension_path}, {error.event}): {error.error}", "error"
            )
        )
        self.runtime.shutdown_handler = lambda: self._spawn_none(self._shutdown_when_idle())

    async def _shutdown_when_idle(self) -> None:
        await self.session.wait_for_idle()
        self.request_exit(0)

    def _start_extensions_soon(self) -> None:
        """Emit `session_start` once the UI is bound: now inside a running loop, else when the main loop starts."""
        if self.runner is None:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # `make_main_loop` schedules it
        self.start_extensions()

    def start_extensions(self) -> None:
        """`session_start` for the extensions (once; a no-op when the startup code already emitted it)."""
        if self._extensions_started or self.runner is None:
            return
        self._extensions_started = True
        self.spawn(self.runtime.start_extensions())

    def refresh_shortcuts(self) -> None:
        """Pick up shortcuts registered since the last look (and a new keymap); each warning is shown once."""
        runner = self.runner
        if runner is not None:
            for warning in self.shortcuts.refresh(self.keymap, runner.get_shortcuts()):
                self.notify(warning, "warning")

    def run_extension_shortcut(self, key: str) -> bool:
        """Run the extension shortcut bound to `key`; False when none is."""
        runner = self.runner
        if runner is None:
            return False
        self.refresh_shortcuts()
        shortcut = self.shortcuts.by_key.get(key)
        if shortcut is None:
            return False
        event = f"shortcut:{shortcut.key}"
        try:
            value = shortcut.handler(runner.create_context())
        except Exception as exc:  # an extension's bug is reported, never raised into the key handling
            runner.report_error(shortcut.extension_path, event, exc)
            return True
        if inspect.isawaitable(value):
            self.spawn(self._await_extension(value, runner, shortcut.extension_path, event))
        return True

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
        self._open_history(head=0)
        self._load_messages_soon()
        self.redraw()

    def _open_history(self, head: int) -> None:
        """The session's newest messages become blocks after transcript position `head`; older ones later."""
        session = self.session
        deferred = session.deferred_messages
        if deferred is not None:
            newest = self.history.open_deferred(deferred, head=head)
        else:
            newest = self.history.open(session.messages, head=head)
        for message in newest:
            self.feed.add_message(message)

    def _load_messages_soon(self) -> None:
        """Once the next frame is on screen, hand the agent the rest of a deferred session's messages, a slice per
        event-loop turn (keys are read and drawn in between); the footer's usage figures, which need every message,
        follow. Without a main loop nothing is scheduled: the first use of the agent completes them."""
        loop = self.main_loop
        if loop is None or self.session.deferred_messages is None:
            return
        loop.set_alarm_in(0, lambda *_: loop.set_alarm_in(0, lambda *_: self._spawn_none(self._load_messages())))

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
            self._fill_stats_after_frame()
            self.redraw()

    def _before_draw(self) -> None:
        """Before each frame: older history when the view nears its top, then the search's re-run; and the footer's
        usage figures, when they are still due, right after this frame."""
        if self.history.load_if_near_top():
            self.extras.transcript_changed()
        self.extras.before_draw()
        if not self._keys_checked and self.main_loop is not None:
            notice = terminal_keys_notice(self.main_loop.screen, os.environ)
            if notice is not None:
                self._keys_checked = True
                self.feed.notice("warning", notice)
        if self._stats_due:
            self._fill_stats_after_frame()

    def _fill_stats_after_frame(self) -> None:
        """Fill in the footer's usage figures once the frame being drawn is on screen.

        An alarm set while a frame is drawn runs after it. Without a main loop (headless use) they are filled in
        now, before the frame: there is no later point to wait for.
        """
        loop = self.main_loop
        if loop is None:
            self.update_footer()
            return
        if self._stats_alarm is not None:
            return

        def fill(_loop: object = None, _data: object = None) -> None:
            self._stats_alarm = None
            if self.session.deferred_messages is not None:
                return  # the figures need every message: `_load_messages` fills them in once the agent has them
            if self._stats_due and not self.exiting:
                self.update_footer()
                self.redraw()

        self._stats_alarm = loop.set_alarm_in(0, fill)

    def _before_viewport_key(self, key: str) -> None:
        """Jumping to the very top needs every older block first."""
        if self.keymap.matches(key, "tui.altScreen.top"):
            self.load_history()

    def load_history(self) -> None:
        """Turn every kept-aside older message into blocks (search and the top of the transcript need them)."""
        if self.history.load_all():
            self.extras.transcript_changed()

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
        self._open_history(head=len(self.transcript))
        for warning in (*key_warnings, *warnings):
            self.feed.notice("warning", warning)
        if self.session.model is None:
            self.feed.add(CustomMessageBlock(self.ctx, "setup", no_model_help(self.agent_dir)))

    # ----------------------------------------------------------------- redraw and tasks

    def attach(self, main_loop: urwid.MainLoop) -> None:
        """Use `main_loop` for alarms and redraws (and start polling the active theme file)."""
        self.main_loop = main_loop
        self.status.attach(main_loop)
        self._schedule_theme_poll()

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
        """Model, thinking level, session name and usage totals; with `stats=False`, everything but the usage
        figures, which the footer then leaves out until a full update (`stats_reads` counts full updates)."""
        session = self.session
        model = session.model
        changes: dict[str, Any] = {
            "session_name": session.session_name,
            "model_id": model.id if model else None,
            "provider": model.provider if model else None,
            "reasoning": bool(model.reasoning) if model else False,
            "thinking_level": session.thinking_level,
            "auto_compact": session.auto_compaction_enabled,
        }
        if not stats:
            changes["stats_pending"] = True
            self.footer.update(**changes)
            return
        self._stats_due = False
        self.stats_reads += 1
        # Looked up with the usage figures (after the first frame): it walks the model catalog.
        changes["show_provider"] = self._several_providers()
        changes["stats_pending"] = False
        try:
            figures = session.get_session_stats()
        except Exception:  # stats are decoration: a footer must never break the app
            figures = None
        if figures is not None:
            changes.update(
                input_tokens=figures.tokens.input,
                output_tokens=figures.tokens.output,
                cache_read_tokens=figures.tokens.cache_read,
                cache_write_tokens=figures.tokens.cache_write,
                cost=figures.cost,
            )
            usage = figures.context_usage
            if usage is not None:
                changes.update(context_percent=usage.percent, context_window=usage.context_window)
        self.footer.update(**changes)

    def _several_providers(self) -> bool:
        """Whether models of more than one provider can be used: the footer then names the model's provider."""
        runtime = self.session.model_runtime
        try:
            first: dict[str, Model] = {}  # one model per provider: availability is per provider
            for model in runtime.registry.list_models():
                first.setdefault(model.provider, model)
            return len(first) > 1 and sum(1 for m in first.values() if runtime.is_available(m)) > 1
        except Exception:  # decoration: a footer must never break the app
            return False

    # ----------------------------------------------------------------- session events

    def _on_event(self, event: SessionEvent) -> None:
        self._apply_event(event)
        self.extras.transcript_changed()
        self.redraw()

    def _apply_event(self, event: SessionEvent) -> None:
        feed = self.feed
        if isinstance(event, aev.AgentStartEvent):
            self.status.start(self.working_message or "Working...")
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
                self.update_footer()
        elif isinstance(event, aev.ToolExecutionStartEvent):
            feed.tool_start(event.tool_call_id, event.tool_name, event.args)
            if event.tool_name == "edit":
                # Before the permission question: the pending block shows the file's own line numbers.
                feed.tool_preview(event.tool_call_id, edit_preview(self.session.cwd, event.args))
        elif isinstance(event, aev.ToolExecutionUpdateEvent):
            feed.tool_update(event.tool_call_id, event.partial_result)
        elif isinstance(event, aev.ToolExecutionEndEvent):
            result = event.result
            text = result_text(getattr(result, "content", None))
            content = getattr(result, "content", None)
            feed.tool_result(
                event.tool_call_id, text, event.is_error, getattr(result, "details", None), image_refs(content)
            )
        elif isinstance(event, ev.QueueUpdateEvent):
            self.pending.set_queues(event.steering, event.follow_up, self.keymap.display("app.message.dequeue"))
        elif isinstance(event, ev.BashExecutionUpdateEvent):
            if feed.bash_block is not None:
                feed.bash_block.append_output(event.delta)
        elif isinstance(event, ev.CompactionStartEvent):
            manual = event.reason == "manual"
            self.status.start("Compacting context..." if manual else "Auto-compacting... (escape to cancel)")
        elif isinstance(event, ev.CompactionEndEvent):
            self.status.stop()
            if event.aborted:
                feed.notice("status", "Compaction cancelled")
            elif event.error_message:
                feed.notice("error", event.error_message)
            self._release_held()
        elif isinstance(event, ev.AutoRetryStartEvent):
            seconds = max(1, round(event.delay_ms / 1000))
            self.status.start(f"Retrying ({event.attempt}/{event.max_attempts}) in {seconds}s... (escape to cancel)")
        elif isinstance(event, ev.AgentSettledEvent):
            self.status.stop()
            self.update_footer()
        elif isinstance(event, ev.SessionWriteErrorEvent):
            feed.notice("error", event.error)  # the run stopped: say why, or the session just looks idle
        elif isinstance(event, ev.ThinkingLevelChangedEvent | ev.SessionInfoChangedEvent):
            self.update_footer()
            self.update_title()

    # ----------------------------------------------------------------- submit

    def _on_submit(self, editor: Editor, text: str) -> None:
        self.submit(text, follow_up=False)

    def submit(self, text: str, *, follow_up: bool) -> None:
        """Commands run locally, `!` runs bash, else a prompt (queued while streaming)."""
        from apex_tui.app._commands import run_command

        stripped = text.strip()
        if not stripped:
            return
        if stripped.startswith("/") and run_command(self, stripped):
            self.editor.clear(submitted=text)
            return
        if stripped.startswith("!"):
            self._run_bash(stripped, text)
            return
        session = self.session
        if session.model is None and not self._is_extension_command(stripped):
            self.notify("No model selected. Set a provider key or add a models.json provider, then /model.", "error")
            return
        self.editor.clear(submitted=text)
        if session.is_compacting:
            self._held.append((text, follow_up))
            self.notify("Queued message for after compaction")
        elif session.is_streaming:
            self.spawn(session.prompt(text, streaming_behavior="followUp" if follow_up else "steer"))
        else:
            self.spawn(self._prompt(text))

    def _is_extension_command(self, text: str) -> bool:
        """Whether `text` runs an extension command (those work without a model)."""
        runner = self.runner
        if runner is None or not text.startswith("/"):
            return False
        return runner.get_command(text[1:].split(None, 1)[0] if len(text) > 1 else "") is not None

    async def _prompt(self, text: str) -> None:
        try:
            await self.session.prompt(text)
        except RuntimeError as exc:
            self.notify(str(exc), "error")
        finally:
            self.status.stop()
            self.update_footer()
            self.redraw()

    def _release_held(self) -> None:
        held, self._held = self._held, []
        for text, follow_up in held:
            self.submit(text, follow_up=follow_up)

    def _run_bash(self, command_text: str, original: str) -> None:
        session = self.session
        if session.is_bash_running:
            self.notify("A bash command is already running. Press Esc to cancel it first.", "warning")
            return
        exclude = command_text.startswith("!!")
        command = command_text[2:] if exclude else command_text[1:]
        if not command.strip():
            return
        self.editor.clear(submitted=original)
        block = self.feed.start_bash(command.strip(), exclude=exclude)

        async def run() -> None:
            result = await session.execute_bash(command.strip(), exclude_from_context=exclude)
            block.finish(result.exit_code, cancelled=result.cancelled, full_output_path=result.full_output_path)
            self.redraw()

        self.spawn(run())

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
        """`app.interrupt`."""
        session = self.session
        if self.summarizing:
            session.abort_branch_summary()
        elif session.is_bash_running:
            session.abort_bash()
        elif session.is_compacting:
            session.abort_compaction()
        elif session.is_streaming:
            self._restore_queue(report=False)
            if session.is_retrying:
                session.abort_retry()
            self.spawn(session.abort())
        elif self.editor.text.startswith("!"):
            self.editor.clear()
        elif not self.editor.text:
            now = self.clock()
            if now - self._last_escape <= DOUBLE_PRESS_SECONDS:
                from apex_tui.app._tree_flow import double_escape

                self._last_escape = -10.0
                double_escape(self)
            else:
                self._last_escape = now

    def _restore_queue(self, *, report: bool) -> None:
        cleared = self.session.clear_queue()
        texts = [*cleared.steering, *cleared.follow_up]
        if texts:
            current = self.editor.text
            self.editor.set_text("\n\n".join([*texts, current] if current else texts))
        self.pending.set_queues([], [], "")
        if report:
            if texts:
                noun = "message" if len(texts) == 1 else "messages"
                self.notify(f"Restored {len(texts)} queued {noun} to editor")
            else:
                self.notify("No queued messages to restore")

    def dequeue(self) -> None:
        """`app.message.dequeue`: queued texts back into the editor."""
        self._restore_queue(report=True)

    def follow_up(self) -> None:
        """`app.message.followUp`: queue as follow-up while streaming, else submit."""
        text = self.editor.expanded_text()
        self.submit(text, follow_up=True)

    def copy_message(self) -> None:
        """`app.message.copy`: the kept mouse selection (fullscreen, `fullscreenCopyOnSelect: false`), else the
        last assistant message."""
        if self.root.fullscreen and self.extras.copy_selection():
            return
        text = self.session.get_last_assistant_text()
        if not text:
            self.notify("No agent message to copy", "error")
            return
        if self.root.fullscreen:
            self.extras.copy(text)
        else:
            from apex_tui.app._clipboard import copy_to_clipboard

            copy_to_clipboard(text)
            self.notify("Copied last agent message to clipboard")

    def clear(self) -> None:
        """`app.clear`: clear the editor; a second press within 500 ms quits."""
        now = self.clock()
        if now - self._last_clear <= DOUBLE_PRESS_SECONDS:
            self.request_exit(0)
            return
        self._last_clear = now
        self.editor.clear()

    def cycle_detail(self) -> None:
        """`app.tools.expand`: overview → details → all."""
        level = self.transcript.cycle_detail()
        self.notify(f"Conversation detail: {level.value}")

    def toggle_thinking(self) -> None:
        """`app.thinking.toggle`: flip and persist `hideThinkingBlock`."""
        hide = not self.ctx.hide_thinking
        self.session.settings_manager.set("hideThinkingBlock", hide)
        self.transcript.set_hide_thinking(hide)
        self.notify(f"Thinking blocks: {'hidden' if hide else 'visible'}")

    def cycle_thinking(self) -> None:
        """`app.thinking.cycle`."""
        level = self.session.cycle_thinking_level()
        self.notify("Current model does not support thinking" if level is None else f"Thinking level: {level}")
        self.update_footer()

    def cycle_model(self, direction: str) -> None:
        """`app.model.cycleForward` / `cycleBackward`."""
        try:
            result = self.session.cycle_model("forward" if direction == "forward" else "backward")
        except RuntimeError as exc:
            self.notify(str(exc), "error")
            return
        if result is None:
            self.notify("Only one model in scope")
        else:
            thinking = f" (thinking: {result.thinking_level})" if result.model.reasoning else ""
            self.notify(f"Switched to {result.model.name or result.model.id}{thinking}")
        self.update_footer()

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
        """`/model` and `app.model.select`."""
        from apex_tui.app._models_flow import open_model_picker

        open_model_picker(self, query)

    def select_model(self, model: Any) -> None:
        """Switch the session model (settings untouched)."""
        try:
            self.session.set_model(model)
        except RuntimeError as exc:
            self.notify(str(exc), "error")
            return
        self.notify(f"Model: {model.id}")
        self.update_footer()

    # ----------------------------------------------------------------- title and theme

    def update_title(self) -> None:
        """Terminal title `apex-code - <session name> - <cwd basename>` (name omitted when unnamed)."""
        self.custom_title = None
        if self.title_sink is None:
            return
        name = self.session.session_name
        parts = ["apex-code", *([name] if name else []), os.path.basename(self.cwd.rstrip("/")) or "/"]
        self.title_sink(" - ".join(parts))

    def set_title(self, title: str) -> None:
        """An extension's terminal title (kept until the session name changes)."""
        self.custom_title = title
        if self.title_sink is not None:
            self.title_sink(title)

    def apply_theme(self, theme: Theme) -> None:
        """Use `theme` from now on (palette re-registered, every cached render dropped)."""
        self.theme = theme
        if self.main_loop is not None:
            self.main_loop.screen.register_palette(theme.palette())
            self.main_loop.screen.clear()
        self.transcript.set_theme_key(self.ctx.theme_key + 1)
        self.redraw()

    def use_theme(self, source: ThemeSource) -> Theme:
        """Activate the discovered theme `source` and hot-reload its file from now on; returns the `Theme`."""
        theme = self.themes.parse(source)
        self.apply_theme(theme)
        self.theme_watcher.watch(source if theme.name == source.name else None)
        self._schedule_theme_poll()
        return theme

    def _theme_file_changed(self, theme: Theme) -> None:
        self.apply_theme(theme)
        self.notify(f"Theme reloaded: {theme.name}")

    def _schedule_theme_poll(self) -> None:
        """Poll the active theme file every `POLL_SECONDS` while one is watched (one alarm at a time)."""
        loop = self.main_loop
        if loop is None or self._theme_alarm is not None or self.theme_watcher.path is None:
            return

        def tick(_loop: object = None, _data: object = None) -> None:
            self._theme_alarm = None
            self.theme_watcher.poll()
            self._schedule_theme_poll()

        self._theme_alarm = loop.set_alarm_in(POLL_SECONDS, tick)

    def set_layout(self, fullscreen: bool) -> None:
        """Switch between the regular and the fullscreen layout now: the screen restarts on the main or the
        alternate buffer, mouse handling and the transcript's scrollbar follow."""
        if self.root.fullscreen == fullscreen:
            return
        self.root.fullscreen = fullscreen
        scrollbar = self.session.settings_manager.get("fullscreenScrollbar")
        self.transcript.set_scrollbar(
            scrollbar if fullscreen and scrollbar in ("auto", "always", "hidden") else "hidden"
        )
        self.transcript.mouse_select = fullscreen
        loop = self.main_loop
        if loop is None:
            return
        screen = self._screen()
        restart = bool(getattr(screen, "started", False)) and hasattr(screen, "fullscreen")
        if restart:
            screen.stop()
            screen.fullscreen = fullscreen
        loop.handle_mouse = fullscreen
        if restart:
            screen.start()
        screen.set_mouse_tracking(fullscreen)
        loop.screen_size = None
        screen.clear()
        loop.draw_screen()

    # ----------------------------------------------------------------- terminal hand-offs

    def _screen(self) -> Any:
        # Any: urwid's screen base class has no typed start/stop pair for every display.
        return self.main_loop.screen if self.main_loop is not None else None

    def external_editor(self) -> None:
        """`app.editor.external`: edit the expanded text in `$VISUAL` / `$EDITOR` / `nano`."""
        settings_editor = self.session.settings_manager.get("externalEditor")
        command = settings_editor or os.environ.get("VISUAL") or os.environ.get("EDITOR") or "nano"
        screen = self._screen()
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False, encoding="utf-8") as handle:
            handle.write(self.editor.expanded_text())
            path = handle.name
        try:
            if screen is not None:
                screen.stop()
            code = subprocess.call([*shlex.split(command), path])
            if code == 0:
                text = Path(path).read_text(encoding="utf-8").removesuffix("\n")
                self.editor.set_text(text)
        finally:
            os.unlink(path)
            if screen is not None:
                screen.start()
                if self.main_loop is not None:
                    self.main_loop.screen_size = None
                    self.main_loop.draw_screen()

    def suspend(self) -> None:
        """`app.suspend`: stop the UI, stop the process group; redraw on `fg`."""
        screen = self._screen()
        if screen is not None:
            screen.stop()
        os.kill(0, signal.SIGTSTP)
        if screen is not None:
            screen.start()
            if self.main_loop is not None:
                self.main_loop.screen_size = None
                self.main_loop.draw_screen()

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
        """The urwid main loop on `aio_loop`. Links become OSC 8 hyperlinks when the screen shows them."""
        self.ctx.markdown.set_hyperlinks(bool(getattr(screen, "hyperlinks", False)))
        loop = urwid.MainLoop(
            self.root,
            palette=self.theme.palette(),
            screen=screen,
            event_loop=urwid.AsyncioEventLoop(loop=aio_loop),
            input_filter=input_filter,  # type: ignore[arg-type]  # urwid's hint is narrower than what it passes
            handle_mouse=self.root.fullscreen,
            pop_ups=False,
        )
        self.attach(loop)
        self._load_messages_soon()
        if self.runner is not None and not self._extensions_started:
            loop.set_alarm_in(0, lambda *_: self.start_extensions())
        return loop


__all__ = ["InteractiveApp", "PendingArea", "StatusLine", "TranscriptView"]
