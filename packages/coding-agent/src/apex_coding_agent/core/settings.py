"""Global and project settings (spec settings-and-trust.md §2).

Effective settings = global deep-merged with project (project only when the project is trusted),
then runtime overrides. A file that does not parse counts as `{}` and its error is queued for the
caller to print; it is never overwritten until a setter runs. Setters change the global file: under
a lock they re-read it and apply only the keys this process changed, so a key another process
added meanwhile survives.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

from apex_coding_agent.core.file_lock import locked, write_atomic

Scope: TypeAlias = Literal["global", "project"]
KeyPath: TypeAlias = tuple[str, ...]

GLOBAL_ONLY_KEYS = ("defaultProjectTrust", "httpProxy")
_MISSING = object()


@dataclass(frozen=True)
class SettingsError:
    """A settings file that could not be read; the file counted as `{}`."""

    context: str
    scope: Scope
    message: str

    def __str__(self) -> str:
        return f"Warning: ({self.context}, {self.scope} settings) {self.message}"


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Objects merge key by key, recursively; arrays, scalars and explicit nulls replace."""
    merged = dict(base)
    for key, value in override.items():
        current = merged.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def migrate_settings(data: dict[str, Any]) -> dict[str, Any]:
    """Rename legacy keys in place of their new names (load-time only; files are not rewritten)."""
    out = dict(data)
    if "queueMode" in out:
        legacy = out.pop("queueMode")
        out.setdefault("steeringMode", legacy)
    if isinstance(out.get("websockets"), bool):
        out.setdefault("transport", "websocket" if out.pop("websockets") else "sse")
    skills = out.get("skills")
    if isinstance(skills, dict):
        del out["skills"]
        if "enableSkillCommands" in skills:
            out.setdefault("enableSkillCommands", skills["enableSkillCommands"])
        dirs = skills.get("customDirectories")
        if isinstance(dirs, list):
            out["skills"] = list(dirs)
    retry = out.get("retry")
    if isinstance(retry, dict) and "maxDelayMs" in retry:
        retry = dict(retry)
        provider = dict(retry.get("provider") or {})
        provider.setdefault("maxRetryDelayMs", retry.pop("maxDelayMs"))
        retry["provider"] = provider
        out["retry"] = retry
    return out


def _read_json_object(path: Path) -> tuple[dict[str, Any], str | None]:
    """The object in `path` (`{}` when absent) and an error text when it is unusable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, f"could not read {path}: {exc.strerror or exc}"
    except UnicodeDecodeError as exc:
        return {}, f"{path}: not UTF-8 text (byte {exc.start}): {exc.reason}"
    if not text.strip():
        return {}, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    except RecursionError:
        return {}, f"{path}: invalid JSON: nested too deeply"
    if not isinstance(data, dict):
        return {}, f"{path}: expected a JSON object, found {type(data).__name__}"
    return data, None


def _get_path(data: dict[str, Any], path: KeyPath) -> Any:
    node: Any = data
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return _MISSING
        node = node[key]
    return node


def _set_path(data: dict[str, Any], path: KeyPath, value: Any) -> None:
    node = data
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    if value is _MISSING:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = copy.deepcopy(value)


def _key_path(key: str | KeyPath) -> KeyPath:
    return tuple(key.split(".")) if isinstance(key, str) else key


class SettingsManager:
    """Reads, merges and writes settings; see the module docstring for the rules."""

    def __init__(
        self,
        global_path: Path | None,
        project_path: Path | None,
        *,
        project_trusted: bool = True,
        initial: dict[str, Any] | None = None,
    ) -> None:
        self.global_path = global_path
        self.project_path = project_path
        self.project_trusted = project_trusted
        self._errors: list[SettingsError] = []
        # The load error last queued per scope: a reload (trust decided, /reload) of a file that is still broken
        # the same way does not warn again.
        self._load_errors: dict[Scope, str | None] = {}
        self._global: dict[str, Any] = dict(initial or {})
        self._project: dict[str, Any] = {}
        self._overrides: dict[str, Any] = {}
        self._changed: dict[KeyPath, Any] = {}
        self._effective: dict[str, Any] = {}
        self.reload()

    # ----------------------------------------------------------------- construction

    @classmethod
    def create(cls, cwd: str | Path, agent_dir: str | Path, *, project_trusted: bool = True) -> SettingsManager:
        return cls(
            Path(agent_dir) / "settings.json",
            Path(cwd) / ".apex-code" / "settings.json",
            project_trusted=project_trusted,
        )

    @classmethod
    def in_memory(cls, settings: dict[str, Any] | None = None) -> SettingsManager:
        """Settings that never touch the disk (tests, SDK embedding)."""
        return cls(None, None, initial=migrate_settings(settings or {}))

    # ----------------------------------------------------------------- loading

    def reload(self) -> None:
        """Re-read both files (the project file only when trusted) and recompute the effective view."""
        if self.global_path is not None:
            data, error = _read_json_object(self.global_path)
            self._queue_load_error("global", error)
            self._global = migrate_settings(data)
        self._project = {}
        if self.project_trusted and self.project_path is not None:
            data, error = _read_json_object(self.project_path)
            self._queue_load_error("project", error)
            self._project = migrate_settings(data)
            for key in GLOBAL_ONLY_KEYS:
                self._project.pop(key, None)
        self._recompute()

    def _queue_load_error(self, scope: Scope, error: str | None) -> None:
        if error is not None and error != self._load_errors.get(scope):
            self._errors.append(SettingsError("load", scope, error))
        self._load_errors[scope] = error

    def set_project_trusted(self, trusted: bool) -> None:
        if trusted != self.project_trusted:
            self.project_trusted = trusted
            self.reload()

    def apply_overrides(self, overrides: dict[str, Any]) -> None:
        """Runtime overrides (CLI flags, SDK options) on top of both files; never written."""
        self._overrides = deep_merge(self._overrides, overrides)
        self._recompute()

    def _recompute(self) -> None:
        self._effective = deep_merge(deep_merge(self._global, self._project), self._overrides)
        for key in GLOBAL_ONLY_KEYS:
            if key in self._global:
                self._effective[key] = self._global[key]
            elif key not in self._overrides:
                self._effective.pop(key, None)

    def drain_errors(self) -> list[SettingsError]:
        errors, self._errors = self._errors, []
        return errors

    # ----------------------------------------------------------------- reading

    @property
    def effective(self) -> dict[str, Any]:
        """A copy of the merged settings."""
        return copy.deepcopy(self._effective)

    @property
    def global_settings(self) -> dict[str, Any]:
        return copy.deepcopy(self._global)

    @property
    def project_settings(self) -> dict[str, Any]:
        return copy.deepcopy(self._project)

    def get(self, key: str | KeyPath, default: Any = None) -> Any:
        """The effective value of a dotted key (`"compaction.reserveTokens"`), or `default`."""
        value = _get_path(self._effective, _key_path(key))
        return default if value is _MISSING else copy.deepcopy(value)

    def get_bool(self, key: str, default: bool) -> bool:
        value = self.get(key)
        return value if isinstance(value, bool) else default

    def get_int(self, key: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
        value = self.get(key)
        if not isinstance(value, int | float) or isinstance(value, bool):
            return default
        number = int(value)
        if minimum is not None and number < minimum:
            return default
        if maximum is not None and number > maximum:
            return default
        return number

    def get_choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        value = self.get(key)
        return value if isinstance(value, str) and value in choices else default

    # ----------------------------------------------------------------- writing

    def set(self, key: str | KeyPath, value: Any) -> None:
        """Change a global setting and write it (only this key) to the global file."""
        path = _key_path(key)
        _set_path(self._global, path, value)
        self._changed[path] = value if value is _MISSING else copy.deepcopy(value)
        self._recompute()
        self._write_changes()

    def unset(self, key: str | KeyPath) -> None:
        self.set(key, _MISSING)

    async def flush(self) -> None:
        """Durability point. Writes happen inside `set`, so there is nothing left to wait for."""
        return None

    def _write_changes(self) -> None:
        if self.global_path is None or not self._changed:
            return
        with locked(self.global_path):
            current, error = _read_json_object(self.global_path)
            if error is not None and self.global_path.exists():
                # Rewriting now replaces the broken file: only a setter may do that (spec check 2).
                current = {}
            for path, value in self._changed.items():
                _set_path(current, path, value)
            write_atomic(self.global_path, json.dumps(current, indent=2, ensure_ascii=False) + "\n")
        self._changed.clear()


__all__ = ["GLOBAL_ONLY_KEYS", "SettingsError", "SettingsManager", "deep_merge", "migrate_settings"]
