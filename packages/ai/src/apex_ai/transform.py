"""Make a transcript safe to replay to a given model.

A transcript may mix replies from several providers and models. Before a request the adapter runs
`transform_messages`, which keeps provider-specific replay data (signatures, redacted thinking)
only for the model that produced it, rewrites tool-call ids into the target API's alphabet, drops
failed replies, and closes every tool call that never got a result.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

from apex_ai.types import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

NormalizeId = Callable[[str, Model, AssistantMessage], str]
"""`(tool_call_id, target_model, source_message) -> id` used for tool calls of other models."""

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
NO_RESULT_TEXT = "No result provided"

_UNSAFE_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def _hash_hex(text: str, length: int) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:length]


def normalize_anthropic_tool_id(tool_call_id: str) -> str:
    """Anthropic accepts `[a-zA-Z0-9_-]{1,64}`: replace other characters by `_` and cut at 64."""
    return _UNSAFE_ID_CHARS.sub("_", tool_call_id)[:64]


def normalize_completions_tool_id(tool_call_id: str, provider: str) -> str:
    """Chat Completions ids.

    A Responses-style `call_id|item_id` becomes the sanitized `call_id_item_id`; when that exceeds
    40 characters it becomes its first 31 characters plus `_` and an 8-hex hash of the original
    (40 in all, still unique). Other ids are kept, except that provider `openai` cuts them at 40.
    """
    if "|" in tool_call_id:
        sanitized = _UNSAFE_ID_CHARS.sub("_", tool_call_id)
        if len(sanitized) <= 40:
            return sanitized
        return f"{sanitized[:31]}_{_hash_hex(tool_call_id, 8)}"
    if provider == "openai":
        return tool_call_id[:40]
    return tool_call_id


def _responses_id_part(part: str) -> str:
    # Responses ids allow at most 64 characters; trailing underscores left by sanitizing are noise.
    return _UNSAFE_ID_CHARS.sub("_", part)[:64].rstrip("_")


def normalize_responses_tool_id(tool_call_id: str, foreign: bool = True) -> str:
    """OpenAI Responses ids are `call_id|item_id`, and the item id must start with `fc_`.

    Both parts are sanitized (≤64 chars). An id without `|` is sanitized as a bare call id. The
    item id of a call from another provider or API (`foreign`) means nothing to OpenAI, so it is
    replaced by `fc_` + a hash of it; a native item id without the prefix gets `fc_` prepended.
    """
    if "|" not in tool_call_id:
        return _responses_id_part(tool_call_id)
    call_id, item_id = tool_call_id.split("|", 1)
    if foreign:
        new_item = f"fc_{_hash_hex(item_id, 16)}"
    else:
        new_item = _responses_id_part(item_id)
        if not new_item.startswith("fc_"):
            new_item = _responses_id_part(f"fc_{new_item}")
    return f"{_responses_id_part(call_id)}|{new_item}"


def is_same_model(message: AssistantMessage, model: Model) -> bool:
    """Whether `message` was produced by `model`: same provider, API and model id."""
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def _without_images(
    content: Sequence[TextContent | ImageContent], placeholder: str
) -> list[TextContent | ImageContent]:
    out: list[TextContent | ImageContent] = []
    previous_was_image = False
    for block in content:
        if isinstance(block, ImageContent):
            if not previous_was_image:  # one placeholder per run of consecutive images
                out.append(TextContent(text=placeholder))
            previous_was_image = True
        else:
            out.append(block)
            previous_was_image = False
    return out


def _transform_block(
    block: AssistantContent,
    same: bool,
    rename: Callable[[str], str] | None,
    id_map: dict[str, str],
) -> AssistantContent | None:
    if isinstance(block, ThinkingContent):
        if block.redacted:
            return block if same else None
        if same and block.thinking_signature is not None:
            return block  # signed thinking must be replayed verbatim, even when empty
        if not block.thinking.strip():
            return None
        # Another model cannot verify foreign reasoning; it still sees it, as plain text without tags.
        return block if same else TextContent(text=block.thinking)
    if isinstance(block, TextContent):
        # A text signature identifies an item of the producing API; elsewhere it is meaningless.
        return block if same else TextContent(text=block.text)
    if same:
        return block
    call = block.model_copy(update={"thought_signature": None})
    if rename is not None:
        new_id = rename(block.id)
        if new_id != block.id:
            id_map[block.id] = new_id
            call = call.model_copy(update={"id": new_id})
    return call


def _renamer(normalize_id: NormalizeId, model: Model, source: AssistantMessage) -> Callable[[str], str]:
    return lambda old: normalize_id(old, model, source)


def _first_pass(messages: Sequence[Message], model: Model, normalize_id: NormalizeId | None) -> list[Message]:
    supports_images = "image" in model.input
    id_map: dict[str, str] = {}
    out: list[Message] = []
    for message in messages:
        if isinstance(message, UserMessage):
            if not supports_images and not isinstance(message.content, str):
                message = message.model_copy(
                    update={"content": _without_images(message.content or [], USER_IMAGE_PLACEHOLDER)}
                )
        elif isinstance(message, ToolResultMessage):
            update: dict[str, object] = {"content": list(message.content or [])}
            if not supports_images:
                update["content"] = _without_images(message.content or [], TOOL_IMAGE_PLACEHOLDER)
            if message.tool_call_id in id_map:
                update["tool_call_id"] = id_map[message.tool_call_id]
            message = message.model_copy(update=update)
        elif isinstance(message, AssistantMessage):
            same = is_same_model(message, model)
            rename = None if normalize_id is None else _renamer(normalize_id, model, message)
            content: list[AssistantContent] = []
            for block in message.content or []:
                new_block = _transform_block(block, same, rename, id_map)
                if new_block is not None:
                    content.append(new_block)
            message = message.model_copy(update={"content": content})
        out.append(message)
    return out


def _synthetic_results(pending: list[ToolCall], answered: set[str], timestamp: int) -> list[Message]:
    return [
        ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=[TextContent(text=NO_RESULT_TEXT)],
            is_error=True,
            timestamp=timestamp,
        )
        for call in pending
        if call.id not in answered
    ]


def transform_messages(
    messages: Sequence[Message], model: Model, normalize_id: NormalizeId | None = None
) -> list[Message]:
    """Return a copy of `messages` that `model` can be sent (the input is not modified).

    1. Missing content becomes empty; for a text-only model every run of images in user messages
       and tool results becomes one placeholder text.
    2. Thinking: redacted kept only for the same model; signed kept for the same model even when
       empty; empty dropped; other thinking of another model becomes a plain text block. For other
       models' calls `thought_signature` is dropped and ids pass through `normalize_id`; tool
       results follow the renamed ids.
    3. Assistant messages that ended in `error` or `aborted` are dropped.
    4. A tool call without a result before the next assistant or user message (or the end) gets a
       synthetic error result "No result provided" (stamped with its assistant's timestamp).
    """
    out: list[Message] = []
    pending: list[ToolCall] = []
    answered: set[str] = set()
    pending_timestamp = 0
    for message in _first_pass(messages, model, normalize_id):
        if isinstance(message, AssistantMessage | UserMessage):
            out.extend(_synthetic_results(pending, answered, pending_timestamp))
            pending, answered = [], set()
        if isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted"):
                continue
            pending = [block for block in message.content if isinstance(block, ToolCall)]
            pending_timestamp = message.timestamp
        elif isinstance(message, ToolResultMessage):
            answered.add(message.tool_call_id)
        out.append(message)
    out.extend(_synthetic_results(pending, answered, pending_timestamp))
    return out


__all__ = [
    "NO_RESULT_TEXT",
    "TOOL_IMAGE_PLACEHOLDER",
    "USER_IMAGE_PLACEHOLDER",
    "NormalizeId",
    "is_same_model",
    "normalize_anthropic_tool_id",
    "normalize_completions_tool_id",
    "normalize_responses_tool_id",
    "transform_messages",
]
