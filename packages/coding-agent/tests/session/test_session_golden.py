"""Golden JSONL: what a scripted session writes, ids and timestamps normalised.

Regenerate after an intended format change with `APEX_UPDATE_GOLDEN=1 uv run pytest <this file>` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from session_test_helpers import DATA, assistant, normalize, read_lines, user

from apex_ai.types import TextContent, ToolResultMessage, Usage
from apex_coding_agent.messages import BashExecutionMessage
from apex_coding_agent.session.session_manager import SessionManager

GOLDEN = DATA / "golden_write.jsonl"


def _script(cwd: Path) -> Path:
    sm = SessionManager.create(str(cwd))
    sm.append_model_change("fake", "fake-model")
    sm.append_thinking_level_change("off")
    first = sm.append_message(user("Say hello", ts=1000))
    sm.append_message(assistant("Hello! I am a fake model.", ts=1001))
    sm.append_message(
        ToolResultMessage(
            tool_call_id="t1",
            tool_name="bash",
            content=[TextContent(text="ü ok")],
            usage=Usage(input=1, output=2, total_tokens=3),
            timestamp=1002,
        )
    )
    sm.append_message(BashExecutionMessage(command="ls", output="", exit_code=None, cancelled=True, timestamp=1003))
    sm.append_custom_entry("ext", {"k": [1, 2]})
    sm.append_custom_message_entry("note", "shown", display=True)
    sm.append_compaction("Summary.", first, 1234, details={"readFiles": [], "modifiedFiles": []})
    sm.append_label_change(first, "start")
    sm.append_session_info("golden\nname")
    sm.branch_with_summary(first, "Other path.", details={"readFiles": ["a.py"], "modifiedFiles": []})
    sm.reset_leaf()
    sm.append_thinking_level_change("high")
    sm.close()
    assert sm.session_file is not None
    return sm.session_file


def test_written_session_matches_golden(tmp_path: Path) -> None:
    written = normalize(read_lines(_script(tmp_path)))
    text = "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in written)
    if os.environ.get("APEX_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_golden_shape_is_readable(tmp_path: Path) -> None:
    path = _script(tmp_path)
    sm = SessionManager.open(path)
    assert [e.type for e in sm.get_entries()] == [r["type"] for r in read_lines(GOLDEN)[1:]]
    assert sm.get_session_name() == "golden name" and sm.get_leaf_id() == sm.get_entries()[-1].id
    sm.close()
