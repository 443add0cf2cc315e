"""Models the agent can use: the bundled catalog plus `models.json`.

`models.json` is how users reach local and self-hosted servers (llama.cpp, Ollama, vLLM, LM Studio,
any OpenAI- or Anthropic-compatible endpoint). `ModelRuntime` is the session's `apex_ai.credentials.Credentials`:
key lookup order for a provider: `--api-key` -> auth.json -> environment -> models.json `apiKey` -> the `apiKey` of
an extension's `register_provider`. Value references are resolved when a request is made (commands run then, never
cached); availability checks never run commands.
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
        self.warnings: list[str] = []
        self.reload()

    @classmethod
    def create(cls, agent_dir: str | Path, *, env: Mapping[str, str] | None = None) -> ModelRuntime:
        base = Path(agent_dir)
        return cls(base / "models.json", AuthStorage(base / "auth.json", env=env), env=env)

    def reload(self) -> None:
        """Re-read models.json (done whenever the model list is opened; no restart needed)."""
        for name in list(self.custom):
            self.registry.unregister_provider(name)
        self.custom = {}
        if self.models_path is None:
            return
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

    def drain_warnings(self) -> list[str]:
        out, self.warnings = self.warnings, []
        return out

    def _register(self, provider: CustomProvider) -> None:
        existing = self.registry.get_provider(provider.name)
        models: list[Model | dict[str, Any]] | None = None
        if provider.models is not None:
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
        """Headers of models.json for one request, references resolved (unresolvable ones dropped)."""
        custom = self.custom.get(provider)
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


__all__ = ["CustomProvider", "ModelRuntime", "ModelsFileError", "load_models_file"]
