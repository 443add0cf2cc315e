"""Extensions in the TUI: `ctx.ui` (the extension layer's `UiBinding`), extension widgets, and shortcuts.

`TuiUi` answers extension dialogs with the app's pickers in the editor slot: `select` → `SelectDialog`, `confirm` →
`ConfirmDialog`, `input` → `InputDialog`, `editor` → `EditorDialog` (a multi-line editor). A dialog resolves with
its answer, or with its default (`None`, `False` for `confirm`) on Esc, when `timeout` milliseconds pass (the title
counts down while the main loop runs) or when `signal` aborts; the dialog is then taken down. `custom` is not
supported and resolves None. Fire-and-forget calls change the app at once: `notify` adds a transcript notice,
`set_status` a footer text, `set_widget` lines above or below the editor, `set_title` the terminal title.

`ShortcutTable` turns `register_shortcut` keys into urwid key names, following the reserved-key rules through
`check_extension_shortcut` (keys of reserved ids are skipped, other clashes win with a warning).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

import urwid

from apex_ai.abort import AbortSignal
from apex_coding_agent import RegisteredShortcut
from apex_tui.app._modal import show_modal
from apex_tui.editor import Editor
from apex_tui.keybindings import KeybindingManager, KeyParseError, check_extension_shortcut, parse_key, to_urwid_names
from apex_tui.theme import Theme
from apex_tui.widgets import DetailLevel
from apex_tui.widgets._canvas import Size, blank, flow_width, stack, text_canvas
from apex_tui.widgets.pickers import ConfirmDialog, InputDialog, SelectDialog

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

T = TypeVar("T")
NotifyType = Literal["info", "warning", "error"]
Placement = Literal["aboveEditor", "belowEditor"]
MAX_WIDGET_LINES = 10
"""An extension widget shows at most this many lines."""


class WidgetArea(urwid.Widget):
    """Extension widgets of one placement (above or below the editor), in the order they were first set."""

    _sizing = frozenset([urwid.Sizing.FLOW])
    _selectable = False
    ignore_focus = True

    def __init__(self) -> None:
        super().__init__()
        self.widgets: dict[str, tuple[str, ...]] = {}

    def set(self, key: str, lines: Sequence[str] | None) -> None:
        """Show `lines` as widget `key` (at most `MAX_WIDGET_LINES`); None removes it."""
        if lines is None:
            self.widgets.pop(key, None)
        else:
            self.widgets[key] = tuple(line.replace("\n", " ") for line in lines)[:MAX_WIDGET_LINES]
        self._invalidate()

    def lines(self) -> list[str]:
        """Every line shown, widget after widget."""
        return [line for lines in self.widgets.values() for line in lines]

    def rows(self, size: tuple[int], focus: bool = False) -> int:
        """One row per line; zero without widgets."""
        return len(self.lines())

    def render(self, size: Size, focus: bool = False) -> urwid.Canvas:
        """Each line cut to the width."""
        width = flow_width(size)
        lines = self.lines()
        if not lines:
            return blank(width, 0)
        return stack([text_canvas(line, width, wrap="ellipsis") for line in lines])


class EditorDialog(urwid.WidgetWrap[urwid.Pile]):
    """`ui.editor`: a title rule over a multi-line editor. `tui.input.submit` emits `submit` with the text;
    `app.interrupt` (Esc) emits `cancel`."""

    signals: ClassVar[list[str]] = ["submit", "cancel", "timeout"]

    def __init__(self, title: str, keymap: KeybindingManager, prefill: str = "") -> None:
        self.editor = Editor(keymap)
        self.editor.set_text(prefill)
        urwid.connect_signal(self.editor, "submit", lambda _e, text: self._emit("submit", text))
        urwid.connect_signal(self.editor, "action", self._on_action)
        hint = f"{keymap.display('tui.input.submit') or 'enter'} submit · {keymap.display('app.interrupt') or 'esc'} cancel"
        super().__init__(urwid.Pile([urwid.Text(("accent", title)), self.editor, urwid.Text(("dim", hint))]))
        self._w.focus_position = 1

    def _on_action(self, _editor: Editor, action: str) -> None:
        if action == "app.interrupt":
            self._emit("cancel")

    @property
    def text(self) -> str:
        """The text typed so far."""
        return self.editor.text


class ShortcutTable:
    """Extension shortcuts by urwid key name; see the module docstring."""

    def __init__(self) -> None:
        self.by_key: dict[str, RegisteredShortcut] = {}
        self._built_for: tuple[KeybindingManager, tuple[RegisteredShortcut, ...]] | None = None
        self._warned: set[str] = set()

    def _is_current(self, manager: KeybindingManager, shortcuts: Sequence[RegisteredShortcut]) -> bool:
        # Identity, not (extension, key): a reloaded extension registers new shortcut objects (new handlers) for the
        # same keys. The objects are held here, so an identity cannot be reused by a later object.
        if self._built_for is None:
            return False
        built_manager, built = self._built_for
        return (
            built_manager is manager
            and len(built) == len(shortcuts)
            and all(old is new for old, new in zip(built, shortcuts, strict=True))
        )

    def refresh(self, manager: KeybindingManager, shortcuts: Sequence[RegisteredShortcut]) -> list[str]:
        """Rebuild when the keymap or any shortcut object changed (a reload registers new ones, even for the same
        keys); returns warnings not reported before."""
        if self._is_current(manager, shortcuts):
            return []
        self._built_for = (manager, tuple(shortcuts))
        self.by_key = {}
        fresh: list[str] = []
        for shortcut in shortcuts:
            warning: str | None = None
            try:
                spec = parse_key(shortcut.key)
            except KeyParseError as exc:
                warning = f"{shortcut.extension_path}: shortcut {shortcut.key!r} ignored: {exc}"
            else:
                check = check_extension_shortcut(manager, spec, shortcut.extension_path)
                warning = check.warning
                if check.allowed:
                    for name in to_urwid_names(spec):
                        self.by_key.setdefault(name, shortcut)  # the first extension to claim a key keeps it
            if warning is not None and warning not in self._warned:
                self._warned.add(warning)
                fresh.append(warning)
        return fresh


class TuiUi:
    """`ctx.ui` in the interactive app; see the module docstring."""

    has_ui = True
    mode = "tui"

    def __init__(self, app: InteractiveApp) -> None:
        self.app = app
        self.statuses: dict[str, str] = {}
        self.above = WidgetArea()
        self.below = WidgetArea()

    # ----------------------------------------------------------------- dialogs

    async def select(
        self, title: str, options: list[str], *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        """The chosen option, or None."""
        dialog = SelectDialog(title, list(options), self.app.keymap, hint="enter select · esc cancel")
        return await self._ask(dialog, {"select": lambda value: str(value)}, None, timeout, signal)

    async def confirm(
        self, title: str, message: str, *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> bool:
        """True only when confirmed."""
        dialog = ConfirmDialog(title, self.app.keymap, message=message, hint="enter yes · esc no")
        return await self._ask(dialog, {"confirm": lambda _: True}, False, timeout, signal)

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout: int | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        """The typed line, or None."""
        dialog = InputDialog(title, self.app.keymap, placeholder=placeholder or "", hint="enter submit · esc cancel")
        return await self._ask(dialog, {"submit": lambda text: str(text)}, None, timeout, signal)

    async def editor(
        self, title: str, prefill: str | None = None, *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        """The edited text, or None."""
        dialog = EditorDialog(title, self.app.keymap, prefill or "")
        return await self._ask(dialog, {"submit": lambda text: str(text)}, None, timeout, signal)

    async def _ask(
        self,
        widget: urwid.Widget,
        answers: Mapping[str, Callable[[Any], T]],
        default: T,
        timeout: int | None,
        signal: AbortSignal | None,
    ) -> T:
        # Any: signal payloads differ per dialog; each answer function turns its payload into the result.
        if signal is not None and signal.aborted:
            return default
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()

        def settle(value: T) -> None:
            if not future.done():
                future.set_result(value)

        def answering(answer: Callable[[Any], T]) -> Callable[[Any], None]:
            return lambda payload: settle(answer(payload))

        handlers: dict[str, Callable[[Any], object]] = {name: answering(fn) for name, fn in answers.items()}
        for name in ("cancel", "timeout"):
            handlers.setdefault(name, answering(lambda _payload: default))
        modal = show_modal(self.app, widget, handlers)
        remove_abort = signal.add_callback(lambda: settle(default)) if signal is not None else None
        countdown = getattr(widget, "countdown", None)
        if timeout is not None and self.app.main_loop is not None and countdown is not None:
            countdown.start(self.app.main_loop, max(1, math.ceil(timeout / 1000)))
        try:
            if timeout is None:
                return await future
            try:
                return await asyncio.wait_for(asyncio.shield(future), timeout / 1000)
            except TimeoutError:
                return default
        finally:
            if countdown is not None:
                countdown.stop()
            modal.close()
            if remove_abort is not None:
                remove_abort()

    async def custom(self, *args: Any, **kwargs: Any) -> None:  # Any: pi's custom(factory, options) signature
        """Custom components are not supported in this port: resolves None."""
        return None

    # ----------------------------------------------------------------- fire and forget

    def notify(self, message: str, notify_type: NotifyType | None = None) -> None:
        """A transcript notice (`info` when no type is given)."""
        kind = notify_type if notify_type in ("warning", "error") else "info"
        self.app.notify(message, kind)

    def set_status(self, key: str, text: str | None = None) -> None:
        """Footer status `key` (line 3, sorted by key); None clears it."""
        if text is None:
            self.statuses.pop(key, None)
        else:
            self.statuses[key] = text.replace("\n", " ")
        self.app.footer.update(extension_statuses=tuple(sorted(self.statuses.items())))
        self.app.redraw()

    def set_widget(self, key: str, lines: list[str] | None = None, placement: Placement | None = None) -> None:
        """Lines above (default) or below the editor; None removes the widget."""
        self.above.set(key, None)
        self.below.set(key, None)
        if lines is not None:
            (self.below if placement == "belowEditor" else self.above).set(key, lines)
        self.app.redraw()

    def set_title(self, title: str) -> None:
        """The terminal title, until the session name changes it again."""
        self.app.set_title(title)

    def set_editor_text(self, text: str) -> None:
        """Replace the prompt editor's text."""
        self.app.editor.set_text(text)
        self.app.redraw()

    def get_editor_text(self) -> str:
        """The prompt editor's text."""
        return self.app.editor.text

    def paste_to_editor(self, text: str) -> None:
        """Paste at the cursor, as a bracketed paste would (large pastes become markers)."""
        self.app.editor.paste(text)
        self.app.redraw()

    def get_tools_expanded(self) -> bool:
        """Whether tool output is shown beyond the overview."""
        return self.app.ctx.detail is not DetailLevel.OVERVIEW

    def set_tools_expanded(self, expanded: bool) -> None:
        """`details` when expanded, else `overview`."""
        self.app.transcript.set_detail(DetailLevel.DETAILS if expanded else DetailLevel.OVERVIEW)
        self.app.redraw()

    def set_working_message(self, message: str | None = None) -> None:
        """The status-line text while the agent works (None: `Working...`)."""
        self.app.working_message = message or None
        if self.app.status.running and self.app.session.is_streaming:
            self.app.status.start(self.app.working_message or "Working...")
        self.app.redraw()

    # Not supported in this port (TUI component factories); accepted and ignored so extensions keep running.
    def set_working_indicator(self, *args: Any, **kwargs: Any) -> None:  # Any: pi's component signature
        return None

    def set_footer(self, *args: Any, **kwargs: Any) -> None:  # Any: pi's component signature
        return None

    def set_header(self, *args: Any, **kwargs: Any) -> None:  # Any: pi's component signature
        return None

    def set_editor_component(self, *args: Any, **kwargs: Any) -> None:  # Any: pi's component signature
        return None

    # ----------------------------------------------------------------- themes

    def get_all_themes(self) -> list[dict[str, str | None]]:
        """`{name, path}` of every available theme (path None for built-ins)."""
        return [
            {"name": source.name, "path": str(source.path) if source.path is not None else None}
            for source in self.app.themes.sources()
        ]

    def get_theme(self, name: str | None = None) -> Theme | None:
        """The active theme, or the theme called `name` (None when there is none)."""
        if name is None:
            return self.app.theme
        source = self.app.themes.source(name)
        return self.app.themes.parse(source) if source is not None else None

    def set_theme(self, theme: str | Theme) -> dict[str, Any]:  # Any: {success, error?} JSON-like result
        """Switch to a theme by name or object for this run (the `theme` setting is not changed)."""
        if isinstance(theme, Theme):
            self.app.apply_theme(theme)
            self.app.theme_watcher.watch(None)  # an object has no file to reload
            return {"success": True}
        source = self.app.themes.source(str(theme))
        if source is None:
            return {"success": False, "error": f'Theme "{theme}" not found'}
        self.app.use_theme(source)
        return {"success": True}
