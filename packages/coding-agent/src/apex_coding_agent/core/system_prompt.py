"""Assembling the system prompt.

Either the user's custom prompt (SYSTEM.md or `--system-prompt`) or our default one, then the
appended parts, the context files, the skills catalog and the working directory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from apex_coding_agent.core.context_files import ContextFile


@dataclass(frozen=True)
class ToolPromptInfo:
    """What the prompt says about one active tool."""

    name: str
    snippet: str | None = None
    guidelines: tuple[str, ...] = ()


BUILTIN_PROMPT_INFO: dict[str, ToolPromptInfo] = {
    "read": ToolPromptInfo("read", "Read file contents", ("Use read to examine files instead of cat or sed.",)),
    "bash": ToolPromptInfo(
        "bash",
        "Execute bash commands (ls, grep, find, etc.)",
        (
            "Commands run with APEX_CODE_SESSION_ID, APEX_CODE_PROVIDER and APEX_CODE_MODEL set; "
            "inspect them when you need to know which session or model you are.",
        ),
    ),
    "edit": ToolPromptInfo(
        "edit",
        "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
        (
            "In edit, oldText must match the file exactly, whitespace included.",
            "Several changes to one file belong in one edit call with several entries in edits[].",
            "Every edit is matched against the original file, so edits must not overlap.",
            "Keep oldText as small as possible while still unique in the file.",
        ),
    ),
    "write": ToolPromptInfo(
        "write", "Create or overwrite files", ("Use write only for new files or complete rewrites.",)
    ),
    "grep": ToolPromptInfo("grep", "Search file contents for patterns (respects .gitignore)"),
    "find": ToolPromptInfo("find", "Find files by glob pattern (respects .gitignore)"),
    "ls": ToolPromptInfo("ls", "List directory contents"),
}

IDENTITY = (
    "You are an expert coding assistant working inside Apex Code, a terminal coding agent. "
    "You help with software tasks by reading files, running commands, editing code and writing new files."
)


@dataclass
class PromptInputs:
    cwd: str | Path
    tools: Sequence[ToolPromptInfo] = ()
    custom_prompt: str | None = None
    append: Sequence[str] = ()
    context_files: Sequence[ContextFile] = ()
    skills_catalog: str = ""
    tool_selection_given: bool = False
    docs_paths: dict[str, str] = field(default_factory=dict)


def _context_block(files: Sequence[ContextFile]) -> str:
    if not files:
        return ""
    parts = ["\n\n<project_context>\n\nProject-specific instructions and guidelines:\n\n"]
    parts.extend(
        f'<project_instructions path="{item.path}">\n{item.content}\n</project_instructions>\n\n' for item in files
    )
    parts.append("</project_context>\n")
    return "".join(parts)


def _cwd_line(cwd: str | Path) -> str:
    return "\nCurrent working directory: " + str(cwd).replace(os.sep, "/")


def build_system_prompt(inputs: PromptInputs) -> str:
    """The full system prompt text for these inputs."""
    names = [t.name for t in inputs.tools]
    read_active = "read" in names
    append = "\n\n".join(a for a in inputs.append if a)
    if inputs.custom_prompt is not None:
        text = inputs.custom_prompt
        if append:
            text += "\n\n" + append
        text += _context_block(inputs.context_files)
        if inputs.skills_catalog and (read_active or not inputs.tool_selection_given):
            text += inputs.skills_catalog
        return text + _cwd_line(inputs.cwd)

    lines = [IDENTITY, "", "Available tools:"]
    snippets = [f"- {t.name}: {t.snippet}" for t in inputs.tools if t.snippet]
    lines += snippets or ["(none)"]
    lines.append("Other custom tools may also be available, depending on the project.")
    lines += ["", "Guidelines:"]
    guidelines: list[str] = []
    if "bash" in names and not {"grep", "find", "ls"} & set(names):
        guidelines.append("Use bash for file operations like ls, rg, find")
    for tool in inputs.tools:
        guidelines.extend(tool.guidelines)
    guidelines += ["Be concise in your responses", "Show file paths clearly when working with files"]
    seen: set[str] = set()
    for guideline in guidelines:
        if guideline not in seen:
            seen.add(guideline)
            lines.append(f"- {guideline}")
    if inputs.docs_paths:
        lines += ["", "Apex Code documentation (read it only when asked about Apex Code itself):"]
        lines += [f"- {label}: {path}" for label, path in inputs.docs_paths.items()]
    text = "\n".join(lines)
    if append:
        text += "\n\n" + append
    text += _context_block(inputs.context_files)
    if inputs.skills_catalog and read_active:
        text += inputs.skills_catalog
    return text + _cwd_line(inputs.cwd)


def read_prompt_source(value: str, cwd: str | Path) -> str:
    """`--system-prompt` / `--append-system-prompt`: the file's text if the value names a file, else the value."""
    path = Path(os.path.expanduser(value))
    if not path.is_absolute():
        path = Path(cwd) / path
    try:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    except OSError:
        pass
    return value


def find_custom_prompt(cwd: str | Path, agent_dir: str | Path, *, project_trusted: bool) -> str | None:
    """SYSTEM.md of the (trusted) project, else of the agent dir."""
    return _first_file(cwd, agent_dir, "SYSTEM.md", project_trusted)


def find_append_prompt(cwd: str | Path, agent_dir: str | Path, *, project_trusted: bool) -> str | None:
    return _first_file(cwd, agent_dir, "APPEND_SYSTEM.md", project_trusted)


def _first_file(cwd: str | Path, agent_dir: str | Path, name: str, project_trusted: bool) -> str | None:
    candidates = [Path(agent_dir) / name]
    if project_trusted:
        candidates.insert(0, Path(cwd) / ".apex-code" / name)
    for path in candidates:
        if path.is_file():
            try:
                return path.read_text(encoding="utf-8")
            except OSError:
                continue
    return None


__all__ = [
    "BUILTIN_PROMPT_INFO",
    "PromptInputs",
    "ToolPromptInfo",
    "build_system_prompt",
    "find_append_prompt",
    "find_custom_prompt",
    "read_prompt_source",
]
