"""The one path from a request to its credentials: which key it sends and which headers carry it.

A runtime owns one `Credentials` object and passes it down as `StreamOptions.credentials`; every request then
resolves its key and merges its credential headers once, in `apply_credentials`, whichever layer gets there
first (the agent loop, or `stream()` for direct callers). When the caller supplies a `Credentials`, it is the
only source: nothing falls back to the process-wide model registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from apex_ai.env_api_keys import get_env_api_key
from apex_ai.options import CredentialStore, StreamOptions
from apex_ai.types import Model

if TYPE_CHECKING:
    from apex_ai.models import ModelRegistry

_KEYLESS_APIS: set[str] = {"faux"}
_AUTH_HEADERS = frozenset({"authorization", "x-api-key"})


def mark_keyless_api(api: str) -> None:
    """Let requests to `api` go out without an API key (scripted and local-only APIs such as `faux`)."""
    _KEYLESS_APIS.add(api)


def is_keyless_api(api: str) -> bool:
    return api in _KEYLESS_APIS


class Credentials:
    """Resolves the key and the credential headers of a provider's requests.

    Key lookup order: the store (e.g. the coding agent's auth.json), the environment (`env_for(provider)` before
    `os.environ`), then the provider's configured key (`configured_key`). Subclasses replace a step: the coding
    agent's `ModelRuntime` scopes the environment per provider and resolves models.json references.
    """

    def __init__(
        self,
        store: CredentialStore | None = None,
        *,
        env: Mapping[str, str] | None = None,
        registry: ModelRegistry | None = None,
    ) -> None:
        self.store = store
        self.env = env
        self.registry = registry

    def env_for(self, provider: str) -> Mapping[str, str] | None:
        """Variables looked up before `os.environ` for `provider`'s key."""
        return self.env

    def configured_key(self, provider: str) -> str | None:
        """The key a provider registration carries, tried last."""
        entry = self.registry.get_provider(provider) if self.registry is not None else None
        return entry.api_key if entry is not None else None

    def get_api_key(self, provider: str) -> str | None:
        """The key for a request now (may run commands a subclass's configuration names)."""
        if self.store is not None:
            stored = self.store.get_api_key(provider)
            if stored:
                return stored
        env_key = get_env_api_key(provider, self.env_for(provider))
        if env_key:
            return env_key
        return self.configured_key(provider)

    def request_headers(self, provider: str, api_key: str | None) -> Mapping[str, str | None]:
        """Headers a request to `provider` adds on top of the caller's (a None value deletes a default header)."""
        return {}


def merge_headers(model: Model, options: StreamOptions, defaults: Mapping[str, str] | None = None) -> dict[str, str]:
    """defaults ⊕ model.headers ⊕ options.headers; a None value in options deletes the header."""
    merged: dict[str, str] = dict(defaults or {})
    merged.update(model.headers or {})
    for key, value in (options.headers or {}).items():
        if value is None:
            for existing in [k for k in merged if k.lower() == key.lower()]:
                del merged[existing]
        else:
            merged[key] = value
    return merged


def _resolver(options: StreamOptions, registry: ModelRegistry | None) -> Credentials:
    """The caller's `Credentials`, or one built from a plain store, `options.env` and `registry`."""
    given = options.credentials
    if isinstance(given, Credentials):
        return given
    return Credentials(given, env=options.env, registry=registry)


def resolve_api_key(
    provider: str, options: StreamOptions | None = None, registry: ModelRegistry | None = None
) -> str | None:
    """The key of a request: `options.api_key`, then `options.credentials`, then the environment, then the key
    `registry` holds for the provider. A `Credentials` in `options.credentials` replaces the last three steps."""
    options = options if options is not None else StreamOptions()
    if options.api_key:
        return options.api_key
    return _resolver(options, registry).get_api_key(provider)


def resolve_credentials(model: Model, options: StreamOptions) -> tuple[str | None, Mapping[str, str | None]]:
    """The key of a request to `model` and the credential headers to add to `options.headers`.

    Without a caller's `Credentials`, the key falls back to the process-wide registry
    (`apex_ai.models.default_registry`) and no headers are added.
    """
    # Imported here: models.py builds on this module.
    from apex_ai.models import default_registry

    resolver = _resolver(options, default_registry)
    key = options.api_key
    if not key and not is_keyless_api(model.api):
        key = resolver.get_api_key(model.provider)
    return key, resolver.request_headers(model.provider, key)


def apply_credentials(model: Model, options: StreamOptions) -> None:
    """Fill in `options.api_key` and merge the credential headers into `options.headers`, once per request.

    For a layer that owns the options of one request. Later calls with the same options (`stream()` among them)
    do nothing, so a layer in between (the coding agent's extension hooks) may edit the merged headers without
    having its edits merged over.
    """
    if options.credentials_applied:
        return
    options.api_key, headers = resolve_credentials(model, options)
    if headers:
        options.headers = {**(options.headers or {}), **headers}
    options.credentials_applied = True


def has_credentials(model: Model, options: StreamOptions, api_key: str | None) -> bool:
    """Whether the request can be authenticated: a keyless API, a key, or an auth header the model or the
    caller sets."""
    if is_keyless_api(model.api) or api_key:
        return True
    headers = merge_headers(model, options)
    return any(key.lower() in _AUTH_HEADERS and value for key, value in headers.items())


__all__ = [
    "Credentials",
    "apply_credentials",
    "has_credentials",
    "is_keyless_api",
    "mark_keyless_api",
    "merge_headers",
    "resolve_credentials",
    "resolve_api_key",
]
