"""convert_to_llm of the coding agent (spec agent.md §1, sessions.md §6) and the role registry."""

from apex_agent.messages import UnknownMessage, default_registry
from apex_ai.types import ImageContent, SystemMessage, TextContent, UserMessage
from apex_coding_agent.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    convert_to_llm,
)


def _text(msg: object) -> str:
    assert isinstance(msg, UserMessage)
    assert isinstance(msg.content, list)
    block = msg.content[0]
    assert isinstance(block, TextContent)
    return block.text


def test_bash_execution_texts() -> None:
    ok = BashExecutionMessage(command="ls", output="a\nb", exit_code=0, timestamp=5)
    failed = BashExecutionMessage(command="false", output="", exit_code=2, timestamp=6)
    cancelled = BashExecutionMessage(
        command="sleep 9",
        output="x",
        exit_code=None,
        cancelled=True,
        truncated=True,
        full_output_path="/t/o",
        timestamp=7,
    )
    hidden = BashExecutionMessage(command="secret", output="x", exit_code=0, exclude_from_context=True, timestamp=8)
    out = convert_to_llm([ok, failed, cancelled, hidden])
    assert [_text(m) for m in out] == [
        "Ran `ls`\n```\na\nb\n```",
        "Ran `false`\n(no output)\n\nCommand exited with code 2",
        "Ran `sleep 9`\n```\nx\n```\n\n(command cancelled)\n\n[Output truncated. Full output: /t/o]",
    ]
    assert [m.timestamp for m in out] == [5, 6, 7]


def test_summaries_and_custom() -> None:
    image = ImageContent(data="AAAA", mime_type="image/png")
    out = convert_to_llm(
        [
            CompactionSummaryMessage(summary="S1", tokens_before=10, timestamp=1),
            BranchSummaryMessage(summary="S2", from_id=None, timestamp=2),
            CustomMessage(custom_type="n", content="plain", display=False, details={"x": 1}, timestamp=3),
            CustomMessage(custom_type="n", content=[TextContent(text="t"), image], display=True, timestamp=4),
        ]
    )
    assert _text(out[0]) == (
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\nS1\n</summary>"
    )
    assert _text(out[1]) == (
        "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nS2</summary>"
    )
    assert _text(out[2]) == "plain"
    assert isinstance(out[3], UserMessage) and out[3].content == [TextContent(text="t"), image]


def test_system_and_unknown_roles_are_dropped() -> None:
    unknown = UnknownMessage.model_validate({"role": "mystery", "timestamp": 1, "x": 2})
    assert convert_to_llm([SystemMessage(content="p"), unknown]) == []


def test_roles_are_registered_and_round_trip() -> None:
    wire = {"role": "branchSummary", "summary": "s", "fromId": None, "timestamp": 3}
    parsed = default_registry.parse(wire)
    assert isinstance(parsed, BranchSummaryMessage)
    assert default_registry.dump(parsed) == wire
    bash = default_registry.parse(
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "",
            "exitCode": 1,
            "cancelled": False,
            "truncated": False,
            "timestamp": 1,
        }
    )
    assert isinstance(bash, BashExecutionMessage) and bash.exit_code == 1
