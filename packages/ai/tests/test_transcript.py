"""System-message replay (spec agent.md §2, acceptance check 12) and context normalization (ai.md §3)."""

from typing import Literal

from pydantic import BaseModel

from apex_ai.transcript import (
    collapse_system_messages,
    content_text,
    current_system_message,
    current_tools,
    initial_system_message,
    normalize_context,
    render_system_prompt,
    system_prompt_and_tools,
    tool_state_changes,
)
from apex_ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    SystemMessage,
    TextContent,
    Tool,
    ToolReference,
    UserMessage,
)


def tool(name: str, description: str = "") -> Tool:
    return Tool(name=name, description=description or f"tool {name}")


def user(text: str = "hi") -> UserMessage:
    return UserMessage(content=text, timestamp=5)


S0 = SystemMessage(content="A", sections={"x": "1", "y": "2"}, tools_added=[tool("a"), tool("b")], timestamp=100)
S1 = SystemMessage(
    sections={"x": None}, tools_removed=[ToolReference(name="a")], tools_added=[tool("c")], timestamp=200
)
S2 = SystemMessage(content="B", timestamp=300)
S3 = SystemMessage(replace=True, content="Z", tools_added=[tool("d")], timestamp=400)


def names(tools: list[Tool] | None) -> list[str]:
    return [t.name for t in tools or []]


def test_replay_acceptance_check_12() -> None:
    current = current_system_message([S0, user(), S1, S2])
    assert current is not None
    assert current.content == "A\n\nB"
    assert current.sections == {"y": "2"}
    assert names(current.tools_added) == ["b", "c"]
    assert current.timestamp == 100

    replaced = current_system_message([S0, user(), S1, S2, S3])
    assert replaced is not None
    assert replaced.content == "Z"
    assert replaced.sections is None
    assert names(replaced.tools_added) == ["d"]
    assert replaced.timestamp == 400

    assert render_system_prompt(current_system_message([S0])) == "A\n\n1\n\n2"


def test_no_system_message_gives_none() -> None:
    assert current_system_message([user()]) is None
    assert current_system_message([]) is None
    assert current_tools([user()]) == []
    assert render_system_prompt(None) == ""


def test_empty_system_message_still_counts() -> None:
    current = current_system_message([SystemMessage(timestamp=7)])
    assert current == SystemMessage(content="", timestamp=7)


def test_section_update_keeps_position_and_delete_then_set_moves_it_last() -> None:
    msgs = [
        SystemMessage(sections={"a": "1", "b": "2", "c": "3"}),
        SystemMessage(sections={"a": "one"}),
        SystemMessage(sections={"b": None}),
        SystemMessage(sections={"b": "two"}),
    ]
    current = current_system_message(msgs)
    assert current is not None
    assert list((current.sections or {}).items()) == [("a", "one"), ("c", "3"), ("b", "two")]
    assert render_system_prompt(current) == "one\n\n3\n\ntwo"


def test_render_skips_empty_sections_and_empty_content() -> None:
    msg = SystemMessage(content="", sections={"a": "", "b": "B", "c": None})
    assert render_system_prompt(msg) == "B"


def test_tool_changes_keep_position_unless_removed_and_added() -> None:
    a2 = tool("a", "new a")
    in_place = current_system_message(
        [SystemMessage(tools_added=[tool("a"), tool("b")]), SystemMessage(tools_added=[a2])]
    )
    assert in_place is not None
    assert in_place.tools_added == [a2, tool("b")]

    moved = current_tools(
        [
            SystemMessage(tools_added=[tool("a"), tool("b")]),
            SystemMessage(tools_removed=[ToolReference(name="a")], tools_added=[a2]),
        ]
    )
    assert moved == [tool("b"), a2]


def test_content_blocks_joined_by_newline() -> None:
    assert (
        content_text([TextContent(text="x"), ImageContent(data="AA==", mime_type="image/png"), TextContent(text="y")])
        == "x\ny"
    )
    current = current_system_message([SystemMessage(content=[TextContent(text="p1"), TextContent(text="p2")]), S2])
    assert current is not None
    assert current.content == "p1\np2\n\nB"


class Notification(BaseModel):
    """A host's custom role: replay must ignore it."""

    role: Literal["notification"] = "notification"
    text: str = "ding"


def test_non_system_roles_are_ignored_including_custom_ones() -> None:
    assert current_system_message([Notification(), S2, Notification()]) == S2
    assert names(current_tools([Notification(), S0])) == ["a", "b"]


def test_collapse_puts_current_first_and_drops_later_system_messages() -> None:
    u1, u2 = user("one"), user("two")
    collapsed = collapse_system_messages([S0, u1, S1, u2, S2])
    assert collapsed[1:] == [u1, u2]
    head = collapsed[0]
    assert isinstance(head, SystemMessage)
    assert head.content == "A\n\nB"
    assert collapse_system_messages([u1, u2]) == [u1, u2]


def test_initial_system_message() -> None:
    assert initial_system_message("", []) is None
    assert initial_system_message(None, None) is None
    assert initial_system_message("P", None) == SystemMessage(content="P", timestamp=0)
    only_tools = initial_system_message(None, [tool("a")])
    assert only_tools == SystemMessage(content="", tools_added=[tool("a")], timestamp=0)


def test_normalize_folds_prompt_and_tools_when_transcript_has_none() -> None:
    ctx = Context(system_prompt="Be brief.", messages=[user()], tools=[tool("read")])
    normalized = normalize_context(ctx)
    assert normalized.system_prompt is None and normalized.tools is None
    assert normalized.messages == [SystemMessage(content="Be brief.", tools_added=[tool("read")]), user()]
    assert ctx.messages == [user()]  # input untouched
    assert system_prompt_and_tools(ctx) == ("Be brief.", [tool("read")])


def test_transcript_system_message_wins_over_context_fields() -> None:
    ctx = Context(system_prompt="ignored", messages=[S0, user(), S1], tools=[tool("ignored")])
    assert normalize_context(ctx).messages == [S0, user(), S1]
    prompt, tools = system_prompt_and_tools(ctx)
    assert prompt == "A\n\n2"
    assert names(tools) == ["b", "c"]


def test_empty_context_has_no_prompt() -> None:
    assert normalize_context(Context(messages=[user()])).messages == [user()]
    assert system_prompt_and_tools(Context()) == ("", [])


def test_tool_state_changes() -> None:
    a, b, c = tool("a"), tool("b"), tool("c")
    b2 = Tool(name="b", description="tool b", parameters={"type": "object", "properties": {"x": {"type": "string"}}})
    changes = tool_state_changes([a, b], [b2, c])
    assert changes.tools_added == [b2, c]
    assert changes.tools_removed == [ToolReference(name="a"), ToolReference(name="b")]
    assert tool_state_changes([a, b], [b, a]) == ([], [])


def test_tool_state_changes_ignore_schema_key_order() -> None:
    p1 = {"type": "object", "properties": {"x": {"type": "string"}}}
    p2 = {"properties": {"x": {"type": "string"}}, "type": "object"}
    assert tool_state_changes(
        [Tool(name="t", description="d", parameters=p1)], [Tool(name="t", description="d", parameters=p2)]
    ) == (
        [],
        [],
    )


def test_applying_tool_state_changes_reproduces_the_new_list() -> None:
    prev = [tool("a"), tool("b"), tool("c")]
    cur = [tool("b", "changed"), tool("d"), tool("c")]
    added, removed = tool_state_changes(prev, cur)
    replayed = current_tools([SystemMessage(tools_added=prev), SystemMessage(tools_added=added, tools_removed=removed)])
    assert sorted(names(replayed)) == sorted(names(cur))
    assert {t.name: t for t in replayed} == {t.name: t for t in cur}


def test_system_messages_inside_mixed_lists_with_assistant() -> None:
    assistant = AssistantMessage(api="faux", provider="faux", model="m", stop_reason="stop", timestamp=1)
    collapsed = collapse_system_messages([user(), assistant, S2])
    assert collapsed == [SystemMessage(content="B", timestamp=300), user(), assistant]
