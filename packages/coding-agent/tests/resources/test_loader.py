"""`ResourceLoader`: every location, trust gating, CLI flags, settings paths and reload."""

import json
from pathlib import Path

import pytest

from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.core.system_prompt import PromptInputs, ToolPromptInfo, build_system_prompt
from apex_coding_agent.resources.loader import PackageResource, ResourceFlags, ResourceLoader


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill(path: Path, name: str, description: str = "desc") -> Path:
    return write(path, f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}\n")


class Layout:
    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.agent = self.home / ".apex-code" / "agent"
        self.repo = root / "repo"
        self.cwd = self.repo / "sub"
        (self.repo / ".git").mkdir(parents=True)
        self.cwd.mkdir(parents=True)
        self.agent.mkdir(parents=True)

    def loader(self, *, trusted: bool, flags: ResourceFlags | None = None, **kwargs: object) -> ResourceLoader:
        settings = SettingsManager.create(self.cwd, self.agent, project_trusted=trusted)
        return ResourceLoader(
            self.cwd, self.agent, settings, project_trusted=trusted, flags=flags, home=self.home, **kwargs
        )


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(tmp_path)


def populate(layout: Layout) -> None:
    skill(layout.agent / "skills" / "global-dir" / "SKILL.md", "global-dir")
    skill(layout.agent / "skills" / "global-file.md", "global-file")
    skill(layout.home / ".agents" / "skills" / "home-agents" / "SKILL.md", "home-agents")
    skill(layout.home / ".agents" / "skills" / "root-ignored.md", "root-ignored")
    skill(layout.cwd / ".apex-code" / "skills" / "proj" / "SKILL.md", "proj")
    skill(layout.cwd / ".apex-code" / "skills" / "proj-file.md", "proj-file")
    skill(layout.repo / ".agents" / "skills" / "repo-agents" / "SKILL.md", "repo-agents")
    skill(layout.repo / ".agents" / "skills" / "repo-root.md", "repo-root-ignored")
    skill(layout.repo.parent / ".agents" / "skills" / "above-git" / "SKILL.md", "above-git")
    write(layout.agent / "prompts" / "greet.md", "Hi $1")
    write(layout.cwd / ".apex-code" / "prompts" / "proj-prompt.md", "Project $@")


def test_trusted_project_loads_every_location(layout: Layout) -> None:
    populate(layout)
    loader = layout.loader(trusted=True)
    assert sorted(s.name for s in loader.skills) == [
        "global-dir",
        "global-file",
        "home-agents",
        "proj",
        "proj-file",
        "repo-agents",
    ]
    assert sorted(t.name for t in loader.prompt_templates) == ["greet", "proj-prompt"]
    scopes = {s.name: s.source_info.scope for s in loader.skills}
    assert scopes["proj"] == "project"
    assert scopes["global-dir"] == "user"
    assert loader.diagnostics == []


def test_untrusted_project_skills_and_templates_are_not_loaded(layout: Layout) -> None:
    populate(layout)
    write(layout.cwd / ".apex-code" / "settings.json", '{"skills": ["../extra"], "prompts": ["../extra-prompts"]}')
    skill(layout.repo / "extra" / "x" / "SKILL.md", "from-project-settings")
    write(layout.repo / "extra-prompts" / "p.md", "p")
    loader = layout.loader(trusted=False)
    assert sorted(s.name for s in loader.skills) == ["global-dir", "global-file", "home-agents"]
    assert [t.name for t in loader.prompt_templates] == ["greet"]
    loader.set_project_trusted(True)
    names = {s.name for s in loader.skills}
    assert {"proj", "repo-agents", "from-project-settings"} <= names
    assert {"proj-prompt", "p"} <= {t.name for t in loader.prompt_templates}


def test_project_skills_win_collisions_over_user_skills(layout: Layout) -> None:
    user = skill(layout.agent / "skills" / "dup" / "SKILL.md", "dup", "user one")
    project = skill(layout.cwd / ".apex-code" / "skills" / "dup" / "SKILL.md", "dup", "project one")
    loader = layout.loader(trusted=True)
    assert [s.description for s in loader.skills] == ["project one"]
    (diag,) = loader.diagnostics
    assert diag.type == "collision"
    assert diag.collision is not None
    assert (diag.collision.winner_path.resolve(), diag.collision.loser_path) == (project.resolve(), user)


def test_no_skills_keeps_cli_skills(layout: Layout) -> None:
    populate(layout)
    skill(layout.cwd / "mine" / "SKILL.md", "mine")
    args = parse_args(["--no-skills", "--skill", "mine", "--no-prompt-templates", "--prompt-template", "t.md"])
    write(layout.cwd / "t.md", "cli template $1")
    loader = layout.loader(trusted=True, flags=ResourceFlags.from_args(args))
    assert [s.name for s in loader.skills] == ["mine"]
    assert loader.skills[0].source_info.scope == "temporary"
    assert loader.skills[0].source_info.source == "cli"
    assert [t.name for t in loader.prompt_templates] == ["t"]


def test_cli_paths_are_relative_to_cwd_and_missing_ones_reported(layout: Layout) -> None:
    flags = ResourceFlags(skills=("missing-skill",), prompt_templates=("missing-dir",))
    loader = layout.loader(trusted=True, flags=flags)
    assert sorted((d.type, d.path) for d in loader.diagnostics) == [
        ("error", layout.cwd / "missing-dir"),
        ("error", layout.cwd / "missing-skill"),
    ]


def test_global_settings_paths_globs_and_exclusions(layout: Layout) -> None:
    skill(layout.agent / "more" / "a" / "SKILL.md", "more-a")
    skill(layout.agent / "more" / "b" / "SKILL.md", "more-b")
    skill(layout.agent / "packs" / "one" / "x" / "SKILL.md", "pack-one")
    skill(layout.agent / "packs" / "two" / "x" / "SKILL.md", "pack-two")
    skill(layout.agent / "skills" / "auto-drop" / "SKILL.md", "auto-drop")
    skill(layout.agent / "skills" / "auto-keep" / "SKILL.md", "auto-keep")
    skill(layout.agent / "skills" / "auto-exact" / "SKILL.md", "auto-exact")
    settings = {
        "skills": [
            "more",
            "packs/*",
            "!*auto-*",
            "+skills/auto-keep",
            "-packs/two/x",
        ],
        "prompts": ["extra-prompts/one.md"],
    }
    write(layout.agent / "settings.json", json.dumps(settings))
    write(layout.agent / "extra-prompts" / "one.md", "one")
    loader = layout.loader(trusted=True)
    assert sorted(s.name for s in loader.skills) == ["auto-keep", "more-a", "more-b", "pack-one"]
    assert [t.name for t in loader.prompt_templates] == ["one"]


def test_reload_sees_new_files(layout: Layout) -> None:
    loader = layout.loader(trusted=True)
    assert loader.skills == []
    assert loader.skills_catalog() == ""
    skill(layout.agent / "skills" / "late" / "SKILL.md", "late")
    write(layout.agent / "prompts" / "late.md", "late prompt")
    loader.reload()
    assert [s.name for s in loader.skills] == ["late"]
    assert [t.name for t in loader.prompt_templates] == ["late"]
    assert "<name>late</name>" in loader.skills_catalog()


def test_expand_input_skill_then_template_and_enable_skill_commands(layout: Layout) -> None:
    path = skill(layout.agent / "skills" / "poteto" / "SKILL.md", "Poteto Mode")
    write(layout.agent / "prompts" / "t.md", "Hello $1, all: $@, d: ${2:-none}")
    loader = layout.loader(trusted=True)
    assert any("Poteto Mode" in str(d) and d.type == "warning" for d in loader.diagnostics)
    expanded = loader.expand_input("/skill:poteto-mode go")
    assert expanded.startswith(f'<skill name="Poteto Mode" location="{path}">\n')
    assert expanded.endswith("Body of Poteto Mode\n</skill>\n\ngo")
    assert loader.expand_input('/t "a b" c') == "Hello a b, all: a b c, d: c"
    assert loader.expand_input("/unknown arg") == "/unknown arg"
    write(layout.agent / "settings.json", '{"enableSkillCommands": false}')
    loader.settings.reload()
    assert loader.skill_commands_enabled is False
    assert loader.expand_input("/skill:poteto-mode go") == "/skill:poteto-mode go"


def test_package_resources_load_after_local_ones(layout: Layout) -> None:
    skill(layout.agent / "skills" / "same" / "SKILL.md", "same", "local")
    pkg = layout.home / "pkg"
    skill(pkg / "skills" / "same" / "SKILL.md", "same", "package")
    skill(pkg / "skills" / "pkg-only" / "SKILL.md", "pkg-only")
    write(pkg / "prompts" / "pkg-prompt.md", "from package")
    loader = layout.loader(
        trusted=False,
        package_skills=[PackageResource(pkg / "skills", "git:example/pkg")],
        package_prompts=[
            PackageResource(pkg / "prompts", "git:example/pkg"),
            PackageResource(pkg / "prompts", "./project-pkg", scope="project"),
        ],
    )
    by_name = {s.name: s for s in loader.skills}
    assert by_name["same"].description == "local"
    assert by_name["pkg-only"].source_info.origin == "package"
    assert by_name["pkg-only"].source_info.source == "git:example/pkg"
    assert [t.name for t in loader.prompt_templates] == ["pkg-prompt"]
    assert [d.type for d in loader.diagnostics] == ["collision"]


def test_catalog_reaches_the_system_prompt_and_source_info_serializes(layout: Layout) -> None:
    path = skill(layout.agent / "skills" / "pdf" / "SKILL.md", "pdf")
    loader = layout.loader(trusted=True)
    catalog = loader.skills_catalog()
    with_read = build_system_prompt(
        PromptInputs(cwd=layout.cwd, tools=[ToolPromptInfo("read", "Read file contents")], skills_catalog=catalog)
    )
    assert "<available_skills>\n  <name>pdf</name>\n</available_skills>" in with_read
    without_read = build_system_prompt(
        PromptInputs(cwd=layout.cwd, tools=[ToolPromptInfo("bash", "x")], skills_catalog=catalog)
    )
    assert "<available_skills>" not in without_read
    assert loader.skills[0].source_info.to_json() == {
        "path": str(path),
        "source": "local",
        "scope": "user",
        "origin": "top-level",
        "baseDir": str(path.parent),
    }
