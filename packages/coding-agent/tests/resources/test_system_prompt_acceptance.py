"""Acceptance checks 1-5 of resources.md (context files and system prompt) through `create_agent_session`.

The unit tests in `tests/core/test_system_prompt.py` cover the pieces; these build a whole session from files on
disk, the way the CLI flags reach the factory, and read the prompt the agent would send.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from apex_ai.models import ModelRegistry
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.context_files import discover_context_files
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.runtime import create_agent_session
from apex_coding_agent.session import SessionManager

CONTEXT_HEADER = "\n\n<project_context>\n\nProject-specific instructions and guidelines:\n\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def session_prompt(cwd: Path, agent_dir: Path, *, trusted: bool = True, **kwargs: Any) -> str:
    """The base system prompt of a session built over `cwd` (no model, in-memory session and auth)."""
    result = await create_agent_session(
        cwd=str(cwd),
        agent_dir=str(agent_dir),
        session_manager=SessionManager.in_memory(str(cwd)),
        settings_manager=SettingsManager.in_memory({}),
        model_runtime=ModelRuntime(None, AuthStorage.in_memory(), registry=ModelRegistry(load_catalog=False)),
        permission_gate=PermissionGate(cwd, flag_mode="bypassPermissions"),
        project_trusted=trusted,
        **kwargs,
    )
    return result.session.base_system_prompt


def test_check_1_agent_dir_then_repo_then_sub_and_override_wins(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    repo = tmp_path / "repo"
    sub = repo / "sub"
    write(agent / "AGENTS.md", "agent dir")
    write(repo / "AGENTS.md", "repo")
    write(sub / "CLAUDE.md", "sub")
    found = discover_context_files(sub, agent)
    assert [(f.path, f.content) for f in found] == [
        (agent / "AGENTS.md", "agent dir"),
        (repo / "AGENTS.md", "repo"),
        (sub / "CLAUDE.md", "sub"),
    ]
    write(repo / "AGENTS.override.md", "repo override")
    assert [f.content for f in discover_context_files(sub, agent)] == ["agent dir", "repo override", "sub"]


async def test_check_2_system_prompt_file_keeps_context_block_and_cwd_line(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    write(cwd / "p.txt", "You answer in haiku.")
    write(cwd / "AGENTS.md", "Use tabs.")
    write(tmp_path / "agent" / "SYSTEM.md", "global system prompt, replaced by the flag")
    prompt = await session_prompt(cwd, tmp_path / "agent", system_prompt="./p.txt")
    assert prompt.startswith("You answer in haiku.")
    assert "global system prompt" not in prompt and "Available tools:" not in prompt
    assert CONTEXT_HEADER in prompt
    assert f'<project_instructions path="{cwd / "AGENTS.md"}">\nUse tabs.\n</project_instructions>' in prompt
    assert prompt.endswith(f"\nCurrent working directory: {cwd.as_posix()}")


async def test_check_3_append_flags_suppress_append_system_md_and_join_with_a_blank_line(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    agent = tmp_path / "agent"
    write(agent / "APPEND_SYSTEM.md", "GLOBAL APPEND")
    write(cwd / ".apex-code" / "APPEND_SYSTEM.md", "PROJECT APPEND")
    write(cwd / "extra.md", "FROM FILE")

    discovered = await session_prompt(cwd, agent)
    assert "\n\nPROJECT APPEND" in discovered and "GLOBAL APPEND" not in discovered

    flagged = await session_prompt(cwd, agent, append_system_prompt=["X"])
    assert "\n\nX\nCurrent working directory: " in flagged
    assert "APPEND" not in flagged

    two = await session_prompt(cwd, agent, append_system_prompt=["X", "extra.md"])
    assert "\n\nX\n\nFROM FILE\nCurrent working directory: " in two
    assert "APPEND" not in two


async def test_check_4_untrusted_project_system_md_is_ignored_for_the_global_one(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    agent = tmp_path / "agent"
    write(cwd / ".apex-code" / "SYSTEM.md", "PROJECT SYSTEM")
    write(agent / "SYSTEM.md", "GLOBAL SYSTEM")
    assert (await session_prompt(cwd, agent, trusted=False)).startswith("GLOBAL SYSTEM")
    assert (await session_prompt(cwd, agent, trusted=True)).startswith("PROJECT SYSTEM")


async def test_check_5_tools_bash_lists_only_bash_and_the_file_operations_hint(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    prompt = await session_prompt(cwd, tmp_path / "agent", tools=["bash"])
    tools_block = prompt.split("Available tools:\n", 1)[1].split("\n\nGuidelines:", 1)[0]
    assert tools_block.splitlines() == [
        "- bash: Execute bash commands (ls, grep, find, etc.)",
        "Other custom tools may also be available, depending on the project.",
    ]
    assert "\n- Use bash for file operations like ls, rg, find\n" in prompt
    assert "- read:" not in prompt

    with_grep = await session_prompt(cwd, tmp_path / "agent", tools=["bash", "grep"])
    assert "Use bash for file operations" not in with_grep
