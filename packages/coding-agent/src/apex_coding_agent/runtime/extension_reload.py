"""Re-importing extensions for `/reload` (spec resources.md §5).

Every file extension is imported again under a fresh module name and its `extension(pi)` runs again on the same
`ExtensionRuntime` (flag values, bus and session binding carry over); its registrations (handlers, tools,
commands, shortcuts, flags, renderers, providers) replace the previous ones. Inline extensions (SDK factories,
the built-in llama.cpp one) are code of this process, not files: their registrations are kept as they are.

An extension that fails to import now is reported and left out (the others load); it stays in the list of
sources, so the next reload picks it up again once it is fixed. Load order is preserved. When the startup's
discovery can run again (`extension_startup.rediscover_sources`), files added since then join and deleted ones go.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path

from apex_coding_agent.extensions.loader import (
    ExtensionDiagnostic,
    ExtensionLoadError,
    ExtensionSource,
    find_conflicts,
    load_extensions,
)
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.extensions.types import Extension, ProviderRegistration


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
    registry = runtime.model_registry
    if registry is not None:
        for name in previous_providers:
            registry.unregister_provider(name)
    session, runtime.session = runtime.session, None
    runtime.model_registry = None  # queue provider registrations until every factory ran (startup order)
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
        if registry is not None:
            runtime.flush_providers(registry)
    result.providers = list(dict.fromkeys(item.name for item in pending if item.config is not None))
    result.diagnostics = find_conflicts(runtime.extensions)
    return result


__all__ = [
    "ExtensionReloadResult",
    "KeptExtension",
    "ReloadEntry",
    "entries_of",
    "merge_rediscovered",
    "reimport_extensions",
]
