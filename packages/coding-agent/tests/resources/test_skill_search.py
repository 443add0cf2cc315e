"""The `skill_search` tool (spec resources.md §3, acceptance 8)."""

import json
from pathlib import Path

from apex_ai.types import TextContent
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.resources.diagnostics import SourceInfo
from apex_coding_agent.resources.skill_search import (
    SKILL_SEARCH_CONTRACT,
    SkillSearchTool,
    search_skills,
    should_activate_skill_search,
)
from apex_coding_agent.resources.skills import Skill

INFO = SourceInfo(Path("/"), "local", "user")


def make(name: str, description: str, hidden: bool = False) -> Skill:
    path = Path(f"/skills/{name}/SKILL.md")
    return Skill(name, description, path, path.parent, INFO, disable_model_invocation=hidden)


SKILLS = [
    make("pdf-tools", "Extract text and tables from PDF files"),
    make("docs", "Writes documentation; handles pdf export too"),
    make("browser", "Drive a headless browser"),
    make("secret-pdf", "PDF things only for /skill:", hidden=True),
]


async def test_query_matches_descriptions_case_insensitively() -> None:
    tool = SkillSearchTool(lambda: SKILLS)
    result = await tool.execute("call-1", {"query": "PDF"}, None, None)
    expected = {
        "results": [
            {"name": "docs", "description": "Writes documentation; handles pdf export too"},
            {"name": "pdf-tools", "description": "Extract text and tables from PDF files"},
        ]
    }
    assert result.details == expected
    (block,) = result.content
    assert isinstance(block, TextContent)
    assert json.loads(block.text) == expected


async def test_blank_or_missing_query_lists_sorted_names() -> None:
    tool = SkillSearchTool(lambda: SKILLS)
    for params in ({}, {"query": "   "}):
        result = await tool.execute("c", params, None, None)
        assert result.details == {"results": [{"name": "browser"}, {"name": "docs"}, {"name": "pdf-tools"}]}


def test_name_matches_and_no_match() -> None:
    assert search_skills(SKILLS, "BROWS") == {
        "results": [{"name": "browser", "description": "Drive a headless browser"}]
    }
    assert search_skills(SKILLS, "nothing-like-this") == {"results": []}


def test_tool_sees_reloaded_skills() -> None:
    current: list[Skill] = []
    tool = SkillSearchTool(lambda: current)
    assert tool.declaration().name == "skill_search"
    assert tool.declaration().parameters["properties"]["query"]["type"] == "string"
    current.append(make("late", "added by /reload"))
    assert search_skills(current, None) == {"results": [{"name": "late"}]}


def test_activation_rule() -> None:
    assert should_activate_skill_search(SKILLS, ["read", "bash"])
    assert not should_activate_skill_search(SKILLS, ["bash"])
    assert not should_activate_skill_search([], ["read"])


def test_contract_allows_without_a_prompt(tmp_path: Path) -> None:
    gate = PermissionGate(cwd=tmp_path, contracts={"skill_search": SKILL_SEARCH_CONTRACT})
    assert gate.check("skill_search", {"query": "x"}).behavior == "allow"
