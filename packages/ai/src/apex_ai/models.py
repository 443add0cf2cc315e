"""The model catalog: bundled Anthropic/OpenAI models plus providers registered at run time.

The bundled catalog (`models_catalog.json`) is read on the first lookup, not at import. Registered
providers (models.json entries, extensions, the faux provider) shadow a catalog provider of the same name
until they are unregistered.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final

from apex_ai._wire import to_camel
from apex_ai.credentials import resolve_api_key
from apex_ai.options import StreamOptions
from apex_ai.types import Model

KNOWN_BASE_URLS: Final[Mapping[str, str]] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "openrouter": "https://openrouter.ai/api/v1",
    "ollama": "http://localhost:11434/v1",
}
"""Default SDK `base_url` of well-known providers, used when a registration names none."""

LOCAL_MODEL_DEFAULTS: Final[Mapping[str, Any]] = {
    "reasoning": False,
    "input": ["text"],
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    "contextWindow": 128000,
    "maxTokens": 16384,
}
"""What a declared model gets for the fields it leaves out (a local server's model, typically)."""

_CATALOG_FILE: Final = "models_catalog.json"


@dataclass
class ProviderEntry:
    """One provider: its models in declaration order and the settings they share."""

    name: str
    api: str | None
    base_url: str | None
    models: dict[str, Model] = field(default_factory=dict)
    api_key: str | None = None
    """A fixed key from the registration, tried after the caller's key, credentials and environment."""
    headers: dict[str, str] | None = None


def _read_catalog() -> dict[str, ProviderEntry]:
    text = resources.files("apex_ai").joinpath(_CATALOG_FILE).read_text(encoding="utf-8")
    document = json.loads(text)
    entries: dict[str, ProviderEntry] = {}
    for name, raw in document["providers"].items():
        entry = ProviderEntry(name=name, api=raw.get("api"), base_url=raw.get("baseUrl"))
        for raw_model in raw["models"]:
            model = Model.model_validate({"provider": name, **raw_model})
            entry.models[model.id] = model
        entries[name] = entry
    return entries


def _build_model(
    provider: str,
    spec: Model | Mapping[str, Any],
    *,
    api: str | None,
    base_url: str | None,
    headers: Mapping[str, str] | None,
    compat: Mapping[str, Any] | None,
) -> Model:
    """A registered model with provider-level settings filled in where the model itself is silent."""
    # Key the data by wire names so camelCase (models.json) and snake_case declarations merge alike.
    data: dict[str, Any] = spec.to_wire() if isinstance(spec, Model) else {to_camel(k): v for k, v in spec.items()}
    model_fields = set(data)
    merged: dict[str, Any] = {**LOCAL_MODEL_DEFAULTS, **data, "provider": provider}
    if "api" not in model_fields:
        if api is None:
            raise ValueError(f"Model {data.get('id')!r} of provider {provider!r} names no api")
        merged["api"] = api
    if not merged.get("baseUrl"):
        merged["baseUrl"] = base_url or ""
    if not merged.get("name"):
        merged["name"] = data.get("id", "")
    if headers:
        merged["headers"] = {**headers, **(data.get("headers") or {})}
    if compat:
        merged["compat"] = {**compat, **(data.get("compat") or {})}
    return Model.model_validate(merged)


class ModelRegistry:
    """Models by provider: the bundled catalog plus registered providers (which shadow catalog ones)."""

    def __init__(self, *, load_catalog: bool = True) -> None:
        self._load_catalog = load_catalog
        self._catalog: dict[str, ProviderEntry] | None = None
        self._registered: dict[str, ProviderEntry] = {}

    # ----------------------------------------------------------------- lookup

    def _catalog_entries(self) -> dict[str, ProviderEntry]:
        if self._catalog is None:
            self._catalog = _read_catalog() if self._load_catalog else {}
        return self._catalog

    def _entry(self, provider: str) -> ProviderEntry | None:
        found = self._registered.get(provider)
        return found if found is not None else self._catalog_entries().get(provider)

    def providers(self) -> list[str]:
        """Names of all providers, catalog and registered, sorted."""
        return sorted(set(self._catalog_entries()) | set(self._registered))

    def get_provider(self, provider: str) -> ProviderEntry | None:
        return self._entry(provider)

    def get_model(self, provider: str, model_id: str) -> Model | None:
        """A copy of the model, or None if the provider or model is unknown."""
        entry = self._entry(provider)
        if entry is None:
            return None
        model = entry.models.get(model_id)
        return model.model_copy(deep=True) if model is not None else None

    def require_model(self, provider: str, model_id: str) -> Model:
        """Like `get_model`, but raises `KeyError` ("Unknown provider: X" / "Unknown model: X/Y")."""
        if self._entry(provider) is None:
            raise KeyError(f"Unknown provider: {provider}")
        model = self.get_model(provider, model_id)
        if model is None:
            raise KeyError(f"Unknown model: {provider}/{model_id}")
        return model

    def list_models(self, provider: str | None = None) -> list[Model]:
        """Copies of the models of `provider` (all providers if None), in catalog/declaration order."""
        names: Iterable[str] = [provider] if provider is not None else self.providers()
        result: list[Model] = []
        for name in names:
            entry = self._entry(name)
            if entry is not None:
                result.extend(model.model_copy(deep=True) for model in entry.models.values())
        return result

    # ----------------------------------------------------------------- registration

    def register_provider(
        self,
        name: str,
        *,
        api: str | None = None,
        base_url: str | None = None,
        models: Iterable[Model | Mapping[str, Any]] | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        compat: Mapping[str, Any] | None = None,
    ) -> ProviderEntry:
        """Register (or replace) provider `name`.

        With `models`, the provider's model list becomes exactly these; a mapping may leave out any field
        but `id` and gets `api`/`base_url`/`headers`/`compat` from the provider and the local-model defaults
        (no reasoning, text input, zero cost, window 128000, maxTokens 16384). Without `models`, the
        existing provider (e.g. from the catalog) is re-registered with the given overrides applied to each
        of its models; an unknown provider raises `KeyError`.
        """
        base = self._entry(name)
        if base_url is None:
            base_url = base.base_url if base is not None else KNOWN_BASE_URLS.get(name)
        if api is None and base is not None:
            api = base.api
        entry = ProviderEntry(
            name=name, api=api, base_url=base_url, api_key=api_key, headers=dict(headers) if headers else None
        )
        if models is not None:
            for spec in models:
                model = _build_model(name, spec, api=api, base_url=base_url, headers=headers, compat=compat)
                entry.models[model.id] = model
        else:
            if base is None:
                raise KeyError(f"Unknown provider: {name}")
            entry.api_key = api_key or base.api_key
            for model in base.models.values():
                update: dict[str, Any] = {"base_url": base_url}
                if headers:
                    update["headers"] = {**(model.headers or {}), **headers}
                if compat:
                    update["compat"] = {**(model.compat or {}), **compat}
                entry.models[model.id] = model.model_copy(update=update, deep=True)
        self._registered[name] = entry
        return entry

    def unregister_provider(self, name: str) -> None:
        """Drop a registered provider; a catalog provider of the same name becomes visible again."""
        self._registered.pop(name, None)

    # ----------------------------------------------------------------- keys

    def resolve_api_key(self, provider: str, options: StreamOptions | None = None) -> str | None:
        """`options.api_key`, then `options.credentials`, then the environment, then the registered key."""
        return resolve_api_key(provider, options, self)


default_registry = ModelRegistry()
"""The process-wide registry used by `stream()` for key lookup and by the convenience functions."""


def get_model(provider: str, model_id: str) -> Model | None:
    """`default_registry.get_model(provider, model_id)`."""
    return default_registry.get_model(provider, model_id)


def require_model(provider: str, model_id: str) -> Model:
    """`default_registry.require_model(provider, model_id)`."""
    return default_registry.require_model(provider, model_id)


def list_models(provider: str | None = None) -> list[Model]:
    """`default_registry.list_models(provider)`."""
    return default_registry.list_models(provider)


__all__ = [
    "KNOWN_BASE_URLS",
    "LOCAL_MODEL_DEFAULTS",
    "ModelRegistry",
    "ProviderEntry",
    "default_registry",
    "get_model",
    "list_models",
    "require_model",
]
