"""Reading and writing the `packages` lists of the global and project settings files.

`SettingsManager.set` writes only the global file, so project (`-l`) writes use `write_project_setting`: the same
lock-and-merge rules (re-read under `<file>.lock`, change one key, write pretty JSON atomically).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from apex_coding_agent.core.file_lock import locked, write_atomic
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.package_manager.installer import PROJECT_DIR, Scope


def project_settings_path(cwd: Path) -> Path:
    return cwd / PROJECT_DIR / "settings.json"


def settings_dir(scope: Scope, agent_dir: Path, cwd: Path) -> Path:
    """The directory relative source paths of `scope`'s settings file are resolved against."""
    return cwd / PROJECT_DIR if scope == "project" else agent_dir


def _read_object(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except FileNotFoundError:
        return {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def write_project_setting(cwd: Path, key: str, value: Any) -> None:
    """Set one top-level key of `<cwd>/.apex-code/settings.json`, keeping every other key.

    Raises ValueError when the existing file is not a JSON object (it is left untouched).
    """
    path = project_settings_path(cwd)
    with locked(path):
        data = _read_object(path)
        data[key] = value
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def read_packages(scope: Scope, agent_dir: Path, cwd: Path) -> list[Any]:
    """The raw `packages` list of one settings file (`[]` when absent or malformed)."""
    path = project_settings_path(cwd) if scope == "project" else agent_dir / "settings.json"
    try:
        value = _read_object(path).get("packages")
    except (OSError, ValueError):
        return []
    return list(value) if isinstance(value, list) else []


def write_packages(scope: Scope, agent_dir: Path, cwd: Path, packages: list[Any]) -> None:
    if scope == "project":
        write_project_setting(cwd, "packages", packages)
    else:
        SettingsManager(agent_dir / "settings.json", None).set("packages", packages)


__all__ = ["project_settings_path", "read_packages", "settings_dir", "write_packages", "write_project_setting"]
