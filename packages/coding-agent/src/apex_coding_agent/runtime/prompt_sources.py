"""The files a session's system prompt is built from (`PromptSources`) and what `before_agent_start` handlers
are told it was built from (`prompt_options`)."""

from __future__ import annotations

from collections.abc import Sequence

from apex_agent.tools import AgentTool
from apex_coding_agent.core.context_files import ContextFile, discover_context_files
from apex_coding_agent.core.system_prompt import (
    BUILTIN_PROMPT_INFO,
    ToolPromptInfo,
    find_append_prompt,
    find_custom_prompt,
    read_prompt_source,
)
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.resources import ResourceLoader
from apex_coding_agent.tools import (
    BashTool,
    EditTool,
    FindTool,
    GrepTool,
    LsTool,
    ReadTool,
    WriteTool,
)

BUILTIN_TOOL_TYPES: tuple[type[AgentTool], ...] = (ReadTool, BashTool, EditTool, WriteTool, GrepTool, FindTool, LsTool)
"""The built-in tools' classes (a custom tool of the same name is not one of them)."""


def prompt_info(tool: AgentTool) -> ToolPromptInfo:
    known = BUILTIN_PROMPT_INFO.get(tool.name)
    if known is not None and isinstance(tool, BUILTIN_TOOL_TYPES):
        return known
    snippet = getattr(tool, "prompt_snippet", None)
    guidelines = getattr(tool, "prompt_guidelines", None) or ()
    return ToolPromptInfo(tool.name, snippet if isinstance(snippet, str) else None, tuple(guidelines))


class PromptSources:
    """The files the system prompt is built from (custom prompt, append parts, context files); `reload()` reads
    them again for `/reload`. Explicit `system_prompt`/`append_system_prompt` values that name
    files are re-read too."""

    def __init__(
        self,
        cwd: str,
        agent_dir: str,
        trusted: bool,
        system_prompt: str | None,
        append_system_prompt: Sequence[str] | None,
        no_context_files: bool,
        context_files: list[ContextFile],
    ) -> None:
        self._cwd, self._agent_dir, self._trusted = cwd, agent_dir, trusted
        self._system_prompt, self._append = system_prompt, append_system_prompt
        self._no_context_files = no_context_files
        self.context_files = context_files
        self.custom_prompt: str | None = None
        self.append_parts: list[str] = []

    def read_prompt_files(self) -> None:
        if self._system_prompt is not None:
            self.custom_prompt = read_prompt_source(self._system_prompt, self._cwd)
        else:
            self.custom_prompt = find_custom_prompt(self._cwd, self._agent_dir, project_trusted=self._trusted)
        if self._append:
            self.append_parts = [read_prompt_source(value, self._cwd) for value in self._append]
        else:
            found = find_append_prompt(self._cwd, self._agent_dir, project_trusted=self._trusted)
            self.append_parts = [found] if found else []

    def reload(self) -> list[str]:
        """Read everything again; returns the context-file warnings."""
        warnings: list[str] = []
        self.read_prompt_files()
        if not self._no_context_files:
            self.context_files = discover_context_files(
                self._cwd, self._agent_dir, warn=warnings.append, project_trusted=self._trusted
            )
        return warnings


def prompt_options(
    cwd: str,
    active: Sequence[AgentTool],
    custom_prompt: str | None,
    append_parts: Sequence[str],
    context_files: Sequence[ContextFile],
    loader: ResourceLoader,
) -> ext.SystemPromptOptions:
    """What the system prompt was built from, for `before_agent_start` handlers."""
    infos = [prompt_info(tool) for tool in active]
    return ext.SystemPromptOptions(
        custom_prompt=custom_prompt,
        selected_tools=[tool.name for tool in active],
        tool_snippets={info.name: info.snippet for info in infos if info.snippet},
        prompt_guidelines=[line for info in infos for line in info.guidelines],
        append_system_prompt="\n\n".join(append_parts) or None,
        cwd=cwd,
        context_files=[{"path": str(f.path), "content": f.content} for f in context_files],
        skills=[{"name": s.name, "description": s.description} for s in loader.skills],
    )


__all__ = ["BUILTIN_TOOL_TYPES", "PromptSources", "prompt_info", "prompt_options"]
