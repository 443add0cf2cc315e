"""`ResourceLoader`: the skills and prompt templates of one session, from every location

Precedence (the first resource of a name wins; later ones give a collision diagnostic):
1. CLI paths (`--skill`, `--prompt-template`), loaded even with `--no-skills` / `--no-prompt-templates`;
2. project resources (trusted projects only): auto-discovered locations, then project settings paths;
3. user resources: auto-discovered locations, then global settings paths;
4. package resources handed in by the package manager.

Settings entries (`skills`, `prompts`) are paths or globs; global ones are relative to the agent dir, project ones
to the cwd. `!glob` drops matching resources of the same scope, `-path` drops one exact path, `+path` keeps (and
loads) one exact path even when a `!glob` matches it.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.resources.diagnostics import ResourceDiagnostic, Scope, SourceInfo
from apex_coding_agent.resources.prompt_templates import (
    PromptTemplate,
    TemplateLoadResult,
    dedupe_templates,
    expand_prompt_template,
    load_templates_from_dir,
    load_templates_from_path,
)
from apex_coding_agent.resources.skills import (
    Skill,
    SkillErrorReporter,
    SkillLoadResult,
    SkillLocation,
    dedupe_skills,
    expand_skill_command,
    format_skills_catalog,
    load_skills_from_dir,
    load_skills_from_path,
    project_skill_locations,
    user_skill_locations,
)

PROJECT_DIR = ".apex-code"
_GLOB_CHARS = frozenset("*?[")


class ResourceArgs(Protocol):
    """The parsed command line as far as skills and templates go (`cli.args.Args` has these fields; a protocol keeps
    resources from importing the layer above)."""

    @property
    def skills(self) -> Sequence[str]: ...
    @property
    def no_skills(self) -> bool: ...
    @property
    def prompt_templates(self) -> Sequence[str]: ...
    @property
    def no_prompt_templates(self) -> bool: ...


@dataclass(frozen=True)
class ResourceFlags:
    """The CLI flags that concern skills and templates (names as in `cli.args.Args`)."""

    skills: tuple[str, ...] = ()
    no_skills: bool = False
    prompt_templates: tuple[str, ...] = ()
    no_prompt_templates: bool = False

    @classmethod
    def from_args(cls, args: ResourceArgs) -> ResourceFlags:
        return cls(tuple(args.skills), args.no_skills, tuple(args.prompt_templates), args.no_prompt_templates)


@dataclass(frozen=True)
class PackageResource:
    """A skills or prompts path contributed by an installed package (`source` is the package source)."""

    path: Path
    source: str
    scope: Scope = "user"


@dataclass
class _SettingsFilter:
    """The parsed `skills`/`prompts` entries of one settings file."""

    base: Path
    paths: list[Path] = field(default_factory=list)
    exclude_globs: list[str] = field(default_factory=list)
    force_include: set[str] = field(default_factory=set)
    force_exclude: set[str] = field(default_factory=set)

    def keeps(self, *paths: Path) -> bool:
        reals = {os.path.realpath(p) for p in paths}
        if reals & self.force_include:
            return True
        if reals & self.force_exclude:
            return False
        for path in paths:
            candidates = {str(path), path.name}
            try:
                candidates.add(str(path.relative_to(self.base)))
            except ValueError:
                pass
            if any(fnmatch.fnmatchcase(c, g) for c in candidates for g in self.exclude_globs):
                return False
        return True


def _resolve(entry: str, base: Path) -> Path:
    path = Path(os.path.expanduser(entry))
    return path if path.is_absolute() else base / path


def _parse_settings_entries(entries: Any, base: Path) -> _SettingsFilter:
    # `entries` is untyped JSON from a settings file: only strings count.
    out = _SettingsFilter(base)
    if not isinstance(entries, list):
        return out
    for entry in entries:
        if not isinstance(entry, str) or not entry.strip():
            continue
        entry = entry.strip()
        if entry.startswith("!"):
            pattern = os.path.expanduser(entry[1:])
            out.exclude_globs.append(pattern)
        elif entry.startswith("-"):
            out.force_exclude.add(os.path.realpath(_resolve(entry[1:], base)))
        elif entry.startswith("+"):
            path = _resolve(entry[1:], base)
            out.force_include.add(os.path.realpath(path))
            out.paths.append(path)
        elif _GLOB_CHARS & set(entry):
            out.paths.extend(Path(p) for p in sorted(glob.glob(str(_resolve(entry, base)))))
        else:
            out.paths.append(_resolve(entry, base))
    return out


class ResourceLoader:
    """Loads skills and prompt templates for `cwd`; `reload()` reads everything again (for `/reload`)."""

    def __init__(
        self,
        cwd: str | Path,
        agent_dir: str | Path,
        settings: SettingsManager,
        *,
        project_trusted: bool,
        flags: ResourceFlags | None = None,
        home: str | Path | None = None,
        package_skills: Sequence[PackageResource] = (),
        package_prompts: Sequence[PackageResource] = (),
    ) -> None:
        self.cwd = Path(cwd)
        self.agent_dir = Path(agent_dir)
        self.settings = settings
        self.project_trusted = project_trusted
        self.flags = flags or ResourceFlags()
        self.home = Path(home) if home is not None else Path.home()
        self.package_skills = list(package_skills)
        self.package_prompts = list(package_prompts)
        self._skills: list[Skill] = []
        self._templates: list[PromptTemplate] = []
        self._diagnostics: list[ResourceDiagnostic] = []
        self.reload()

    # ----------------------------------------------------------------- results

    @property
    def skills(self) -> list[Skill]:
        return list(self._skills)

    @property
    def prompt_templates(self) -> list[PromptTemplate]:
        return list(self._templates)

    @property
    def diagnostics(self) -> list[ResourceDiagnostic]:
        """Warnings, errors and collisions of the last load."""
        return list(self._diagnostics)

    @property
    def skill_commands_enabled(self) -> bool:
        return self.settings.get_bool("enableSkillCommands", True)

    def skills_catalog(self) -> str:
        """The text for `PromptInputs.skills_catalog`."""
        return format_skills_catalog(self._skills)

    def expand_input(self, text: str, *, on_skill_error: SkillErrorReporter | None = None) -> str:
        """Steps 3-4 of the input pipeline: `/skill:` expansion (when enabled), then template expansion."""
        if self.skill_commands_enabled:
            expanded = expand_skill_command(text, self._skills, on_error=on_skill_error)
            if expanded != text:
                return expanded
        return expand_prompt_template(text, self._templates)

    # ----------------------------------------------------------------- loading

    def set_project_trusted(self, trusted: bool) -> None:
        """Apply a new trust decision to the settings too (project settings paths depend on it) and reload."""
        self.settings.set_project_trusted(trusted)
        if trusted != self.project_trusted:
            self.project_trusted = trusted
            self.reload()

    def reload(self) -> None:
        skills = self._load_skills()
        templates = self._load_templates()
        self._skills = skills.skills
        self._templates = templates.templates
        self._diagnostics = skills.diagnostics + templates.diagnostics

    def _project_entries(self, key: str) -> _SettingsFilter:
        data = self.settings.project_settings if self.project_trusted else {}
        return _parse_settings_entries(data.get(key), self.cwd)

    def _global_entries(self, key: str) -> _SettingsFilter:
        return _parse_settings_entries(self.settings.global_settings.get(key), self.agent_dir)

    def _load_skills(self) -> SkillLoadResult:
        groups: list[SkillLoadResult] = []
        for entry in self.flags.skills:
            path = _resolve(entry, self.cwd)
            groups.append(load_skills_from_path(path, SourceInfo(path, "cli", "temporary")))
        if not self.flags.no_skills:
            if self.project_trusted:
                locations = project_skill_locations(self.cwd, home=self.home)
                groups.append(self._skills_of_scope("project", locations, self._project_entries("skills")))
            locations = user_skill_locations(self.agent_dir, home=self.home)
            groups.append(self._skills_of_scope("user", locations, self._global_entries("skills")))
            for package in self.package_skills:
                if package.scope == "project" and not self.project_trusted:
                    continue
                info = SourceInfo(package.path, package.source, package.scope, "package")
                groups.append(load_skills_from_path(package.path, info))
        return dedupe_skills(groups)

    def _skills_of_scope(
        self, scope: Scope, locations: Sequence[SkillLocation], entries: _SettingsFilter
    ) -> SkillLoadResult:
        # Auto-discovered locations come before the settings paths of the same scope.
        merged = SkillLoadResult()
        for location in locations:
            info = SourceInfo(location.path, "local", scope)
            found = load_skills_from_dir(location.path, info, include_root_files=location.include_root_files)
            merged.skills.extend(found.skills)
            merged.diagnostics.extend(found.diagnostics)
        for path in entries.paths:
            found = load_skills_from_path(path, SourceInfo(path, "local", scope))
            merged.skills.extend(found.skills)
            merged.diagnostics.extend(found.diagnostics)
        merged.skills = [s for s in merged.skills if entries.keeps(s.file_path, s.base_dir)]
        return merged

    def _load_templates(self) -> TemplateLoadResult:
        groups: list[TemplateLoadResult] = []
        for entry in self.flags.prompt_templates:
            path = _resolve(entry, self.cwd)
            groups.append(load_templates_from_path(path, SourceInfo(path, "cli", "temporary")))
        if not self.flags.no_prompt_templates:
            if self.project_trusted:
                project_dir = self.cwd / PROJECT_DIR / "prompts"
                groups.append(self._templates_of_scope("project", project_dir, self._project_entries("prompts")))
            user_dir = self.agent_dir / "prompts"
            groups.append(self._templates_of_scope("user", user_dir, self._global_entries("prompts")))
            for package in self.package_prompts:
                if package.scope == "project" and not self.project_trusted:
                    continue
                info = SourceInfo(package.path, package.source, package.scope, "package")
                groups.append(load_templates_from_path(package.path, info))
        return dedupe_templates(groups)

    def _templates_of_scope(self, scope: Scope, directory: Path, entries: _SettingsFilter) -> TemplateLoadResult:
        merged = load_templates_from_dir(directory, SourceInfo(directory, "local", scope))
        for path in entries.paths:
            found = load_templates_from_path(path, SourceInfo(path, "local", scope))
            merged.templates.extend(found.templates)
            merged.diagnostics.extend(found.diagnostics)
        merged.templates = [t for t in merged.templates if entries.keeps(t.file_path)]
        return merged


__all__ = ["PackageResource", "ResourceFlags", "ResourceLoader"]
