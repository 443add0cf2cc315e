"""Models the agent can use: the bundled catalog plus `models.json`.

`models.json` is how users reach local and self-hosted servers (llama.cpp, Ollama, vLLM, LM Studio,
any OpenAI- or Anthropic-compatible endpoint). `ModelRuntime` is the session's `apex_ai.credentials.Credentials`:
key lookup order for a provider: `--api-key` -> auth.json -> environment -> models.json `apiKey` -> the `apiKey` of
an extension's `register_provider`. Value references are resolved when a request is made (commands run then, never
cached); availability checks never run commands.

Providers stack in layers: the catalog, then models.json, then the providers extensions register (in registration
order). An extension's config is parsed like a models.json entry, so its `headers` and `authHeader` behave the same;
`reload()` rebuilds the models.json layer and re-applies the extension layer on top, so neither is lost.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apex_ai.credentials import Credentials, is_keyless_api
from apex_ai.env_api_keys import get_env_api_key
from apex_ai.models import ModelRegistry
from apex_ai.types import Model
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.config_values import is_resolvable, resolve_value


@dataclass
class CustomProvider:
    """One `providers` entry of models.json, with value references still unresolved."""

    name: str
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    auth_header: bool = False
    compat: dict[str, Any] | None = None
    models: list[dict[str, Any]] | None = None
    model_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)


class ModelsFileError(ValueError):
    """models.json could not be used; the message names the file."""


def _parse_provider(name: str, raw: Any, origin: str) -> CustomProvider:
    if not isinstance(raw, dict):
        raise ModelsFileError(f"{origin}: provider {name!r} must be an object")
    models = raw.get("models")
    if models is not None and (
        not isinstance(models, list) or not all(isinstance(m, dict) and isinstance(m.get("id"), str) for m in models)
    ):
        raise ModelsFileError(f'{origin}: provider {name!r}: "models" must be a list of objects with an "id"')
    headers = raw.get("headers") or {}
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise ModelsFileError(f'{origin}: provider {name!r}: "headers" must map names to strings')
    overrides = raw.get("modelOverrides") or {}
    if not isinstance(overrides, dict):
        raise ModelsFileError(f'{origin}: provider {name!r}: "modelOverrides" must be an object')
    return CustomProvider(
        name=name,
        base_url=raw.get("baseUrl"),
        api=raw.get("api"),
        api_key=raw.get("apiKey"),
        headers=dict(headers),
        auth_header=bool(raw.get("authHeader", False)),
        compat=raw.get("compat"),
        models=[dict(m) for m in models] if models is not None else None,
        model_overrides={k: dict(v) for k, v in overrides.items() if isinstance(v, dict)},
    )


_SNAKE_KEYS = {
    "base_url": "baseUrl",
    "api_key": "apiKey",
    "auth_header": "authHeader",
    "model_overrides": "modelOverrides",
}


def parse_extension_provider(name: str, config: Mapping[str, Any]) -> CustomProvider:  # Any: JSON config
    """An extension's `register_provider(name, config)`: the models.json provider shape, snake_case keys accepted."""
    raw = dict(config)
    for snake, camel in _SNAKE_KEYS.items():
        if snake in raw:
            value = raw.pop(snake)
            raw.setdefault(camel, value)
    return _parse_provider(name, raw, "register_provider")


def load_models_file(path: Path) -> tuple[dict[str, CustomProvider], str | None]:
    """The providers of a models.json and a warning text when the file could not be used."""
    if not path.exists():
        return {}, None
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if text.strip() else None
    except (OSError, ValueError, RecursionError) as exc:  # invalid JSON, not UTF-8, nested too deeply
        return {}, f"Warning: could not load {path}: {exc}; using the built-in models only"
    # A file that holds no providers is almost always a mistake (a half-written file, providers at the top level):
    # saying so beats a run that silently lacks the user's models.
    if data is None:
        return {}, f"Warning: {path} is empty; using the built-in models only"
    if isinstance(data, dict) and "providers" not in data:
        return {}, f'Warning: {path} has no "providers" object; using the built-in models only'
    if not isinstance(data, dict) or not isinstance(data["providers"], dict):
        return {}, f'Warning: could not load {path}: expected {{"providers": {{...}}}}; using the built-in models only'
    providers: dict[str, CustomProvider] = {}
    try:
        for name, raw in data["providers"].items():
            providers[name] = _parse_provider(name, raw, str(path))
    except ModelsFileError as exc:
        return {}, f"Warning: {exc}; using the built-in models only"
    return providers, None


def _apply_override(model: Model, override: Mapping[str, Any]) -> Model:
    data = model.to_wire()
    for key, value in override.items():
        if key in ("cost", "samplingParams", "headers", "compat") and isinstance(value, dict):
            data[key] = {**(data.get(key) or {}), **value}
        else:
            data[key] = copy.deepcopy(value)
    return Model.model_validate(data)


class ModelRuntime(Credentials):
    """The registry the session uses, with models.json applied, and the keys and headers of its requests."""

    registry: ModelRegistry

    def __init__(
        self,
        models_path: Path | None,
        auth: AuthStorage,
        *,
        registry: ModelRegistry | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(auth, env=env, registry=registry if registry is not None else ModelRegistry())
        self.models_path = models_path
        self.auth = auth
        self.custom: dict[str, CustomProvider] = {}
        self.extension_providers: dict[str, CustomProvider] = {}
        """Providers extensions registered, in registration order (the layer above models.json)."""
        self.warnings: list[str] = []
        self.reload()

    @classmethod
    def create(cls, agent_dir: str | Path, *, env: Mapping[str, str] | None = None) -> ModelRuntime:
        base = Path(agent_dir)
        return cls(base / "models.json", AuthStorage(base / "auth.json", env=env), env=env)

    def reload(self) -> None:
        """Re-read models.json (done whenever the model list is opened; no restart needed).

        Extension providers are registered again on top, so they and their models stay as the extensions left them.
        """
        for name in [*self.custom, *self.extension_providers]:
            self.registry.unregister_provider(name)
        self.custom = {}
        if self.models_path is not None:
            providers, warning = load_models_file(self.models_path)
            if warning:
                self.warnings.append(warning)
            for provider in providers.values():
                try:
                    self._register(provider)
                except (KeyError, ValueError) as exc:
                    self.warnings.append(f"Warning: {self.models_path}: provider {provider.name!r}: {exc}")
                    continue
                self.custom[provider.name] = provider
        for provider in self.extension_providers.values():
            try:
                self._register(provider, extension=True)
            except (KeyError, ValueError) as exc:  # it changed a models.json provider that is gone now
                self.warnings.append(f"Warning: extension provider {provider.name!r}: {exc}")

    def register_extension_provider(self, name: str, config: Mapping[str, Any]) -> None:  # Any: JSON config
        """An extension's `register_provider`; raises `ValueError`/`KeyError` for a config that cannot be used."""
        provider = parse_extension_provider(name, config)
        self._register(provider, extension=True)
        self.extension_providers.pop(name, None)  # a later registration moves to the top of the layer
        self.extension_providers[name] = provider

    def unregister_extension_provider(self, name: str) -> None:
        """Drop an extension's provider; the models.json provider of that name, if any, is in effect again."""
        if self.extension_providers.pop(name, None) is None:
            self.registry.unregister_provider(name)  # the registry's own semantics for names no extension holds
            return
        self.registry.unregister_provider(name)
        custom = self.custom.get(name)
        if custom is not None:
            self._register(custom)

    def drain_warnings(self) -> list[str]:
        out, self.warnings = self.warnings, []
        return out

    def _register(self, provider: CustomProvider, *, extension: bool = False) -> None:
        """Register one provider. models.json `models` add to (or replace by id) those of an existing provider of
        the name; an extension's become its whole list, as `ModelRegistry.register_provider` does, and its `apiKey`
        is kept on the registry entry (the last source of a key).

        Headers are not handed to the registry: `request_headers` resolves them per request.
        """
        existing = self.registry.get_provider(provider.name)
        models: list[Model | dict[str, Any]] | None = None
        if provider.models is not None and extension:
            models = list(provider.models)
        elif provider.models is not None:
            if existing is None and not provider.base_url:
                raise ValueError('"baseUrl" is required for a new provider with models')
            by_id: dict[str, Model | dict[str, Any]] = dict(existing.models) if existing is not None else {}
            for raw in provider.models:
                by_id[raw["id"]] = raw  # the same id replaces a built-in model
            models = list(by_id.values())
        elif existing is None:
            raise ValueError('a new provider needs "models"')
        self.registry.register_provider(
            provider.name,
            api=provider.api,
            base_url=provider.base_url,
            models=models,
            api_key=provider.api_key if extension else None,
            compat=provider.compat,
        )
        if provider.model_overrides:
            entry = self.registry.get_provider(provider.name)
            if entry is not None:
                for model_id, override in provider.model_overrides.items():
                    if model_id in entry.models:
                        entry.models[model_id] = _apply_override(entry.models[model_id], override)

    # ----------------------------------------------------------------- keys and availability

    def configured_key(self, provider: str) -> str | None:
        """The provider's configured `apiKey` resolved (runs a `!cmd` reference)."""
        reference = self._key_reference(provider)
        return resolve_value(reference, self.env_for(provider)) if reference else None

    def _key_reference(self, provider: str) -> str | None:
        """models.json's `apiKey`, else the one an extension registered the provider with, unresolved.

        Both are value references alike: a key in an extension's config is written the way users write models.json.
        """
        custom = self.custom.get(provider)
        if custom is not None and custom.api_key:
            return custom.api_key
        entry = self.registry.get_provider(provider)
        return entry.api_key if entry is not None and entry.api_key else None

    def env_for(self, provider: str) -> dict[str, str] | None:
        """The environment with the provider's auth.json `env` on top."""
        scoped = self.auth.provider_env(provider) if self.auth.path is not None else {}
        if not scoped:
            return dict(self.env) if self.env is not None else None
        return {**(self.env or {}), **scoped}

    def has_auth(self, provider: str) -> bool:
        """Whether a key could be found, without running any command."""
        if self.auth.has_runtime_key(provider) or self.auth.has_credential(provider):
            return True
        if get_env_api_key(provider, self.env_for(provider)):
            return True
        reference = self._key_reference(provider)
        return reference is not None and is_resolvable(reference, self.env_for(provider))

    def is_available(self, model: Model) -> bool:
        return is_keyless_api(model.api) or self.has_auth(model.provider)

    def available_models(self) -> list[Model]:
        return [m for m in self.registry.list_models() if self.is_available(m)]

    def request_headers(self, provider: str, api_key: str | None) -> dict[str, str | None]:
        """The provider's `headers` for one request, references resolved (unresolvable ones dropped).

        An extension's registration replaced the provider, so its headers and `authHeader` are the ones in effect.
        """
        custom = self.extension_providers.get(provider) or self.custom.get(provider)
        if custom is None:
            return {}
        headers: dict[str, str | None] = {}
        for name, value in custom.headers.items():
            resolved = resolve_value(value, self.env_for(provider))
            if resolved is not None:
                headers[name] = resolved
        if custom.auth_header and api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        return headers


__all__ = ["CustomProvider", "ModelRuntime", "ModelsFileError", "load_models_file", "parse_extension_provider"]
