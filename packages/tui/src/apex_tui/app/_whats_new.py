"""Start-up "what's new": changelog entries newer than the version the user last saw.

The global setting `lastChangelogVersion` holds the app version of the last start. `check_whats_new` compares it with
the running version:
- no setting yet (a fresh install) or one that is not a version: record the running version and show nothing, since a
  new user has no earlier version to compare with;
- the running version is newer: collect the entries of both changelogs above the last one (and not above the
  package's own installed version, so a changelog's upcoming section stays hidden), record the running version;
- otherwise (same version, a downgrade): nothing, and the setting stays.

Changelog entries are the `## <version> ...` sections of a CHANGELOG.md (`## 0.2.0 (2026-12-01)`, `## [0.2.0]`); text
before the first such heading (the title) is not an entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from apex_tui.app._changelog import Changelog, installed_changelogs

if TYPE_CHECKING:
    from apex_coding_agent import SettingsManager

SETTING = "lastChangelogVersion"
_HEADING = re.compile(r"^##\s+\[?v?(\d+(?:\.\d+)*)")
_VERSION = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")

Version = tuple[int, int, int]


def parse_version(text: str) -> Version | None:
    """`major.minor.patch` of a version string (`0.2`, `0.2.1`, `0.2.1.dev3`, `v1.0.0`); None when it has none.

    Pre-release and local parts are ignored: `0.2.0rc1` counts as `0.2.0`.
    """
    match = _VERSION.match(text)
    if match is None:
        return None
    parts = [int(part) for part in match.group(1).split(".")[:3]]
    major, minor, patch = (*parts, 0, 0)[:3]
    return (major, minor, patch)


@dataclass(frozen=True)
class ChangelogEntry:
    """One `## <version>` section: its version and its markdown (the heading included)."""

    version: Version
    markdown: str


def parse_entries(markdown: str) -> list[ChangelogEntry]:
    """The versioned sections of a changelog, in file order (a `##` heading without a version ends a section)."""
    entries: list[ChangelogEntry] = []
    current: tuple[Version, list[str]] | None = None

    def close() -> None:
        if current is not None:
            entries.append(ChangelogEntry(current[0], "\n".join(current[1]).strip()))

    for line in markdown.splitlines():
        if line.startswith("## "):
            close()
            match = _HEADING.match(line)
            version = parse_version(match.group(1)) if match else None
            current = (version, [line]) if version is not None else None
        elif current is not None:
            current[1].append(line)
    close()
    return entries


@dataclass(frozen=True)
class PackageNews:
    """The new entries of one package's changelog."""

    distribution: str
    entries: tuple[ChangelogEntry, ...]


@dataclass(frozen=True)
class WhatsNew:
    """What the start-up transcript shows: the running version and the new entries per package."""

    version: str
    packages: tuple[PackageNews, ...]

    @property
    def markdown(self) -> str:
        """Every new entry, grouped under a `# <distribution>` heading per package."""
        parts = [
            "\n\n".join([f"# {news.distribution}", *(entry.markdown for entry in news.entries)])
            for news in self.packages
        ]
        return "\n\n".join(parts)

    @property
    def condensed(self) -> str:
        """The one-line form (`collapseChangelog`, quiet start-up)."""
        return f"Updated to v{self.version}. Use /changelog to view the full changelog."


def new_entries(changelog: Changelog, last: Version) -> tuple[ChangelogEntry, ...]:
    """Entries of `changelog` newer than `last` and not newer than the package's installed version."""
    if changelog.text is None:
        return ()
    ceiling = parse_version(changelog.version) if changelog.version is not None else None
    return tuple(
        entry
        for entry in parse_entries(changelog.text)
        if entry.version > last and (ceiling is None or entry.version <= ceiling)
    )


def check_whats_new(
    settings: SettingsManager,
    version: str,
    changelogs: Callable[[], Sequence[Changelog]] = installed_changelogs,
) -> WhatsNew | None:
    """Decide what to show for running `version` and update `lastChangelogVersion` (see the module docstring).

    `changelogs` is only called when the version is newer than the last one seen: the usual start reads no file.
    Returns None when there is nothing to show.
    """
    current = parse_version(version)
    if current is None:
        return None  # a development build without a version: nothing to compare, nothing to record
    stored = settings.global_settings.get(SETTING)
    last = parse_version(stored) if isinstance(stored, str) else None
    if last is None:
        _record(settings, version)
        return None
    if current <= last:
        return None
    packages = tuple(
        PackageNews(changelog.distribution, entries)
        for changelog in changelogs()
        if (entries := new_entries(changelog, last))
    )
    _record(settings, version)
    return WhatsNew(version, packages) if packages else None


def _record(settings: SettingsManager, version: str) -> None:
    try:
        settings.set(SETTING, version)
    except OSError:  # an unwritable settings file must not stop the app; the news then shows again next start
        pass
