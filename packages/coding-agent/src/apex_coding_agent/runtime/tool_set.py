"""`ToolSet`: an `AgentSession`'s known and active tools and the system prompt built from them.

Built-ins, custom tools and extension tools are known by name; the active ones are the agent's. Changing the
active set, an extension registering a tool, an extension reload or `/reload` of the resources rebuild the base
system prompt (a running agent run keeps its prompt until it ends).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from apex_agent.agent import Agent
from apex_agent.tools import AgentTool
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.extensions.tool_wrapper import ExtensionTool
from apex_coding_agent.resources import ResourceLoader


def _command(name: str, description: str, source: str, source_info: dict[str, str]) -> dict[str, object]:
    entry: dict[str, object] = {"name": name}
    if description:
        entry["description"] = description
    entry["source"] = source
    entry["sourceInfo"] = source_info
    return entry


def resource_commands(loader: ResourceLoader | None) -> list[dict[str, object]]:
    """Prompt templates then skills (when skill commands are on), each `{name, description?, source, sourceInfo}`."""
    if loader is None:
        return []
    commands = [
        _command(template.name, template.description, "prompt", template.source_info.to_json())
        for template in loader.prompt_templates
    ]
    if loader.skill_commands_enabled:
        for skill in loader.skills:
            info = skill.source_info.to_json()
            commands.append(_command(f"skill:{skill.command_name}", skill.description, "skill", info))
    return commands


class ToolSet:
    def __init__(
        self,
        *,
        agent: Callable[[], Agent],
        base_system_prompt: str,
        registry: dict[str, AgentTool],
        system_prompt_builder: Callable[[Sequence[AgentTool]], str] | None,
        system_prompt_options: ext.SystemPromptOptions,
        prompt_sources_reloader: Callable[[], list[str]] | None,
        resource_loader: ResourceLoader | None,
        extension_runner: ExtensionRunner | None,
        is_streaming: Callable[[], bool],
    ) -> None:
        self._agent = agent
        self._registry = registry
        self._builder = system_prompt_builder
        self.system_prompt_options = system_prompt_options
        self._reloader = prompt_sources_reloader
        self._loader = resource_loader
        self._runner = extension_runner
        self._is_streaming = is_streaming
        self.base_system_prompt = base_system_prompt
        """The prompt without a `before_agent_start` replacement (restored after each run)."""

    def all_tools(self) -> dict[str, AgentTool]:
        runner = self._runner
        tools = dict(self._registry)
        if runner is not None:
            for tool in runner.get_tools():
                tools.setdefault(tool.name, tool)
        return tools

    def set_active(self, names: Sequence[str]) -> None:
        known = self.all_tools()
        self._apply([known[name] for name in dict.fromkeys(names) if name in known])

    def refresh(self) -> None:
        known = self.all_tools()
        new = [tool for name, tool in known.items() if name not in self._registry]
        self._registry.update({tool.name: tool for tool in new})
        if new:
            self._apply([*self._agent().state.tools, *new])

    def _apply(self, tools: list[AgentTool]) -> None:
        self._agent().set_tools(tools)
        self.system_prompt_options.selected_tools = [t.name for t in tools]
        if self._builder is not None:
            self.base_system_prompt = self._builder(tools)
            if not self._is_streaming():
                self._agent().state.system_prompt = self.base_system_prompt

    async def reload_resources(self) -> list[str]:
        warnings: list[str] = []
        if self._loader is not None:
            self._loader.reload()
            warnings.extend(str(d) for d in self._loader.diagnostics)
        if self._reloader is not None:
            warnings.extend(self._reloader())
        self._apply(list(self._agent().state.tools))
        return warnings

    def replace_extension_tools(self, old: Mapping[str, AgentTool]) -> None:
        runner = self._runner
        fresh = {tool.name: tool for tool in runner.get_tools()} if runner is not None else {}

        def is_old(tool: AgentTool) -> bool:
            # The runner wraps a `ToolDefinition` anew on every `get_tools()`, so wrappers are matched by type.
            return tool.name in old and (isinstance(tool, ExtensionTool) or old[tool.name] is tool)

        for name in [name for name, tool in self._registry.items() if is_old(tool)]:
            del self._registry[name]
        active: list[AgentTool] = []
        for tool in self._agent().state.tools:
            if is_old(tool):
                if tool.name in fresh:
                    active.append(fresh[tool.name])
                continue
            active.append(tool)
        active_names = {tool.name for tool in active}
        for name, tool in fresh.items():
            self._registry.setdefault(name, tool)
            if name not in old and name not in active_names:
                active.append(tool)
        self._apply(active)


__all__ = ["ToolSet", "resource_commands"]
