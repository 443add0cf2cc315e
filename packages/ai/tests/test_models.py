"""Model catalog and registry (spec ai.md §5)."""

import pytest

from apex_ai.models import KNOWN_BASE_URLS, ModelRegistry, default_registry, get_model, list_models, require_model
from apex_ai.options import StreamOptions
from apex_ai.types import Model


def test_catalog_has_sonnet_4_5_with_prices() -> None:
    model = get_model("anthropic", "claude-sonnet-4-5")
    assert model is not None
    assert model.api == "anthropic-messages"
    assert model.base_url == "https://api.anthropic.com"
    assert model.reasoning is True
    assert model.input == ["text", "image"]
    assert (model.cost.input, model.cost.output, model.cost.cache_read, model.cost.cache_write) == (3, 15, 0.3, 3.75)
    assert model.context_window == 200000
    assert model.max_tokens == 64000
    assert model.cost.tiers is not None and model.cost.tiers[0].input_tokens_above == 200000


def test_catalog_openai_models_use_responses() -> None:
    models = list_models("openai")
    assert len(models) >= 5
    assert {m.api for m in models} == {"openai-responses"}
    assert {m.base_url for m in models} == {"https://api.openai.com/v1"}
    assert all(m.provider == "openai" and m.cost.output > 0 for m in models)


def test_catalog_is_loaded_lazily() -> None:
    registry = ModelRegistry()
    assert registry._catalog is None
    assert registry.get_model("openai", "gpt-5") is not None
    assert registry._catalog is not None


def test_list_all_models_spans_providers() -> None:
    providers = {m.provider for m in ModelRegistry().list_models()}
    assert {"anthropic", "openai"} <= providers


def test_unknown_lookups() -> None:
    assert get_model("anthropic", "nope") is None
    assert get_model("nobody", "x") is None
    with pytest.raises(KeyError, match="Unknown provider: nobody"):
        require_model("nobody", "x")
    with pytest.raises(KeyError, match="Unknown model: anthropic/nope"):
        require_model("anthropic", "nope")


def test_get_model_returns_a_copy() -> None:
    model = require_model("anthropic", "claude-haiku-4-5")
    model.max_tokens = 1
    assert require_model("anthropic", "claude-haiku-4-5").max_tokens == 64000


def test_local_model_defaults() -> None:
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider(
        "ollama", api="openai-completions", models=[{"id": "qwen3:8b"}, {"id": "big", "contextWindow": 32768}]
    )
    model = registry.require_model("ollama", "qwen3:8b")
    assert model.provider == "ollama"
    assert model.name == "qwen3:8b"
    assert model.api == "openai-completions"
    assert model.base_url == KNOWN_BASE_URLS["ollama"] == "http://localhost:11434/v1"
    assert model.reasoning is False
    assert model.input == ["text"]
    assert (model.cost.input, model.cost.output) == (0, 0)
    assert (model.context_window, model.max_tokens) == (128000, 16384)
    assert registry.require_model("ollama", "big").context_window == 32768
    assert registry.providers() == ["ollama"]


def test_register_provider_merges_headers_and_snake_case_keys() -> None:
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider(
        "box",
        api="openai-completions",
        base_url="http://box/v1",
        headers={"X-Team": "a", "X-Other": "o"},
        compat={"supportsStore": False},
        models=[{"id": "m", "max_tokens": 100, "headers": {"X-Team": "b"}}],
    )
    model = registry.require_model("box", "m")
    assert model.max_tokens == 100
    assert model.base_url == "http://box/v1"
    assert model.headers == {"X-Team": "b", "X-Other": "o"}
    assert model.compat == {"supportsStore": False}


def test_register_model_instances_get_the_provider_name() -> None:
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider("mine", models=[Model(id="x", api="faux", provider="other")])
    assert registry.require_model("mine", "x").provider == "mine"


def test_model_without_api_is_rejected() -> None:
    with pytest.raises(ValueError, match="names no api"):
        ModelRegistry(load_catalog=False).register_provider("p", models=[{"id": "m"}])


def test_override_catalog_provider_then_unregister() -> None:
    registry = ModelRegistry()
    registry.register_provider("anthropic", base_url="http://proxy.local", headers={"X-Proxy": "1"})
    proxied = registry.require_model("anthropic", "claude-sonnet-4-5")
    assert proxied.base_url == "http://proxy.local"
    assert proxied.headers == {"X-Proxy": "1"}
    assert proxied.cost.input == 3
    registry.unregister_provider("anthropic")
    assert registry.require_model("anthropic", "claude-sonnet-4-5").base_url == "https://api.anthropic.com"


def test_override_unknown_provider_without_models_fails() -> None:
    with pytest.raises(KeyError):
        ModelRegistry(load_catalog=False).register_provider("ghost", base_url="http://x")


def test_resolve_api_key_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider("vllm", api="openai-completions", base_url="http://h/v1", api_key="fixed", models=[])
    assert registry.resolve_api_key("vllm") == "fixed"
    assert registry.resolve_api_key("vllm", StreamOptions(api_key="given")) == "given"
    assert registry.resolve_api_key("openai") is None
    monkeypatch.setenv("OPENAI_API_KEY", "env")
    assert registry.resolve_api_key("openai") == "env"


def test_model_equality_is_provider_and_id() -> None:
    a = require_model("openai", "gpt-5")
    b = a.model_copy(update={"max_tokens": 5})
    assert a == b
    assert len({a, b}) == 1
    assert "anthropic" in default_registry.providers()
