"""Settings entries -> resource paths: filters, global/project precedence, trust, loader hand-off."""

import json
from pathlib import Path
from typing import Any

import pytest

from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.package_manager import ResolvedPackages, ResourceKind, resolve_packages
from apex_coding_agent.resources import ResourceLoader

from .helpers import FakePip, conventional_package, git_repo, write


class Env:
    def __init__(self, tmp: Path) -> None:
        self.agent = tmp / "agent"
        self.cwd = tmp / "project"
        self.cwd.mkdir(parents=True)
        self.agent.mkdir(parents=True)
        self.pkg = conventional_package(tmp / "pkg")

    def settings(self, user: list[Any], project: list[Any] | None = None) -> SettingsManager:
        write(self.agent / "settings.json", json.dumps({"packages": user}))
        if project is not None:
            write(self.cwd / ".apex-code" / "settings.json", json.dumps({"packages": project}))
        return SettingsManager.create(self.cwd, self.agent)

    def resolve(self, user: list[Any], project: list[Any] | None = None, *, trusted: bool = True) -> ResolvedPackages:
        return resolve_packages(self.settings(user, project), self.agent, self.cwd, trusted)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def names(resolved: ResolvedPackages, kind: ResourceKind) -> list[str]:
    items = resolved.of_kind(kind)
    return [item.path.parent.name if item.path.name == "SKILL.md" else item.path.name for item in items]


def test_string_entry_loads_everything_relative_to_the_settings_file(env: Env) -> None:
    resolved = env.resolve(["../pkg"])  # global settings live in the agent dir, a sibling of pkg
    assert names(resolved, "extensions") == ["pkgext", "tool.py"]
    assert names(resolved, "skills") == ["alpha", "beta", "single.md"]
    assert names(resolved, "prompts") == ["review.md"]
    assert names(resolved, "themes") == ["night.json"]
    assert {item.scope for item in resolved.skills} == {"user"}
    assert resolved.warnings == []


def test_skills_filter_empty_list_keeps_extensions(env: Env) -> None:
    # Acceptance check 16: {"source": "./pkg", "skills": []} loads the extensions but no skills.
    resolved = env.resolve([], [{"source": "../../pkg", "skills": []}])
    assert names(resolved, "extensions") == ["pkgext", "tool.py"]
    assert resolved.skills == []
    assert {item.scope for item in resolved.extensions} == {"project"}


def test_include_exclude_and_force_patterns(env: Env) -> None:
    entry = {
        "source": "../pkg",
        "skills": ["skills/*", "!skills/group", "+skills/group/beta"],
        "extensions": ["!*.py", "-extensions/pkgext"],
        "prompts": ["-prompts/review.md"],
    }
    resolved = env.resolve([entry])
    assert names(resolved, "skills") == ["alpha", "beta", "single.md"]
    assert resolved.extensions == []
    assert resolved.prompts == []
    assert names(resolved, "themes") == ["night.json"]


def test_autoload_false_loads_only_listed_kinds(env: Env) -> None:
    resolved = env.resolve([{"source": "../pkg", "autoload": False, "prompts": ["prompts/*.md"]}])
    assert names(resolved, "prompts") == ["review.md"]
    assert resolved.skills == [] and resolved.extensions == [] and resolved.themes == []


def test_project_entry_replaces_the_global_one(env: Env) -> None:
    resolved = env.resolve([{"source": "../pkg", "themes": []}], [{"source": str(env.pkg), "skills": ["skills/alpha"]}])
    assert names(resolved, "skills") == ["alpha"]
    assert names(resolved, "themes") == ["night.json"]  # the global `themes: []` no longer applies
    assert [p.entry.scope for p in resolved.packages] == ["project"]


def test_project_autoload_false_is_a_delta_over_the_global_entry(env: Env) -> None:
    resolved = env.resolve(
        [{"source": "../pkg", "themes": []}],
        [{"source": str(env.pkg), "autoload": False, "skills": ["-skills/alpha"]}],
    )
    assert names(resolved, "skills") == ["beta", "single.md"]
    assert resolved.themes == []  # the global filter still applies
    assert names(resolved, "extensions") == ["pkgext", "tool.py"]
    assert [p.entry.scope for p in resolved.packages] == ["user"]


def test_untrusted_project_packages_are_ignored(env: Env) -> None:
    other = conventional_package(env.cwd / "local-pkg")
    settings = env.settings([], ["../local-pkg"])
    assert resolve_packages(settings, env.agent, env.cwd, False).packages == []
    trusted = resolve_packages(settings, env.agent, env.cwd, True)
    assert [p.installed_path for p in trusted.packages] == [other]


def test_local_file_is_a_single_extension(env: Env) -> None:
    ext = write(env.agent / "one.py", "def extension(pi):\n    pass\n")
    resolved = env.resolve(["./one.py"])
    assert [item.path for item in resolved.extensions] == [ext]


def test_npm_and_missing_sources_become_warnings(env: Env) -> None:
    resolved = env.resolve(["npm:@foo/bar", "./missing", "not a source", 42, "../pkg"])
    assert len(resolved.warnings) == 4
    assert resolved.warnings[0] == "Invalid package entry in user settings: 42"
    assert 'Skipping package "npm:@foo/bar": npm packages are not supported' in resolved.warnings[1]
    assert "path does not exist" in resolved.warnings[2]
    assert "Unknown package source: not a source" in resolved.warnings[3]
    assert names(resolved, "prompts") == ["review.md"]


def test_malformed_manifest_is_a_warning_naming_the_file_and_the_rest_loads(env: Env) -> None:
    write(env.pkg / "pyproject.toml", "[tool.pi]\nskills = [unclosed\n")
    resolved = env.resolve(["../pkg"])
    [warning] = resolved.warnings
    assert warning.startswith(f"{env.pkg / 'pyproject.toml'}: invalid package manifest")
    assert names(resolved, "extensions") == ["pkgext", "tool.py"]
    assert names(resolved, "skills") == ["alpha", "beta", "single.md"]


def test_resolved_skills_and_prompts_reach_the_resource_loader(env: Env) -> None:
    settings = env.settings(["../pkg"])
    resolved = resolve_packages(settings, env.agent, env.cwd, True)
    loader = ResourceLoader(
        env.cwd,
        env.agent,
        settings,
        project_trusted=True,
        home=env.cwd,
        package_skills=resolved.loader_resources("skills"),
        package_prompts=resolved.loader_resources("prompts"),
    )
    assert sorted(s.name for s in loader.skills) == ["alpha", "beta", "single"]
    assert [t.name for t in loader.prompt_templates] == ["review"]


def test_missing_project_packages_install_only_when_trusted(env: Env, tmp_path: Path) -> None:
    pip = FakePip(tmp_path / "pip")
    pip.publish("apex-skills")
    repo = git_repo(tmp_path / "repo")
    write(env.agent / "settings.json", json.dumps({"pipCommand": pip.command}))
    write(
        env.cwd / ".apex-code" / "settings.json",
        json.dumps({"packages": ["pypi:apex-skills", f"file://{repo}@v1"]}),
    )
    untrusted = SettingsManager.create(env.cwd, env.agent, project_trusted=False)
    assert resolve_packages(untrusted, env.agent, env.cwd, False).packages == []
    assert pip.calls() == []

    announced: list[str] = []
    settings = SettingsManager.create(env.cwd, env.agent)
    resolved = resolve_packages(settings, env.agent, env.cwd, True, on_install=lambda e: announced.append(e.source))
    assert announced == ["pypi:apex-skills", f"file://{repo}@v1"]
    target = env.cwd / ".apex-code" / "pypi" / "apex-skills"
    assert resolved.python_paths == [target]
    assert names(resolved, "skills") == ["apex-skills-skill"]
    assert names(resolved, "prompts") == ["hello.md", "one.md"]
    assert [item.source for item in resolved.prompts] == ["pypi:apex-skills", f"file://{repo}@v1"]

    # Installed now: a second resolution runs no pip.
    resolve_packages(settings, env.agent, env.cwd, True)
    assert len(pip.calls()) == 1


def test_missing_user_package_without_install_is_a_warning(env: Env) -> None:
    resolved = resolve_packages(env.settings(["pypi:absent"]), env.agent, env.cwd, True, install_missing=False)
    assert resolved.warnings == [f'Package "pypi:absent" (user) is not installed: {env.agent / "pypi" / "absent"}']


def test_failed_install_is_a_warning(env: Env, tmp_path: Path) -> None:
    pip = FakePip(tmp_path / "pip")
    write(env.agent / "settings.json", json.dumps({"pipCommand": pip.command, "packages": ["pypi:nowhere"]}))
    resolved = resolve_packages(SettingsManager.create(env.cwd, env.agent), env.agent, env.cwd, True)
    [warning] = resolved.warnings
    assert warning.startswith('Failed to install package "pypi:nowhere": pip install failed (exit 1): ERROR: No')
    assert list((env.agent / "pypi").iterdir()) == []  # the staging directory is gone too
