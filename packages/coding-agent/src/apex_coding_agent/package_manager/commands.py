"""The package subcommands, run before normal argument parsing.

    apex-code install <source> [-l]          install and add to global (or, with -l, project) settings
    apex-code remove|uninstall <source> [-l] remove from settings and delete what install created
    apex-code update [<source>] [--all|--extensions|--extension <source>]   update unpinned packages
    apex-code list                           configured packages of both settings files
    apex-code config [-l] [--enable|--disable <source> <resource>]   list resources, switch one on or off

`--approve` / `--no-approve` decide project trust without asking; no command ever prompts (so `update` skips project
packages of a project that is not already trusted). `update self`/`--self` and `--models` are reported as not
available here (exit 1): the Python build is upgraded by the tool that installed it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from apex_coding_agent.core.trusted_settings import settings_for_project
from apex_coding_agent.package_manager.entries import PackageEntry, parse_entries
from apex_coding_agent.package_manager.filters import matches_exact
from apex_coding_agent.package_manager.installer import Installer, InstallError, Scope, pip_command_from
from apex_coding_agent.package_manager.manifest import RESOURCE_KINDS
from apex_coding_agent.package_manager.resolve import ResolvedPackage, configured_entries, resolve_entries
from apex_coding_agent.package_manager.settings_io import read_packages, settings_dir, write_packages
from apex_coding_agent.package_manager.sources import (
    LocalSource,
    SourceError,
    UnsupportedSource,
    is_local_path,
    parse_source,
    source_identity,
)

APP_NAME = "apex-code"
PACKAGE_COMMANDS = frozenset({"install", "remove", "uninstall", "update", "list", "config"})
_USAGE = {
    "install": f"{APP_NAME} install <source> [-l]",
    "remove": f"{APP_NAME} remove <source> [-l]",
    "update": f"{APP_NAME} update [<source>|self] [--all|--extensions|--extension <source>]",
    "list": f"{APP_NAME} list",
    "config": f"{APP_NAME} config [-l] [--enable|--disable <source> <resource>]",
}
_HELP = {
    "install": "Install a package and add it to settings.\n\n  -l, --local    project settings (.apex-code/settings.json)\n\n"
    "Sources: pypi:<requirement>, git:host/user/repo[@ref], git:git@host:user/repo[@ref], https://…[@ref],\n"
    "ssh://…, git://…, or a ./local/path",
    "remove": f"Remove a package and its source from settings.\nAlias: {APP_NAME} uninstall <source> [-l]",
    "update": "Update installed packages (pinned ones are skipped). With <source>, only that package.",
    "list": "List configured packages from user and project settings.",
    "config": "List package resources and whether each is enabled; --enable/--disable change one (a path relative\n"
    "to the package root, e.g. skills/review) in the package's settings entry.",
}


class _UsageError(Exception):
    pass


@dataclass
class _Options:
    command: str
    positionals: list[str] = field(default_factory=list)
    local: bool = False
    help: bool = False
    approve: bool | None = None
    update_all: bool = False
    update_self: bool = False
    update_models: bool = False
    toggle: tuple[str, str, str] | None = None


def _parse(argv: list[str]) -> _Options:
    name = "remove" if argv[0] == "uninstall" else argv[0]
    options = _Options(name)
    rest = iter(argv[1:])
    for arg in rest:
        if arg in ("-h", "--help"):
            options.help = True
        elif arg in ("-l", "--local") and name in ("install", "remove", "config"):
            options.local = True
        elif arg in ("--approve", "--no-approve"):
            options.approve = arg == "--approve"
        elif name == "update" and arg in ("--all", "--extensions", "--self", "--models", "--force", "--extension"):
            if arg == "--extension":
                value = next(rest, None)
                if value is None:
                    raise _UsageError("Missing value for --extension.")
                options.positionals.append(value)
            options.update_all |= arg in ("--all", "--extensions")
            options.update_self |= arg == "--self"
            options.update_models |= arg == "--models"
        elif name == "config" and arg in ("--enable", "--disable"):
            source, resource = next(rest, None), next(rest, None)
            if source is None or resource is None:
                raise _UsageError(f"{arg} needs <source> <resource>.")
            options.toggle = (arg[2:], source, resource)
        elif arg.startswith("-") and arg != "-":
            raise _UsageError(f'Unknown option {arg} for "{name}".')
        else:
            options.positionals.append(arg)
    if name == "update" and options.positionals[:1] == ["self"]:
        options.update_self = True
        options.positionals = options.positionals[1:]
    if name in ("install", "remove") and not options.help and not options.positionals:
        raise _UsageError(f"Missing {name} source.")
    return options


@dataclass
class _Context:
    agent_dir: Path
    cwd: Path
    out: TextIO
    err: TextIO
    trusted: bool
    installer: Installer


def _context(options: _Options, agent_dir: Path, cwd: Path, out: TextIO, err: TextIO) -> _Context:
    # A project's pipCommand runs a program, so it counts only for a trusted project.
    settings, trusted = settings_for_project(cwd, agent_dir, err, approve=options.approve)
    installer = Installer(agent_dir, cwd, tuple(pip_command_from(settings.get("pipCommand"))))
    return _Context(agent_dir, cwd, out, err, trusted, installer)


def _stored_source(text: str, scope: Scope, ctx: _Context) -> str:
    """The text saved in settings: a relative local path is re-based from the cwd onto the settings file's dir."""
    text = text.strip()
    if not is_local_path(text) or os.path.isabs(os.path.expanduser(text)):
        return text
    absolute = (ctx.cwd / text).resolve()
    relative = os.path.relpath(absolute, settings_dir(scope, ctx.agent_dir, ctx.cwd))
    return relative if relative.startswith("..") else f"./{relative}"


def _entries(scope: Scope, ctx: _Context) -> list[PackageEntry]:
    entries, _ = parse_entries(read_packages(scope, ctx.agent_dir, ctx.cwd), scope, _base(scope, ctx))
    return entries


def _base(scope: Scope, ctx: _Context) -> Path:
    return settings_dir(scope, ctx.agent_dir, ctx.cwd)


def _install(options: _Options, ctx: _Context) -> int:
    text = options.positionals[0]
    scope: Scope = "project" if options.local else "user"
    parsed = parse_source(text, ctx.cwd)
    if isinstance(parsed, UnsupportedSource):
        ctx.err.write(f"Error: {text}: {parsed.reason}\n")
        return 1
    ctx.installer.install(parsed, scope)
    stored = _stored_source(text, scope, ctx)
    raws = read_packages(scope, ctx.agent_dir, ctx.cwd)
    identity = parsed.identity
    updated: list[Any] = []
    placed = False
    for raw, entry in zip(raws, _raw_entries(raws, scope, ctx), strict=True):
        if entry is not None and entry.identity == identity:
            if not placed:
                updated.append({**raw, "source": stored} if isinstance(raw, dict) else stored)
                placed = True
            continue
        updated.append(raw)
    if not placed:
        updated.append(stored)
    write_packages(scope, ctx.agent_dir, ctx.cwd, updated)
    ctx.out.write(f"Installed {text}\n")
    return 0


def _raw_entries(raws: list[Any], scope: Scope, ctx: _Context) -> list[PackageEntry | None]:
    out: list[PackageEntry | None] = []
    for raw in raws:
        entries, _ = parse_entries([raw], scope, _base(scope, ctx))
        out.append(entries[0] if entries else None)
    return out


def _remove(options: _Options, ctx: _Context) -> int:
    text = options.positionals[0]
    scope: Scope = "project" if options.local else "user"
    identity = source_identity(text, ctx.cwd)
    raws = read_packages(scope, ctx.agent_dir, ctx.cwd)
    kept: list[Any] = []
    removed: list[PackageEntry] = []
    for raw, entry in zip(raws, _raw_entries(raws, scope, ctx), strict=True):
        if entry is not None and (entry.identity == identity or entry.source == text.strip()):
            removed.append(entry)
        else:
            kept.append(raw)
    if not removed:
        ctx.err.write(f"No matching package found for {text}\n")
        return 1
    write_packages(scope, ctx.agent_dir, ctx.cwd, kept)
    for entry in removed:
        try:
            ctx.installer.remove(parse_source(entry.source, entry.base_dir), scope)
        except SourceError:
            pass
    ctx.out.write(f"Removed {text}\n")
    return 0


def _update(options: _Options, ctx: _Context) -> int:
    status = 0
    if options.update_self or options.update_models:
        what = "self-update" if options.update_self else "model catalog update"
        ctx.err.write(
            f"Error: {what} is not available from {APP_NAME}; upgrade with the tool that installed it "
            f"(e.g. `uv tool upgrade {APP_NAME}`).\n"
        )
        status = 1
        if not (options.update_all or options.positionals):
            return status
    entries = _entries("user", ctx)
    if ctx.trusted:
        entries = _entries("project", ctx) + entries
    elif _entries("project", ctx):
        ctx.err.write("Skipping project packages: the project is not trusted (use --approve).\n")
    wanted = [source_identity(text, ctx.cwd) for text in options.positionals]
    for text, identity in zip(options.positionals, wanted, strict=True):
        if not any(entry.identity == identity or entry.source == text for entry in entries):
            ctx.err.write(f"No matching package found for {text}\n")
            return 1
    failed = False
    for entry in entries:
        if wanted and entry.identity not in wanted and entry.source not in options.positionals:
            continue
        try:
            parsed = parse_source(entry.source, entry.base_dir)
            if isinstance(parsed, UnsupportedSource | LocalSource):
                continue
            if wanted and parsed.pinned:
                # Named explicitly: a pinned package is brought to (and re-installed at) its pin.
                ctx.installer.install(parsed, entry.scope)
            else:
                ctx.installer.update(parsed, entry.scope)
        except (InstallError, SourceError) as exc:
            ctx.err.write(f"Error: {entry.source}: {exc}\n")
            failed = True
    if not failed:
        ctx.out.write(f"Updated {', '.join(options.positionals)}\n" if wanted else "Updated packages\n")
    return 1 if failed else status


def _list(ctx: _Context) -> int:
    groups = [("User packages:", _entries("user", ctx)), ("Project packages:", _entries("project", ctx))]
    if not any(entries for _, entries in groups):
        ctx.out.write("No packages installed.\n")
        return 0
    first = True
    for title, entries in groups:
        if not entries:
            continue
        if not first:
            ctx.out.write("\n")
        first = False
        ctx.out.write(f"{title}\n")
        for entry in entries:
            ctx.out.write(f"  {entry.source}{' (filtered)' if entry.filtered else ''}\n")
            try:
                parsed = parse_source(entry.source, entry.base_dir)
            except SourceError:
                continue
            path = ctx.installer.install_path(parsed, entry.scope)
            if path is not None:
                state = (
                    ""
                    if isinstance(parsed, LocalSource) or ctx.installer.is_installed(parsed, entry.scope)
                    else (" (not installed)")
                )
                ctx.out.write(f"    {path}{state}\n")
    return 0


def _config(options: _Options, ctx: _Context) -> int:
    user, warnings = configured_entries(
        {"packages": read_packages("user", ctx.agent_dir, ctx.cwd)}, {}, ctx.agent_dir, ctx.cwd, False
    )
    project = _entries("project", ctx)
    for warning in warnings:
        ctx.err.write(f"Warning: {warning}\n")
    scope: Scope = "project" if options.local else "user"
    if options.toggle is not None:
        return _toggle(options.toggle, scope, ctx)
    shown = project if options.local else user
    resolved = resolve_entries(shown, ctx.installer, install_missing=False)
    for warning in resolved.warnings:
        ctx.err.write(f"Warning: {warning}\n")
    if not resolved.packages:
        ctx.out.write("No packages installed.\n")
        return 0
    for package in resolved.packages:
        ctx.out.write(f"{package.entry.source}\n")
        if package.root is None:
            ctx.out.write("  (not installed)\n")
            continue
        base = package.root if package.root.is_dir() else package.root.parent
        for kind in RESOURCE_KINDS:
            if not package.available.get(kind):
                continue
            ctx.out.write(f"  {kind}:\n")
            for path in package.available[kind]:
                mark = "x" if path in package.enabled[kind] else " "
                ctx.out.write(f"    [{mark}] {Path(os.path.relpath(path, base)).as_posix()}\n")
    return 0


def _is_toggle_of(pattern: str, name: str) -> bool:
    return pattern[:1] in ("+", "-") and pattern[1:].removeprefix("./").rstrip("/") == name


def _toggle(toggle: tuple[str, str, str], scope: Scope, ctx: _Context) -> int:
    action, text, resource = toggle
    identity = source_identity(text, ctx.cwd)
    raws = read_packages(scope, ctx.agent_dir, ctx.cwd)
    entries = _raw_entries(raws, scope, ctx)
    index = next((i for i, e in enumerate(entries) if e is not None and e.identity == identity), None)
    if index is None:
        ctx.err.write(f"No matching package found for {text}\n")
        return 1
    entry = entries[index]
    assert entry is not None  # found by the search above
    resolved = resolve_entries([entry], ctx.installer, install_missing=False)
    package: ResolvedPackage | None = resolved.packages[0] if resolved.packages else None
    if package is None or package.root is None:
        ctx.err.write(f"Package {text} is not installed\n")
        return 1
    base = package.root if package.root.is_dir() else package.root.parent
    kind = next(
        (k for k in RESOURCE_KINDS if any(matches_exact(p, resource, base) for p in package.available[k])), None
    )
    if kind is None:
        ctx.err.write(f"No resource {resource} in package {text}\n")
        return 1
    raw = raws[index]
    obj: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {"source": raw}
    name = resource.strip().removeprefix("./").rstrip("/")
    original = obj.get(kind) if kind in obj else (None if obj.get("autoload") is not False else [])
    current = [p for p in original or [] if isinstance(p, str) and not _is_toggle_of(p, name)]
    if action == "enable":
        # `[]` means "none", and `+x` alone would mean "all": say "only x" instead.
        obj[kind] = [name] if original == [] else [*current, f"+{name}"]
    else:
        obj[kind] = [*current, f"-{name}"]
    raws[index] = obj
    write_packages(scope, ctx.agent_dir, ctx.cwd, raws)
    ctx.out.write(f"{'Enabled' if action == 'enable' else 'Disabled'} {kind[:-1]} {name} in {text}\n")
    return 0


def run_package_command(
    argv: list[str], agent_dir: str | os.PathLike[str], cwd: str | os.PathLike[str], out: TextIO, err: TextIO
) -> int:
    """Run one package subcommand (`argv[0]` in `PACKAGE_COMMANDS`); returns the process exit code."""
    if not argv or argv[0] not in PACKAGE_COMMANDS:
        raise ValueError(f"not a package command: {argv[:1]}")
    try:
        options = _parse(argv)
    except _UsageError as exc:
        name = "remove" if argv[0] == "uninstall" else argv[0]
        err.write(f"{exc}\nUsage: {_USAGE[name]}\n")
        return 1
    if options.help:
        out.write(f"Usage:\n  {_USAGE[options.command]}\n\n{_HELP[options.command]}\n")
        return 0
    ctx = _context(options, Path(agent_dir), Path(cwd), out, err)
    try:
        if options.command == "install":
            return _install(options, ctx)
        if options.command == "remove":
            return _remove(options, ctx)
        if options.command == "update":
            return _update(options, ctx)
        if options.command == "list":
            return _list(ctx)
        return _config(options, ctx)
    except (InstallError, SourceError, ValueError, OSError) as exc:
        err.write(f"Error: {exc}\n")
        return 1


__all__ = ["PACKAGE_COMMANDS", "run_package_command"]
