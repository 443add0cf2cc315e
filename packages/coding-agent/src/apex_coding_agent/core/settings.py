"""Global and project settings.

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
Kind: TypeAlias = Literal["string", "boolean", "integer", "number", "object", "array", "string list"]

GLOBAL_ONLY_KEYS = ("defaultProjectTrust", "httpProxy", "sessionIndex")
_MISSING = object()


SETTING_KINDS: dict[str, Kind] = {
    "defaultProvider": "string", "defaultModel": "string", "defaultThinkingLevel": "string",
    "thinkingBudgets": "object", "thinkingBudgets.minimal": "integer", "thinkingBudgets.low": "integer",
    "thinkingBudgets.medium": "integer", "thinkingBudgets.high": "integer",
    "hideThinkingBlock": "boolean", "showCacheMissNotices": "boolean", "theme": "string", "externalEditor": "string",
    "quietStartup": "boolean", "defaultProjectTrust": "string", "collapseChangelog": "boolean",
    "doubleEscapeAction": "string", "treeFilterMode": "string", "editorPaddingX": "integer", "outputPad": "integer",
    "autocompleteMaxVisible": "integer", "showHardwareCursor": "boolean", "tuiMode": "string",
    "fullscreenScrollbar": "string", "fullscreenCopyOnSelect": "boolean", "httpProxy": "string",
    "httpIdleTimeoutMs": "integer", "websocketConnectTimeoutMs": "integer", "transport": "string",
    "steeringMode": "string", "followUpMode": "string",
    "compaction": "object", "compaction.enabled": "boolean", "compaction.reserveTokens": "integer",
    "compaction.keepRecentTokens": "integer",
    "branchSummary": "object", "branchSummary.reserveTokens": "integer", "branchSummary.skipPrompt": "boolean",
    "retry": "object", "retry.enabled": "boolean", "retry.maxRetries": "integer", "retry.baseDelayMs": "integer",
    "retry.provider": "object", "retry.provider.timeoutMs": "integer", "retry.provider.maxRetries": "integer",
    "retry.provider.maxRetryDelayMs": "integer",
    "terminal": "object", "terminal.showImages": "boolean", "terminal.imageWidthCells": "integer",
    "terminal.clearOnShrink": "boolean", "terminal.showTerminalProgress": "boolean",
    "terminal.symbolPreset": "string", "terminal.colorBlindMode": "boolean", "terminal.tokenUsageDisplay": "string",
    "images": "object", "images.autoResize": "boolean", "images.blockImages": "boolean",
    "shellPath": "string", "shellCommandPrefix": "string", "pipCommand": "string list", "sessionDir": "string",
    "enabledModels": "string list",
    "sessionIndex": "object", "sessionIndex.includeToolOutput": "boolean",
    "markdown": "object", "markdown.codeBlockIndent": "string", "markdown.mermaid": "string",
    "warnings": "object", "warnings.anthropicExtraUsage": "boolean", "sendProviderAttribution": "boolean",
    "packages": "array", "extensions": "string list", "skills": "string list", "prompts": "string list",
    "themes": "string list", "enableSkillCommands": "boolean",
    "webSearch": "object", "webSearch.provider": "string", "webSearch.apiKey": "string",
    "webSearch.numResults": "integer", "webSearch.snippetMaxCharacters": "integer", "webSearch.endpoint": "string",
    "network": "object", "network.allowedHosts": "string list", "network.allowDefaultHosts": "boolean",
    "delegationMaxDepth": "integer",
    "observability": "object", "observability.otlpEndpoint": "string", "observability.otlpHeaders": "object",
    "observability.retentionDays": "integer", "lsp": "object",
    "runBudget": "object", "runBudget.maxTurns": "integer", "runBudget.maxToolCalls": "integer",
    "runBudget.maxTokens": "integer", "runBudget.maxCost": "number", "runBudget.maxDurationMs": "integer",
    "lastChangelogVersion": "string",
    "checkpoints": "object", "checkpoints.enabled": "boolean", "checkpoints.maxFileBytes": "integer",
    "checkpoints.maxTurnBytes": "integer",
}  # fmt: skip
"""The JSON type of every known setting (dotted key -> kind); keys not listed here are not checked."""

_KIND_TEXT: dict[Kind, str] = {
    "string": "a string",
    "boolean": "true or false",
    "integer": "a whole number",
    "number": "a number",
    "object": "an object",
    "array": "an array",
    "string list": "an array of strings",
}


@dataclass(frozen=True)
class SettingsError:
    """A settings file that could not be read (context `load`: the file counted as `{}`) or a known key whose
    value has the wrong type (context `type`: the key counts as unset, its default applies)."""

    context: str
    scope: Scope
    message: str

    def __str__(self) -> str:
        suffix = "; using the default" if self.context == "type" else ""
        return f"Warning: ({self.context}, {self.scope} settings) {self.message}{suffix}"


_LARGEST_EXACT_FLOAT = 2.0**53


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _has_kind(value: Any, kind: Kind) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        # JSON has one number type: 5.0 is a whole number, 1e20 (a float past 2**53) is not exactly one.
        if isinstance(value, float):
            return value.is_integer() and abs(value) <= _LARGEST_EXACT_FLOAT
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def check_setting_types(data: dict[str, Any], origin: str) -> tuple[dict[str, Any], list[str]]:
    """`data` without the known keys whose value has the wrong JSON type, and one message per such key (naming
    `origin`, the key and what it must be). `null` counts as unset and is accepted everywhere."""
    problems: list[str] = []
    cleaned = data
    for dotted, kind in SETTING_KINDS.items():
        path = _key_path(dotted)
        value = _get_path(cleaned, path)
        if value is _MISSING or value is None or _has_kind(value, kind):
            continue
        shown = json.dumps(value, ensure_ascii=False)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        found = shown if isinstance(value, float) else f"{_json_type(value)} ({shown})"
        problems.append(f'{origin}: "{dotted}" must be {_KIND_TEXT[kind]}, not {found}')
        if cleaned is data:
            cleaned = copy.deepcopy(data)
        _set_path(cleaned, path, _MISSING)
    return cleaned, problems


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
        self._type_errors: list[SettingsError] = []
        self._reported_types: set[str] = set()
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
        self._type_errors = []
        if self.global_path is not None:
            data, error = _read_json_object(self.global_path)
            self._queue_load_error("global", error)
            self._global = self._checked("global", self.global_path, migrate_settings(data))
        self._project = {}
        if self.project_trusted and self.project_path is not None:
            data, error = _read_json_object(self.project_path)
            self._queue_load_error("project", error)
            self._project = self._checked("project", self.project_path, migrate_settings(data))
            for key in GLOBAL_ONLY_KEYS:
                self._project.pop(key, None)
        self._reported_types = {e.message for e in self._type_errors}
        self._recompute()

    def _checked(self, scope: Scope, path: Path, data: dict[str, Any]) -> dict[str, Any]:
        """`data` without its wrongly typed known keys; each one is queued once per distinct problem."""
        cleaned, problems = check_setting_types(data, str(path))
        for problem in problems:
            error = SettingsError("type", scope, problem)
            self._type_errors.append(error)
            if problem not in self._reported_types:
                self._errors.append(error)
        return cleaned

    @property
    def type_errors(self) -> list[SettingsError]:
        """The wrongly typed known keys of the files as last read (global first); those keys count as unset.

        The CLI refuses to start with any; hosts that keep running (the app's `/reload`, the SDK) show them as
        warnings through `drain_errors`."""
        return list(self._type_errors)

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


__all__ = [
    "GLOBAL_ONLY_KEYS",
    "SETTING_KINDS",
    "SettingsError",
    "check_setting_types",
    "SettingsManager",
    "deep_merge",
    "migrate_settings",
]
