"""`/model`, `/scoped-models` and the thinking picker over the session.

Selecting changes the session only. The explicit saves are the only writers of `defaultProvider`/`defaultModel`
(`app.models.save` in `/model`), `enabledModels` (`app.models.save` in `/scoped-models`) and
`defaultThinkingLevel` (`app.thinking.save`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apex_ai.types import Model
from apex_coding_agent import ScopedModel
from apex_tui.app._modal import show_modal
from apex_tui.widgets.pickers import DEFAULT_LEVELS, ModelOption, ModelPicker, ScopedModelsPicker, ThinkingPicker

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp


def model_key(model: Model) -> str:
    """`provider/id`."""
    return f"{model.provider}/{model.id}"


def catalog(app: InteractiveApp) -> dict[str, Model]:
    """Every known model by key (models without credentials included: the picker shows them disabled)."""
    runtime = app.session.model_runtime
    runtime.reload()
    return {model_key(m): m for m in runtime.registry.list_models()}


def options(app: InteractiveApp, models: dict[str, Model]) -> list[ModelOption]:
    """The pickers' view of `models`."""
    runtime = app.session.model_runtime
    current = app.session.model
    current_key = model_key(current) if current is not None else None
    return [
        ModelOption(m.provider, m.id, m.name or "", available=runtime.is_available(m), current=key == current_key)
        for key, m in models.items()
    ]


def open_model_picker(app: InteractiveApp, query: str) -> None:
    """Providers then models; Enter switches the session model, `app.models.save` stores the default."""
    models = catalog(app)
    if not any(app.session.model_runtime.is_available(m) for m in models.values()):
        app.notify("No models available. Set a provider key or add a models.json provider.", "warning")
        return
    scoped = [model_key(s.model) for s in app.session.scoped_models]
    hint = "tab scope · " if scoped else ""
    picker = ModelPicker(
        options(app, models),
        app.keymap,
        scoped=scoped,
        query=query,
        hint=f"{hint}{app.keymap.display('app.models.save') or 'ctrl+s'} save as default",
    )

    def save(option: Any) -> None:
        # Any: the picker's payload, a ModelOption.
        settings = app.session.settings_manager
        settings.set("defaultProvider", option.provider)
        settings.set("defaultModel", option.id)
        picker.set_status(f"Default model saved: {option.key}")
        app.notify(f"Default model saved: {option.key}")

    show_modal(app, picker, {"select": lambda option: app.select_model(models[option.key]), "save": save})


def open_scoped_models(app: InteractiveApp) -> None:
    """Every model with on/off marks; changes apply to the session at once, `app.models.save` persists them."""
    models = catalog(app)
    if not models:
        app.notify("No models available. Set a provider key or add a models.json provider.", "warning")
        return
    session = app.session
    enabled = [model_key(s.model) for s in session.scoped_models]
    levels = {model_key(s.model): s.thinking_level for s in session.scoped_models}
    picker = ScopedModelsPicker(
        options(app, models),
        app.keymap,
        enabled=enabled,
        hint=f"enter toggle · {app.keymap.display('app.models.save') or 'ctrl+s'} save",
    )

    def change(keys: Any) -> None:
        # Any: the enabled keys in cycle order (list[str]).
        session.scoped_models = [ScopedModel(models[k], levels.get(k)) for k in keys if k in models]

    def save(keys: Any) -> None:
        change(keys)
        session.settings_manager.set("enabledModels", list(keys))
        app.notify("Model selection saved to settings")

    show_modal(app, picker, {"change": change, "save": save})


def open_thinking_picker(app: InteractiveApp) -> None:
    """Levels the model supports; Enter applies, `app.thinking.save` also persists `defaultThinkingLevel`."""
    session = app.session
    available = session.get_available_thinking_levels()
    if len(available) <= 1:
        app.notify("Current model does not support thinking")
        return
    described = dict(DEFAULT_LEVELS)
    levels = [(level, described.get(level, "")) for level in available]
    picker = ThinkingPicker(
        app.keymap,
        current=session.thinking_level,
        levels=levels,
        hint=f"{app.keymap.display('app.thinking.save') or 'ctrl+s'} save as default",
    )

    def select(level: Any) -> None:
        # Any: a level name from the picker.
        applied = session.set_thinking_level(level)
        app.notify(f"Thinking level: {applied}")
        app.update_footer()

    def save(level: Any) -> None:
        app.close_modal(picker)
        applied = session.set_thinking_level(level)
        session.settings_manager.set("defaultThinkingLevel", applied)
        app.notify(f"Default thinking level saved: {applied}")
        app.update_footer()

    show_modal(app, picker, {"select": select, "save": save})
