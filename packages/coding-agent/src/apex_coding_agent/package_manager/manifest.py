"""What a package directory offers: manifest lists or conventional directories.

Manifest: `pyproject.toml` `[tool.pi]` (or, for resource-only packages, `package.json` `"pi"`) with `extensions`,
`skills`, `prompts`, `themes` lists of paths/globs relative to the package root; `!glob` entries exclude. A kind the
manifest leaves out offers nothing. Without a manifest every kind uses its conventional directory:

| Kind | Directory | Resources |
|---|---|---|
| extensions | `extensions/` | `*.py` files; sub-directories with `__init__.py` (returned as the directory) |
| skills | `skills/` | each `SKILL.md` (searched recursively, a skill dir is not descended further); top-level `*.md` |
| prompts | `prompts/` | `*.md` (not recursive) |
| themes | `themes/` | `*.json` (not recursive) |

Hidden entries, `__pycache__` and `node_modules` are skipped.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeAlias

from apex_coding_agent.package_manager.filters import SKILL_FILE, apply_patterns

ResourceKind: TypeAlias = Literal["extensions", "skills", "prompts", "themes"]
RESOURCE_KINDS: tuple[ResourceKind, ...] = ("extensions", "skills", "prompts", "themes")
_SKIP_DIRS = frozenset({"__pycache__", "node_modules"})
_SUFFIX: dict[ResourceKind, str] = {"extensions": ".py", "skills": ".md", "prompts": ".md", "themes": ".json"}

Manifest: TypeAlias = dict[ResourceKind, list[str]]


def _string_lists(section: object) -> Manifest | None:
    if not isinstance(section, dict):
        return None
    out: Manifest = {}
    for kind in RESOURCE_KINDS:
        value = section.get(kind)
        if isinstance(value, list):
            out[kind] = [item for item in value if isinstance(item, str)]
    return out


def read_manifest(root: Path, warn: Callable[[str], None] | None = None) -> Manifest | None:
    """The `[tool.pi]` table of `pyproject.toml`, else the `"pi"` object of `package.json`, else None.

    A file that cannot be read or parsed counts as absent (a broken manifest must not stop the agent from
    starting); `warn` then receives one message naming the file.
    """
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        # Imported here: tomllib is needed only when a pyproject.toml is there to read.
        import tomllib

        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            _report(warn, pyproject, exc)
            data = {}
        tool = data.get("tool")
        manifest = _string_lists(tool.get("pi") if isinstance(tool, dict) else None)
        if manifest is not None:
            return manifest
    package_json = root / "package.json"
    if package_json.is_file():
        try:
            data_json = json.loads(package_json.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            _report(warn, package_json, exc)
            return None
        if isinstance(data_json, dict):
            return _string_lists(data_json.get("pi"))
    return None


def _report(warn: Callable[[str], None] | None, path: Path, exc: Exception) -> None:
    if warn is not None:
        warn(f"{path}: invalid package manifest ({exc}); using the conventional directories")


def _visible(entry: os.DirEntry[str]) -> bool:
    return not entry.name.startswith(".") and entry.name not in _SKIP_DIRS


def _scan(directory: Path) -> list[os.DirEntry[str]]:
    try:
        return sorted((e for e in os.scandir(directory) if _visible(e)), key=lambda e: e.name)
    except OSError:
        return []


def _skill_files(directory: Path, *, top: bool) -> list[Path]:
    skill = directory / SKILL_FILE
    if not top and skill.is_file():
        return [skill]
    out: list[Path] = []
    for entry in _scan(directory):
        path = Path(entry.path)
        if entry.is_dir():
            out.extend(_skill_files(path, top=False))
        elif top and entry.is_file() and entry.name.endswith(".md"):
            out.append(path)
    return out


def collect_dir(directory: Path, kind: ResourceKind) -> list[Path]:
    """The resources of `kind` inside one directory, by the conventional rules (module docstring)."""
    if not directory.is_dir():
        return []
    if kind == "skills":
        if (directory / SKILL_FILE).is_file():
            return [directory / SKILL_FILE]
        return _skill_files(directory, top=True)
    if kind == "extensions" and (directory / "__init__.py").is_file():
        return [directory]
    out: list[Path] = []
    for entry in _scan(directory):
        if entry.is_file() and entry.name.endswith(_SUFFIX[kind]):
            out.append(Path(entry.path))
        elif kind == "extensions" and entry.is_dir() and (Path(entry.path) / "__init__.py").is_file():
            out.append(Path(entry.path))
    return out


def _expand(path: Path, kind: ResourceKind) -> list[Path]:
    if path.is_dir():
        return collect_dir(path, kind)
    if path.is_file() and path.name.endswith(_SUFFIX[kind]):
        return [path]
    return []


def _from_manifest(root: Path, entries: list[str], kind: ResourceKind) -> list[Path]:
    found: list[Path] = []
    for entry in entries:
        if entry.startswith("!"):
            continue
        target = root / entry
        if any(ch in entry for ch in "*?["):
            matches = [Path(m) for m in sorted(glob.glob(str(target), recursive=True))]
        else:
            matches = [target]
        for match in matches:
            found.extend(_expand(Path(os.path.normpath(match)), kind))
    unique = list(dict.fromkeys(found))
    excludes = [entry for entry in entries if entry.startswith("!")]
    return apply_patterns(unique, excludes, root) if excludes else unique


def package_resources(root: Path, warn: Callable[[str], None] | None = None) -> dict[ResourceKind, list[Path]]:
    """Every resource a package directory offers, per kind (before settings filters); `warn` as in `read_manifest`."""
    manifest = read_manifest(root, warn)
    if manifest is None:
        return {kind: collect_dir(root / kind, kind) for kind in RESOURCE_KINDS}
    return {kind: _from_manifest(root, manifest.get(kind, []), kind) for kind in RESOURCE_KINDS}


__all__ = ["RESOURCE_KINDS", "Manifest", "ResourceKind", "collect_dir", "package_resources", "read_manifest"]
