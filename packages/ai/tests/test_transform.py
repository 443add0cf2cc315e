"""Cross-provider transcript transform (spec ai.md §11, acceptance check 10)."""

import re

from apex_ai.transform import (
    normalize_anthropic_tool_id,
    normalize_completions_tool_id,
    normalize_responses_tool_id,
    transform_messages,
)
from apex_ai.types import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

CLAUDE = Model(id="claude-x", api="anthropic-messages", provider="anthropic", input=["text", "image"])
GPT = Model(id="gpt-x", api="openai-responses", provider="openai", input=["text", "image"])
TEXT_ONLY = Model(id="local", api="openai-completions", provider="ollama", input=["text"])
IMG = ImageContent(data="AAAA", mime_type="image/png")


def reply(model: Model, content: list[AssistantContent], stop: StopReason = "stop", ts: int = 10) -> AssistantMessage:
    return AssistantMessage(
        api=model.api, provider=model.provider, model=model.id, content=content, stop_reason=stop, timestamp=ts
    )


def result(call_id: str, text: str = "ok", name: str = "read") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)], timestamp=20)


def user(text: str = "go") -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def test_acceptance_check_10() -> None:
    call = ToolCall(id="toolu_1", name="read", arguments={"path": "a"})
    messages: list[Message] = [
        UserMessage(content=[TextContent(text="look"), IMG, IMG, TextContent(text="and"), IMG], timestamp=1),
        reply(CLAUDE, [ThinkingContent(thinking="hmm", thinking_signature="sig"), call], stop="toolUse"),
        user("next"),
        reply(GPT, [TextContent(text="half")], stop="aborted"),
        reply(GPT, [TextContent(text="boom")], stop="error"),
        user("again"),
    ]
    out = transform_messages(messages, TEXT_ONLY)

    assert [m.role for m in out] == ["user", "assistant", "toolResult", "user", "user"]
    first = out[0]
    assert isinstance(first, UserMessage)
    assert first.content == [
        TextContent(text="look"),
        TextContent(text="(image omitted: model does not support images)"),
        TextContent(text="and"),
        TextContent(text="(image omitted: model does not support images)"),
    ]
    assistant = out[1]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.content == [TextContent(text="hmm"), call]  # foreign thinking: plain text, no tags
    synthetic = out[2]
    assert synthetic == ToolResultMessage(
        tool_call_id="toolu_1",
        tool_name="read",
        content=[TextContent(text="No result provided")],
        is_error=True,
        timestamp=10,
    )


def test_input_is_not_modified() -> None:
    messages: list[Message] = [user(), reply(CLAUDE, [ThinkingContent(thinking="t", thinking_signature="s")])]
    before = [m.model_copy(deep=True) for m in messages]
    transform_messages(messages, GPT, lambda i, m, s: i + "x")
    assert messages == before


def test_tool_result_images_replaced_for_text_only_models() -> None:
    tr = ToolResultMessage(
        tool_call_id="c1", tool_name="shot", content=[IMG, IMG, TextContent(text="caption")], timestamp=3
    )
    out = transform_messages([reply(TEXT_ONLY, [ToolCall(id="c1", name="shot")], "toolUse"), tr], TEXT_ONLY)
    assert out[1].content == [  # type: ignore[union-attr]
        TextContent(text="(tool image omitted: model does not support images)"),
        TextContent(text="caption"),
    ]
    # models with image input keep images
    kept = transform_messages([reply(CLAUDE, [ToolCall(id="c1", name="shot")], "toolUse"), tr], CLAUDE)
    assert kept[1] == tr


def test_thinking_rules_for_same_model() -> None:
    blocks: list[AssistantContent] = [
        ThinkingContent(thinking="", thinking_signature="sig-empty"),
        ThinkingContent(thinking="secret", thinking_signature="opaque", redacted=True),
        ThinkingContent(thinking="   "),
        ThinkingContent(thinking="unsigned"),
        TextContent(text="answer", text_signature="msg_1"),
    ]
    out = transform_messages([user(), reply(CLAUDE, blocks)], CLAUDE)
    assert out[1].content == [blocks[0], blocks[1], blocks[3], blocks[4]]  # type: ignore[union-attr]


def test_thinking_rules_for_other_model() -> None:
    blocks: list[AssistantContent] = [
        ThinkingContent(thinking="", thinking_signature="sig-empty"),
        ThinkingContent(thinking="secret", thinking_signature="opaque", redacted=True),
        ThinkingContent(thinking="signed thought", thinking_signature="sig"),
        TextContent(text="answer", text_signature="msg_1"),
    ]
    out = transform_messages([user(), reply(CLAUDE, blocks)], GPT)
    assert out[1].content == [TextContent(text="signed thought"), TextContent(text="answer")]  # type: ignore[union-attr]


def test_same_provider_and_api_but_other_model_id_is_another_model() -> None:
    other = CLAUDE.model_copy(update={"id": "claude-y"})
    out = transform_messages([user(), reply(CLAUDE, [ThinkingContent(thinking="t", thinking_signature="s")])], other)
    assert out[1].content == [TextContent(text="t")]  # type: ignore[union-attr]


def test_cross_model_ids_are_normalized_and_results_follow() -> None:
    call = ToolCall(id="call_1|fc_abc+/=", name="read", thought_signature="ts")
    messages: list[Message] = [user(), reply(GPT, [call], "toolUse"), result("call_1|fc_abc+/="), user("thanks")]
    seen: list[tuple[str, str, str]] = []

    def normalize(tool_id: str, model: Model, source: AssistantMessage) -> str:
        seen.append((tool_id, model.id, source.model))
        return normalize_anthropic_tool_id(tool_id)

    out = transform_messages(messages, CLAUDE, normalize)
    assert seen == [("call_1|fc_abc+/=", "claude-x", "gpt-x")]
    assert out[1].content == [ToolCall(id="call_1_fc_abc___", name="read")]  # type: ignore[union-attr]
    tool_result = out[2]
    assert isinstance(tool_result, ToolResultMessage)
    assert tool_result.tool_call_id == "call_1_fc_abc___"
    assert len(out) == 4  # the result was found under its new id: nothing synthetic


def test_same_model_keeps_ids_and_signatures() -> None:
    call = ToolCall(id="call_1|fc_abc", name="read", thought_signature="ts")
    messages: list[Message] = [user(), reply(GPT, [call], "toolUse"), result("call_1|fc_abc")]
    out = transform_messages(messages, GPT, lambda i, m, s: "renamed")
    assert out == messages


def test_orphan_calls_closed_before_next_assistant_and_at_end() -> None:
    a = ToolCall(id="a", name="read")
    b = ToolCall(id="b", name="write")
    c = ToolCall(id="c", name="bash")
    messages: list[Message] = [
        user(),
        reply(CLAUDE, [a, b], "toolUse", ts=11),
        result("a"),
        reply(CLAUDE, [c], "toolUse", ts=12),
    ]
    out = transform_messages(messages, CLAUDE)
    assert [(m.role, getattr(m, "tool_call_id", None), getattr(m, "is_error", None)) for m in out] == [
        ("user", None, None),
        ("assistant", None, None),
        ("toolResult", "a", False),
        ("toolResult", "b", True),
        ("assistant", None, None),
        ("toolResult", "c", True),
    ]
    assert out[3].timestamp == 11 and out[5].timestamp == 12


def test_dropped_error_reply_after_tool_calls_still_closes_them() -> None:
    call = ToolCall(id="x", name="read")
    messages: list[Message] = [
        user(),
        reply(CLAUDE, [call], "toolUse"),
        reply(CLAUDE, [ToolCall(id="y", name="read")], "error"),
        user("retry"),
    ]
    out = transform_messages(messages, CLAUDE)
    assert [m.role for m in out] == ["user", "assistant", "toolResult", "user"]
    assert out[2].tool_call_id == "x"  # type: ignore[union-attr]


def test_anthropic_ids() -> None:
    assert normalize_anthropic_tool_id("call_ab|fc_1+2/3=") == "call_ab_fc_1_2_3_"
    long_id = "x" * 100
    assert normalize_anthropic_tool_id(long_id) == "x" * 64
    assert normalize_anthropic_tool_id("toolu_01-AB") == "toolu_01-AB"


def test_completions_ids() -> None:
    assert normalize_completions_tool_id("call_1|fc_2", "openrouter") == "call_1_fc_2"
    long_pipe = "call_" + "a" * 30 + "|fc_" + "b+/" * 100
    short = normalize_completions_tool_id(long_pipe, "groq")
    assert len(short) == 40
    assert re.fullmatch(r"call_a{26}_[0-9a-f]{8}", short)
    assert normalize_completions_tool_id(long_pipe, "groq") == short  # deterministic
    assert normalize_completions_tool_id(long_pipe + "z", "groq") != short
    assert normalize_completions_tool_id("t" * 50, "openai") == "t" * 40
    assert normalize_completions_tool_id("t" * 50, "ollama") == "t" * 50
    assert normalize_completions_tool_id("toolu_01", "openai") == "toolu_01"


def test_responses_ids() -> None:
    foreign = normalize_responses_tool_id("call_1|item+x", foreign=True)
    call_part, item_part = foreign.split("|")
    assert call_part == "call_1"
    assert re.fullmatch(r"fc_[0-9a-f]{16}", item_part)
    assert normalize_responses_tool_id("call_1|fc_abc", foreign=False) == "call_1|fc_abc"
    assert normalize_responses_tool_id("call_1|abc", foreign=False) == "call_1|fc_abc"
    assert normalize_responses_tool_id("toolu_01:x") == "toolu_01_x"
    assert normalize_responses_tool_id("c" * 80) == "c" * 64


def test_empty_content_becomes_empty_list() -> None:
    empty = AssistantMessage.model_construct(
        role="assistant", content=None, api="x", provider="y", model="z", stop_reason="stop", timestamp=1
    )
    out = transform_messages([user(), empty], CLAUDE)
    assert out[1].content == []  # type: ignore[union-attr]
