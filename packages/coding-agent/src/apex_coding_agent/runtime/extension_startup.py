"""Loading extensions and packages at startup in their start-up order (used by the CLI).

1. `load_startup_extensions`: user/global extensions (agent dir, global settings `extensions`, global `packages`),
   CLI `-e` sources (paths, or `pypi:`/`git:` sources installed as temporary packages) and the inline built-ins.
2. `decide_project_trust`: the trust flow, asking `project_trust` handlers of the extensions loaded so far.
3. `load_project_extensions`: once trusted, the project's `.apex-code/extensions`, project settings `extensions` and
   project packages; returns the resolved packages, whose skills and prompts go into the resource loader.
4. `discover_startup_resources`: `resources_discover{reason: "startup"}` once every extension is loaded and before
   the resource loader is built; its skill/prompt/theme paths join the package resources (as `/reload` applies them).

Package `python_paths` are put on `sys.path` before any package extension is imported. Nothing here exits: load
errors are returned for the caller to report.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.core.trust import (
    TrustDecision,
    TrustHandlerResult,
    TrustPrompt,
    TrustStore,
    resolve_project_trusted,
    trust_requiring_resources,
)
from apex_coding_agent.extensions.api import ExtensionRuntime
from apex_coding_agent.extensions.bindings import Mode, UiBinding
from apex_coding_agent.extensions.loader import (
    ExtensionDiagnostic,
    ExtensionLoadError,
    ExtensionSource,
    InlineExtension,
    discover_extension_sources,
    load_extensions,
)
from apex_coding_agent.extensions.runner import ExtensionRunner, trust_warning
from apex_coding_agent.package_manager import (
    LocalSource,
    ResolvedPackages,
    SourceError,
    parse_source,
    resolve_packages,
    resolve_temporary_sources,
)
from apex_coding_agent.resources.diagnostics import SourceInfo

# Phase 4 lives with the reload code it shares; re-exported here for the CLI's startup order.
from apex_coding_agent.runtime.extension_reload import discover_startup_resources

HINT = 'Start without extensions using "apex-code -ne".'


@dataclass
class StartupExtensions:
    """The runner and everything loading reported (errors are fatal for the CLI, warnings are printed)."""

    runner: ExtensionRunner
    errors: list[ExtensionLoadError] = field(default_factory=list)
    diagnostics: list[ExtensionDiagnostic] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def error_lines(self) -> list[str]:
        """`Failed to load extension "<path>": <error>` per error, then the `-ne` hint (none without errors)."""
        if not self.errors:
            return []
        return [*(error.message() for error in self.errors), HINT]


SourceFinder = Callable[[], list[ExtensionSource]]
_rediscovery: weakref.WeakKeyDictionary[ExtensionRunner, list[SourceFinder]] = weakref.WeakKeyDictionary()
"""Per runner, how its startup found its file extensions; `/reload` asks again (new files join, deleted ones go).
Kept beside the runner rather than on it so the CLI's call sequence stays as it is."""


def rediscover_sources(runner: ExtensionRunner) -> list[list[ExtensionSource]] | None:
    """The file extension sources the startup phases of `runner` would find now, per phase (user/CLI first, then
    the project's; the inline extensions loaded between the two); None when the runner was not built by this
    module. Packages are not installed here (a reload does no network work)."""
    finders = _rediscovery.get(runner)
    if finders is None:
        return None
    return [finder() for finder in finders]


def _add_python_paths(paths: Sequence[Path]) -> None:
    for path in paths:
        text = str(path)
        if text not in sys.path:
            sys.path.insert(0, text)


def _settings_paths(settings: dict[str, Any], scope: str) -> list[tuple[str, Any]]:  # Any: JSON / Scope
    raw = settings.get("extensions")
    if not isinstance(raw, list):
        return []
    return [(str(item), scope) for item in raw if isinstance(item, str) and item]


def _package_sources(packages: ResolvedPackages, scopes: set[str]) -> list[ExtensionSource]:
    return [
        ExtensionSource(item.path, SourceInfo(item.path, item.source, item.scope, "package", item.package_root))
        for item in packages.extensions
        if item.scope in scopes
    ]


def split_cli_sources(sources: Sequence[str], cwd: str) -> tuple[list[str], list[str]]:
    """`-e` values as (local paths, package sources such as `pypi:`/`git:`); unparseable ones count as paths."""
    paths: list[str] = []
    packages: list[str] = []
    for source in sources:
        try:
            parsed = parse_source(source, Path(cwd))
        except SourceError:
            paths.append(source)
            continue
        (paths if isinstance(parsed, LocalSource) else packages).append(source)
    return paths, packages


async def load_startup_extensions(
    *,
    cwd: str,
    agent_dir: str,
    settings: SettingsManager,
    cli_sources: Sequence[str] = (),
    no_extensions: bool = False,
    inline: Sequence[InlineExtension] = (),
    ui: UiBinding | None = None,
    mode: Mode = "print",
) -> StartupExtensions:
    """Phase 1 (see the module docstring): everything that does not depend on the project's trust."""
    runtime = ExtensionRuntime(cwd=cwd)
    runner = ExtensionRunner(runtime, ui=ui, mode=mode)
    out = StartupExtensions(runner)
    sources: list[ExtensionSource] = []
    if not no_extensions:
        sources.extend(
            discover_extension_sources(
                cwd=cwd,
                agent_dir=agent_dir,
                project_trusted=False,
                settings_paths=_settings_paths(settings.global_settings, "user"),
                include_project=False,
            )
        )
        packages = resolve_packages(settings, agent_dir, cwd, False)
        out.warnings.extend(packages.warnings)
        _add_python_paths(packages.python_paths)
        sources.extend(_package_sources(packages, {"user"}))
    paths, package_sources = split_cli_sources(cli_sources, cwd)
    sources.extend(
        discover_extension_sources(
            cwd=cwd, agent_dir=agent_dir, project_trusted=False, cli_paths=paths, no_extensions=True
        )
    )
    if package_sources:
        temporary = resolve_temporary_sources(package_sources, agent_dir, cwd, settings.get("pipCommand"))
        out.warnings.extend(temporary.warnings)
        _add_python_paths(temporary.python_paths)
        sources.extend(_package_sources(temporary, {"temporary"}))
    _, result = await load_extensions(sources, runtime, inline=inline)
    out.errors.extend(result.errors)
    out.diagnostics.extend(result.diagnostics)
    temporary_sources = [s for s in sources if s.source_info.scope == "temporary" and s.source_info.origin == "package"]

    def again() -> list[ExtensionSource]:
        found: list[ExtensionSource] = []
        if not no_extensions:
            found.extend(
                discover_extension_sources(
                    cwd=cwd,
                    agent_dir=agent_dir,
                    project_trusted=False,
                    settings_paths=_settings_paths(settings.global_settings, "user"),
                    include_project=False,
                )
            )
            packages = resolve_packages(settings, agent_dir, cwd, False, install_missing=False)
            _add_python_paths(packages.python_paths)
            found.extend(_package_sources(packages, {"user"}))
        found.extend(
            discover_extension_sources(
                cwd=cwd, agent_dir=agent_dir, project_trusted=False, cli_paths=paths, no_extensions=True
            )
        )
        return [*found, *temporary_sources]

    _rediscovery[runner] = [again]
    return out


async def decide_project_trust(
    runner: ExtensionRunner,
    cwd: str,
    agent_dir: str,
    *,
    approve: bool | None,
    default_trust: object,
    warn: Callable[[str], None],
    prompt: TrustPrompt | None = None,
) -> TrustDecision:
    """The trust flow; `project_trust` handlers are asked only when it gets that far,
    and `prompt` (the interactive app's selector; None headless) only after them, the saved answer and the default."""
    handlers: list[Callable[[Path], TrustHandlerResult | None]] = []
    if approve is None and runner.has_handlers("project_trust") and trust_requiring_resources(cwd):
        before = len(runner.errors)
        answer = await runner.emit_project_trust(cwd)
        for error in runner.errors[before:]:
            warn(trust_warning(error))
        if answer is not None:
            handlers.append(lambda _root: answer)
    return resolve_project_trusted(
        cwd,
        TrustStore(Path(agent_dir) / "trust.json"),
        approve=approve,
        default_trust=default_trust if isinstance(default_trust, str) else None,
        handlers=handlers,
        prompt=prompt,
        warn=warn,
    )


async def load_project_extensions(
    startup: StartupExtensions,
    *,
    cwd: str,
    agent_dir: str,
    settings: SettingsManager,
    project_trusted: bool,
    no_extensions: bool = False,
) -> ResolvedPackages:
    """Phase 3: project extensions and packages when trusted; returns all packages for the resource loader."""
    packages = resolve_packages(settings, agent_dir, cwd, project_trusted)
    if no_extensions:
        return packages
    _add_python_paths(packages.python_paths)
    if not project_trusted:
        return packages
    sources = discover_extension_sources(
        cwd=cwd,
        agent_dir=agent_dir,
        project_trusted=True,
        settings_paths=_settings_paths(settings.project_settings, "project"),
        include_global=False,
    )
    sources.extend(_package_sources(packages, {"project"}))

    def again() -> list[ExtensionSource]:
        if not settings.project_trusted:
            return []
        found = discover_extension_sources(
            cwd=cwd,
            agent_dir=agent_dir,
            project_trusted=True,
            settings_paths=_settings_paths(settings.project_settings, "project"),
            include_global=False,
        )
        now = resolve_packages(settings, agent_dir, cwd, True, install_missing=False)
        _add_python_paths(now.python_paths)
        return [*found, *_package_sources(now, {"project"})]

    _rediscovery.setdefault(startup.runner, []).append(again)
    _, result = await load_extensions(sources, startup.runner.runtime)
    startup.errors.extend(result.errors)
    startup.diagnostics.extend(result.diagnostics)
    return packages


__all__ = [
    "HINT",
    "StartupExtensions",
    "decide_project_trust",
    "discover_startup_resources",
    "load_project_extensions",
    "load_startup_extensions",
    "rediscover_sources",
    "split_cli_sources",
]
