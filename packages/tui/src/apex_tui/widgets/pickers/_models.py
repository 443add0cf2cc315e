"""Model pickers: `/model` (providers, then their models; scope all/scoped) and `/scoped-models` (on/off marks).

Models arrive as plain `ModelOption` values built by the app from its registry; these widgets never see the
agent layers. A model is named by its key `provider/id`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from apex_tui.widgets.pickers._base import Frame
from apex_tui.widgets.pickers._fuzzy import fuzzy_filter
from apex_tui.widgets.pickers._list import SelectItem, SelectList
from apex_tui.widgets.transcript import KeyMatcher

Scope = Literal["all", "scoped"]
Step = Literal["providers", "models"]
CURRENT_MARK = " ✓"


@dataclass(frozen=True)
class ModelOption:
    """One model as the pickers show it. `available` = has credentials; `current` = the session's model."""

    provider: str
    id: str
    name: str = ""
    available: bool = True
    current: bool = False

    @property
    def key(self) -> str:
        """`provider/id`."""
        return f"{self.provider}/{self.id}"


def _model_item(model: ModelOption, *, with_provider: bool) -> SelectItem[ModelOption | str]:
    label = (model.key if with_provider else model.id) + (CURRENT_MARK if model.current else "")
    description = model.name if model.name and model.name != model.id else ""
    if not model.available:
        description = f"{description} (no credentials)".strip()
    return SelectItem(model, label, description, search_text=f"{model.key} {model.name}", disabled=not model.available)


class ModelPicker(SelectList["ModelOption | str"]):
    """`/model`: step 1 lists providers, step 2 the chosen provider's models.

    Typing in step 1 searches every model of the scope at once (`/model son` opens with that query), so Enter can
    pick a model directly. `tui.input.tab` toggles the scope between all models and the scoped ones (it starts
    scoped when `scoped` is not empty). `tui.select.cancel` goes back from step 2, else closes. With a single
    provider in scope step 1 is skipped.

    Signals: `select` (ModelOption; models without credentials cannot be chosen), `save` (the highlighted
    ModelOption, on `app.models.save`), `cancel`, `highlight`.
    """

    signals: ClassVar[list[str]] = ["select", "save", "cancel", "highlight"]

    def __init__(
        self,
        models: Sequence[ModelOption],
        keymap: KeyMatcher,
        *,
        scoped: Sequence[str] = (),
        query: str = "",
        max_visible: int = 10,
        hint: str = "",
    ) -> None:
        self.models = list(models)
        self.scoped_keys = list(scoped)
        self.scope: Scope = "scoped" if self.scoped_keys else "all"
        self.step: Step = "providers"
        self.provider: str | None = None
        self.status = ""
        super().__init__([], keymap, filterable=True, query=query, max_visible=max_visible, hint=hint)
        self._enter_scope()

    # -- state ------------------------------------------------------------------------------------------------
    def pool(self) -> list[ModelOption]:
        """Models of the current scope (scoped ones in their cycle order)."""
        if self.scope == "all":
            return list(self.models)
        by_key = {m.key: m for m in self.models}
        return [by_key[key] for key in self.scoped_keys if key in by_key]

    def providers(self) -> list[str]:
        """Providers of the scope, first appearance order."""
        return list(dict.fromkeys(m.provider for m in self.pool()))

    def set_status(self, text: str) -> None:
        """A dim line under the title (e.g. the background catalog refresh)."""
        self.status = text
        self.changed()

    def set_models(self, models: Sequence[ModelOption]) -> None:
        """Replace the catalog (after a refresh), keeping step and highlight where possible."""
        self.models = list(models)
        self._show_step(keep=self.highlighted_value())

    def _enter_scope(self) -> None:
        providers = self.providers()
        current = next((m for m in self.pool() if m.current), None)
        if len(providers) == 1:
            self.step, self.provider = "models", providers[0]
            self._show_step(keep=current)
        else:
            self.step, self.provider = "providers", None
            self._show_step(keep=current if self.query.text else (current.provider if current else None))

    def _show_step(self, *, keep: ModelOption | str | None) -> None:
        self.title = "Select model" if self.step == "providers" else f"Select model: {self.provider}"
        self.title += f" ({self.scope})" if self.scoped_keys else ""
        if self.step == "providers":
            counts: dict[str, int] = {}
            for model in self.pool():
                counts[model.provider] = counts.get(model.provider, 0) + 1
            items: list[SelectItem[ModelOption | str]] = [
                SelectItem(p, p, f"{n} model{'s' if n != 1 else ''}") for p, n in counts.items()
            ]
        else:
            items = [_model_item(m, with_provider=False) for m in self.pool() if m.provider == self.provider]
        self.set_items(items, keep=keep)

    def filter_items(
        self, query: str, items: Sequence[SelectItem[ModelOption | str]]
    ) -> list[SelectItem[ModelOption | str]]:
        """Step 1 with a query searches models of every provider; otherwise the listed rows are filtered."""
        if self.step == "providers" and query.strip():
            items = [_model_item(m, with_provider=True) for m in self.pool()]
        return fuzzy_filter(query, items, SelectItem.haystack)

    # -- keys -------------------------------------------------------------------------------------------------
    def handle_extra_key(self, key: str) -> bool:
        """Scope toggle, save, step-aware confirm and cancel."""
        action = self.matches(key, "tui.input.tab", "app.models.save", "tui.select.confirm", "tui.select.cancel")
        value = self.highlighted_value()
        if action == "tui.input.tab":
            if self.scoped_keys:
                self.scope = "all" if self.scope == "scoped" else "scoped"
                self._enter_scope()
            return True
        if action == "app.models.save":
            if isinstance(value, ModelOption):
                self.emit("save", value)
            return True
        if action == "tui.select.confirm" and isinstance(value, str):
            self.step, self.provider = "models", value
            self.query.set_text("")
            self._show_step(keep=next((m for m in self.pool() if m.current and m.provider == value), None))
            return True
        if action == "tui.select.cancel" and self.step == "models" and len(self.providers()) > 1:
            back_to = self.provider
            self.step, self.provider = "providers", None
            self.query.set_text("")
            self._show_step(keep=back_to)
            return True
        return False

    def build_header(self, frame: Frame, width: int) -> None:
        """The status line, if any."""
        if self.status:
            frame.lines.append(("dim", f"  {self.status}"))


class ScopedModelsPicker(SelectList[ModelOption]):
    """`/scoped-models`: every model with an on/off mark; enabled ones first, in cycle order.

    `tui.select.confirm` toggles the highlighted model; `app.models.enableAll` / `clearAll` act on every listed
    (query-matching) model; `app.models.toggleProvider` switches all models of the highlighted one's provider (on
    unless all are on); `app.models.reorderUp/Down` move an enabled model in the cycle order. Every change emits
    `change` with the enabled keys in order (the app applies it to the session at once); `app.models.save` emits
    `save` with the same list; `tui.select.cancel` emits `cancel`.
    """

    signals: ClassVar[list[str]] = ["change", "save", "cancel", "highlight", "select"]

    def __init__(
        self,
        models: Sequence[ModelOption],
        keymap: KeyMatcher,
        *,
        enabled: Sequence[str] = (),
        max_visible: int = 10,
        hint: str = "",
    ) -> None:
        self.models = list(models)
        known = {m.key for m in self.models}
        self.enabled: list[str] = [key for key in dict.fromkeys(enabled) if key in known]
        super().__init__(self._rows(), keymap, title="Scoped models", max_visible=max_visible, hint=hint)

    def _rows(self) -> list[SelectItem[ModelOption]]:
        by_key = {m.key: m for m in self.models}
        ordered = [by_key[k] for k in self.enabled] + [m for m in self.models if m.key not in self.enabled]
        on = set(self.enabled)
        return [
            SelectItem(
                m, f"[{'x' if m.key in on else ' '}] {m.key}", m.name if m.name != m.id else "", f"{m.key} {m.name}"
            )
            for m in ordered
        ]

    def _update(self, keep: ModelOption | None) -> None:
        self.set_items(self._rows(), keep=keep)
        self.emit("change", list(self.enabled))

    def _set(self, models: Collection[ModelOption], on: bool) -> None:
        keys = [m.key for m in self.models if m in models]
        if on:
            self.enabled.extend(k for k in keys if k not in self.enabled)
        else:
            drop = set(keys)
            self.enabled = [k for k in self.enabled if k not in drop]

    def handle_extra_key(self, key: str) -> bool:
        """Toggle, bulk changes, reorder and save."""
        action = self.matches(
            key,
            "tui.select.confirm",
            "app.models.enableAll",
            "app.models.clearAll",
            "app.models.toggleProvider",
            "app.models.reorderUp",
            "app.models.reorderDown",
            "app.models.save",
        )
        if action is None:
            return False
        model = self.highlighted_value()
        listed = [item.value for item in self.visible_items]
        if action == "app.models.save":
            self.emit("save", list(self.enabled))
        elif action == "app.models.enableAll":
            self._set(listed, True)
        elif action == "app.models.clearAll":
            self._set(listed, False)
        elif model is None:
            return True
        elif action == "tui.select.confirm":
            self._set([model], model.key not in self.enabled)
        elif action == "app.models.toggleProvider":
            group = [m for m in self.models if m.provider == model.provider]
            self._set(group, not all(m.key in self.enabled for m in group))
        elif model.key in self.enabled:
            index = self.enabled.index(model.key)
            other = index - 1 if action == "app.models.reorderUp" else index + 1
            if not 0 <= other < len(self.enabled):
                return True
            self.enabled[index], self.enabled[other] = self.enabled[other], self.enabled[index]
        else:
            return True
        if action != "app.models.save":
            self._update(keep=model)
        return True
