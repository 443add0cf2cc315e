"""Wire types round-trip through JSON (spec ai.md §1-5; acceptance check 1)."""

import json
from pathlib import Path
from typing import Any

import pytest

from apex_ai._wire import WireModel, json_text
from apex_ai.events import AssistantMessageEventAdapter
from apex_ai.types import (
    AssistantMessage,
    AssistantMessageDiagnostic,
    Context,
    Cost,
    CostTier,
    DeferredHandle,
    DiagnosticError,
    ImageContent,
    MessageAdapter,
    Model,
    ModelCost,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolReference,
    ToolResultMessage,
    Usage,
    UserMessage,
)

DATA = Path(__file__).parent / "data"


def _lines(name: str) -> list[str]:
    return (DATA / name).read_text(encoding="utf-8").splitlines()


def _walk(value: Any) -> list[tuple[str, Any]]:
    """Every (key, value) pair in a JSON tree."""
    found: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            found.append((key, inner))
            found.extend(_walk(inner))
    elif isinstance(value, list):
        for inner in value:
            found.extend(_walk(inner))
    return found


USAGE = Usage(
    input=10,
    output=5,
    cache_read=2,
    cache_write=3,
    cache_write_1h=1,
    reasoning=2,
    total_tokens=20,
    cost=Cost(input=0.1, output=0.2, cache_read=0.01, cache_write=0.02, total=0.33),
)

SAMPLES: list[WireModel] = [
    TextContent(text="hi", text_signature='{"v":1,"id":"msg_1"}'),
    ImageContent(data="aGk=", mime_type="image/png"),
    ThinkingContent(thinking="hmm", thinking_signature="sig", redacted=False),
    ToolCall(id="c1", name="read", arguments={"path": "a"}, thought_signature="t", namespace="ns"),
    USAGE,
    Tool(name="read", description="Read a file", parameters={"type": "object", "properties": {}}),
    ToolReference(name="read"),
    SystemMessage(
        content="You are helpful.",
        sections={"a": "x", "b": None},
        tools_added=[Tool(name="t", description="d")],
        tools_removed=[ToolReference(name="old")],
        replace=True,
        timestamp=1,
    ),
    UserMessage(content=[TextContent(text="look"), ImageContent(data="aGk=", mime_type="image/jpeg")], timestamp=2),
    AssistantMessage(
        content=[ThinkingContent(thinking="x"), TextContent(text="y"), ToolCall(id="c", name="n", arguments={})],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        response_model="claude-sonnet-4-5-20250929",
        response_id="msg_1",
        provider_thinking_level="high",
        diagnostics=[
            AssistantMessageDiagnostic(type="retry", timestamp=3, error=DiagnosticError(message="boom", code=529))
        ],
        usage=USAGE,
        stop_reason="deferred",
        deferred=DeferredHandle(provider="p", model_id="m", api="a", id="d1", expires_at=9, poll_after_ms=100),
        error_message=None,
        raw_stop_reason="end_turn",
        end_turn=True,
        timestamp=4,
    ),
    ToolResultMessage(
        tool_call_id="c1", tool_name="read", content=[TextContent(text="ok")], details={"lines": 3}, timestamp=5
    ),
    Model(
        id="m",
        name="M",
        api="openai-responses",
        provider="openai",
        base_url="https://api.openai.com/v1",
        reasoning=True,
        thinking_level_map={"minimal": None, "xhigh": "xhigh"},
        input=["text", "image"],
        cost=ModelCost(
            input=1,
            output=2,
            cache_read=0.1,
            cache_write=0,
            tiers=[CostTier(input_tokens_above=200000, input=2, output=4)],
        ),
        context_window=400000,
        max_tokens=128000,
        headers={"X-A": "b"},
        compat={"supportsStore": False},
    ),
]

CAMEL_KEYS = {
    "textSignature",
    "mimeType",
    "thinkingSignature",
    "thoughtSignature",
    "cacheWrite1h",
    "totalTokens",
    "toolsAdded",
    "toolsRemoved",
    "responseModel",
    "providerThinkingLevel",
    "stopReason",
    "rawStopReason",
    "endTurn",
    "modelId",
    "pollAfterMs",
    "toolCallId",
    "isError",
    "baseUrl",
    "thinkingLevelMap",
    "contextWindow",
    "maxTokens",
    "inputTokensAbove",
}


@pytest.mark.parametrize("value", SAMPLES, ids=lambda v: type(v).__name__)
def test_round_trip_is_lossless(value: WireModel) -> None:
    text = value.to_json()
    loaded = type(value).model_validate_json(text)
    assert loaded.to_json() == text
    assert loaded.model_dump() == value.model_dump()


def test_keys_are_camel_case_and_there_are_no_nulls() -> None:
    keys: set[str] = set()
    for value in SAMPLES:
        wire = json.loads(value.to_json())
        for key, inner in _walk(wire):
            keys.add(key)
            assert "_" not in key, key
            # Nulls only where they carry meaning: a null section removes it (agent.md §2), a null
            # thinking level map value marks the level unsupported (§5).
            assert inner is not None or key in {"b", "minimal"}, key
    assert keys >= CAMEL_KEYS


def test_unset_optionals_are_omitted() -> None:
    wire = AssistantMessage(api="a", provider="p", model="m", stop_reason="stop", timestamp=1).to_wire()
    assert set(wire) == {"role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"}
    assert "cacheWrite1h" not in wire["usage"] and "reasoning" not in wire["usage"]


def test_typescript_tool_result_line_dumps_back_equal() -> None:
    line = next(raw for raw in _lines("pi_messages.jsonl") if '"role":"toolResult"' in raw)
    message = MessageAdapter.validate_json(line)
    assert isinstance(message, ToolResultMessage)
    assert message.tool_call_id == "call_fake_1_0"
    assert message.is_error is False
    assert message.to_json() == line


def test_every_captured_message_round_trips() -> None:
    lines = _lines("pi_messages.jsonl")
    roles = set()
    for line in lines:
        message = MessageAdapter.validate_json(line)
        roles.add(message.role)
        assert json.loads(message.to_json()) == json.loads(line)
    assert roles == {"user", "assistant", "toolResult"}


def test_captured_assistant_message_fields() -> None:
    line = next(raw for raw in _lines("pi_messages.jsonl") if '"textSignature"' in raw)
    message = MessageAdapter.validate_json(line)
    assert isinstance(message, AssistantMessage)
    assert message.stop_reason == "stop"
    assert message.usage.total_tokens == 158
    assert isinstance(message.content[0], TextContent)
    assert message.content[0].text_signature == '{"v":1,"id":"msg_fake_2"}'


def test_captured_events_round_trip_with_unknown_fields_kept() -> None:
    lines = _lines("pi_events.jsonl")
    kinds = set()
    for line in lines:
        event = AssistantMessageEventAdapter.validate_json(line)
        kinds.add(event.type)
        assert json.loads(event.to_json()) == json.loads(line)
    assert {"text_start", "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_end"} <= kinds
    # scratch fields a TypeScript adapter left in partial blocks survive a load/dump cycle
    assert any("partialArgs" in line for line in lines)


def test_integral_costs_are_written_like_javascript_numbers() -> None:
    assert Cost(input=3.0, total=3.5).to_json() == '{"input":3,"output":0,"cacheRead":0,"cacheWrite":0,"total":3.5}'


def test_context_accepts_message_dicts() -> None:
    context = Context.model_validate(
        {"messages": [{"role": "user", "content": "hi", "timestamp": 1}], "system_prompt": "s"}
    )
    assert isinstance(context.messages[0], UserMessage)


def test_model_prices_serialize_like_javascript_numbers() -> None:
    from apex_ai.types import Model, ModelCost

    model = Model(id="m", api="faux", provider="p", cost=ModelCost(input=3, output=15.5, cache_read=0))
    assert model.to_wire()["cost"] == {"input": 3, "output": 15.5, "cacheRead": 0, "cacheWrite": 0}
    assert '"input":3,' in model.to_json()


def test_a_lone_surrogate_is_written_as_an_escape_and_reads_back() -> None:
    message = UserMessage(content="half an emoji \ud83d, a pair \U0001f600, é", timestamp=1)
    text = message.to_json()
    text.encode("utf-8")  # would raise with the surrogate left raw
    assert "\\ud83d" in text and "\U0001f600" in text and "é" in text  # only the lone one is escaped
    assert UserMessage.model_validate(json.loads(text)) == message
    assert json_text({"a": "\udc00"}) == '{"a":"\\udc00"}'
    assert json_text({"a": "plain"}) == '{"a":"plain"}'
