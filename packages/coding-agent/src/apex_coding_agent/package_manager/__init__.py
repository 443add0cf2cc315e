"""Packages: installing and resolving extension/skill/prompt/theme bundles.

- `resolve_packages(settings, agent_dir, cwd, project_trusted)` -> `ResolvedPackages` for the resource loaders;
- `resolve_temporary_sources(sources, agent_dir, cwd)` for CLI `-e <source>`;
- `run_package_command(argv, agent_dir, cwd, out, err)` for `install`/`remove`/`uninstall`/`update`/`list`/`config`;
- `parse_source(text, base_dir)` for the source forms;
- `default_pip_command()`: `python -m pip` when pip is importable, else `uv pip --python <this python>`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_coding_agent._lazy import declared_exports, lazy_exports

if TYPE_CHECKING:
    from apex_coding_agent.package_manager.commands import PACKAGE_COMMANDS as PACKAGE_COMMANDS
    from apex_coding_agent.package_manager.commands import run_package_command as run_package_command
    from apex_coding_agent.package_manager.entries import PackageEntry as PackageEntry
    from apex_coding_agent.package_manager.installer import Installer as Installer
    from apex_coding_agent.package_manager.installer import InstallError as InstallError
    from apex_coding_agent.package_manager.installer import PipCommand as PipCommand
    from apex_coding_agent.package_manager.installer import default_pip_command as default_pip_command
    from apex_coding_agent.package_manager.installer import select_pip_command as select_pip_command
    from apex_coding_agent.package_manager.manifest import RESOURCE_KINDS as RESOURCE_KINDS
    from apex_coding_agent.package_manager.manifest import ResourceKind as ResourceKind
    from apex_coding_agent.package_manager.manifest import package_resources as package_resources
    from apex_coding_agent.package_manager.manifest import read_manifest as read_manifest
    from apex_coding_agent.package_manager.resolve import ResolvedPackage as ResolvedPackage
    from apex_coding_agent.package_manager.resolve import ResolvedPackages as ResolvedPackages
    from apex_coding_agent.package_manager.resolve import ResolvedResource as ResolvedResource
    from apex_coding_agent.package_manager.resolve import resolve_packages as resolve_packages
    from apex_coding_agent.package_manager.resolve import resolve_temporary_sources as resolve_temporary_sources
    from apex_coding_agent.package_manager.sources import GitSource as GitSource
    from apex_coding_agent.package_manager.sources import LocalSource as LocalSource
    from apex_coding_agent.package_manager.sources import ParsedSource as ParsedSource
    from apex_coding_agent.package_manager.sources import PypiSource as PypiSource
    from apex_coding_agent.package_manager.sources import SourceError as SourceError
    from apex_coding_agent.package_manager.sources import UnsupportedSource as UnsupportedSource
    from apex_coding_agent.package_manager.sources import parse_source as parse_source

# Names load on first access (PEP 562): a run resolves packages but never needs the install/remove/list commands.
_EXPORTS = declared_exports(__file__)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = sorted(_EXPORTS)
