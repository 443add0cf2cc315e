"""`resources_discover{reason: "startup"}` for SDK sessions (resources.md §5): inline extensions that
`create_agent_session(extensions=...)` loads are asked once for skill/prompt/theme paths, which are in the first
session; the CLI, which sends the round itself, still sends exactly one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runtime_helpers import Harness

from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.cli.startup import build_runtime_from_args
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions import ExtensionAPI, InlineExtension
from apex_coding_agent.resources import ResourceLoader
from apex_coding_agent.runtime import AgentSessionRuntime, create_agent_session
from apex_coding_agent.runtime.extension_startup import discover_startup_resources, load_startup_extensions
from apex_coding_agent.session import SessionManager


def _write_skill(root: Path, name: str) -> Path:
    directory = root / "skills" / name
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} steps\n---\nDo the {name} steps.\n", encoding="utf-8"
    )
    return directory


class Discoverer:
    """An inline extension answering `resources_discover` with fixed paths; records each round's reason."""

    def __init__(self, skills: list[str], prompts: list[str] = [], themes: list[str] = []) -> None:  # noqa: B006 - read only
        self.answer = {"skillPaths": skills, "promptPaths": prompts, "themePaths": themes}
        self.reasons: list[str] = []

    def __call__(self, pi: ExtensionAPI) -> None:
        def discover(event: Any, ctx: Any) -> dict[str, list[str]]:  # Any: the event and context models
            self.reasons.append(event.reason)
            return self.answer

        pi.on("resources_discover", discover)


async def _runtime(harness: Harness, extension: Discoverer, **kwargs: Any) -> AgentSessionRuntime:
    result = await create_agent_session(
        cwd=str(harness.cwd),
        agent_dir=str(harness.agent_dir),
        session_manager=SessionManager.in_memory(str(harness.cwd)),
        settings_manager=SettingsManager.in_memory({}),
        model_runtime=harness.model_runtime,
        permission_gate=PermissionGate(harness.cwd, flag_mode="bypassPermissions"),
        sleep=harness.sleep,
        extensions=[InlineExtension(extension, "discoverer")],
        **kwargs,
    )
    return AgentSessionRuntime(result, sleep=harness.sleep)


async def test_an_inline_sdk_extension_skill_is_in_the_first_session_catalog(harness: Harness, tmp_path: Path) -> None:
    skill = _write_skill(tmp_path / "ext", "deploy")
    (harness.cwd / "prompts").mkdir()
    (harness.cwd / "prompts" / "review.md").write_text("Review $1 carefully.\n", encoding="utf-8")
    theme = tmp_path / "ext" / "dusk.json"
    theme.write_text("{}", encoding="utf-8")
    extension = Discoverer([str(skill)], prompts=["prompts"], themes=[str(theme)])

    runtime = await _runtime(harness, extension)
    try:
        assert extension.reasons == ["startup"]
        session = runtime.session
        loader = session.resource_loader
        assert loader is not None
        assert [s.name for s in loader.skills] == ["deploy"]
        assert "<name>deploy</name>" in session.agent.state.system_prompt
        assert [s["name"] for s in session.system_prompt_options.skills] == ["deploy"]
        # A relative prompt path resolves against the session's cwd, as on the CLI path.
        assert loader.expand_input("/review main.py") == "Review main.py carefully."
        assert runtime.extension_theme_paths == [str(theme)]
        # Starting the extensions and a new session do not send the startup round again.
        await runtime.start_extensions()
        await runtime.new_session()
        assert extension.reasons == ["startup"]
    finally:
        await runtime.dispose()


async def test_a_callers_resource_loader_gets_the_discovered_skill(harness: Harness, tmp_path: Path) -> None:
    skill = _write_skill(tmp_path / "ext", "rollback")
    extension = Discoverer([str(skill)])
    settings = SettingsManager.in_memory({})
    loader = ResourceLoader(harness.cwd, harness.agent_dir, settings, project_trusted=False)
    assert loader.skills == []

    runtime = await _runtime(harness, extension, resource_loader=loader)
    try:
        assert extension.reasons == ["startup"]
        assert runtime.session.resource_loader is loader
        assert [s.name for s in loader.skills] == ["rollback"]
        assert "<name>rollback</name>" in runtime.session.agent.state.system_prompt
    finally:
        await runtime.dispose()


async def test_a_runner_whose_startup_round_went_out_is_not_asked_again(harness: Harness, tmp_path: Path) -> None:
    # The CLI order: load, send the round itself, then hand the runner over (here with one more inline extension).
    skill = _write_skill(tmp_path / "ext", "deploy")
    first = Discoverer([str(skill)])
    startup = await load_startup_extensions(
        cwd=str(harness.cwd),
        agent_dir=str(harness.agent_dir),
        settings=SettingsManager.in_memory({}),
        inline=[InlineExtension(first, "first")],
    )
    found = await discover_startup_resources(startup.runner, str(harness.cwd))
    assert [item.path for item in found.skills] == [skill]
    late = Discoverer([str(skill)])

    runtime = await _runtime(harness, late, extension_runner=startup.runner)
    try:
        assert first.reasons == ["startup"] and late.reasons == []
        assert runtime.extension_theme_paths == []
    finally:
        await runtime.dispose()


CLI_EXTENSION = """
from pathlib import Path


def extension(pi):
    here = Path(__file__).parent

    def discover(event, ctx):
        with open(here / "seen.log", "a", encoding="utf-8") as log:
            log.write(event.reason + "\\n")
        return {"skillPaths": [str(here / "skills" / "deploy")]}

    pi.on("resources_discover", discover)
"""


async def test_the_cli_path_sends_exactly_one_startup_round(tmp_path: Path) -> None:
    work, agent, ext = tmp_path / "work", tmp_path / "agent-cli", tmp_path / "ext"
    for directory in (work, agent, ext):
        directory.mkdir()
    provider = {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]}
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}), encoding="utf-8")
    _write_skill(ext, "deploy")
    (ext / "discover_ext.py").write_text(CLI_EXTENSION, encoding="utf-8")

    args = parse_args(["--model", "local/m", "--no-session", "-e", str(ext / "discover_ext.py")])
    build = await build_runtime_from_args(args, cwd=str(work), agent_dir=agent, mode="print")
    assert build.errors == [] and build.runtime is not None
    try:
        assert (ext / "seen.log").read_text(encoding="utf-8").splitlines() == ["startup"]
        loader = build.runtime.session.resource_loader
        assert loader is not None and [s.name for s in loader.skills] == ["deploy"]
    finally:
        await build.runtime.dispose()
