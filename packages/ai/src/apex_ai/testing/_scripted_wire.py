"""Scenario replies of the scripted model server and their wire encodings (SSE frames, error bodies).

A scenario is a JSON list of replies, consumed one per request in arrival order:

- `text`, `thinking` (strings), `tool_calls` (`[{"name", "arguments", "id"?}]`): the content, streamed
  in that order (thinking, text, tool calls); text by words, thinking by words, tool arguments by 8 characters.
- `usage`: `{"input", "output", "cache_read"?, "cache_write"?}` token counts; `input` excludes cached tokens.
- `stop_reason`: `"stop"`, `"length"` or `"toolUse"` (default: `toolUse` when there are tool calls).
- `error`: `{"status", "type", "message"}` answers with that HTTP error instead of a stream.
- `stream_error`: `{"type", "message"}` ends the stream with the API's in-stream error event.
- `repeat`: the reply is served for this and every later request.
- `when_last`: a regular expression; the reply is only served to a request whose last message (as compact
  JSON) matches it. Each request gets the first remaining reply whose `when_last` (if any) matches, so a
  scenario can answer summary requests, tool results and user prompts differently in any order.
- `delay_ms` (between SSE frames), `wait_ms` (before the response headers), `cut_after_chunks` (drop
  the connection after that many frames), `retry_after` (seconds, sent as `retry-after`), `headers`.
- `stall_after_chunks` + `stall_ms`: after that many frames send no content for that long (the client may
  give up first), then the rest; `keepalive_ms` sends a keep-alive every so often during the stall:
  `keepalive` `"comment"` (`: ping`, the default except for Anthropic) or `"ping"` (an `event: ping`
  frame, Anthropic's default). Neither is content.
- `invalid_utf8`: each lone surrogate U+DC80-U+DCFF in the scripted text goes out as the raw byte
  0x80-0xFF (Python's `surrogateescape`), so the SSE data line is not valid UTF-8.

This module only builds bytes; `apex_ai.testing.scripted_server` serves them. It imports no SDK.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from apex_ai._wire import json_text

Api: TypeAlias = Literal["anthropic", "chat", "responses"]
"""Which wire protocol a request used; the names the pi captures record."""

JsonObject: TypeAlias = dict[str, Any]  # Any: arbitrary JSON values

ARGUMENT_CHUNK_CHARS: Final = 8
_STOP_REASONS: Final = ("stop", "length", "toolUse")
_REPLY_KEYS: Final = frozenset(
    {
        "text",
        "thinking",
        "tool_calls",
        "usage",
        "stop_reason",
        "error",
        "stream_error",
        "repeat",
        "when_last",
        "delay_ms",
        "wait_ms",
        "cut_after_chunks",
        "retry_after",
        "headers",
        "stall_after_chunks",
        "stall_ms",
        "keepalive_ms",
        "keepalive",
        "invalid_utf8",
    }
)
_KEEPALIVES: Final = ("comment", "ping")


class ScenarioError(ValueError):
    """A scenario that is not a list of well-formed replies."""


@dataclass(frozen=True)
class ScriptedToolCall:
    name: str
    arguments: JsonObject
    id: str | None = None


@dataclass(frozen=True)
class ScriptedError:
    status: int
    type: str
    message: str


@dataclass(frozen=True)
class ScriptedUsage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0


@dataclass(frozen=True)
class ScriptedReply:
    """One parsed scenario entry; `raw` is the entry as written (recorded with each request)."""

    raw: JsonObject
    text: str | None = None
    thinking: str | None = None
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    usage: ScriptedUsage = field(default_factory=ScriptedUsage)
    stop_reason: str = "stop"
    error: ScriptedError | None = None
    stream_error: ScriptedError | None = None
    repeat: bool = False
    when_last: re.Pattern[str] | None = None
    delay_ms: float = 0
    wait_ms: float = 0
    cut_after_chunks: int | None = None
    retry_after: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    stall_after_chunks: int | None = None
    stall_ms: float = 0
    keepalive_ms: float = 0
    keepalive: Literal["comment", "ping"] | None = None
    """None: the API's usual keep-alive (`ping` for Anthropic, `comment` otherwise)."""
    invalid_utf8: bool = False


# --------------------------------------------------------------------------- parsing


def _int(entry: Mapping[str, Any], key: str, where: str, default: int = 0) -> int:
    value = entry.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ScenarioError(f"{where}: {key} must be a non-negative integer, got {value!r}")
    return value


def _number(entry: Mapping[str, Any], key: str, where: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise ScenarioError(f"{where}: {key} must be a non-negative number, got {value!r}")
    return float(value)


def _text(entry: Mapping[str, Any], key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise ScenarioError(f"{where}: {key} must be a string, got {value!r}")
    return value


def _error(raw: object, where: str, *, with_status: bool) -> ScriptedError | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where}: must be an object, got {raw!r}")
    status = _int(raw, "status", where, 500) if with_status else 200
    if with_status and not 400 <= status <= 599:
        raise ScenarioError(f"{where}: status must be an HTTP error status (400-599), got {status}")
    kind = _text(raw, "type", where) or "api_error"
    message = _text(raw, "message", where) or "Scripted error"
    return ScriptedError(status=status, type=kind, message=message)


def _tool_call(raw: object, where: str) -> ScriptedToolCall:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ScenarioError(f"{where}: a tool call needs a string name, got {raw!r}")
    arguments = raw.get("arguments", {})
    if not isinstance(arguments, dict):
        raise ScenarioError(f"{where}: arguments must be an object, got {arguments!r}")
    return ScriptedToolCall(name=raw["name"], arguments=arguments, id=_text(raw, "id", where))


def parse_reply(raw: object, index: int) -> ScriptedReply:
    """One scenario entry; raises `ScenarioError` naming the entry and the field at fault."""
    where = f"scenario[{index}]"
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where}: a reply must be an object, got {raw!r}")
    unknown = sorted(set(raw) - _REPLY_KEYS)
    if unknown:
        # A typo (`tool_call`) would otherwise silently become an empty reply.
        raise ScenarioError(f"{where}: unknown keys {unknown}; known: {sorted(_REPLY_KEYS)}")
    calls_raw = raw.get("tool_calls") or []
    if not isinstance(calls_raw, list):
        raise ScenarioError(f"{where}: tool_calls must be a list")
    calls = tuple(_tool_call(call, f"{where}.tool_calls[{i}]") for i, call in enumerate(calls_raw))
    usage_raw = raw.get("usage") or {}
    if not isinstance(usage_raw, dict):
        raise ScenarioError(f"{where}: usage must be an object")
    usage = ScriptedUsage(
        input=_int(usage_raw, "input", f"{where}.usage"),
        output=_int(usage_raw, "output", f"{where}.usage"),
        cache_read=_int(usage_raw, "cache_read", f"{where}.usage"),
        cache_write=_int(usage_raw, "cache_write", f"{where}.usage"),
    )
    stop_reason = raw.get("stop_reason") or ("toolUse" if calls else "stop")
    if stop_reason not in _STOP_REASONS:
        raise ScenarioError(f"{where}: stop_reason must be one of {_STOP_REASONS}, got {stop_reason!r}")
    headers = raw.get("headers") or {}
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise ScenarioError(f"{where}: headers must map names to strings")
    cut = raw.get("cut_after_chunks")
    stall = raw.get("stall_after_chunks")
    keepalive = raw.get("keepalive")
    if keepalive is not None and keepalive not in _KEEPALIVES:
        raise ScenarioError(f"{where}: keepalive must be one of {_KEEPALIVES}, got {keepalive!r}")
    when_last = _text(raw, "when_last", where)
    try:
        pattern = re.compile(when_last) if when_last is not None else None
    except re.error as exc:
        raise ScenarioError(f"{where}: when_last is not a regular expression: {exc}") from exc
    return ScriptedReply(
        raw=raw,
        text=_text(raw, "text", where),
        thinking=_text(raw, "thinking", where),
        tool_calls=calls,
        usage=usage,
        stop_reason=stop_reason,
        error=_error(raw.get("error"), f"{where}.error", with_status=True),
        stream_error=_error(raw.get("stream_error"), f"{where}.stream_error", with_status=False),
        repeat=bool(raw.get("repeat", False)),
        when_last=pattern,
        delay_ms=_number(raw, "delay_ms", where) or 0,
        wait_ms=_number(raw, "wait_ms", where) or 0,
        cut_after_chunks=None if cut is None else _int(raw, "cut_after_chunks", where),
        retry_after=_number(raw, "retry_after", where),
        headers=dict(headers),
        stall_after_chunks=None if stall is None else _int(raw, "stall_after_chunks", where),
        stall_ms=_number(raw, "stall_ms", where) or 0,
        keepalive_ms=_number(raw, "keepalive_ms", where) or 0,
        keepalive="ping" if keepalive == "ping" else ("comment" if keepalive == "comment" else None),
        invalid_utf8=bool(raw.get("invalid_utf8", False)),
    )


def parse_scenario(data: object) -> list[ScriptedReply]:
    """A scenario from its JSON value (a list of replies)."""
    if not isinstance(data, list):
        raise ScenarioError(f"a scenario must be a JSON list of replies, got {type(data).__name__}")
    return [parse_reply(entry, i) for i, entry in enumerate(data)]


def load_scenario(path: str | Path) -> list[ScriptedReply]:
    """A scenario from a JSON file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{path}: not JSON: {exc}") from exc
    return parse_scenario(data)


# --------------------------------------------------------------------------- encoding helpers


def word_chunks(text: str) -> list[str]:
    """`"Hello! I am"` -> `["Hello!", " I", " am"]`: each word with the whitespace before it."""
    return re.findall(r"\s*\S+|\s+$", text)


def argument_chunks(arguments: JsonObject) -> list[str]:
    encoded = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
    return [encoded[i : i + ARGUMENT_CHUNK_CHARS] for i in range(0, len(encoded), ARGUMENT_CHUNK_CHARS)]


def _json(value: object) -> str:
    return json_text(value)  # a scripted lone surrogate goes out as an escape, as a real server would send it


def sse(data: object, event: str | None = None) -> bytes:
    """One SSE frame; `data` is JSON-encoded unless it is already a string."""
    payload = data if isinstance(data, str) else _json(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def error_body(api: Api | None, error: ScriptedError, seq: int) -> bytes:
    """The JSON body of an HTTP error response, in the shape of `api`'s real server."""
    if api == "anthropic":
        body: JsonObject = {
            "type": "error",
            "error": {"type": error.type, "message": error.message},
            "request_id": f"req_fake_{seq}",
        }
    else:
        body = {"error": {"message": error.message, "type": error.type, "param": None, "code": error.type}}
    return _json(body).encode()


@dataclass(frozen=True)
class RequestInfo:
    """What the encoders need to know about the request being answered."""

    seq: int
    model: str
    created: int
    include_usage: bool = False


# --------------------------------------------------------------------------- a local server's window

CONTEXT_EXCEEDED = "the request exceeds the available context size, try increasing it"
"""llama.cpp's wording for a prompt that does not fit its context (`n_ctx`)."""
_MAX_TOKEN_FIELDS: Final = ("max_tokens", "max_completion_tokens", "max_output_tokens")


def _conversation(body: JsonObject) -> list[Any]:  # Any: JSON values
    messages = body.get("messages", body.get("input"))
    if isinstance(messages, list):
        return messages
    return [messages] if messages is not None else []


def last_message_text(body: object) -> str:
    """The request's last message as compact JSON (what `when_last` is matched against)."""
    if not isinstance(body, dict):
        return ""
    messages = _conversation(body)
    return json.dumps(messages[-1], separators=(",", ":"), ensure_ascii=False) if messages else ""


def _string_chars(value: object) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_string_chars(v) for v in value.values())
    if isinstance(value, list):
        return sum(_string_chars(v) for v in value)
    return 0


def count_prompt_tokens(body: JsonObject) -> int:
    """A stand-in tokenizer: the characters of every string in the messages and system prompt, plus each tool
    declaration's JSON, divided by 4 (rounded up), and 4 tokens of chat template per message."""
    messages = _conversation(body)
    chars = _string_chars(messages) + _string_chars(body.get("system")) + _string_chars(body.get("instructions"))
    tools = body.get("tools") or []
    chars += sum(len(json.dumps(tool, separators=(",", ":"), ensure_ascii=False)) for tool in tools)
    return -(-chars // 4) + 4 * len(messages)


def requested_max_tokens(body: JsonObject) -> int | None:
    """The output cap the request asked for, under whichever field its API uses."""
    for name in _MAX_TOKEN_FIELDS:
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def fit_reply(reply: ScriptedReply, body: JsonObject, prompt_tokens: int, context_window: int) -> ScriptedReply:
    """`reply` as a local server with `context_window` tokens would send it: its usage counted when the scenario
    gives none, and its text cut (stop reason `length`) where the output cap or the window ends."""
    cap = context_window - prompt_tokens
    asked = requested_max_tokens(body)
    if asked is not None:
        cap = min(cap, asked)
    text = reply.text or ""
    chars = len(text) + len(reply.thinking or "")
    chars += sum(len(json.dumps(call.arguments, separators=(",", ":"))) + len(call.name) for call in reply.tool_calls)
    output = -(-chars // 4)
    stop_reason = reply.stop_reason
    if not reply.tool_calls and reply.error is None and output > cap:
        keep = max(0, cap * 4 - len(reply.thinking or ""))
        text, output, stop_reason = text[:keep], cap, "length"
    usage = reply.usage if "usage" in reply.raw else ScriptedUsage(input=prompt_tokens, output=max(0, output))
    return replace(reply, text=text if reply.text is not None else None, usage=usage, stop_reason=stop_reason)
