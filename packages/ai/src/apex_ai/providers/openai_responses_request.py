"""Request side of `openai-responses`: our context -> a Responses body.

The body is a plain JSON dict, the same one `on_payload` sees and the wire carries. Replay data
written by the stream decoder comes back here: a thinking block's signature is the whole reasoning
item (JSON), a text block's signature names the output message item.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, TypeAlias

from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.providers._shared import resolve_cache_retention, strip_unpaired_surrogates
from apex_ai.thinking import clamp_level
from apex_ai.transcript import system_prompt_and_tools
from apex_ai.transform import is_same_model, normalize_responses_tool_id, transform_messages
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

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object as it goes on the wire; values are arbitrary JSON, hence `Any`."""

MAX_ITEM_ID = 64
MIN_OUTPUT_TOKENS = 16


def compact_json(value: Any) -> str:  # Any: any JSON value
    """JSON text the way `JSON.stringify` writes it: no spaces, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


# --------------------------------------------------------------------------- tool call ids


def normalize_tool_call_id(tool_call_id: str, model: Model, source: AssistantMessage) -> str:
    """`transform_messages` hook: ids of calls made through another provider or API get an `fc_<hash>` item id."""
    foreign = source.provider != model.provider or source.api != model.api
    return normalize_responses_tool_id(tool_call_id, foreign=foreign)


# --------------------------------------------------------------------------- signatures


def encode_text_signature(item_id: str, phase: str | None) -> str:
    """The text block signature of an output message item: `{"v":1,"id":…,"phase"?}`."""
    data: JsonObject = {"v": 1, "id": item_id}
    if phase:
        data["phase"] = phase
    return compact_json(data)


def decode_text_signature(signature: str | None) -> tuple[str | None, str | None]:
    """`(item_id, phase)` from a text signature; a legacy signature is the bare item id."""
    if not signature:
        return None, None
    if signature.startswith("{"):
        try:
            data = json.loads(signature)
        except ValueError:
            return None, None
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            phase = data.get("phase")
            return data["id"], phase if isinstance(phase, str) else None
        return None, None
    return signature, None


def _reasoning_item(signature: str | None) -> JsonObject | None:
    if not signature:
        return None
    try:
        item = json.loads(signature)
    except ValueError:
        # Not ours (e.g. a Completions field name): nothing the Responses API could replay.
        return None
    return item if isinstance(item, dict) and item.get("type") == "reasoning" else None


# --------------------------------------------------------------------------- input items


def _image_part(image: ImageContent) -> JsonObject:
    return {"type": "input_image", "detail": "auto", "image_url": f"data:{image.mime_type};base64,{image.data}"}


def _user_item(message: UserMessage) -> JsonObject | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": [{"type": "input_text", "text": strip_unpaired_surrogates(message.content)}]}
    parts: list[JsonObject] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "input_text", "text": strip_unpaired_surrogates(block.text)})
        else:
            parts.append(_image_part(block))
    return {"role": "user", "content": parts} if parts else None


def _assistant_items(message: AssistantMessage, model: Model, index: int) -> list[JsonObject]:
    same_model = is_same_model(message, model)
    items: list[JsonObject] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            reasoning = _reasoning_item(block.thinking_signature)
            if reasoning is not None:
                items.append(reasoning)
        elif isinstance(block, TextContent):
            item_id, phase = decode_text_signature(block.text_signature)
            if item_id is None:
                item_id = f"msg_pi_{index}"
            elif len(item_id) > MAX_ITEM_ID:
                item_id = f"msg_{short_hash(item_id)}"
            text_item: JsonObject = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": strip_unpaired_surrogates(block.text), "annotations": []}],
                "status": "completed",
                "id": item_id,
            }
            if phase:
                text_item["phase"] = phase
            items.append(text_item)
        else:
            items.append(_function_call_item(block, same_model))
    return items


def _function_call_item(call: ToolCall, same_model: bool) -> JsonObject:
    call_id, _, item_id = call.id.partition("|")
    item: JsonObject = {"type": "function_call"}
    # The server pairs a replayed item id with the reasoning that produced it; another model's
    # id would fail that check, so only our own `fc_` ids are replayed.
    if same_model and item_id.startswith("fc_"):
        item["id"] = item_id
    item["call_id"] = call_id
    item["name"] = call.name
    item["arguments"] = compact_json(call.arguments)
    if call.namespace:
        item["namespace"] = call.namespace
    return item


def _tool_result_item(message: ToolResultMessage, model: Model) -> JsonObject:
    call_id = message.tool_call_id.partition("|")[0]
    text = "\n".join(block.text for block in message.content if isinstance(block, TextContent))
    images = [block for block in message.content if isinstance(block, ImageContent)]
    output: str | list[JsonObject]
    if images and "image" in model.input:
        parts: list[JsonObject] = []
        if text:
            parts.append({"type": "input_text", "text": strip_unpaired_surrogates(text)})
        parts.extend(_image_part(image) for image in images)
        output = parts
    elif text:
        output = strip_unpaired_surrogates(text)
    else:
        output = "(see attached image)" if images else "(no tool output)"
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def convert_input(model: Model, system_prompt: str, messages: list[Message]) -> list[JsonObject]:
    """The `input` list: the system prompt, then each message as Responses items.

    `messages` must already be transformed for `model` and hold no system message.
    """
    items: list[JsonObject] = []
    if system_prompt:
        supports_developer = bool((model.compat or {}).get("supportsDeveloperRole", True))
        role = "developer" if model.reasoning and supports_developer else "system"
        items.append({"role": role, "content": strip_unpaired_surrogates(system_prompt)})
    for index, message in enumerate(messages):
        if isinstance(message, UserMessage):
            user = _user_item(message)
            if user is not None:
                items.append(user)
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(message, model, index))
        elif isinstance(message, ToolResultMessage):
            items.append(_tool_result_item(message, model))
    return items


# --------------------------------------------------------------------------- body


def convert_tools(tools: list[Tool]) -> list[JsonObject]:
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": False,
        }
        for tool in tools
    ]


def reasoning_params(model: Model, options: StreamOptions) -> JsonObject | None:
    """The `reasoning` object, or None when nothing is sent."""
    if not model.reasoning:
        return None
    level_map = model.thinking_level_map or {}
    effort: str | None = options.reasoning_effort
    if effort is None and isinstance(options, SimpleStreamOptions) and options.reasoning is not None:
        level = clamp_level(model, options.reasoning)
        if level != "off":
            effort = level_map.get(level) or level
    if effort is not None:
        return {"effort": effort, "summary": options.reasoning_summary or "auto"}
    # Reasoning models think by default; "off" has to be asked for, unless the model cannot turn it off.
    if "off" in level_map and level_map["off"] is None:
        return None
    return {"effort": level_map.get("off") or "none"}


def build_body(model: Model, context: Context, options: StreamOptions, max_tokens: int) -> JsonObject:
    """The whole request body, keys in the order the original product sends them.

    The one current system prompt and tool list come from the transcript's system messages; the other messages
    are transformed for `model` and converted.
    """
    system_prompt, tools = system_prompt_and_tools(context)
    history = [message for message in context.messages if message.role != "system"]
    messages = transform_messages(history, model, normalize_tool_call_id)
    body: JsonObject = {"model": model.id, "input": convert_input(model, system_prompt, messages), "stream": True}
    retention = resolve_cache_retention(options)
    if options.session_id and retention != "none":
        body["prompt_cache_key"] = options.session_id[:64]
    if retention == "long":
        body["prompt_cache_retention"] = "24h"
    body["store"] = False
    body["max_output_tokens"] = max(max_tokens, MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if tools:
        body["tools"] = convert_tools(tools)
    if options.tool_choice is not None:
        body["tool_choice"] = options.tool_choice
    reasoning = reasoning_params(model, options)
    if reasoning is not None:
        body["reasoning"] = reasoning
        if reasoning["effort"] != "none":
            # With store=False the reasoning item is only replayable if the server hands it back encrypted.
            body["include"] = ["reasoning.encrypted_content"]
    body.update(model.sampling_params or {})
    body.update(options.sampling_params or {})
    return body


__all__ = [
    "JsonObject",
    "build_body",
    "compact_json",
    "convert_input",
    "convert_tools",
    "decode_text_signature",
    "encode_text_signature",
    "normalize_tool_call_id",
    "reasoning_params",
    "resolve_cache_retention",
]
