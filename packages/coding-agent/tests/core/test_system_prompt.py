"""resources.md §1-2: context file discovery and system prompt assembly."""

from pathlib import Path

from apex_coding_agent.core.context_files import ContextFile, discover_context_files
from apex_coding_agent.core.system_prompt import (
    BUILTIN_PROMPT_INFO,
    PromptInputs,
    build_system_prompt,
    find_custom_prompt,
    read_prompt_source,
)


def test_context_files_root_first_one_per_directory(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "AGENTS.md").write_text("global")
    outer = tmp_path / "repo"
    inner = outer / "pkg"
    inner.mkdir(parents=True)
    (outer / "CLAUDE.md").write_text("outer claude")
    (inner / "AGENTS.md").write_text("inner agents")
    (inner / "CLAUDE.md").write_text("ignored: AGENTS.md wins in this directory")
    found = discover_context_files(inner, agent)
    assert [f.content for f in found] == ["global", "outer claude", "inner agents"]


def test_override_file_replaces_others_in_its_directory(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("plain")
    (tmp_path / "AGENTS.override.md").write_text("override")
    found = discover_context_files(tmp_path, tmp_path / "no-agent-dir")
    assert [f.content for f in found] == ["override"]


def test_agent_dir_inside_the_walk_is_loaded_once(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("once")
    found = discover_context_files(tmp_path, tmp_path)
    assert [f.content for f in found] == ["once"]


def test_worktree_nested_in_main_checkout_skips_the_main_copy(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / "AGENTS.md").write_text("main copy")
    wt = main / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    (wt / "AGENTS.md").write_text("worktree copy")
    found = discover_context_files(wt, tmp_path / "agent")
    assert [f.content for f in found] == ["worktree copy"]


def test_default_prompt_lists_active_tools_and_guidelines(tmp_path: Path) -> None:
    tools = [BUILTIN_PROMPT_INFO[n] for n in ("read", "bash", "edit", "write")]
    text = build_system_prompt(
        PromptInputs(
            cwd="/work/p",
            tools=tools,
            append=["APPENDED"],
            context_files=[ContextFile(Path("/work/p/AGENTS.md"), "Use tabs.")],
        )
    )
    assert "Available tools:\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)" in text
    assert "- Use bash for file operations like ls, rg, find" in text
    assert text.index("Use read to examine files") < text.index("Be concise in your responses")
    assert "\n\nAPPENDED\n\n<project_context>\n\nProject-specific instructions and guidelines:\n\n" in text
    assert '<project_instructions path="/work/p/AGENTS.md">\nUse tabs.\n</project_instructions>\n\n' in text
    assert text.endswith("</project_context>\n\nCurrent working directory: /work/p")


def test_no_bash_hint_when_grep_is_active_and_none_without_snippets() -> None:
    text = build_system_prompt(PromptInputs(cwd="/x", tools=[BUILTIN_PROMPT_INFO["bash"], BUILTIN_PROMPT_INFO["grep"]]))
    assert "Use bash for file operations" not in text
    empty = build_system_prompt(PromptInputs(cwd="/x", tools=[]))
    assert "Available tools:\n(none)" in empty


def test_custom_prompt_keeps_user_text_and_adds_context(tmp_path: Path) -> None:
    text = build_system_prompt(
        PromptInputs(cwd="/x", custom_prompt="You are terse.", skills_catalog="\n\nSKILLS", append=["more"])
    )
    assert text == "You are terse.\n\nmore\n\nSKILLS\nCurrent working directory: /x"


def test_system_md_is_read_from_trusted_project_only(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "SYSTEM.md").write_text("global system")
    (tmp_path / ".apex-code").mkdir()
    (tmp_path / ".apex-code" / "SYSTEM.md").write_text("project system")
    assert find_custom_prompt(tmp_path, agent, project_trusted=True) == "project system"
    assert find_custom_prompt(tmp_path, agent, project_trusted=False) == "global system"


def test_prompt_flag_reads_a_file_or_takes_the_text(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("from file")
    assert read_prompt_source("p.md", tmp_path) == "from file"
    assert read_prompt_source("just text", tmp_path) == "just text"
