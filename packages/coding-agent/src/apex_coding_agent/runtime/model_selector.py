"""`ModelSelector`: an `AgentSession`'s model and thinking level.

Changes apply to this session only: they append `model_change` / `thinking_level_change` entries, emit
`thinking_level_changed` and the extensions' `model_select` / `thinking_level_select`, and never write settings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from apex_agent.agent import Agent
from apex_ai.api_registry import preload_api
from apex_ai.thinking import MODEL_THINKING_LEVELS, clamp_level, supported_levels
from apex_ai.types import Model, ModelThinkingLevel
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.events import SessionEvent, ThinkingLevelChangedEvent
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.runtime.session_errors import no_api_key_text
from apex_coding_agent.session.session_manager import SessionManager


@dataclass(frozen=True)
class ScopedModel:
    """A model of `--models` / `enabledModels`, optionally with the thinking level it should run at."""

    model: Model
    thinking_level: ModelThinkingLevel | None = None


@dataclass(frozen=True)
class ModelCycleResult:
    model: Model
    thinking_level: ModelThinkingLevel
    is_scoped: bool


class ModelSelector:
    """`agent` gives the agent (with its complete message list); `scoped_models` the session's current scope."""

    def __init__(
        self,
        *,
        agent: Callable[[], Agent],
        session_manager: SessionManager,
        model_runtime: ModelRuntime,
        scoped_models: Callable[[], Sequence[ScopedModel]],
        emit_soon: Callable[[SessionEvent], None],
        extension_event_soon: Callable[[ext.HandlerEvent], None],
    ) -> None:
        self._agent = agent
        self._manager = session_manager
        self._model_runtime = model_runtime
        self._scoped_models = scoped_models
        self._emit_soon = emit_soon
        self._extension_event_soon = extension_event_soon

    def available_thinking_levels(self, model: Model | None) -> list[ModelThinkingLevel]:
        return supported_levels(model) if model is not None else ["off"]

    def set_thinking_level(self, level: ModelThinkingLevel) -> ModelThinkingLevel:
        if level not in MODEL_THINKING_LEVELS:
            raise ValueError(f"Unknown thinking level: {level}")
        state = self._agent().state
        effective = clamp_level(state.model, level) if state.model is not None else "off"
        previous = state.thinking_level
        if effective != previous:
            state.thinking_level = effective
            self._manager.append_thinking_level_change(effective)
            self._emit_soon(ThinkingLevelChangedEvent(level=effective))
            self._extension_event_soon(ext.ThinkingLevelSelectEvent(level=effective, previous_level=previous))
        return effective

    def cycle_thinking_level(self, model: Model | None, current: ModelThinkingLevel) -> ModelThinkingLevel | None:
        levels = self.available_thinking_levels(model)
        if len(levels) <= 1:
            return None
        index = levels.index(current) if current in levels else -1
        return self.set_thinking_level(levels[(index + 1) % len(levels)])

    def select(
        self, model: Model, thinking_level: ModelThinkingLevel | None, source: Literal["set", "cycle", "restore"]
    ) -> None:
        if not self._model_runtime.is_available(model):
            raise RuntimeError(no_api_key_text(model.provider))
        state = self._agent().state
        previous = state.model
        state.model = model
        preload_api(model.api)  # the new provider's SDK loads while the user types the next prompt
        self._manager.append_model_change(model.provider, model.id)
        self._extension_event_soon(ext.ModelSelectEvent(model=model, previous_model=previous, source=source))
        self.set_thinking_level(thinking_level or state.thinking_level)

    def cycle_model(self, direction: Literal["forward", "backward"]) -> ModelCycleResult | None:
        scoped_models = self._scoped_models()
        scoped = bool(scoped_models)
        candidates = list(scoped_models) if scoped else [ScopedModel(m) for m in self._model_runtime.available_models()]
        if len(candidates) <= 1:
            return None
        current = self._agent().state.model
        index = next(
            (
                i
                for i, c in enumerate(candidates)
                if current is not None and (c.model.provider, c.model.id) == (current.provider, current.id)
            ),
            -1,
        )
        step = 1 if direction == "forward" else -1
        target = candidates[(index + step) % len(candidates)] if index >= 0 else candidates[0]
        self.select(target.model, target.thinking_level, "cycle")
        return ModelCycleResult(target.model, self._agent().state.thinking_level, scoped)


__all__ = ["ModelCycleResult", "ModelSelector", "ScopedModel"]
