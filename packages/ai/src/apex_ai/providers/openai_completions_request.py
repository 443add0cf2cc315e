"""The request body of `openai-completions`: messages, tools, thinking, caching.

Pure functions of model, context, options and compat flags: no SDK, no I/O, so a test can compare
the body with what the upstream product sent without a server.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.providers._shared import resolve_cache_retention, strip_unpaired_surrogates
from apex_ai.providers.openai_compat import CompletionsCompat
from apex_ai.thinking import clamp_level
from apex_ai.transcript import system_prompt_and_tools
from apex_ai.transform import normalize_completions_tool_id, transform_messages
from apex_ai.types import (
    AssistantMessage,
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

# JSON objects of the OpenAI wire format: untyped dicts, built here and serialized by the SDK.
WireDict = dict[str, Any]

REASONING_FIELDS: tuple[str, ...] = ("reasoning_content", "reasoning", "reasoning_text")
"""Delta fields that carry thinking, in preference order; a thinking block's signature is one of them."""
TOOL_RESULT_BRIDGE = "I have processed the tool results."
TOOL_IMAGES_INTRO = "Attached image(s) from tool result:"
_PROMPT_CACHE_KEY_MAX = 64


def _json_text(value: Any) -> str:
    # Compact, non-ASCII kept: the same text JavaScript's JSON.stringify produces for the original product.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _clean(text: str) -> str:
    return strip_unpaired_surrogates(text)


def _image_part(image: ImageContent) -> WireDict:
    return {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}


def _user_message(message: UserMessage) -> WireDict | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": _clean(message.content)}
    parts: list[WireDict] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": _clean(block.text)})
        else:
            parts.append(_image_part(block))
    return {"role": "user", "content": parts} if parts else None


def _assistant_message(message: AssistantMessage, compat: CompletionsCompat) -> WireDict | None:
    text = "".join(_clean(b.text) for b in message.content if isinstance(b, TextContent) and b.text.strip())
    thinking = [b for b in message.content if isinstance(b, ThinkingContent) and b.thinking.strip()]
    calls = [b for b in message.content if isinstance(b, ToolCall)]

    # Some servers reject a null content next to tool calls; those are the ones needing the bridge message too.
    wire: WireDict = {"role": "assistant", "content": "" if compat.requires_assistant_after_tool_result else None}
    if thinking and compat.requires_thinking_as_text:
        # Plain text, no tags: tagged thinking teaches the model to emit the tags itself.
        thinking_text = "\n\n".join(_clean(b.thinking) for b in thinking)
        text = f"{thinking_text}\n\n{text}" if text else thinking_text
    elif thinking:
        field = thinking[0].thinking_signature
        if field in REASONING_FIELDS:
            wire[field] = "\n".join(_clean(b.thinking) for b in thinking)
    if text:
        wire["content"] = text
    if calls:
        wire["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _json_text(c.arguments)}}
            for c in calls
        ]
    if not text and not calls:
        return None  # e.g. an aborted reply with nothing in it: servers reject empty assistant messages
    return wire


def _tool_result_message(message: ToolResultMessage, compat: CompletionsCompat) -> WireDict:
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    has_images = any(isinstance(b, ImageContent) for b in message.content)
    if not text:
        text = "(see attached image)" if has_images else "(no tool output)"
    wire: WireDict = {"role": "tool", "content": _clean(text), "tool_call_id": message.tool_call_id}
    if compat.requires_tool_result_name and message.tool_name:
        wire["name"] = message.tool_name
    return wire


def _normalize_id(tool_call_id: str, target: Model, source: AssistantMessage) -> str:
    return normalize_completions_tool_id(tool_call_id, target.provider)


def convert_messages(
    model: Model, prompt: str, messages: Sequence[Message], compat: CompletionsCompat
) -> list[WireDict]:
    """The `messages` array: system prompt first, then the transcript in Chat Completions shape."""
    wire: list[WireDict] = []
    if prompt:
        role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        wire.append({"role": role, "content": _clean(prompt)})

    transformed = transform_messages([m for m in messages if m.role != "system"], model, _normalize_id)
    accepts_images = "image" in model.input
    last_role: str | None = None
    i = 0
    while i < len(transformed):
        message = transformed[i]
        if isinstance(message, ToolResultMessage):
            images: list[WireDict] = []
            while i < len(transformed):
                result = transformed[i]
                if not isinstance(result, ToolResultMessage):
                    break
                wire.append(_tool_result_message(result, compat))
                if accepts_images:
                    images.extend(_image_part(b) for b in result.content if isinstance(b, ImageContent))
                i += 1
            last_role = "toolResult"
            if images:
                # The tool role carries text only: images follow as a user message.
                if compat.requires_assistant_after_tool_result:
                    wire.append({"role": "assistant", "content": TOOL_RESULT_BRIDGE})
                wire.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *images]})
                last_role = "user"
            continue
        i += 1
        if isinstance(message, UserMessage):
            if compat.requires_assistant_after_tool_result and last_role == "toolResult":
                wire.append({"role": "assistant", "content": TOOL_RESULT_BRIDGE})
            converted = _user_message(message)
        elif isinstance(message, AssistantMessage):
            converted = _assistant_message(message, compat)
        else:
            continue
        if converted is not None:
            wire.append(converted)
            last_role = message.role
    return wire


def convert_tools(tools: Sequence[Tool], compat: CompletionsCompat) -> list[WireDict]:
    converted: list[WireDict] = []
    for tool in tools:
        function: WireDict = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
        if compat.supports_strict_mode:
            function["strict"] = False
        converted.append({"type": "function", "function": function})
    return converted


def _has_tool_history(messages: Sequence[Message]) -> bool:
    for message in messages:
        if isinstance(message, ToolResultMessage):
            return True
        if isinstance(message, AssistantMessage) and any(isinstance(b, ToolCall) for b in message.content):
            return True
    return False


def thinking_params(model: Model, options: StreamOptions, compat: CompletionsCompat) -> tuple[WireDict, str | None]:
    """Body keys that set the thinking level, and the effort value sent (`providerThinkingLevel`).

    The level is `options.reasoning` (clamped to the model) for `stream_simple`, else `options.reasoning_effort`
    sent as given; neither means off. Models without reasoning get nothing.
    """
    if not model.reasoning:
        return {}, None
    level: str
    if isinstance(options, SimpleStreamOptions) and options.reasoning is not None:
        level = clamp_level(model, options.reasoning)
    elif options.reasoning_effort:
        level = options.reasoning_effort
    else:
        level = "off"
    level_map = model.thinking_level_map or {}
    mapped = level_map.get(level) or level
    fmt = compat.thinking_format

    if level == "off":
        if fmt == "openai":
            off = level_map.get("off")
            if isinstance(off, str) and compat.supports_reasoning_effort:
                return {"reasoning_effort": off}, off
            return {}, None
        if fmt == "openrouter":
            return {"reasoning": {"effort": "none"}}, "none"
        if fmt in ("deepseek", "zai"):
            return {"thinking": {"type": "disabled"}}, None
        return {}, None

    if fmt == "openai":
        return ({"reasoning_effort": mapped}, mapped) if compat.supports_reasoning_effort else ({}, None)
    if fmt == "openrouter":
        return {"reasoning": {"effort": mapped}}, mapped
    if fmt in ("deepseek", "zai"):
        return {"thinking": {"type": "enabled"}}, None
    return {"enable_thinking": True}, None


def _mark_text(message: WireDict, marker: WireDict) -> bool:
    """Put `cache_control` on the last text of `message` (string content becomes one text part)."""
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": marker}]
        return True
    if isinstance(content, list):
        for part in reversed(content):
            if isinstance(part, dict) and part.get("type") == "text":
                part["cache_control"] = marker
                return True
    return False


def apply_anthropic_cache_control(messages: list[WireDict], tools: list[WireDict] | None, marker: WireDict) -> None:
    """Anthropic-style markers: the system prompt, the last tool, the last conversation text."""
    for message in messages:
        if message.get("role") in ("system", "developer"):
            _mark_text(message, marker)
            break
    if tools:
        tools[-1]["cache_control"] = marker
    for message in reversed(messages):
        if message.get("role") in ("user", "assistant", "tool") and _mark_text(message, marker):
            break


def build_body(
    model: Model, context: Context, options: StreamOptions, compat: CompletionsCompat, max_tokens: int
) -> tuple[WireDict, str | None]:
    """The whole request body (before `on_payload`) and the thinking value sent (`providerThinkingLevel`)."""
    prompt, tools = system_prompt_and_tools(context)
    history = [m for m in context.messages if m.role != "system"]
    messages = convert_messages(model, prompt, history, compat)

    body: WireDict = {"model": model.id, "messages": messages, "stream": True}
    if compat.supports_usage_in_streaming:
        body["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        body["store"] = False
    body[compat.max_tokens_field] = max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature

    wire_tools: list[WireDict] | None = None
    if tools:
        wire_tools = convert_tools(tools, compat)
    elif _has_tool_history(history):
        wire_tools = []  # proxies in front of Anthropic reject tool calls in history without a tools key
    if wire_tools is not None:
        body["tools"] = wire_tools
    if options.tool_choice is not None:
        body["tool_choice"] = options.tool_choice

    retention = resolve_cache_retention(options)
    if options.session_id and retention != "none" and ("api.openai.com" in model.base_url or retention == "long"):
        body["prompt_cache_key"] = options.session_id[:_PROMPT_CACHE_KEY_MAX]
    if retention == "long":
        body["prompt_cache_retention"] = "24h"
    if compat.cache_control_format == "anthropic" and retention != "none":
        marker: WireDict = {"type": "ephemeral"}
        if retention == "long":
            marker["ttl"] = "1h"
        apply_anthropic_cache_control(messages, wire_tools, marker)

    thinking, provider_level = thinking_params(model, options, compat)
    body.update(thinking)
    # Sampling parameters go last so a model's or caller's explicit value wins over ours.
    body.update(model.sampling_params or {})
    body.update(options.sampling_params or {})
    return body, provider_level


__all__ = [
    "REASONING_FIELDS",
    "apply_anthropic_cache_control",
    "build_body",
    "convert_messages",
    "convert_tools",
    "resolve_cache_retention",
    "thinking_params",
]
