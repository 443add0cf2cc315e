"""Skills and prompt templates in the session (resources.md §3-4): input expansion, catalog, skill_search,
and the `get_commands` data for RPC."""

from __future__ import annotations

import asyncio
from pathlib import Path

from runtime_helpers import Harness

from apex_ai.options import StreamOptions
from apex_ai.providers.faux import FauxState, faux_assistant_message
from apex_ai.types import AssistantMessage, Context, Model, TextContent, UserMessage
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.resources import ResourceLoader
from apex_coding_agent.runtime import AgentSession


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _resources(harness: Harness) -> Path:
    _write(harness.agent_dir / "prompts" / "review.md", "---\ndescription: Review a file\n---\nReview $1 carefully")
    return _write(
        harness.agent_dir / "skills" / "pdf-tools" / "SKILL.md",
        "---\nname: pdf-tools\ndescription: Extract text from PDF files\n---\nUse pdftotext.\n",
    )


def _user_texts(session: AgentSession) -> list[str]:
    return [
        "".join(b.text for b in message.content if isinstance(b, TextContent))
        for message in session.messages
        if isinstance(message, UserMessage) and not isinstance(message.content, str)
    ]


async def test_prompt_expands_skills_and_templates(harness: Harness) -> None:
    skill_file = _resources(harness)
    harness.script(*(faux_assistant_message(f"r{i}") for i in range(4)))
    session = await harness.session()

    await session.prompt("/review main.py")
    await session.prompt("/skill:pdf-tools extract page 2")
    await session.prompt("/review main.py", expand_prompt_templates=False)
    await session.prompt("/unknown stays")

    review, skill, raw, unknown = _user_texts(session)
    assert review == "Review main.py carefully"
    assert skill.startswith(f'<skill name="pdf-tools" location="{skill_file}">')
    assert "Use pdftotext." in skill and skill.endswith("</skill>\n\nextract page 2")
    assert (raw, unknown) == ("/review main.py", "/unknown stays")


async def test_queued_input_is_expanded_and_displayed_expanded(harness: Harness) -> None:
    _resources(harness)
    gate = asyncio.Event()

    async def slow(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        await gate.wait()
        return faux_assistant_message("first")

    harness.script(slow, faux_assistant_message("second"))
    session = await harness.session()
    running = asyncio.ensure_future(session.prompt("start"))
    while not session.agent.state.is_streaming:
        await asyncio.sleep(0)
    await session.prompt("/review a.py", streaming_behavior="followUp")
    assert session.follow_up_messages == ["Review a.py carefully"]
    gate.set()
    await running
    assert _user_texts(session) == ["start", "Review a.py carefully"]
    assert session.follow_up_messages == []


async def test_catalog_and_skill_search_follow_the_read_tool(harness: Harness) -> None:
    _resources(harness)
    session = await harness.session()
    names = [t.name for t in session.agent.state.tools]
    assert names == ["read", "bash", "edit", "write", "skill_search"]
    assert "<available_skills>" in session.agent.state.system_prompt
    assert "pdf-tools" in session.agent.state.system_prompt

    without_read = await harness.session(tools=["bash"])
    assert [t.name for t in without_read.agent.state.tools] == ["bash"]
    assert "<available_skills>" not in without_read.agent.state.system_prompt

    excluded = await harness.session(exclude_tools=["skill_search"])
    assert "skill_search" not in [t.name for t in excluded.agent.state.tools]


async def test_skill_search_tool_answers_from_the_loaded_skills(harness: Harness) -> None:
    _resources(harness)
    session = await harness.session()
    tool = next(t for t in session.agent.state.tools if t.name == "skill_search")
    result = await tool.execute("c1", {"query": "pdf"}, None, None)
    assert result.details == {"results": [{"name": "pdf-tools", "description": "Extract text from PDF files"}]}


async def test_get_commands_lists_templates_then_skills(harness: Harness) -> None:
    skill_file = _resources(harness)
    session = await harness.session()

    commands = session.get_commands()

    assert [(c["name"], c["source"], c.get("description")) for c in commands] == [
        ("review", "prompt", "Review a file"),
        ("skill:pdf-tools", "skill", "Extract text from PDF files"),
    ]
    info = commands[1]["sourceInfo"]
    assert isinstance(info, dict) and info["path"] == str(skill_file) and info["scope"] == "user"

    no_skill_commands = await harness.session(settings={"enableSkillCommands": False})
    assert [c["name"] for c in no_skill_commands.get_commands()] == ["review"]
    assert _user_texts(no_skill_commands) == []


async def test_explicit_loader_and_unreadable_skill(harness: Harness, tmp_path: Path) -> None:
    skill_file = _resources(harness)
    settings = SettingsManager.in_memory({})
    loader = ResourceLoader(harness.cwd, harness.agent_dir, settings, project_trusted=False, home=tmp_path / "home")
    harness.script(faux_assistant_message("ok"))
    session = await harness.session(settings_manager=settings, resource_loader=loader)
    assert session.resource_loader is loader
    skill_file.unlink()  # the body is read at expansion time

    await session.prompt("/skill:pdf-tools now")

    assert _user_texts(session) == ["/skill:pdf-tools now"]
    assert len(session.skill_errors) == 1 and str(skill_file) in session.skill_errors[0]
