"""Re-importing extensions for `/reload`.

Every file extension is imported again under a fresh module name and its `extension(pi)` runs again on the same
`ExtensionRuntime` (flag values, bus and session binding carry over); its registrations (handlers, tools,
commands, shortcuts, flags, renderers, providers) replace the previous ones. Inline extensions (SDK factories,
the built-in llama.cpp one) are code of this process, not files: their registrations are kept as they are.

An extension that fails to import now is reported and left out (the others load); it stays in the list of
sources, so the next reload picks it up again once it is fixed. Load order is preserved. When the startup's
discovery can run again (`extension_startup.rediscover_sources`), files added since then join and deleted ones go.

`extension_resources`/`replace_extension_resources` turn `resources_discover` answers into resource-loader
entries; startup (reason `startup`) and reload (reason `reload`) share them, so both resolve and mark paths alike.
`discover_startup_resources` sends the startup round at most once per runner: the CLI sends it before it builds the
resource loader, `create_agent_session` for the extensions it loads itself (SDK `extensions=`), never both.
"""

from __future__ import annotations

import importlib.util
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from apex_coding_agent.extensions.api import unregister_provider
from apex_coding_agent.extensions.loader import (
    ExtensionDiagnostic,
    ExtensionLoadError,
    ExtensionSource,
    find_conflicts,
    load_extensions,
)
from apex_coding_agent.extensions.runner import DiscoveredResources, ExtensionRunner
from apex_coding_agent.extensions.types import Extension, ProviderRegistration
from apex_coding_agent.resources.loader import PackageResource

EXTENSION_RESOURCE_SOURCE = "extension"
"""The `PackageResource.source` of a path a `resources_discover` handler returned (scope `temporary`); the package
manager never produces it (its temporary resources come from `pypi:`/`git:` sources), so it marks what the next
discovery replaces."""


@dataclass(frozen=True)
class KeptExtension:
    """An inline extension: reloading keeps its record (there is no file to import again)."""

    extension: Extension


ReloadEntry = ExtensionSource | KeptExtension


@dataclass
class ExtensionReloadResult:
    errors: list[ExtensionLoadError] = field(default_factory=list)
    diagnostics: list[ExtensionDiagnostic] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)
    """Names of the providers the re-imported extensions registered (unregistered on the next reload)."""


def entries_of(extensions: list[Extension]) -> list[ReloadEntry]:
    """What a reload re-creates, in load order, from the currently loaded extensions."""
    out: list[ReloadEntry] = []
    for extension in extensions:
        if extension.source_info.source == "sdk":
            out.append(KeptExtension(extension))
        else:
            out.append(ExtensionSource(Path(extension.path), extension.source_info))
    return out


def _drop_bytecode_cache(path: Path) -> None:
    """Remove the cached bytecode of the extension's files.

    The import system trusts a `.pyc` whose recorded source mtime (whole seconds) and size match; an edit within
    the same second that keeps the size would otherwise import the old code.
    """
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    for file in files:
        try:
            os.remove(importlib.util.cache_from_source(str(file)))
        except (OSError, NotImplementedError, ValueError):  # no cache, read-only dir, or no cache tag: nothing stale
            continue


def merge_rediscovered(entries: list[ReloadEntry], phases: list[list[ExtensionSource]]) -> list[ReloadEntry]:
    """The entries of a reload when discovery could run again: the sources found now (files added since startup
    join, deleted ones are gone), the inline extensions after the first phase, as at startup."""
    kept: list[ReloadEntry] = [entry for entry in entries if isinstance(entry, KeptExtension)]
    seen: set[Path] = set()
    ordered: list[list[ReloadEntry]] = []
    for phase in phases:
        fresh: list[ReloadEntry] = []
        for source in phase:
            key = source.path.resolve()
            if key not in seen:
                seen.add(key)
                fresh.append(source)
        ordered.append(fresh)
    first, rest = (ordered[0], ordered[1:]) if ordered else ([], [])
    return [*first, *kept, *(entry for phase in rest for entry in phase)]


@dataclass
class ExtensionResources:
    """The paths of one `resources_discover` round as resource-loader entries, in load order."""

    skills: list[PackageResource] = field(default_factory=list)
    prompts: list[PackageResource] = field(default_factory=list)
    themes: list[PackageResource] = field(default_factory=list)

    @property
    def theme_paths(self) -> list[str]:
        return [str(item.path) for item in self.themes]


def extension_resources(discovered: DiscoveredResources, cwd: str) -> ExtensionResources:
    """Resolve the returned paths (`~` expanded, relative ones against `cwd`) and mark them as extension resources."""

    def entries(pairs: list[tuple[str, str]]) -> list[PackageResource]:
        base = Path(cwd)
        return [
            PackageResource(base / Path(path).expanduser(), EXTENSION_RESOURCE_SOURCE, "temporary") for path, _ in pairs
        ]

    return ExtensionResources(
        entries(discovered.skill_paths), entries(discovered.prompt_paths), entries(discovered.theme_paths)
    )


def is_extension_resource(item: PackageResource) -> bool:
    return item.source == EXTENSION_RESOURCE_SOURCE and item.scope == "temporary"


def replace_extension_resources(current: list[PackageResource], fresh: list[PackageResource]) -> list[PackageResource]:
    """`current` without the entries of the previous discovery, then `fresh` (package resources keep their place)."""
    return [*(item for item in current if not is_extension_resource(item)), *fresh]


_startup_discovered: weakref.WeakSet[ExtensionRunner] = weakref.WeakSet()
"""Runners whose startup `resources_discover` round was sent (held weakly: a runner is dropped with its session)."""


def startup_resources_discovered(runner: ExtensionRunner) -> bool:
    """Whether `discover_startup_resources` already ran for `runner` (its paths are then the caller's to apply)."""
    return runner in _startup_discovered


async def discover_startup_resources(runner: ExtensionRunner, cwd: str) -> ExtensionResources:
    """Ask the loaded extensions for extra skill/prompt/theme paths (`resources_discover`, reason `startup`).

    Call it once every extension is loaded and before the resource loader reads its paths. It sends at most one
    round per runner: a second call returns no paths (the first caller applied them). A failing handler is reported
    on the runner (its `errors` keep it for a late host) and skipped. Nothing is emitted when no extension listens.
    """
    if runner in _startup_discovered:
        return ExtensionResources()
    _startup_discovered.add(runner)
    if not runner.has_handlers("resources_discover"):
        return ExtensionResources()
    return extension_resources(await runner.emit_resources_discover(cwd, "startup"), cwd)


async def reimport_extensions(
    runner: ExtensionRunner, entries: list[ReloadEntry], previous_providers: list[str]
) -> ExtensionReloadResult:
    """Replace `runner.runtime.extensions` by a fresh load of `entries` (see the module docstring).

    The session binding is lifted while the factories run, as at startup: factories must not act on the session,
    and tools they register are handed to the session by the caller afterwards (`replace_extension_tools`).
    Providers the previous reload's extensions registered are unregistered first; new provider registrations
    apply once every factory ran.
    """
    runtime = runner.runtime
    result = ExtensionReloadResult()
    target = runtime.provider_target
    if target is not None:
        for name in previous_providers:
            unregister_provider(target, name)
    session, runtime.session = runtime.session, None
    runtime.provider_target = None  # queue provider registrations until every factory ran (startup order)
    runtime.extensions = []
    try:
        for entry in entries:
            if isinstance(entry, KeptExtension):
                runtime.extensions.append(entry.extension)
                continue
            _drop_bytecode_cache(entry.path)
            _, loaded = await load_extensions([entry], runtime)
            result.errors.extend(loaded.errors)
    finally:
        runtime.session = session
        pending: list[ProviderRegistration] = list(runtime.pending_providers)
        if target is not None:
            runtime.flush_providers(target)
    result.providers = list(dict.fromkeys(item.name for item in pending if item.config is not None))
    result.diagnostics = find_conflicts(runtime.extensions)
    return result


__all__ = [
    "EXTENSION_RESOURCE_SOURCE",
    "ExtensionReloadResult",
    "ExtensionResources",
    "KeptExtension",
    "ReloadEntry",
    "discover_startup_resources",
    "entries_of",
    "extension_resources",
    "is_extension_resource",
    "merge_rediscovered",
    "reimport_extensions",
    "replace_extension_resources",
    "startup_resources_discovered",
]
