"""`auth.json`: stored credentials keyed by provider id.

The file is created with mode 0600 and changed read-modify-write under a lock. Key lookup order
for a provider: runtime key (`--api-key`) -> auth.json -> environment -> models.json `apiKey`;
this class covers the first two and is the credential store handed to `apex_ai`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from apex_coding_agent.core.config_values import resolve_value
from apex_coding_agent.core.file_lock import locked, write_atomic

AUTH_FILE_MODE = 0o600


class AuthError(ValueError):
    """auth.json is unreadable or holds a credential of the wrong shape."""


def _validate(provider: str, credential: Any) -> dict[str, Any]:
    if not isinstance(credential, dict):
        raise AuthError(f'Invalid auth.json credential for provider "{provider}"')
    kind = credential.get("type")
    if kind == "api_key":
        key, env = credential.get("key"), credential.get("env")
        if (key is not None and not isinstance(key, str)) or (
            env is not None
            and not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()))
        ):
            raise AuthError(f'Invalid auth.json credential for provider "{provider}"')
    elif kind == "oauth":
        if not (
            isinstance(credential.get("access"), str)
            and isinstance(credential.get("refresh"), str)
            and isinstance(credential.get("expires"), int | float)
        ):
            raise AuthError(f'Invalid auth.json credential for provider "{provider}"')
    else:
        raise AuthError(f'Invalid auth.json credential for provider "{provider}"')
    return credential


class AuthStorage:
    """Credentials from auth.json plus keys given at runtime (never persisted)."""

    def __init__(self, path: Path | None, env: Mapping[str, str] | None = None) -> None:
        self.path = path
        self._env = env
        self._runtime: dict[str, str] = {}
        self._resolved_cache: dict[str, str | None] = {}

    @classmethod
    def in_memory(cls) -> AuthStorage:
        return cls(None)

    def _load(self) -> dict[str, Any]:
        if self.path is None or not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError, RecursionError) as exc:  # invalid JSON, not UTF-8, nested too deeply
            raise AuthError(f"could not read {self.path}: {exc}") from exc
        if not isinstance(data, dict):
            raise AuthError(f"{self.path}: expected a JSON object")
        return data

    def credentials(self) -> dict[str, dict[str, Any]]:
        """All stored credentials, validated."""
        return {provider: _validate(provider, cred) for provider, cred in self._load().items()}

    def get(self, provider: str) -> dict[str, Any] | None:
        """The stored credential of `provider`; `AuthError` when it has the wrong shape."""
        raw = self._load().get(provider)
        return None if raw is None else _validate(provider, raw)

    def _usable(self, provider: str) -> dict[str, Any] | None:
        """The stored credential of `provider`, None when absent or of the wrong shape (`problems` reports those:
        one bad entry must not stop runs that use other providers)."""
        try:
            return self.get(provider)
        except AuthError:
            if self.path is not None and self.path.exists():
                self._load()  # an unreadable file is still an error
            return None

    def has_credential(self, provider: str) -> bool:
        """Whether a usable credential is stored for `provider`."""
        return self._usable(provider) is not None

    def problems(self) -> list[str]:
        """One line per entry of the wrong shape, naming the file and the provider; such entries are ignored.

        Raises `AuthError` when the file as a whole cannot be read."""
        out: list[str] = []
        for provider, credential in self._load().items():
            try:
                _validate(provider, credential)
            except AuthError:
                out.append(f'{self.path}: invalid credential for provider "{provider}" (ignored)')
        return out

    def set_runtime_key(self, provider: str, key: str) -> None:
        """A key from `--api-key`: used first, never written."""
        self._runtime[provider] = key

    def has_runtime_key(self, provider: str) -> bool:
        return provider in self._runtime

    def set(self, provider: str, credential: dict[str, Any]) -> None:
        """Store a credential (as `/login` does)."""
        _validate(provider, credential)
        self._update(lambda data: data.__setitem__(provider, credential))

    def remove(self, provider: str) -> None:
        """Delete a credential (as `/logout` does)."""
        self._update(lambda data: data.pop(provider, None))

    def _update(self, change: Any) -> None:
        if self.path is None:
            raise AuthError("this credential store has no file")
        with locked(self.path):
            data = self._load()
            change(data)
            write_atomic(self.path, json.dumps(data, indent=2) + "\n", mode=AUTH_FILE_MODE)
        self._resolved_cache.clear()

    def provider_env(self, provider: str) -> dict[str, str]:
        """Provider-scoped environment of an `api_key` credential (used before the process env)."""
        credential = self._usable(provider)
        if credential is None or credential.get("type") != "api_key":
            return {}
        return dict(credential.get("env") or {})

    def get_api_key(self, provider: str) -> str | None:
        """Runtime key, else the stored one (value references resolved; commands cached per process); an entry of
        the wrong shape counts as absent."""
        if provider in self._runtime:
            return self._runtime[provider]
        if provider in self._resolved_cache:
            return self._resolved_cache[provider]
        credential = self._usable(provider)
        key: str | None = None
        if credential is not None and credential.get("type") == "api_key" and credential.get("key"):
            key = resolve_value(str(credential["key"]), self._env)
        elif credential is not None and credential.get("type") == "oauth":
            key = str(credential["access"])
        self._resolved_cache[provider] = key
        return key


__all__ = ["AUTH_FILE_MODE", "AuthError", "AuthStorage"]
