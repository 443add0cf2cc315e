"""The request body of the Anthropic Messages API.

Pure functions over our types: no SDK import, so building and inspecting a body is cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.overflow import clamp_max_tokens
from apex_ai.providers._shared import resolve_cache_retention, strip_unpaired_surrogates
from apex_ai.thinking import clamp_level
from apex_ai.transcript import system_prompt_and_tools
from apex_ai.transform import normalize_anthropic_tool_id, transform_messages
from apex_ai.types import (
    AssistantMessage,
    CacheRetention,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

# A JSON object of the request body. Any: the wire format is plain JSON, checked by the API, not by us.
Json = dict[str, Any]

INTERLEAVED_THINKING_BETA: Final = "interleaved-thinking-2025-05-14"
FINE_GRAINED_TOOL_STREAMING_BETA: Final = "fine-grained-tool-streaming-2025-05-14"
OAUTH_BETAS: Final = ("claude-code-20250219", "oauth-2025-04-20")
CLAUDE_CODE_VERSION: Final = "2.1.2"
CLAUDE_CODE_IDENTITY: Final = "You are Claude Code, Anthropic's official CLI for Claude."
# OAuth tokens are only accepted for Claude Code's own tool names, which differ from ours in casing.
CLAUDE_CODE_TOOLS: Final = (
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
)
_CLAUDE_CODE_BY_LOWER: Final = {name.lower(): name for name in CLAUDE_CODE_TOOLS}

THINKING_BUDGETS: Final[dict[str, int]] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
"""Default `budget_tokens` per level; `xhigh` and `max` use the `high` budget."""
_BUDGET_HEADROOM: Final = 1024
"""Output tokens kept for the answer itself when a budget has to shrink to fit `max_tokens`."""
IMAGE_ONLY_PLACEHOLDER: Final = "(see attached image)"


@dataclass(frozen=True)
class AnthropicCompat:
    """Per-model switches read from `model.compat` (camelCase keys, unknown keys ignored)."""

    force_adaptive_thinking: bool = False
    """Thinking is `adaptive` + `output_config.effort` instead of a token budget; no interleaved beta."""
    eager_input_streaming: bool = True
    """Tools carry `eager_input_streaming: true`; when False the fine-grained streaming beta is sent instead."""

    @classmethod
    def of(cls, model: Model) -> AnthropicCompat:
        compat = model.compat or {}
        return cls(
            force_adaptive_thinking=bool(compat.get("forceAdaptiveThinking", False)),
            eager_input_streaming=bool(compat.get("supportsEagerToolInputStreaming", True)),
        )


@dataclass
class ThinkingPlan:
    """How a request thinks: the `thinking`/`output_config` body keys and the `max_tokens` they need."""

    max_tokens: int
    thinking: Json | None = None
    output_config: Json | None = None
    provider_level: str | None = None
    """What `providerThinkingLevel` records: the adaptive effort sent, or the clamped budget level."""

    @property
    def enabled(self) -> bool:
        return self.thinking is not None and self.thinking.get("type") != "disabled"


@dataclass
class AnthropicRequest:
    """A request ready to send: JSON body, the betas it needs, and what the reply should record."""

    body: Json
    betas: list[str] = field(default_factory=list)
    provider_level: str | None = None
    tools: list[Tool] = field(default_factory=list)
    """The declared tools (OAuth replies name them in Claude Code casing; decoding maps them back)."""


# --------------------------------------------------------------------------- small helpers


def to_claude_code_name(name: str) -> str:
    return _CLAUDE_CODE_BY_LOWER.get(name.lower(), name)


def from_claude_code_name(name: str, tools: list[Tool] | None) -> str:
    """Map a tool name the model used under OAuth back to our declared tool of the same name."""
    lowered = name.lower()
    for tool in tools or []:
        if tool.name.lower() == lowered:
            return tool.name
    return name


def cache_control_for(retention: CacheRetention) -> Json | None:
    if retention == "none":
        return None
    if retention == "long":
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _clean(text: str) -> str:
    return strip_unpaired_surrogates(text)


# --------------------------------------------------------------------------- thinking


def _default_effort(level: str) -> str:
    if level in ("minimal", "low"):
        return "low"
    if level == "medium":
        return "medium"
    return "high"


def _disabled_thinking(model: Model) -> Json | None:
    """`{type: disabled}` for reasoning models whose map does not mark `off` unsupported."""
    if not model.reasoning:
        return None
    level_map = model.thinking_level_map or {}
    if "off" in level_map and level_map["off"] is None:
        return None
    return {"type": "disabled"}


def plan_thinking(model: Model, options: StreamOptions, base_max_tokens: int) -> ThinkingPlan:
    """The thinking configuration of a request, before the context clamp of `max_tokens`.

    `SimpleStreamOptions.reasoning` (a provider-neutral level) wins; otherwise the API-specific
    `thinking_enabled` / `thinking_budget_tokens` / `effort` options apply. No thinking request
    means thinking `disabled` on reasoning models.
    """
    compat = AnthropicCompat.of(model)
    level_map = model.thinking_level_map or {}
    if isinstance(options, SimpleStreamOptions) and options.reasoning is not None:
        level = clamp_level(model, options.reasoning)
        if level == "off":
            return ThinkingPlan(max_tokens=base_max_tokens, thinking=_disabled_thinking(model))
        if compat.force_adaptive_thinking:
            effort = level_map.get(level) or _default_effort(level)
            return ThinkingPlan(
                max_tokens=base_max_tokens,
                thinking={"type": "adaptive", "display": "summarized"},
                output_config={"effort": effort},
                provider_level=effort,
            )
        budget_key = level if level in THINKING_BUDGETS else "high"
        budget = (options.thinking_budgets or {}).get(budget_key, THINKING_BUDGETS[budget_key])
        max_tokens = min(base_max_tokens + budget, model.max_tokens)
        if max_tokens <= budget:
            budget = max(0, max_tokens - _BUDGET_HEADROOM)
        return ThinkingPlan(
            max_tokens=max_tokens,
            thinking={"type": "enabled", "budget_tokens": budget, "display": "summarized"},
            provider_level=level,
        )
    if options.thinking_enabled and model.reasoning:
        if compat.force_adaptive_thinking:
            effort = options.effort or "high"
            return ThinkingPlan(
                max_tokens=base_max_tokens,
                thinking={"type": "adaptive", "display": "summarized"},
                output_config={"effort": effort},
                provider_level=effort,
            )
        budget = options.thinking_budget_tokens or THINKING_BUDGETS["minimal"]
        return ThinkingPlan(
            max_tokens=base_max_tokens,
            thinking={"type": "enabled", "budget_tokens": budget, "display": "summarized"},
        )
    return ThinkingPlan(max_tokens=base_max_tokens, thinking=_disabled_thinking(model))


def fit_budget_to_max_tokens(plan: ThinkingPlan, max_tokens: int) -> None:
    """After the context clamp lowered `max_tokens`, keep the budget below it."""
    plan.max_tokens = max_tokens
    thinking = plan.thinking
    if thinking is not None and thinking.get("type") == "enabled":
        thinking["budget_tokens"] = max(0, min(int(thinking["budget_tokens"]), max_tokens - _BUDGET_HEADROOM))


# --------------------------------------------------------------------------- messages


def _image_block(image: ImageContent) -> Json:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


def _user_blocks(message: UserMessage) -> str | list[Json] | None:
    """A user message's content, or None when nothing non-empty is left to send."""
    if isinstance(message.content, str):
        return _clean(message.content) if message.content.strip() else None
    blocks: list[Json] = []
    for item in message.content:
        if isinstance(item, TextContent):
            if item.text.strip():
                blocks.append({"type": "text", "text": _clean(item.text)})
        else:
            blocks.append(_image_block(item))
    return blocks or None


def _tool_result_content(content: list[TextContent | ImageContent]) -> str | list[Json]:
    """Texts joined by newlines, or blocks when images are present (image-only gets a leading placeholder)."""
    if not any(isinstance(item, ImageContent) for item in content):
        return _clean("\n".join(item.text for item in content if isinstance(item, TextContent)))
    blocks: list[Json] = []
    for item in content:
        if isinstance(item, TextContent):
            blocks.append({"type": "text", "text": _clean(item.text)})
        else:
            blocks.append(_image_block(item))
    if not any(block["type"] == "text" for block in blocks):
        blocks.insert(0, {"type": "text", "text": IMAGE_ONLY_PLACEHOLDER})
    return blocks


def _tool_result_block(message: ToolResultMessage) -> Json:
    return {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "content": _tool_result_content(list(message.content)),
        "is_error": message.is_error,
    }


def _assistant_blocks(message: AssistantMessage, *, oauth: bool) -> list[Json]:
    blocks: list[Json] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": _clean(block.text)})
        elif isinstance(block, ThinkingContent):
            signature = block.thinking_signature or ""
            if block.redacted:
                if signature:
                    blocks.append({"type": "redacted_thinking", "data": signature})
            elif signature.strip():
                blocks.append({"type": "thinking", "thinking": _clean(block.thinking), "signature": signature})
            elif block.thinking.strip():
                # Unsigned thinking (e.g. from an aborted reply) cannot be replayed as thinking.
                blocks.append({"type": "text", "text": _clean(block.thinking)})
        elif isinstance(block, ToolCall):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block.id,
                    "name": to_claude_code_name(block.name) if oauth else block.name,
                    "input": block.arguments,
                }
            )
    return blocks


def convert_messages(messages: list[Message], *, oauth: bool = False) -> list[Json]:
    """Transformed non-system messages -> Messages API `messages`; consecutive tool results share one user turn."""
    params: list[Json] = []
    pending_results: list[Json] = []

    def flush_results() -> None:
        if pending_results:
            params.append({"role": "user", "content": list(pending_results)})
            pending_results.clear()

    for message in messages:
        if isinstance(message, ToolResultMessage):
            pending_results.append(_tool_result_block(message))
            continue
        flush_results()
        if isinstance(message, UserMessage):
            content = _user_blocks(message)
            if content is not None:
                params.append({"role": "user", "content": content})
        elif isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message, oauth=oauth)
            if blocks:
                params.append({"role": "assistant", "content": blocks})
        # System messages never reach here: the prompt is collapsed into `system` beforehand.
    flush_results()
    return params


def mark_last_user_message(params: list[Json], cache_control: Json) -> None:
    """Put the cache breakpoint on the last block of the last user message (strings become a block)."""
    for param in reversed(params):
        if param["role"] != "user":
            continue
        content = param["content"]
        if isinstance(content, str):
            param["content"] = [{"type": "text", "text": content, "cache_control": dict(cache_control)}]
        elif content:
            content[-1]["cache_control"] = dict(cache_control)
        return


def convert_tools(tools: list[Tool], *, eager: bool, oauth: bool) -> list[Json]:
    result: list[Json] = []
    for tool in tools:
        schema = tool.parameters
        entry: Json = {
            "name": to_claude_code_name(tool.name) if oauth else tool.name,
            "description": tool.description,
            "input_schema": {
                "type": "object",
                "properties": schema.get("properties", {}),
                "required": schema.get("required", []),
            },
        }
        if eager:
            entry["eager_input_streaming"] = True
        result.append(entry)
    return result


def system_blocks(prompt: str | None, *, oauth: bool, cache_control: Json | None) -> list[Json]:
    texts = [CLAUDE_CODE_IDENTITY] if oauth else []
    if prompt:
        texts.append(_clean(prompt))
    blocks: list[Json] = []
    for text in texts:
        block: Json = {"type": "text", "text": text}
        if cache_control is not None:
            block["cache_control"] = dict(cache_control)
        blocks.append(block)
    return blocks


def tool_choice_param(choice: Any) -> Json | None:
    """`"auto"`/`"any"`/`"none"` -> `{type: …}`; a dict is passed through. Any: callers pass either form."""
    if choice is None:
        return None
    if isinstance(choice, str):
        return {"type": choice}
    return dict(choice)


def betas_for(compat: AnthropicCompat, *, oauth: bool) -> list[str]:
    betas: list[str] = list(OAUTH_BETAS) if oauth else []
    if not compat.eager_input_streaming:
        betas.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if not compat.force_adaptive_thinking:
        betas.append(INTERLEAVED_THINKING_BETA)
    return betas


def _normalize_id(tool_call_id: str, _model: Model, _source: AssistantMessage) -> str:
    return normalize_anthropic_tool_id(tool_call_id)


def build_request(model: Model, context: Context, options: StreamOptions, *, oauth: bool = False) -> AnthropicRequest:
    """The Messages API body for `context` (without `stream`), its betas and its thinking level."""
    compat = AnthropicCompat.of(model)
    cache_control = cache_control_for(resolve_cache_retention(options))
    prompt, tools = system_prompt_and_tools(context)
    history = [m for m in context.messages if m.role != "system"]
    messages = convert_messages(transform_messages(history, model, _normalize_id), oauth=oauth)
    if cache_control is not None:
        mark_last_user_message(messages, cache_control)

    plan = plan_thinking(model, options, options.max_tokens or model.max_tokens)
    fit_budget_to_max_tokens(plan, clamp_max_tokens(model, context, plan.max_tokens))

    body: Json = {"model": model.id, "messages": messages, "max_tokens": plan.max_tokens}
    system = system_blocks(prompt, oauth=oauth, cache_control=cache_control)
    if system:
        body["system"] = system
    if tools:
        converted = convert_tools(tools, eager=compat.eager_input_streaming, oauth=oauth)
        if cache_control is not None:
            converted[-1]["cache_control"] = dict(cache_control)
        body["tools"] = converted
    if plan.thinking is not None:
        body["thinking"] = plan.thinking
    if plan.output_config is not None:
        body["output_config"] = plan.output_config
    if options.temperature is not None and not plan.enabled:
        # The API rejects a temperature while thinking is on.
        body["temperature"] = options.temperature
    user_id = (options.metadata or {}).get("user_id")
    if isinstance(user_id, str):
        body["metadata"] = {"user_id": user_id}
    tool_choice = tool_choice_param(options.tool_choice)
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    return AnthropicRequest(
        body=body, betas=betas_for(compat, oauth=oauth), provider_level=plan.provider_level, tools=tools
    )


__all__ = [
    "FINE_GRAINED_TOOL_STREAMING_BETA",
    "INTERLEAVED_THINKING_BETA",
    "THINKING_BUDGETS",
    "AnthropicCompat",
    "AnthropicRequest",
    "build_request",
    "ThinkingPlan",
    "betas_for",
    "cache_control_for",
    "convert_messages",
    "convert_tools",
    "fit_budget_to_max_tokens",
    "from_claude_code_name",
    "mark_last_user_message",
    "plan_thinking",
    "resolve_cache_retention",
    "system_blocks",
    "to_claude_code_name",
    "tool_choice_param",
]
