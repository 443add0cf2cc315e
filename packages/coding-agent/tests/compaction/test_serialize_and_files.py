"""Transcript serialization and file-operation tracking (compaction.md §6, §7; acceptance 7-9)."""

from compaction_helpers import assistant, call, result, user
from inline_snapshot import snapshot

from apex_ai.types import TextContent, UserMessage
from apex_coding_agent.compaction import CompactionSettings, FileOps, prepare_compaction, serialize_conversation
from apex_coding_agent.messages import BashExecutionMessage, BranchSummaryMessage, CustomMessage
from apex_coding_agent.session.session_manager import SessionManager


def test_serialized_conversation_format() -> None:
    read = call("read", path="src/ä.py", offset=10)
    grep = call("grep", pattern="x", flags=["-i", "-n"])
    messages = [
        user("Please fix it"),
        UserMessage(content=[TextContent(text="")], timestamp=0),
        assistant("Looking.\nMore.", thinking="hmm", calls=[read, grep]),
        result(read, "line 1"),
        result(grep, ""),
        BashExecutionMessage(command="ls", output="a", exit_code=2, timestamp=0),
        BashExecutionMessage(command="secret", output="x", exclude_from_context=True, timestamp=0),
        CustomMessage(custom_type="note", content="from an extension", timestamp=0),
        BranchSummaryMessage(summary="other branch", from_id=None, timestamp=0),
    ]
    assert serialize_conversation(messages) == snapshot(
        """\
[User]: Please fix it

[Assistant thinking]: hmm

[Assistant]: Looking.
More.

[Assistant tool calls]: read(path="src/ä.py", offset=10); grep(pattern="x", flags=["-i","-n"])

[Tool result]: line 1

[User]: Ran `ls`
```
a
```

Command exited with code 2

[User]: from an extension

[User]: The following is a summary of a branch that this conversation came back from:

<summary>
other branch</summary>\
"""
    )


def test_long_tool_result_is_truncated() -> None:
    c = call("read", path="a")
    text = serialize_conversation([result(c, "z" * 2500)])
    assert text == "[Tool result]: " + "z" * 2000 + "\n\n[... 500 more characters truncated]"
    assert text.endswith("[... 500 more characters truncated]")


def test_file_lists_from_tool_calls() -> None:
    ops = FileOps()
    ops.add_messages(
        [
            assistant(calls=[call("read", path="a"), call("edit", path="b")]),
            assistant(calls=[call("write", path="c"), call("read", path="b"), call("bash", path="ignored")]),
            assistant(calls=[call("read", path=42)]),
        ]
    )
    assert ops.format() == "\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nb\nc\n</modified-files>"
    assert ops.details() == {"readFiles": ["a"], "modifiedFiles": ["b", "c"]}
    assert FileOps().format() == ""
    assert FileOps().details() == {"readFiles": [], "modifiedFiles": []}


def _session_with_previous_compaction(from_hook: bool) -> SessionManager:
    sm = SessionManager.in_memory("/w")
    sm.append_message(user("u1 " * 100))
    kept = sm.append_message(assistant("a1 " * 100, calls=[call("read", path="y")]))
    sm.append_compaction("prev", kept, 10, details={"readFiles": ["x"], "modifiedFiles": ["m"]}, from_hook=from_hook)
    sm.append_message(user("u2 " * 100))
    sm.append_message(assistant("a2 " * 100))
    sm.append_message(user("u3"))
    sm.append_message(assistant("a3"))
    return sm


def test_previous_compaction_file_lists_are_carried() -> None:
    prep = prepare_compaction(
        _session_with_previous_compaction(False).get_branch(), CompactionSettings(keep_recent_tokens=20)
    )
    assert prep is not None
    assert prep.file_ops.details() == {"readFiles": ["x", "y"], "modifiedFiles": ["m"]}


def test_hook_compaction_file_lists_are_not_carried() -> None:
    prep = prepare_compaction(
        _session_with_previous_compaction(True).get_branch(), CompactionSettings(keep_recent_tokens=20)
    )
    assert prep is not None
    assert prep.file_ops.details() == {"readFiles": ["y"], "modifiedFiles": []}


def test_budgeted_serialization_keeps_the_newest_messages() -> None:
    messages = [user(f"message {i} " + "m" * 90) for i in range(1000)]
    full = serialize_conversation(messages)
    budget = 1200
    text = serialize_conversation(messages, budget)
    kept_blocks = text.split("\n\n")[1:]
    assert text.startswith("[... ")
    assert len("\n\n".join(kept_blocks)) <= budget
    assert full.endswith("\n\n".join(kept_blocks))
    omitted = 1000 - len(kept_blocks)
    assert kept_blocks[0].startswith(f"[User]: message {omitted} ")
    assert text.split("\n\n")[0] == (
        f"[... {omitted} earlier messages omitted: they do not fit the summarizer's context window]"
    )
    assert serialize_conversation(messages[:3], 10**6) == serialize_conversation(messages[:3])
