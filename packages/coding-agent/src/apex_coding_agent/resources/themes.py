"""Theme discovery: which theme files exist, and which theme the `theme` setting selects.

The colours themselves belong to the TUI (`apex_tui.theme.parse_theme` checks every token); here each JSON file is
read and checked only for the shape the coding agent can judge: an object with a string `name` (no `/`, unique
across all locations), a `colors` object, and `vars`/`export` objects when present.

Precedence (the first theme of a name wins; later ones give a collision diagnostic naming both files):
1. the built-ins `dark` and `light` (their data lives in the TUI; a file cannot replace them);
2. CLI `--theme <path>` (file or directory), loaded even with `--no-themes`;
3. project themes (trusted projects only): `.apex-code/themes/*.json`, then project settings `themes`;
4. user themes: `<agentDir>/themes/*.json`, then global settings `themes`;
5. package themes handed in by the package manager (project packages only when trusted).

`--no-themes` turns off 3-5. Settings entries use the same path/glob/`!x`/`+x`/`-x` syntax as `skills`/`prompts`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias

from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.resources._scan import first_of_each_name, list_resource_files
from apex_coding_agent.resources.diagnostics import ResourceDiagnostic, Scope

# Shared with the skills/prompts loader so the settings-entry syntax cannot drift between resource kinds.
from apex_coding_agent.resources.loader import PackageResource, _parse_settings_entries, _resolve, _SettingsFilter

BUILTIN_THEME_NAMES: tuple[str, ...] = ("dark", "light")
DEFAULT_THEME = "dark"
PROJECT_DIR = ".apex-code"

ThemeScope: TypeAlias = Scope | Literal["builtin"]


@dataclass(frozen=True)
class ThemeSource:
    """One available theme. Built-ins have `path`/`data` None (the TUI holds their colours); files carry their
    parsed JSON object for `apex_tui.theme.parse_theme`.

    `source` is `"builtin"`, `"local"` (discovered or settings), `"cli"` (`--theme`), or a package source.
    """

    name: str
    path: Path | None
    # JSON of a theme file: an object whose values the TUI validates, so their types are open here.
    data: dict[str, Any] | None
    scope: ThemeScope
    source: str = "local"


@dataclass
class ThemeLoadResult:
    themes: list[ThemeSource] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        """Each problem as `<file>: <message>`."""
        return [str(diagnostic) for diagnostic in self.diagnostics]

    def names(self) -> list[str]:
        return [theme.name for theme in self.themes]

    def find(self, name: str) -> ThemeSource | None:
        return next((theme for theme in self.themes if theme.name == name), None)


class ThemeArgs(Protocol):
    """The parsed command line as far as themes go (`cli.args.Args` has these fields)."""

    @property
    def themes(self) -> Sequence[str]: ...
    @property
    def no_themes(self) -> bool: ...


@dataclass(frozen=True)
class ThemeFlags:
    """`--theme <path>` (repeatable) and `--no-themes`."""

    paths: tuple[str, ...] = ()
    no_themes: bool = False

    @classmethod
    def from_args(cls, args: ThemeArgs) -> ThemeFlags:
        return cls(tuple(args.themes), args.no_themes)


def builtin_theme_sources() -> list[ThemeSource]:
    return [ThemeSource(name, None, None, "builtin", "builtin") for name in BUILTIN_THEME_NAMES]


def _shape_problem(data: dict[str, Any]) -> str | None:
    """Why the JSON object `data` is not a theme the coding agent can accept, or None."""
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        return 'theme is missing a "name" string'
    if "/" in name:
        return f'theme name "{name}" must not contain "/"'
    if not isinstance(data.get("colors"), dict):
        return 'theme is missing a "colors" object'
    for key in ("vars", "export"):
        if key in data and not isinstance(data[key], dict):
            return f'theme "{key}" must be an object'
    return None


def load_theme_file(path: Path, scope: Scope, source: str) -> ThemeLoadResult:
    """Read one theme file; unreadable, non-JSON or wrongly shaped files give a warning naming the file."""
    result = ThemeLoadResult()
    try:
        data: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        result.diagnostics.append(ResourceDiagnostic("warning", f"could not read theme: {exc}", path))
        return result
    except json.JSONDecodeError as exc:
        result.diagnostics.append(ResourceDiagnostic("warning", f"invalid theme JSON: {exc}", path))
        return result
    if not isinstance(data, dict):
        result.diagnostics.append(ResourceDiagnostic("warning", "theme file must contain a JSON object", path))
        return result
    problem = _shape_problem(data)
    if problem is not None:
        result.diagnostics.append(ResourceDiagnostic("warning", problem, path))
        return result
    result.themes.append(ThemeSource(str(data["name"]), path, data, scope, source))
    return result


def load_themes_from_dir(directory: Path, scope: Scope, source: str) -> ThemeLoadResult:
    """The `*.json` files directly in `directory` (not recursive, dotfiles skipped), sorted by file name."""
    files, diagnostics = list_resource_files(directory, ".json", "themes", skip_hidden=True)
    result = ThemeLoadResult([], diagnostics)
    for path in files:
        loaded = load_theme_file(path, scope, source)
        result.themes.extend(loaded.themes)
        result.diagnostics.extend(loaded.diagnostics)
    return result


def load_themes_from_path(path: Path, scope: Scope, source: str) -> ThemeLoadResult:
    """An explicit path (`--theme`, settings, package): a theme file or a directory of them."""
    if path.is_dir():
        return load_themes_from_dir(path, scope, source)
    if path.is_file():
        return load_theme_file(path, scope, source)
    return ThemeLoadResult([], [ResourceDiagnostic("error", "theme path does not exist", path)])


def dedupe_themes(groups: Iterable[ThemeLoadResult]) -> ThemeLoadResult:
    """Merge in order: the first theme of a name wins; the same file reached twice counts once."""
    themes, diagnostics = first_of_each_name(
        ((group.themes, group.diagnostics) for group in groups),
        lambda theme: theme.name,
        lambda theme: theme.path,
        _theme_collision,
    )
    return ThemeLoadResult(themes, diagnostics)


def _theme_collision(winner: ThemeSource, loser: ThemeSource) -> ResourceDiagnostic:
    where = "the built-in theme" if winner.path is None else str(winner.path)
    message = f'theme name "{loser.name}" collides with {where}; keeping the first one'
    return ResourceDiagnostic("collision", message, loser.path)


def _of_scope(scope: Scope, directory: Path, entries: _SettingsFilter) -> ThemeLoadResult:
    # The auto-discovered directory comes before the settings paths of the same scope.
    merged = load_themes_from_dir(directory, scope, "local")
    for path in entries.paths:
        found = load_themes_from_path(path, scope, "local")
        merged.themes.extend(found.themes)
        merged.diagnostics.extend(found.diagnostics)
    merged.themes = [t for t in merged.themes if t.path is None or entries.keeps(t.path)]
    return merged


def discover_themes(
    cwd: str | Path,
    agent_dir: str | Path,
    settings: SettingsManager,
    *,
    project_trusted: bool,
    flags: ThemeFlags | None = None,
    package_themes: Sequence[PackageResource] = (),
) -> ThemeLoadResult:
    """Every theme of the session in precedence order (see the module docstring), built-ins first.

    `package_themes` is `ResolvedPackages.loader_resources("themes")`. `--theme` paths are relative to `cwd`.
    """
    root = Path(cwd)
    agent = Path(agent_dir)
    flags = flags or ThemeFlags()
    groups = [ThemeLoadResult(builtin_theme_sources())]
    groups.extend(load_themes_from_path(_resolve(entry, root), "temporary", "cli") for entry in flags.paths)
    if not flags.no_themes:
        if project_trusted:
            project_entries = _parse_settings_entries(settings.project_settings.get("themes"), root)
            groups.append(_of_scope("project", root / PROJECT_DIR / "themes", project_entries))
        user_entries = _parse_settings_entries(settings.global_settings.get("themes"), agent)
        groups.append(_of_scope("user", agent / "themes", user_entries))
        for package in package_themes:
            if package.scope == "project" and not project_trusted:
                continue
            groups.append(load_themes_from_path(package.path, package.scope, package.source))
    return dedupe_themes(groups)


@dataclass(frozen=True)
class ThemeChoice:
    """The theme to activate; `warning` (without the `Warning: ` prefix) when the setting named no known theme."""

    theme: ThemeSource
    warning: str | None = None

    @property
    def warning_line(self) -> str | None:
        return f"Warning: {self.warning}" if self.warning is not None else None


def select_theme(setting: object, available: ThemeLoadResult | Sequence[ThemeSource]) -> ThemeChoice:
    """The theme the `theme` setting names; unset → `dark`; an unknown name (`apex` included) → `dark` + warning."""
    themes = available.themes if isinstance(available, ThemeLoadResult) else list(available)
    fallback = next((t for t in themes if t.name == DEFAULT_THEME), builtin_theme_sources()[0])
    if setting is None or setting == "":
        return ThemeChoice(fallback)
    if isinstance(setting, str):
        found = next((t for t in themes if t.name == setting), None)
        if found is not None:
            return ThemeChoice(found)
        return ThemeChoice(fallback, f'Theme "{setting}" not found; using "{DEFAULT_THEME}"')
    return ThemeChoice(fallback, f'Setting "theme" must be a theme name; using "{DEFAULT_THEME}"')


__all__ = [
    "BUILTIN_THEME_NAMES",
    "DEFAULT_THEME",
    "ThemeChoice",
    "ThemeFlags",
    "ThemeLoadResult",
    "ThemeScope",
    "ThemeSource",
    "builtin_theme_sources",
    "dedupe_themes",
    "discover_themes",
    "load_theme_file",
    "load_themes_from_dir",
    "load_themes_from_path",
    "select_theme",
]
