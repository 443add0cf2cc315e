"""Shared helpers of the export tests: a session builder covering every kind of entry."""

from __future__ import annotations

import base64
from pathlib import Path

from apex_ai.types import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from apex_coding_agent.messages import BashExecutionMessage
from apex_coding_agent.session.session_manager import SessionManager

DATA = Path(__file__).parent / "data"
# A real 1x1 PNG: the exported <img> must carry exactly these bytes.
PNG_1X1 = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


def assistant(
    content: list[AssistantContent], ts: int, stop: str = "stop", error: str | None = None
) -> AssistantMessage:
    return AssistantMessage(
        content=content,
        api="anthropic-messages",
        provider="fake",
        model="fake-model",
        usage=Usage(input=10, output=5, total_tokens=15),
        stop_reason=stop,
        error_message=error,
        timestamp=ts,
    )


def tool_result(
    call_id: str, name: str, text: str, ts: int, details: object = None, error: bool = False
) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name=name,
        content=[TextContent(text=text)],
        details=details,
        is_error=error,
        timestamp=ts,
    )


def build_session(sm: SessionManager, t: str = "") -> dict[str, str]:
    """Append one of every entry kind to `sm`; every text gets the suffix `t` (the escaping test passes a payload).

    Returns the visible texts by name, to look for in the export.
    """
    texts = {
        "user": f"Please fix the bug{t}",
        "thinking": f"Let me think about it{t}",
        "answer": f"I will run the **tests**{t} first.",
        "command": f"pytest -q{t}",
        "output": f"1 failed{t}",
        "edit_path": f"src/app{t}.py",
        "diff_add": f"+2 return a + b{t}",
        "diff_del": f"-2 return a - b{t}",
        "bash": f"git status{t}",
        "bash_output": f"nothing to commit{t}",
        "custom": f"Reminder from an extension{t}",
        "hidden": f"Hidden extension note{t}",
        "compaction": f"Summary of the early work{t}",
        "branch": f"Summary of the abandoned branch{t}",
        "final": f"All tests pass now{t}",
        "name": f"Fix session{t}",
        "error": f"Provider overloaded{t}",
        "second_user": f"Thanks{t}",
    }
    sm.append_model_change("fake", f"fake-model{t}")
    sm.append_thinking_level_change("high")
    sm.append_message(
        UserMessage(
            content=[TextContent(text=texts["user"]), ImageContent(data=PNG_1X1, mime_type="image/png")],
            timestamp=1_700_000_000_000,
        )
    )
    sm.append_message(
        assistant(
            [
                ThinkingContent(thinking=texts["thinking"]),
                TextContent(text=texts["answer"]),
                ToolCall(id="call_1", name="bash", arguments={"command": texts["command"]}),
            ],
            1_700_000_001_000,
            stop="toolUse",
        )
    )
    sm.append_message(tool_result("call_1", "bash", texts["output"], 1_700_000_002_000, error=True))
    first_kept = sm.get_leaf_id()
    assert first_kept is not None
    sm.append_message(
        assistant(
            [ToolCall(id="call_2", name="edit", arguments={"path": texts["edit_path"], "edits": [{"oldText": t}]})],
            1_700_000_003_000,
            stop="toolUse",
        )
    )
    diff = f" 1 def add(a, b):\n{texts['diff_del']}\n{texts['diff_add']}"
    sm.append_message(tool_result("call_2", "edit", f"Edited{t}", 1_700_000_004_000, details={"diff": diff}))
    sm.append_message(
        BashExecutionMessage(
            command=texts["bash"], output=texts["bash_output"], exit_code=0, timestamp=1_700_000_005_000
        )
    )
    sm.append_custom_message_entry(f"reminder{t}", texts["custom"], display=True)
    sm.append_custom_message_entry("secret", texts["hidden"], display=False)
    sm.append_compaction(texts["compaction"], first_kept, 12345)
    branch_point = sm.get_leaf_id()
    sm.append_message(UserMessage(content=f"Abandoned question{t}", timestamp=1_700_000_006_000))
    sm.branch_with_summary(branch_point, texts["branch"])
    sm.append_message(assistant([TextContent(text=texts["final"])], 1_700_000_007_000))
    sm.append_message(assistant([], 1_700_000_008_000, stop="error", error=texts["error"]))
    sm.append_message(UserMessage(content=texts["second_user"], timestamp=1_700_000_009_000))
    sm.append_session_info(texts["name"])
    return texts
