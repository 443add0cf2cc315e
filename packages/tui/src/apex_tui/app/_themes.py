"""Themes of the running app: discovery, the active theme, and hot reload.

`ThemeCatalog` asks the coding agent which theme files exist (built-ins, `--theme`, trusted project, agent dir,
packages) and turns a name into a `Theme` with `apex_tui.theme.parse_theme`; built-ins are the shared
`builtin_theme` objects. A file that fails the TUI's colour checks is reported once and replaced by `dark`.

`ThemeWatcher` re-reads the active theme file when its modification time changes. The app polls it from a main-loop
alarm every `POLL_SECONDS` (one `stat` call; nothing is scheduled while a built-in is active).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from apex_coding_agent import (
    DEFAULT_THEME,
    PackageResource,
    SettingsManager,
    ThemeFlags,
    ThemeLoadResult,
    ThemeSource,
    discover_themes,
    load_theme_file,
    select_theme,
)
from apex_tui.theme import Theme, ThemeError, builtin_theme, builtin_theme_names, parse_theme

POLL_SECONDS = 1.0


class ThemeCatalog:
    """The themes of one session, in precedence order; `warnings` holds discovery and colour problems."""

    def __init__(
        self,
        cwd: str | Path,
        agent_dir: str | Path,
        settings: SettingsManager,
        *,
        flags: ThemeFlags | None = None,
        package_themes: Sequence[PackageResource] = (),
    ) -> None:
        self.cwd = cwd
        self.agent_dir = agent_dir
        self.settings = settings
        self.flags = flags
        self.package_themes = tuple(package_themes)
        self.result = ThemeLoadResult()
        self.warnings: list[str] = []
        self.reload()

    def reload(self) -> None:
        """Discover again (after `/reload` or a settings change)."""
        self.result = discover_themes(
            self.cwd,
            self.agent_dir,
            self.settings,
            project_trusted=self.settings.project_trusted,
            flags=self.flags,
            package_themes=self.package_themes,
        )
        self.warnings = list(self.result.warnings)

    def names(self) -> list[str]:
        """Every theme name, built-ins first."""
        return self.result.names()

    def sources(self) -> list[ThemeSource]:
        """Every theme, built-ins first."""
        return list(self.result.themes)

    def source(self, name: str) -> ThemeSource | None:
        """The theme called `name`, if any."""
        return self.result.find(name)

    def theme(self, name: str) -> Theme:
        """The `Theme` called `name`; unknown names and files with bad colours give `dark` (and a warning)."""
        found = self.result.find(name)
        if found is None:
            if name in builtin_theme_names():
                return builtin_theme(name)
            self.warnings.append(f'Theme "{name}" not found; using "{DEFAULT_THEME}"')
            return builtin_theme(DEFAULT_THEME)
        return self.parse(found)

    def parse(self, source: ThemeSource) -> Theme:
        """`source` as a `Theme` (`dark` plus a warning when its colours do not check out)."""
        if source.data is None:
            return builtin_theme(source.name if source.name in builtin_theme_names() else DEFAULT_THEME)
        try:
            return parse_theme(source.data, source=str(source.path))
        except ThemeError as exc:
            self.warnings.append(f'{exc}; using "{DEFAULT_THEME}"')
            return builtin_theme(DEFAULT_THEME)

    def select(self, setting: object) -> tuple[Theme, str | None]:
        """The theme the `theme` setting names and, when it names none, the fallback warning (without prefix)."""
        choice = select_theme(setting, self.result)
        return self.parse(choice.theme), choice.warning


class ThemeWatcher:
    """Reloads the active theme file when it changes on disk; see the module docstring."""

    def __init__(self, on_change: Callable[[Theme], None], on_error: Callable[[str], None]) -> None:
        self._on_change = on_change
        self._on_error = on_error
        self.path: Path | None = None
        self._stamp: tuple[int, int] | None = None

    @staticmethod
    def _stat(path: Path) -> tuple[int, int] | None:
        try:
            info = os.stat(path)
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size)

    def watch(self, source: ThemeSource | None) -> None:
        """Watch `source`'s file (None or a built-in: watch nothing)."""
        self.path = source.path if source is not None else None
        self._stamp = self._stat(self.path) if self.path is not None else None

    def poll(self) -> bool:
        """Reload when the file changed since the last look; True when a new theme was applied."""
        if self.path is None:
            return False
        stamp = self._stat(self.path)
        if stamp is None or stamp == self._stamp:
            return False
        self._stamp = stamp
        loaded = load_theme_file(self.path, "temporary", "local")
        if not loaded.themes:
            self._on_error("; ".join(str(d) for d in loaded.diagnostics) or f"{self.path}: unreadable theme")
            return False
        try:
            theme = parse_theme(loaded.themes[0].data, source=str(self.path))
        except ThemeError as exc:
            self._on_error(str(exc))
            return False
        self._on_change(theme)
        return True
