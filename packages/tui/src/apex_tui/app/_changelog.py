"""`/changelog`: the CHANGELOG.md of the installed apex-coding-agent and apex-tui.

Where the file is looked for, first hit wins:
1. a `CHANGELOG.md` listed in the distribution's installed files (RECORD): the wheels carry it as package data,
   `<module>/CHANGELOG.md`;
2. package data next to the module's `__init__.py` (`<module>/CHANGELOG.md`), for installs without a RECORD;
3. the project folder of a local install (`direct_url.json` with a `file://` URL, as editable installs have);
4. the project folder above a src-layout package (`<project>/src/<module>/`), as in a source checkout.

In the repository `src/<module>/CHANGELOG.md` is a symlink to the project's `CHANGELOG.md` (the one file people
edit); `uv_build` stores the file it points to in the wheel and the sdist. A package installed without one (an old
wheel, a checkout without symlinks) gets a notice instead of text.
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata as metadata
import importlib.util
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

CHANGELOG_NAME = "CHANGELOG.md"
PACKAGES: tuple[tuple[str, str], ...] = (("apex-coding-agent", "apex_coding_agent"), ("apex-tui", "apex_tui"))
"""(distribution name, import name) of the packages whose changelogs `/changelog` shows."""


@dataclass(frozen=True)
class Changelog:
    """One package's changelog: `text` is None when none could be found (`notice` says why)."""

    distribution: str
    version: str | None
    text: str | None
    path: Path | None = None

    @property
    def markdown(self) -> str:
        """The file's markdown, or a notice naming the package and version."""
        if self.text is not None:
            return self.text
        if self.version is None:
            return f"{self.distribution} is not installed, so there is no changelog to show."
        return (
            f"No changelog ships with {self.distribution} {self.version}: the installed package does not "
            f"include {CHANGELOG_NAME}. See the project's source repository for its history."
        )


def _from_record(dist: metadata.Distribution) -> Path | None:
    for file in dist.files or ():
        if file.name == CHANGELOG_NAME:
            return Path(str(dist.locate_file(file)))
    return None


def _from_direct_url(dist: metadata.Distribution) -> Path | None:
    raw = dist.read_text("direct_url.json")
    if not raw:
        return None
    try:
        url = json.loads(raw).get("url", "")
    except (json.JSONDecodeError, AttributeError):  # a broken record only means: not found this way
        return None
    parsed = urlparse(url) if isinstance(url, str) else None
    if parsed is None or parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path)) / CHANGELOG_NAME


def _package_dirs(module: str, path: Sequence[str] | None) -> list[Path]:
    if path is None:
        spec = importlib.util.find_spec(module)
    else:
        spec = importlib.machinery.PathFinder.find_spec(module, list(path))
    return [Path(location) for location in (spec.submodule_search_locations or [])] if spec is not None else []


def _from_package_data(package_dirs: Sequence[Path]) -> Path | None:
    for package_dir in package_dirs:
        if (package_dir / CHANGELOG_NAME).is_file():
            return package_dir / CHANGELOG_NAME
    return None


def _from_project(package_dirs: Sequence[Path]) -> Path | None:
    for package_dir in package_dirs:
        if package_dir.parent.name == "src":
            return package_dir.parent.parent / CHANGELOG_NAME
    return None


def find_changelog(distribution: str, module: str, *, path: Sequence[str] | None = None) -> Changelog:
    """The changelog of `distribution` (import name `module`), looked up on `path` (default: `sys.path`)."""
    search = (
        metadata.distributions(name=distribution)
        if path is None
        else metadata.distributions(name=distribution, path=list(path))
    )
    found = next(iter(search), None)
    if found is None:
        return Changelog(distribution, None, None)
    version = found.version
    package_dirs = _package_dirs(module, path)
    candidates = (
        _from_record(found),
        _from_package_data(package_dirs),
        _from_direct_url(found),
        _from_project(package_dirs),
    )
    for candidate in candidates:
        if candidate is not None and candidate.is_file():
            try:
                return Changelog(distribution, version, candidate.read_text(encoding="utf-8"), candidate)
            except (OSError, UnicodeDecodeError):  # unreadable: try the next place, then the notice
                continue
    return Changelog(distribution, version, None)


def installed_changelogs() -> list[Changelog]:
    """The changelogs of `PACKAGES`, in that order."""
    return [find_changelog(name, module) for name, module in PACKAGES]
