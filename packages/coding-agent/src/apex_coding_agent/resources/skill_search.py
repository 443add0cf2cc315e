"""The `skill_search` tool: names and descriptions of skills, on demand.

The prompt catalog lists names only; the model calls this tool to read descriptions or find skills by keyword.
Skills marked `disable-model-invocation` are invisible here too (only `/skill:` reaches them). The tool only reads
metadata already in memory, so it needs no permission prompt (`SKILL_SEARCH_CONTRACT`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

from apex_agent.tools import AgentTool, AgentToolResult, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_ai.types import TextContent
from apex_coding_agent.core.permissions import ToolContract
from apex_coding_agent.resources.skills import Skill

SKILL_SEARCH_TOOL_NAME = "skill_search"
SKILL_SEARCH_CONTRACT = ToolContract(frozenset(), "allow", "none", "Searching skills")
"""Permission contract: no capabilities, allowed without asking."""


def search_skills(skills: Sequence[Skill], query: str | None) -> dict[str, list[dict[str, str]]]:
    """`{"results": [{"name"}...]}` for a missing/blank query, else case-insensitive substring matches over name
    and description as `{"results": [{"name", "description"}...]}`; sorted by name in both cases."""
    visible = sorted((s for s in skills if not s.disable_model_invocation), key=lambda s: s.name)
    needle = (query or "").strip().lower()
    if not needle:
        return {"results": [{"name": s.name} for s in visible]}
    return {
        "results": [
            {"name": s.name, "description": s.description}
            for s in visible
            if needle in s.name.lower() or needle in s.description.lower()
        ]
    }


class SkillSearchTool(AgentTool):
    """Search the loaded skills. `get_skills` is called on every run so a `/reload` is seen at once."""

    name = SKILL_SEARCH_TOOL_NAME
    label = "Skill search"
    description = (
        "Look up the available skills. Without a query it lists every skill name; with a query it returns the "
        "skills whose name or description contains it (case-insensitive), with their descriptions."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Text to look for in skill names and descriptions; omit to list all skill names",
            }
        },
    }

    def __init__(self, get_skills: Callable[[], Sequence[Skill]]) -> None:
        self._get_skills = get_skills

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdateCallback | None,
    ) -> AgentToolResult:
        query = params.get("query")
        found = search_skills(self._get_skills(), query if isinstance(query, str) else None)
        text = json.dumps(found, ensure_ascii=False, separators=(",", ":"))
        return AgentToolResult(content=[TextContent(text=text)], details=found)


def should_activate_skill_search(skills: Sequence[Skill], active_tools: Collection[str]) -> bool:
    """The Python port activates `skill_search` whenever a skill is loaded and `read` is active."""
    return bool(skills) and "read" in active_tools


__all__ = [
    "SKILL_SEARCH_CONTRACT",
    "SKILL_SEARCH_TOOL_NAME",
    "SkillSearchTool",
    "search_skills",
    "should_activate_skill_search",
]
