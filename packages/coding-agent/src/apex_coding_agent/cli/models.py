"""`--provider`, `--model pattern[:thinking]` and `--list-models`."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import TextIO

from apex_ai.thinking import MODEL_THINKING_LEVELS
from apex_ai.types import Model, ModelThinkingLevel
from apex_coding_agent.core.model_runtime import ModelRuntime


class ModelArgumentError(ValueError):
    pass


@dataclass
class ModelChoice:
    model: Model
    thinking: ModelThinkingLevel | None


def _split_thinking(pattern: str) -> tuple[str, ModelThinkingLevel | None]:
    head, sep, tail = pattern.rpartition(":")
    if sep and tail in MODEL_THINKING_LEVELS:
        return head, tail
    return pattern, None


def resolve_model(runtime: ModelRuntime, provider: str | None, pattern: str | None) -> ModelChoice | None:
    """The model named by the flags: exact id, `provider/id`, then glob, then case-insensitive substring.

    Available models (with auth) win over unavailable ones at every step. None when no flag was given.
    """
    if pattern is None and provider is None:
        return None
    thinking: ModelThinkingLevel | None = None
    if pattern is not None:
        pattern, thinking = _split_thinking(pattern)
    models = runtime.registry.list_models(provider) if provider else runtime.registry.list_models()
    if provider and not models:
        raise ModelArgumentError(f"Unknown provider: {provider}")
    if pattern is None:
        available = [m for m in models if runtime.is_available(m)]
        return ModelChoice((available or models)[0], thinking)
    if provider is None and "/" in pattern:
        maybe_provider, _, rest = pattern.partition("/")
        scoped = runtime.registry.list_models(maybe_provider)
        if scoped:
            models, pattern = scoped, rest

    def pick(candidates: list[Model]) -> Model | None:
        if not candidates:
            return None
        available = [m for m in candidates if runtime.is_available(m)]
        return (available or candidates)[0]

    lowered = pattern.lower()
    for matcher in (
        lambda m: m.id == pattern,
        lambda m: m.id.lower() == lowered or m.name.lower() == lowered,
        lambda m: (
            fnmatch.fnmatchcase(m.id.lower(), lowered) or fnmatch.fnmatchcase(f"{m.provider}/{m.id}".lower(), lowered)
        ),
        lambda m: lowered in m.id.lower() or lowered in m.name.lower(),
    ):
        found = pick([m for m in models if matcher(m)])
        if found is not None:
            return ModelChoice(found, thinking)
    raise ModelArgumentError(f"No model matches '{pattern}'" + (f" for provider {provider}" if provider else ""))


def _tokens(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000:
        return f"{n / 1000:g}K"
    return str(n)


def list_models(runtime: ModelRuntime, search: str | None, out: TextIO) -> int:
    """Print the models that have auth (a table), filtered by a case-insensitive search; exit code."""
    models = runtime.available_models()
    if search:
        needle = search.lower()
        models = [m for m in models if needle in f"{m.provider}/{m.id} {m.name}".lower()]
    if not models:
        out.write("No models available." if not search else f"No models match '{search}'.")
        out.write(" Set a provider API key or add a provider to models.json.\n")
        return 0
    rows = [("provider", "model", "context", "max-out", "thinking", "images")]
    rows += [
        (
            m.provider,
            m.id,
            _tokens(m.context_window),
            _tokens(m.max_tokens),
            "yes" if m.reasoning else "no",
            "yes" if "image" in m.input else "no",
        )
        for m in models
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() + "\n")
    return 0


__all__ = ["ModelArgumentError", "ModelChoice", "list_models", "resolve_model"]
