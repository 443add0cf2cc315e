"""`resources_discover{reason: "startup"}` (resources.md §5): the paths an extension returns before the first session is
built are in that session's skills, prompt templates and themes, and `/reload` replaces them (not adds to them)."""

from __future__ import annotations

import json
from pathlib import Path

from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.cli.startup import RuntimeBuild, build_runtime_from_args

EXTENSION = """
from pathlib import Path


def extension(pi):
    here = Path(__file__).parent

    def discover(event, ctx):
        with open(here / "seen.log", "a", encoding="utf-8") as log:
            log.write(f"{event.reason} {event.cwd}\\n")
        return {
            "skillPaths": [str(here / "skills" / NAME)],
            "promptPaths": ["prompts"],
            "themePaths": [str(here / "dusk.json")],
        }

    pi.on("resources_discover", discover)
"""


def _write_skill(root: Path, name: str) -> None:
    (root / "skills" / name).mkdir(parents=True, exist_ok=True)
    (root / "skills" / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} steps\n---\nDo the {name} steps.\n", encoding="utf-8"
    )


def _setup(tmp_path: Path, skill: str = "deploy") -> tuple[Path, Path, Path]:
    work, agent, ext = tmp_path / "work", tmp_path / "agent", tmp_path / "ext"
    for directory in (work, agent, ext):
        directory.mkdir()
    provider = {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]}
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}), encoding="utf-8")
    _write_skill(ext, "deploy")
    _write_skill(ext, "rollback")
    (ext / "dusk.json").write_text("{}", encoding="utf-8")
    # A relative prompt path resolves against the session's cwd, as on reload.
    (work / "prompts").mkdir()
    (work / "prompts" / "review.md").write_text("Review $1 carefully.\n", encoding="utf-8")
    (ext / "provider_ext.py").write_text(f"NAME = {skill!r}\n{EXTENSION}", encoding="utf-8")
    return work, agent, ext / "provider_ext.py"


async def _build(work: Path, agent: Path, extension: Path) -> RuntimeBuild:
    args = parse_args(["--model", "local/m", "--no-session", "-e", str(extension)])
    build = await build_runtime_from_args(args, cwd=str(work), agent_dir=agent, mode="print")
    assert build.errors == [] and build.runtime is not None
    return build


async def test_a_skill_returned_at_startup_is_in_the_first_session(tmp_path: Path) -> None:
    work, agent, extension = _setup(tmp_path)
    build = await _build(work, agent, extension)
    runtime = build.runtime
    assert runtime is not None
    try:
        loader = runtime.session.resource_loader
        assert loader is not None
        assert [skill.name for skill in loader.skills] == ["deploy"]
        assert "<name>deploy</name>" in runtime.session.agent.state.system_prompt
        assert [s["name"] for s in runtime.session.system_prompt_options.skills] == ["deploy"]
        assert "Do the deploy steps." in loader.expand_input("/skill:deploy now")
        assert loader.expand_input("/review main.py") == "Review main.py carefully."
        assert [theme.path.name for theme in build.package_themes] == ["dusk.json"]
        assert runtime.extension_theme_paths == [str(extension.parent / "dusk.json")]
    finally:
        await runtime.dispose()


async def test_reason_startup_first_then_reload_replaces_the_startup_paths(tmp_path: Path) -> None:
    work, agent, extension = _setup(tmp_path)
    build = await _build(work, agent, extension)
    runtime = build.runtime
    assert runtime is not None
    try:
        # The reloaded extension answers with another skill: the startup one goes, it is not kept beside it.
        extension.write_text(f"NAME = 'rollback'\n{EXTENSION}", encoding="utf-8")
        await runtime.start_extensions()
        result = await runtime.reload()
        assert result.errors == []
        log = (extension.parent / "seen.log").read_text(encoding="utf-8").splitlines()
        assert log == [f"startup {work}", f"reload {work}"]
        loader = runtime.session.resource_loader
        assert loader is not None
        assert [skill.name for skill in loader.skills] == ["rollback"]
        assert [template.name for template in loader.prompt_templates] == ["review"]
        assert runtime.extension_theme_paths == [str(extension.parent / "dusk.json")]
    finally:
        await runtime.dispose()
