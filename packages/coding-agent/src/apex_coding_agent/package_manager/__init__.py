"""Packages: installing and resolving extension/skill/prompt/theme bundles.

- `resolve_packages(settings, agent_dir, cwd, project_trusted)` -> `ResolvedPackages` for the resource loaders;
- `resolve_temporary_sources(sources, agent_dir, cwd)` for CLI `-e <source>`;
- `run_package_command(argv, agent_dir, cwd, out, err)` for `install`/`remove`/`uninstall`/`update`/`list`/`config`;
- `parse_source(text, base_dir)` for the source forms;
- `default_pip_command()`: `python -m pip` when pip is importable, else `uv pip --python <this python>`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_coding_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from .commands import PACKAGE_COMMANDS, run_package_command
    from .entries import PackageEntry
    from .installer import Installer, InstallError, PipCommand, default_pip_command, select_pip_command
    from .manifest import RESOURCE_KINDS, ResourceKind, package_resources, read_manifest
    from .resolve import (
        ResolvedPackage,
        ResolvedPackages,
        ResolvedResource,
        resolve_packages,
        resolve_temporary_sources,
    )
    from .sources import (
        GitSource,
        LocalSource,
        ParsedSource,
        PypiSource,
        SourceError,
        UnsupportedSource,
        parse_source,
    )

# Names load on first access (PEP 562): a run resolves packages but never needs the install/remove/list commands.
_EXPORTS: dict[str, str] = {
    "PACKAGE_COMMANDS": ".commands",
    "run_package_command": ".commands",
    "PackageEntry": ".entries",
    "InstallError": ".installer",
    "Installer": ".installer",
    "PipCommand": ".installer",
    "default_pip_command": ".installer",
    "select_pip_command": ".installer",
    "RESOURCE_KINDS": ".manifest",
    "ResourceKind": ".manifest",
    "package_resources": ".manifest",
    "read_manifest": ".manifest",
    "ResolvedPackage": ".resolve",
    "ResolvedPackages": ".resolve",
    "ResolvedResource": ".resolve",
    "resolve_packages": ".resolve",
    "resolve_temporary_sources": ".resolve",
    "GitSource": ".sources",
    "LocalSource": ".sources",
    "ParsedSource": ".sources",
    "PypiSource": ".sources",
    "SourceError": ".sources",
    "UnsupportedSource": ".sources",
    "parse_source": ".sources",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "PACKAGE_COMMANDS",
    "RESOURCE_KINDS",
    "GitSource",
    "InstallError",
    "Installer",
    "LocalSource",
    "PackageEntry",
    "ParsedSource",
    "PipCommand",
    "PypiSource",
    "ResolvedPackage",
    "ResolvedPackages",
    "ResolvedResource",
    "ResourceKind",
    "SourceError",
    "UnsupportedSource",
    "default_pip_command",
    "package_resources",
    "parse_source",
    "read_manifest",
    "resolve_packages",
    "resolve_temporary_sources",
    "run_package_command",
    "select_pip_command",
]
