"""Turning the configured packages into resource paths for the loaders.

`resolve_packages` reads the global `packages` and, only for a trusted project, the project ones; merges them
(`entries.merge_entries`); installs what is missing when `install_missing` (project packages only when trusted, as
their settings are not read otherwise); and returns every enabled extension, skill, prompt and theme path plus the
`sys.path` entries the packages need (each PyPI `--target` dir, each git clone's `.apex-deps`). Nothing here raises
for a bad package: problems become `warnings` and the package is skipped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.package_manager.entries import PackageEntry, merge_entries, parse_entries
from apex_coding_agent.package_manager.filters import apply_patterns
from apex_coding_agent.package_manager.installer import DEPS_DIR, Installer, InstallError, Scope, pip_command_from
from apex_coding_agent.package_manager.manifest import RESOURCE_KINDS, ResourceKind, package_resources
from apex_coding_agent.package_manager.settings_io import settings_dir
from apex_coding_agent.package_manager.sources import (
    GitSource,
    LocalSource,
    ParsedSource,
    PypiSource,
    SourceError,
    UnsupportedSource,
    parse_source,
)

if TYPE_CHECKING:
    from apex_coding_agent.resources.loader import PackageResource


@dataclass(frozen=True)
class ResolvedResource:
    """One enabled resource of a package."""

    path: Path
    kind: ResourceKind
    source: str
    scope: Scope
    package_root: Path


@dataclass
class ResolvedPackage:
    """One configured package after resolution: where it is and which of its resources are on."""

    entry: PackageEntry
    parsed: ParsedSource
    installed_path: Path | None
    root: Path | None
    available: dict[ResourceKind, list[Path]] = field(default_factory=dict)
    enabled: dict[ResourceKind, list[Path]] = field(default_factory=dict)


@dataclass
class ResolvedPackages:
    """What the resource and extension loaders need from the package manager."""

    extensions: list[ResolvedResource] = field(default_factory=list)
    skills: list[ResolvedResource] = field(default_factory=list)
    prompts: list[ResolvedResource] = field(default_factory=list)
    themes: list[ResolvedResource] = field(default_factory=list)
    python_paths: list[Path] = field(default_factory=list)
    """Directories to put on `sys.path` before importing package extensions."""
    packages: list[ResolvedPackage] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def of_kind(self, kind: ResourceKind) -> list[ResolvedResource]:
        return {
            "extensions": self.extensions,
            "skills": self.skills,
            "prompts": self.prompts,
            "themes": self.themes,
        }[kind]

    def loader_resources(self, kind: ResourceKind) -> list[PackageResource]:
        """The `skills`/`prompts` (or any kind) as `resources.loader.PackageResource` values."""
        # Imported here: the resource loader may come to import this module, and a top-level import would cycle.
        from apex_coding_agent.resources.loader import PackageResource

        return [PackageResource(item.path, item.source, item.scope) for item in self.of_kind(kind)]


def pypi_package_root(target: Path, name: str) -> Path:
    """The directory of an installed PyPI package that holds its manifest or conventional dirs.

    The import package `<target>/<name_with_underscores>/` when present, else the first top-level name of the
    distribution's `top_level.txt`, else the target itself.
    """
    module = target / name.replace("-", "_")
    if module.is_dir():
        return module
    for info in sorted(target.glob("*.dist-info")):
        top = info / "top_level.txt"
        if top.is_file():
            for line in top.read_text(encoding="utf-8").splitlines():
                if line.strip() and (target / line.strip()).is_dir():
                    return target / line.strip()
    return target


def _package_root(parsed: ParsedSource, installed: Path) -> Path:
    if isinstance(parsed, PypiSource):
        return pypi_package_root(installed, parsed.name)
    return installed


def _available(parsed: ParsedSource, installed: Path, warn: Callable[[str], None]) -> dict[ResourceKind, list[Path]]:
    if isinstance(parsed, LocalSource) and installed.is_file():
        # A single file is one extension (spec: "local file (single extension)").
        files = [installed] if installed.suffix == ".py" else []
        return {"extensions": files, "skills": [], "prompts": [], "themes": []}
    return package_resources(_package_root(parsed, installed), warn)


def _python_paths(parsed: ParsedSource, installed: Path) -> list[Path]:
    if isinstance(parsed, PypiSource):
        return [installed]
    deps = installed / DEPS_DIR
    if isinstance(parsed, GitSource) and deps.is_dir():
        return [deps]
    return []


def resolve_entries(
    entries: Sequence[PackageEntry],
    installer: Installer,
    *,
    install_missing: bool = True,
    on_install: Callable[[PackageEntry], None] | None = None,
) -> ResolvedPackages:
    """Resolve already merged entries (see the module docstring)."""
    out = ResolvedPackages()
    seen: set[str] = set()
    for entry in entries:
        try:
            parsed = parse_source(entry.source, entry.base_dir)
        except SourceError as exc:
            out.warnings.append(f"Skipping package: {exc}")
            continue
        if isinstance(parsed, UnsupportedSource):
            out.warnings.append(f'Skipping package "{entry.source}": {parsed.reason}')
            continue
        installed = installer.install_path(parsed, entry.scope)
        if installed is None:
            continue
        if not installer.is_installed(parsed, entry.scope):
            if isinstance(parsed, LocalSource) or not install_missing:
                what = "path does not exist" if isinstance(parsed, LocalSource) else "not installed"
                out.warnings.append(f'Package "{entry.source}" ({entry.scope}) is {what}: {installed}')
                out.packages.append(ResolvedPackage(entry, parsed, None, None))
                continue
            try:
                if on_install is not None:
                    on_install(entry)
                installer.install(parsed, entry.scope)
            except InstallError as exc:
                out.warnings.append(f'Failed to install package "{entry.source}": {exc}')
                out.packages.append(ResolvedPackage(entry, parsed, None, None))
                continue
        root = installed if installed.is_file() else _package_root(parsed, installed)
        package = ResolvedPackage(entry, parsed, installed, root, _available(parsed, installed, out.warnings.append))
        for kind in RESOURCE_KINDS:
            kept = apply_patterns(package.available[kind], entry.patterns(kind), root if root.is_dir() else root.parent)
            package.enabled[kind] = kept
            for path in kept:
                key = f"{kind}:{os.path.realpath(path)}"
                if key in seen:
                    continue
                seen.add(key)
                out.of_kind(kind).append(ResolvedResource(path, kind, entry.source, entry.scope, root))
        for extra in _python_paths(parsed, installed):
            if extra not in out.python_paths:
                out.python_paths.append(extra)
        out.packages.append(package)
    return out


def configured_entries(
    global_settings: dict[str, Any],
    project_settings: dict[str, Any],
    agent_dir: Path,
    cwd: Path,
    project_trusted: bool,
) -> tuple[list[PackageEntry], list[str]]:
    """The merged entries of both settings files; the project file counts only when trusted."""
    raw_user = global_settings.get("packages")
    user, warnings = parse_entries(raw_user if isinstance(raw_user, list) else [], "user", agent_dir)
    project: list[PackageEntry] = []
    if project_trusted:
        raw_project = project_settings.get("packages")
        project_dir = settings_dir("project", agent_dir, cwd)
        project, more = parse_entries(raw_project if isinstance(raw_project, list) else [], "project", project_dir)
        warnings.extend(more)
    return merge_entries(user, project), warnings


def resolve_packages(
    settings: SettingsManager,
    agent_dir: str | os.PathLike[str],
    cwd: str | os.PathLike[str],
    project_trusted: bool,
    *,
    install_missing: bool = True,
    on_install: Callable[[PackageEntry], None] | None = None,
) -> ResolvedPackages:
    """All configured packages as resource paths (the entry point for the resource and extension loaders).

    Missing packages are installed when `install_missing` (project ones only exist here when `project_trusted`);
    `on_install` is told before each such install so a UI can say what is happening.
    """
    agent = Path(agent_dir)
    root = Path(cwd)
    entries, warnings = configured_entries(
        settings.global_settings, settings.project_settings, agent, root, project_trusted
    )
    installer = Installer(agent, root, tuple(pip_command_from(settings.get("pipCommand"))))
    resolved = resolve_entries(entries, installer, install_missing=install_missing, on_install=on_install)
    resolved.warnings[:0] = warnings
    return resolved


def resolve_temporary_sources(
    sources: Sequence[str], agent_dir: str | os.PathLike[str], cwd: str | os.PathLike[str], pip_command: Any = None
) -> ResolvedPackages:
    """CLI `-e <source>` packages: installed under `<agentDir>/tmp/extensions/`, resolved like settings entries."""
    root = Path(cwd)
    entries = [PackageEntry(source, "temporary", root, raw=source) for source in sources]
    installer = Installer(Path(agent_dir), root, tuple(pip_command_from(pip_command)))
    return resolve_entries(entries, installer, install_missing=True)


__all__ = [
    "ResolvedPackage",
    "ResolvedPackages",
    "ResolvedResource",
    "configured_entries",
    "pypi_package_root",
    "resolve_entries",
    "resolve_packages",
    "resolve_temporary_sources",
]
