"""API key lookup order (spec ai.md §10)."""

import pytest

from apex_ai.credentials import resolve_api_key
from apex_ai.env_api_keys import (
    ENV_API_KEYS,
    get_env_api_key,
    is_anthropic_oauth_token,
    llama_base_url,
)
from apex_ai.options import StreamOptions


class Store:
    def __init__(self, keys: dict[str, str]) -> None:
        self.keys = keys
        self.asked: list[str] = []

    def get_api_key(self, provider: str) -> str | None:
        self.asked.append(provider)
        return self.keys.get(provider)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for names in ENV_API_KEYS.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("LLAMA_BASE_URL", raising=False)


def test_table_covers_named_providers() -> None:
    assert ENV_API_KEYS["openai"] == ("OPENAI_API_KEY",)
    assert ENV_API_KEYS["huggingface"] == ("HF_TOKEN",)
    assert ENV_API_KEYS["moonshotai"] == ("MOONSHOT_API_KEY",)
    assert ENV_API_KEYS["vercel-ai-gateway"] == ("AI_GATEWAY_API_KEY",)


def test_anthropic_auth_token_is_checked_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "api-key")
    assert get_env_api_key("anthropic") == "api-key"
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", "oauth")
    assert get_env_api_key("anthropic") == "oauth"
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "bearer")
    assert get_env_api_key("anthropic") == "bearer"


def test_empty_values_are_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "api-key")
    assert get_env_api_key("anthropic") == "api-key"


def test_options_env_wins_over_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-os")
    assert get_env_api_key("openai", {"OPENAI_API_KEY": "from-options"}) == "from-options"
    assert get_env_api_key("openai", {"OTHER": "x"}) == "from-os"


def test_unknown_provider_has_no_env_key() -> None:
    assert get_env_api_key("nobody") is None


def test_llama_cpp_key_is_optional(monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_env_api_key("llama.cpp") == "local"
    monkeypatch.setenv("LLAMA_API_KEY", "secret")
    assert get_env_api_key("llama.cpp") == "secret"


def test_llama_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    assert llama_base_url() == "http://127.0.0.1:8080"
    assert llama_base_url({"LLAMA_BASE_URL": "http://box:9000/"}) == "http://box:9000"


def test_resolve_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "env")
    store = Store({"openai": "stored"})
    assert resolve_api_key("openai", StreamOptions(api_key="explicit", credentials=store)) == "explicit"
    assert store.asked == []
    assert resolve_api_key("openai", StreamOptions(credentials=store)) == "stored"
    assert resolve_api_key("openai", StreamOptions(credentials=Store({}))) == "env"
    assert resolve_api_key("openai", StreamOptions(env={"OPENAI_API_KEY": "opt-env"})) == "opt-env"
    assert resolve_api_key("openai") == "env"


def test_resolve_missing_key_is_none() -> None:
    assert resolve_api_key("anthropic", StreamOptions()) is None


def test_oauth_token_detection() -> None:
    assert is_anthropic_oauth_token("sk-ant-oat01-abc")
    assert not is_anthropic_oauth_token("sk-ant-api03-abc")
    assert not is_anthropic_oauth_token(None)
