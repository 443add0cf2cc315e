"""Finding and importing extensions.

Discovery (`discover_extension_sources`), in load order: global `<agentDir>/extensions`, settings paths,
then — only when the project is trusted — project `.apex-code/extensions`, and CLI `-e` paths (loaded even
with `--no-extensions`, which skips the other three). In an extensions directory, each `*.py` file is an
extension, and each sub-directory with `pyproject.toml` `[tool.pi] extensions = [...]` (paths relative to it)
or with `__init__.py` (the directory itself, imported as a package so relative imports work).

Hosts that must ask `project_trust` handlers first (startup order) call
`load_extensions` twice on one runtime: global/settings/CLI sources, then project sources once trusted.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import re
import sys
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from apex_coding_agent.extensions.api import ExtensionAPI, ExtensionRuntime, assign_invocation_names
from apex_coding_agent.extensions.types import Extension
from apex_coding_agent.resources.diagnostics import Scope, SourceInfo

PROJECT_EXTENSIONS_DIR = Path(".apex-code") / "extensions"
MODULE_PREFIX = "apex_code_extension_"

ExtensionFactory = Callable[[ExtensionAPI], "Awaitable[None] | None"]
"""`extension(pi)`: sync or async; registers things on `pi` and starts no background work."""

_module_counter = itertools.count(1)
_inline_counter = itertools.count(1)


@dataclass(frozen=True)
class InlineExtension:
    """An extension given as a factory (SDK `extension_factories`, built-ins). Unnamed → `<inline:N>`."""

    factory: ExtensionFactory
    name: str | None = None
    hidden: bool = False
    """Hidden extensions (the built-in llama.cpp one) are never listed under `[Extensions]`."""


@dataclass(frozen=True)
class ExtensionSource:
    """A file or package directory to import, and where it came from."""

    path: Path
    source_info: SourceInfo


@dataclass(frozen=True)
class ExtensionLoadError:
    """`{path, error}`; `error` ends with the innermost traceback location inside the extension."""

    path: str
    error: str
    location: str | None = None

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "error": self.error}

    def message(self) -> str:
        """The CLI's startup failure line."""
        return f'Failed to load extension "{self.path}": {self.error}'


@dataclass(frozen=True)
class ExtensionDiagnostic:
    """A conflict between extensions (same tool name or flag); the first registration is kept."""

    type: Literal["conflict"]
    message: str
    path: str


@dataclass
class LoadExtensionsResult:
    extensions: list[Extension] = field(default_factory=list)
    errors: list[ExtensionLoadError] = field(default_factory=list)
    diagnostics: list[ExtensionDiagnostic] = field(default_factory=list)


# --------------------------------------------------------------------------- discovery


def _pyproject_entries(directory: Path) -> list[Path] | None:
    """`[tool.pi] extensions` of `directory/pyproject.toml`, or None when it declares none."""
    pyproject = directory / "pyproject.toml"
    if not pyproject.is_file():
        return None
    # Imported here: tomllib is needed only when a pyproject.toml is there to read.
    import tomllib

    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    tool = data.get("tool")
    pi = tool.get("pi") if isinstance(tool, dict) else None
    entries = pi.get("extensions") if isinstance(pi, dict) else None
    if not isinstance(entries, list):
        return None
    return [(directory / str(entry)).resolve() for entry in entries]


def _entries_of_dir(directory: Path) -> list[Path] | None:
    """The extension entry points a directory declares itself (pyproject or package), or None."""
    declared = _pyproject_entries(directory)
    if declared is not None:
        return declared
    if (directory / "__init__.py").is_file():
        return [directory]
    return None


def discover_in_dir(directory: Path) -> list[Path]:
    """Extensions inside an extensions directory, sorted by name (see the module docstring)."""
    if not directory.is_dir():
        return []
    found: list[Path] = []
    for child in sorted(directory.iterdir(), key=lambda p: p.name):
        if child.name.startswith((".", "_")):
            continue
        if child.is_file() and child.suffix == ".py":
            found.append(child)
        elif child.is_dir():
            found.extend(_entries_of_dir(child) or [])
    return found


def resolve_extension_path(path: Path) -> list[Path]:
    """A settings/CLI path: a file, an extension directory (pyproject/package) or a directory of extensions."""
    if path.is_dir():
        own = _entries_of_dir(path)
        return own if own is not None else discover_in_dir(path)
    return [path]


def discover_extension_sources(
    *,
    cwd: str | Path,
    agent_dir: str | Path,
    project_trusted: bool,
    settings_paths: Sequence[tuple[str | Path, Scope]] = (),
    cli_paths: Sequence[str | Path] = (),
    no_extensions: bool = False,
    include_global: bool = True,
    include_project: bool = True,
) -> list[ExtensionSource]:
    """Sources in load order; `include_global`/`include_project` select the phase (see the module docstring).

    `settings_paths` are `(path, scope)` pairs, relative paths resolved against the agent dir (user scope) or
    the cwd (project scope). Project-scoped settings paths are skipped unless the project is trusted.
    """
    root = Path(cwd)
    agent = Path(agent_dir)
    sources: list[ExtensionSource] = []

    def add(paths: Sequence[Path], source: str, scope: Scope) -> None:
        sources.extend(ExtensionSource(p, SourceInfo(p, source, scope)) for p in paths)

    if not no_extensions and include_global:
        add(discover_in_dir(agent / "extensions"), "local", "user")
        for raw, scope in settings_paths:
            if scope == "user":
                add(resolve_extension_path(_absolute(raw, agent)), "local", scope)
    if not no_extensions and include_project and project_trusted:
        add(discover_in_dir(root / PROJECT_EXTENSIONS_DIR), "local", "project")
        for raw, scope in settings_paths:
            if scope == "project":
                add(resolve_extension_path(_absolute(raw, root / ".apex-code")), "local", scope)
    if include_global:
        for raw in cli_paths:
            add(resolve_extension_path(_absolute(raw, root)), "cli", "temporary")
    return _dedupe(sources)


def _absolute(raw: str | Path, base: Path) -> Path:
    path = Path(raw).expanduser()
    return (path if path.is_absolute() else base / path).resolve()


def _dedupe(sources: list[ExtensionSource]) -> list[ExtensionSource]:
    seen: set[Path] = set()
    out: list[ExtensionSource] = []
    for source in sources:
        key = source.path.resolve()
        if key not in seen:
            seen.add(key)
            out.append(source)
    return out


# --------------------------------------------------------------------------- import


def _module_name(path: Path) -> str:
    stem = re.sub(r"\W", "_", path.stem if path.is_file() else path.name)
    return f"{MODULE_PREFIX}{next(_module_counter)}_{stem}"


def import_extension_module(path: Path) -> ModuleType:
    """Import `path` (a `.py` file, or a package directory) under a fresh unique module name."""
    name = _module_name(path)
    if path.is_dir():
        init = path / "__init__.py"
        if not init.is_file():
            raise ImportError(f"Extension directory has no __init__.py: {path}")
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(path)])
    elif path.is_file():
        spec = importlib.util.spec_from_file_location(name, path)
    else:
        raise FileNotFoundError(f"Extension not found: {path}")
    if spec is None or spec.loader is None:
        raise ImportError(f"Cannot import extension: {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered before executing: relative imports and dataclass/pydantic annotation lookups need it.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _location(exc: BaseException, path: Path | None) -> str | None:
    """The innermost traceback frame inside the extension's own files (else the innermost frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    own_root = str(path if path.is_dir() else path.parent) if path is not None else None
    inside = [f for f in frames if own_root is not None and f.filename.startswith(own_root)]
    frame = inside[-1] if inside else (frames[-1] if frames else None)
    return f"{frame.filename}:{frame.lineno}" if frame is not None else None


def _error_text(exc: BaseException, location: str | None) -> str:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return f"{text} (at {location})" if location else text


async def _run_factory(factory: ExtensionFactory, pi: ExtensionAPI) -> None:
    result = factory(pi)
    if inspect.isawaitable(result):
        await result


async def load_extensions(
    sources: Sequence[ExtensionSource] = (),
    runtime: ExtensionRuntime | None = None,
    *,
    inline: Sequence[InlineExtension] = (),
) -> tuple[ExtensionRuntime, LoadExtensionsResult]:
    """Import each source and run its `extension(pi)`, then the inline factories; append to `runtime`.

    Never raises for a broken extension: errors are collected and the others still load. Conflicts are
    reported over every extension of the runtime (including earlier phases).
    """
    runtime = runtime if runtime is not None else ExtensionRuntime()
    result = LoadExtensionsResult()
    loaded = {e.resolved_path for e in runtime.extensions}
    for source in sources:
        resolved = str(source.path.resolve())
        if resolved in loaded:
            continue
        loaded.add(resolved)
        extension = Extension(path=str(source.path), resolved_path=resolved, source_info=source.source_info)
        try:
            module = import_extension_module(source.path)
            factory: Any = getattr(module, "extension", None)  # Any: whatever the module defines
            if not callable(factory):
                raise TypeError('Extension does not export a callable "extension(pi)"')
            await _run_factory(factory, ExtensionAPI(extension, runtime))
        except Exception as exc:  # a broken extension is reported; the others still load
            location = _location(exc, source.path)
            result.errors.append(ExtensionLoadError(str(source.path), _error_text(exc, location), location))
            continue
        runtime.extensions.append(extension)
        result.extensions.append(extension)
    for item in inline:
        label = item.name or f"<inline:{next(_inline_counter)}>"
        info = SourceInfo(Path(label), "sdk", "temporary")
        extension = Extension(path=label, resolved_path=label, source_info=info, hidden=item.hidden)
        try:
            await _run_factory(item.factory, ExtensionAPI(extension, runtime))
        except Exception as exc:  # same policy as file extensions
            location = _location(exc, _factory_file(item.factory))
            result.errors.append(ExtensionLoadError(label, _error_text(exc, location), location))
            continue
        runtime.extensions.append(extension)
        result.extensions.append(extension)
    assign_invocation_names(runtime.extensions)
    result.diagnostics.extend(find_conflicts(runtime.extensions))
    return runtime, result


def find_conflicts(extensions: Sequence[Extension]) -> list[ExtensionDiagnostic]:
    """Same tool name or flag registered by more than one extension (the first one wins)."""
    out: list[ExtensionDiagnostic] = []
    for kind in ("tool", "flag"):
        owners: dict[str, str] = {}
        for extension in extensions:
            names = extension.tools if kind == "tool" else extension.flags
            for name in names:
                first = owners.setdefault(name, extension.path)
                if first != extension.path:
                    message = f'{kind.capitalize()} "{name}" conflicts with {first}'
                    out.append(ExtensionDiagnostic("conflict", message, extension.path))
    return out


def _factory_file(factory: object) -> Path | None:
    """Where an inline factory is defined; a callable object is looked up through its class."""
    for candidate in (factory, type(factory)):
        try:
            return Path(inspect.getfile(candidate))  # type: ignore[arg-type]  # getfile raises TypeError otherwise
        except (TypeError, OSError):
            continue
    return None


__all__ = [
    "PROJECT_EXTENSIONS_DIR",
    "ExtensionDiagnostic",
    "ExtensionFactory",
    "ExtensionLoadError",
    "ExtensionSource",
    "InlineExtension",
    "LoadExtensionsResult",
    "discover_extension_sources",
    "discover_in_dir",
    "find_conflicts",
    "import_extension_module",
    "load_extensions",
    "resolve_extension_path",
]
