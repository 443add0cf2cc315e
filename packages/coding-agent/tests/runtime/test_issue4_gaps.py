"""Issue 4 checks that need the session runtime and had no test of their own.

- tools.md check 16 (second half): a user `!` command does not see the session variables the bash tool gets.
- sessions.md check 18 (no summary): navigating to an assistant entry puts the leaf on it, no editor text.
- sessions.md check 20: reopening after `navigate_tree` (nothing appended) puts the leaf back on the last entry.
- issue 4 "Bad input": write/edit of a path outside the project follow the permission gate; plan mode never
  lets them through, and without a responder they are blocked, not silently allowed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_helpers import Harness

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_ai.types import TextContent, ToolResultMessage
from apex_coding_agent.core.permissions import PermissionMode
from apex_coding_agent.session import SessionManager
from apex_coding_agent.session.entries import MessageEntry


async def test_user_bang_command_does_not_see_the_session_environment(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APEX_CODE_SESSION_ID", "inherited-from-parent")
    monkeypatch.setenv("PI_MODEL", "inherited-model")
    session = await harness.session(manager=harness.persisted_manager(), model=harness.model())
    command = 'echo "[$APEX_CODE_SESSION_ID][$PI_SESSION_ID][$APEX_CODE_MODEL][$PI_MODEL][${PI_SESSION_FILE-}]"'
    result = await session.execute_bash(command)
    assert result.exit_code == 0
    assert result.output == "[][][][][]\n"


async def test_navigating_to_an_assistant_entry_puts_the_leaf_on_it(harness: Harness) -> None:
    harness.script(faux_assistant_message("a1"), faux_assistant_message("a2"))
    session = await harness.session()
    await session.prompt("one")
    await session.prompt("two")
    system, _, a1, user_two, _ = [e for e in session.session_manager.get_branch() if isinstance(e, MessageEntry)]
    assert system.message.role == "system"  # the leading declaration of the prompt and tools

    result = await session.navigate_tree(a1.id)

    assert result.to_wire() == {"cancelled": False}
    assert session.session_manager.get_leaf_id() == a1.id
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert user_two.id not in {e.id for e in session.session_manager.get_branch()}


async def test_reopening_after_navigation_returns_to_the_last_written_entry(harness: Harness) -> None:
    harness.script(faux_assistant_message("a1"), faux_assistant_message("a2"))
    manager = harness.persisted_manager()
    session = await harness.session(manager=manager, model=harness.model())
    await session.prompt("one")
    await session.prompt("two")
    entries = [e for e in manager.get_branch() if isinstance(e, MessageEntry)]
    last = manager.get_leaf_id()

    await session.navigate_tree(entries[0].id)  # the first user message: leaf moves above it
    assert manager.get_leaf_id() != last
    path = Path(session.session_file or "")
    manager.close()

    reopened = SessionManager.open(path)
    try:
        assert reopened.get_leaf_id() == last
    finally:
        reopened.close()


def _text(message: ToolResultMessage) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextContent))


@pytest.mark.parametrize("mode", ["plan", "default"])
async def test_write_and_edit_outside_the_project_are_never_silently_allowed(
    harness: Harness, tmp_path: Path, mode: PermissionMode
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "existing.txt").write_text("keep\n")
    relative_escape = "../outside/escaped.txt"
    harness.script(
        faux_assistant_message(
            [
                faux_tool_call("write", {"path": str(outside / "new.txt"), "content": "x"}),
                faux_tool_call("write", {"path": relative_escape, "content": "x"}),
                faux_tool_call(
                    "edit", {"path": str(outside / "existing.txt"), "edits": [{"oldText": "keep", "newText": "gone"}]}
                ),
            ],
            stop_reason="toolUse",
        ),
        faux_assistant_message("done"),
    )
    session = await harness.session(mode=mode)
    await session.prompt("touch files outside")

    results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [True, True, True]
    expected = {
        "plan": ["write is not permitted in plan mode.", "write is not permitted in plan mode.", "edit is not"],
        "default": ["write requires approval", "write requires approval", "edit requires approval"],
    }[mode]
    assert all(_text(r).startswith(prefix) for r, prefix in zip(results, expected, strict=True))
    assert not (outside / "new.txt").exists()
    assert not (outside / "escaped.txt").exists()
    assert (outside / "existing.txt").read_text() == "keep\n"
