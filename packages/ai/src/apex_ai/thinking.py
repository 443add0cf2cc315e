"""Provider-neutral thinking levels: which levels a model accepts and how an
unsupported request is clamped. Mapping a level to an API's wire value is each provider's job."""

from __future__ import annotations

from typing import Final, get_args

from apex_ai.types import Model, ModelThinkingLevel, ThinkingLevel

THINKING_LEVELS: Final[tuple[ThinkingLevel, ...]] = get_args(ThinkingLevel)
"""Levels a caller can request, weakest first (the members of `apex_ai.types.ThinkingLevel`)."""

MODEL_THINKING_LEVELS: Final[tuple[ModelThinkingLevel, ...]] = ("off", *THINKING_LEVELS)
"""`THINKING_LEVELS` plus `off`, in the order clamping walks."""

_BASE_LEVELS: Final[frozenset[str]] = frozenset({"off", "minimal", "low", "medium", "high"})
"""Levels every reasoning model has unless its map marks them unsupported; `xhigh`/`max` must be opted into."""


def supported_levels(model: Model) -> list[ModelThinkingLevel]:
    """The levels `model` accepts, weakest first; a non-reasoning model accepts only `off`."""
    if not model.reasoning:
        return ["off"]
    level_map = model.thinking_level_map or {}
    supported: list[ModelThinkingLevel] = []
    for level in MODEL_THINKING_LEVELS:
        if level in _BASE_LEVELS:
            if level not in level_map or level_map[level] is not None:
                supported.append(level)
        elif level_map.get(level) is not None:
            supported.append(level)
    return supported


def clamp_level(model: Model, level: ModelThinkingLevel) -> ModelThinkingLevel:
    """`level` if `model` supports it; else the next stronger supported level, else the next weaker one."""
    supported = supported_levels(model)
    if level in supported:
        return level
    start = MODEL_THINKING_LEVELS.index(level)
    for candidate in MODEL_THINKING_LEVELS[start + 1 :]:
        if candidate in supported:
            return candidate
    for candidate in reversed(MODEL_THINKING_LEVELS[:start]):
        if candidate in supported:
            return candidate
    # Only reachable when a map marks every level unsupported; `off` is the honest answer then.
    return "off"


__all__ = ["MODEL_THINKING_LEVELS", "THINKING_LEVELS", "clamp_level", "supported_levels"]
