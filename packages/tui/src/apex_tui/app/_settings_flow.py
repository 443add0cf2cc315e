"""`/settings` (boolean and choice rows that cycle on Enter), `/login` and `/logout` with API keys.

Every settings change applies to the running app where it can and is written at once. OAuth is out of scope:
`/login` stores `{"type": "api_key", "key": ...}` in auth.json through `AuthStorage`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from apex_coding_agent import LLAMA_PROVIDER_ID, AuthError
from apex_tui.app._llama_login import login_llama
from apex_tui.app._modal import show_modal
from apex_tui.widgets.pickers import FILTER_MODES, InputDialog, SelectItem, SelectList

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

BOOL = (True, False)


@dataclass(frozen=True)
class SettingRow:
    """One row: settings key, label, the values Enter cycles through (first = default)."""

    key: str
    label: str
    # Any: settings values are JSON scalars (bool or str here).
    values: tuple[Any, ...]
    note: str = ""


def rows(app: InteractiveApp) -> list[SettingRow]:
    """The rows of `/settings`; the thinking row lists the current model's levels."""
    levels = tuple(app.session.get_available_thinking_levels())
    out = [
        SettingRow("compaction.enabled", "Auto-compact", BOOL),
        SettingRow("hideThinkingBlock", "Hide thinking blocks", (False, True)),
        SettingRow("showCacheMissNotices", "Show cache-miss notices", (False, True)),
        SettingRow("quietStartup", "Quiet startup", (False, True)),
        SettingRow("collapseChangelog", "Collapse changelog", (False, True)),
        SettingRow("branchSummary.skipPrompt", "Skip the branch summary question", (False, True)),
        SettingRow("terminal.showImages", "Show images", BOOL),
        SettingRow("steeringMode", "Steering mode", ("one-at-a-time", "all")),
        SettingRow("followUpMode", "Follow-up mode", ("one-at-a-time", "all")),
        SettingRow("doubleEscapeAction", "Double Escape", ("tree", "fork", "none")),
        SettingRow("treeFilterMode", "Tree filter", FILTER_MODES),
        SettingRow("tuiMode", "TUI mode", ("regular", "fullscreen")),
        SettingRow("theme", "Theme", tuple(app.themes.names())),
    ]
    if len(levels) > 1:
        out.append(SettingRow("defaultThinkingLevel", "Thinking level", levels))
    return out


def current_value(app: InteractiveApp, row: SettingRow) -> Any:
    """The effective value (the session's thinking level, the layout on screen)."""
    # Any: see SettingRow.values.
    if row.key == "defaultThinkingLevel":
        return app.session.thinking_level
    if row.key == "tuiMode":  # the layout on screen (`--tui-mode` may differ from the setting)
        return "fullscreen" if app.root.fullscreen else "regular"
    value = app.session.settings_manager.get(row.key)
    return value if value in row.values else row.values[0]


def _shown(value: Any) -> str:
    # Any: see SettingRow.values.
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _items(app: InteractiveApp) -> list[SelectItem[str]]:
    return [
        SelectItem(row.key, f"{row.label}: {_shown(current_value(app, row))}", row.note, search_text=row.label)
        for row in rows(app)
    ]


def _apply(app: InteractiveApp, key: str, value: Any) -> None:
    # Any: see SettingRow.values.
    session = app.session
    effects: dict[str, Callable[[], object]] = {
        "compaction.enabled": lambda: session.set_auto_compaction(bool(value)),
        "hideThinkingBlock": lambda: app.transcript.set_hide_thinking(bool(value)),
        "theme": lambda: _use_theme(app, str(value)),
        "steeringMode": lambda: setattr(session.agent, "steering_mode", value),
        "followUpMode": lambda: setattr(session.agent, "follow_up_mode", value),
        "defaultThinkingLevel": lambda: session.set_thinking_level(value),
        "tuiMode": lambda: app.set_layout(value == "fullscreen"),
    }
    if key != "compaction.enabled":
        session.settings_manager.set(key, value)
    effect = effects.get(key)
    if effect is not None:
        effect()
    app.update_footer()


def _use_theme(app: InteractiveApp, name: str) -> None:
    source = app.themes.source(name)
    if source is not None:
        app.use_theme(source)


def open_settings(app: InteractiveApp) -> None:
    """The settings list: Enter cycles the highlighted value, applies and persists it; Esc closes."""
    picker: SelectList[str] = SelectList(_items(app), app.keymap, title="Settings", hint="enter change · esc close")

    def change(key: Any) -> None:
        # Any: a settings key from the row.
        row = next(r for r in rows(app) if r.key == key)
        if row.key == "theme":
            open_theme_menu(app, lambda: picker.set_items(_items(app), keep="theme"))
            return
        now = current_value(app, row)
        value = row.values[(row.values.index(now) + 1) % len(row.values)] if now in row.values else row.values[0]
        _apply(app, row.key, value)
        picker.set_items(_items(app), keep=row.key)
        app.notify(f"{row.label}: {_shown(value)}" + (f" ({row.note})" if row.note else ""))

    show_modal(app, picker, {"select": change}, closing={"cancel"})


def open_theme_menu(app: InteractiveApp, done: Callable[[], None]) -> None:
    """Every discovered theme; the highlighted one is previewed, Enter keeps and saves it, Esc restores the old one."""
    original = app.theme
    app.themes.reload()
    current = current_value(app, next(r for r in rows(app) if r.key == "theme"))
    menu: SelectList[str] = SelectList(
        [SelectItem(t.name, t.name, str(t.path) if t.path else "") for t in app.themes.sources()],
        app.keymap,
        title="Theme",
        filterable=False,
        selected=current,
    )

    def preview(name: Any) -> None:
        # Any: a theme name, or None when nothing is highlighted.
        if name is not None:
            app.apply_theme(app.themes.theme(str(name)))

    def keep(name: Any) -> None:
        _apply(app, "theme", str(name))
        app.notify(f"Theme: {name}")
        done()

    def restore(_: Any) -> None:
        app.apply_theme(original)
        done()

    show_modal(app, menu, {"highlight": preview, "select": keep, "cancel": restore})


def providers(app: InteractiveApp) -> list[str]:
    """Providers of the model registry, in catalog order, and llama.cpp (it has no models until it has a server)."""
    listed = dict.fromkeys(m.provider for m in app.session.model_runtime.registry.list_models())
    return [*listed, *([] if LLAMA_PROVIDER_ID in listed else [LLAMA_PROVIDER_ID])]


def open_login(app: InteractiveApp, provider: str) -> None:
    """`/login [provider]`: choose a provider, then type its API key (masked); llama.cpp asks for its URL first."""
    known = providers(app)
    if provider:
        if provider not in known:
            app.notify(f"Unknown provider: {provider}", "error")
            return
        _login(app, provider)
        return
    runtime = app.session.model_runtime
    items = [SelectItem(p, p, "configured" if runtime.has_auth(p) else "") for p in known]
    picker: SelectList[str] = SelectList(items, app.keymap, title="Login: choose provider")
    show_modal(app, picker, {"select": lambda chosen: _login(app, str(chosen))})


def _login(app: InteractiveApp, provider: str) -> None:
    if provider == LLAMA_PROVIDER_ID:
        login_llama(app)
    else:
        ask_key(app, provider)


def ask_key(app: InteractiveApp, provider: str) -> None:
    """The masked key dialog; the key is stored in auth.json."""
    dialog = InputDialog(f"API key for {provider}", app.keymap, masked=True, hint="enter save · esc cancel")

    def submit(text: Any) -> None:
        key = str(text).strip()
        if not key:
            app.notify("No key entered", "warning")
            return
        # A leading `$` would read as an environment reference: `$$` is the escape for a literal `$`.
        stored = "$" + key if key.startswith("$") else key
        try:
            app.session.model_runtime.auth.set(provider, {"type": "api_key", "key": stored})
        except (AuthError, OSError) as exc:
            app.notify(f"Could not save the key: {exc}", "error")
            return
        app.notify(f"Saved API key for {provider} in auth.json")
        app.update_footer()

    show_modal(app, dialog, {"submit": submit})


def open_logout(app: InteractiveApp, provider: str) -> None:
    """`/logout [provider]`: remove a stored credential."""
    auth = app.session.model_runtime.auth
    try:
        stored = list(auth.credentials())
    except (AuthError, OSError) as exc:
        app.notify(str(exc), "error")
        return
    if provider:
        remove_key(app, provider)
        return
    if not stored:
        app.notify("No stored credentials")
        return
    picker: SelectList[str] = SelectList([SelectItem(p, p) for p in stored], app.keymap, title="Logout: provider")
    show_modal(app, picker, {"select": lambda chosen: remove_key(app, str(chosen))})


def remove_key(app: InteractiveApp, provider: str) -> None:
    """Delete `provider`'s credential from auth.json."""
    auth = app.session.model_runtime.auth
    try:
        if auth.get(provider) is None:
            app.notify(f"No stored credential for {provider}", "warning")
            return
        auth.remove(provider)
    except (AuthError, OSError) as exc:
        app.notify(str(exc), "error")
        return
    app.notify(f"Logged out of {provider}")
    app.update_footer()
