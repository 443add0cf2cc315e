"""Per-server quirks of the OpenAI Chat Completions wire format.

One adapter serves OpenAI and every server that imitates it (llama.cpp, ollama, vLLM, LM Studio,
OpenRouter, Groq, DeepSeek, ...). They differ in small ways: which max-tokens field they accept,
whether they know `store` or the `developer` role, how thinking is switched on. `CompletionsCompat`
names each difference; `resolve_compat(model)` detects defaults from the provider and base URL and
lets `model.compat` (camelCase keys, as in models.json) override any of them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from apex_ai.types import Model

MaxTokensField: TypeAlias = Literal["max_completion_tokens", "max_tokens"]
ThinkingFormat: TypeAlias = Literal["openai", "openrouter", "deepseek", "zai", "qwen"]
CacheControlFormat: TypeAlias = Literal["anthropic"]

_THINKING_FORMATS: frozenset[str] = frozenset({"openai", "openrouter", "deepseek", "zai", "qwen"})


@dataclass(frozen=True, kw_only=True)
class CompletionsCompat:
    """What an OpenAI-compatible server accepts. Defaults describe OpenAI itself."""

    supports_store: bool = True
    """Send `store: false` (servers that do not know the field may reject it)."""
    supports_developer_role: bool = True
    """Reasoning models get their system prompt under the `developer` role."""
    supports_reasoning_effort: bool = True
    """The `openai` thinking format may send `reasoning_effort`."""
    supports_usage_in_streaming: bool = True
    """Send `stream_options: {include_usage: true}`: the only way to get usage while streaming."""
    supports_finish_reason: bool = True
    """False: a stream without `finish_reason` is normal; stop reason is inferred from the content."""
    max_tokens_field: MaxTokensField = "max_completion_tokens"
    requires_tool_result_name: bool = False
    """Tool result messages carry the tool's `name` (Mistral)."""
    requires_assistant_after_tool_result: bool = False
    """A user message may not follow tool results directly: bridge with a short assistant message."""
    requires_thinking_as_text: bool = False
    """Replay earlier thinking as plain assistant text instead of under its signature field."""
    thinking_format: ThinkingFormat = "openai"
    """How a thinking level is sent."""
    supports_strict_mode: bool = True
    """Tool definitions may carry `strict: false`."""
    cache_control_format: CacheControlFormat | None = None
    """`anthropic`: put Anthropic `cache_control` markers into the body (OpenRouter serving Claude)."""


_CAMEL_TO_FIELD: dict[str, str] = {
    "supportsStore": "supports_store",
    "supportsDeveloperRole": "supports_developer_role",
    "supportsReasoningEffort": "supports_reasoning_effort",
    "supportsUsageInStreaming": "supports_usage_in_streaming",
    "supportsFinishReason": "supports_finish_reason",
    "maxTokensField": "max_tokens_field",
    "requiresToolResultName": "requires_tool_result_name",
    "requiresAssistantAfterToolResult": "requires_assistant_after_tool_result",
    "requiresThinkingAsText": "requires_thinking_as_text",
    "thinkingFormat": "thinking_format",
    "supportsStrictMode": "supports_strict_mode",
    "cacheControlFormat": "cache_control_format",
}
_BOOL_FIELDS: frozenset[str] = frozenset(
    f.name for f in dataclasses.fields(CompletionsCompat) if f.type in ("bool", bool)
)


def _contains(base_url: str, *needles: str) -> bool:
    return any(needle in base_url for needle in needles)


def detect_compat(model: Model) -> CompletionsCompat:
    """Defaults for `model`, guessed from its provider name and base URL."""
    provider = model.provider.lower()
    url = (model.base_url or "").lower()

    is_llama_cpp = provider in ("llama.cpp", "llamacpp", "llama-cpp")
    is_ollama = provider == "ollama" or ":11434" in url
    is_lm_studio = provider in ("lmstudio", "lm-studio") or ":1234" in url
    is_mistral = provider == "mistral" or _contains(url, "mistral.ai")
    is_xai = provider == "xai" or _contains(url, "api.x.ai")
    is_cerebras = provider == "cerebras" or _contains(url, "cerebras.ai")
    is_chutes = _contains(url, "chutes.ai")
    is_openrouter = provider == "openrouter" or _contains(url, "openrouter.ai")
    is_deepseek = provider == "deepseek" or _contains(url, "deepseek.com")
    is_zai = provider in ("zai", "zhipu") or _contains(url, "api.z.ai", "bigmodel.cn")
    is_qwen = provider in ("qwen", "dashscope", "alibaba") or _contains(url, "dashscope")
    is_groq = provider == "groq" or _contains(url, "groq.com")

    # Local servers implement the common core of the API and nothing OpenAI-only.
    is_local = is_llama_cpp or is_ollama or is_lm_studio
    non_standard = is_local or is_mistral or is_xai or is_cerebras or is_chutes or is_deepseek or is_zai or is_qwen

    thinking_format: ThinkingFormat = "openai"
    if is_openrouter:
        thinking_format = "openrouter"
    elif is_deepseek:
        thinking_format = "deepseek"
    elif is_zai:
        thinking_format = "zai"
    elif is_qwen:
        thinking_format = "qwen"

    use_max_tokens = is_local or is_mistral or is_chutes or is_deepseek or is_qwen
    cache_control: CacheControlFormat | None = None
    if is_openrouter and model.id.lower().startswith("anthropic/"):
        cache_control = "anthropic"

    return CompletionsCompat(
        supports_store=not non_standard and not is_groq,
        supports_developer_role=not non_standard,
        supports_reasoning_effort=not (is_local or is_xai or is_mistral),
        supports_usage_in_streaming=True,
        supports_finish_reason=True,
        max_tokens_field="max_tokens" if use_max_tokens else "max_completion_tokens",
        requires_tool_result_name=is_mistral,
        requires_assistant_after_tool_result=False,
        requires_thinking_as_text=is_mistral,
        thinking_format=thinking_format,
        supports_strict_mode=not (is_local or is_mistral or is_cerebras),
        cache_control_format=cache_control,
    )


def _coerce(field: str, value: Any) -> Any:
    """Validate one override; a wrong type or unknown value is ignored (the detected default stays)."""
    if field in _BOOL_FIELDS:
        return value if isinstance(value, bool) else None
    if field == "max_tokens_field":
        return value if value in ("max_completion_tokens", "max_tokens") else None
    if field == "thinking_format":
        return value if value in _THINKING_FORMATS else None
    if field == "cache_control_format":
        return value if value == "anthropic" else None
    return None


def resolve_compat(model: Model) -> CompletionsCompat:
    """Detected defaults overridden by `model.compat` (camelCase or snake_case keys; unknown keys ignored)."""
    detected = detect_compat(model)
    overrides: dict[str, Any] = {}
    for key, value in (model.compat or {}).items():
        field = _CAMEL_TO_FIELD.get(key, key if key in _CAMEL_TO_FIELD.values() else None)
        if field is None:
            continue
        if field == "cache_control_format" and value is None:
            overrides[field] = None  # an explicit null turns detected markers off
            continue
        coerced = _coerce(field, value)
        if coerced is not None:
            overrides[field] = coerced
    return dataclasses.replace(detected, **overrides) if overrides else detected


__all__ = [
    "CacheControlFormat",
    "CompletionsCompat",
    "MaxTokensField",
    "ThinkingFormat",
    "detect_compat",
    "resolve_compat",
]
