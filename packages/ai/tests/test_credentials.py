"""One credential path (spec ai.md §10): a caller's `Credentials` is the only source of keys and credential headers."""

from collections.abc import Iterator, Mapping

import pytest

from apex_ai.credentials import Credentials, apply_credentials, resolve_credentials
from apex_ai.models import ModelRegistry, default_registry
from apex_ai.options import StreamOptions
from apex_ai.stream import complete
from apex_ai.types import Context, Model, UserMessage

CTX = Context(messages=[UserMessage(content="hi", timestamp=1)])
MODEL = Model(id="m1", api="test-api", provider="acme")


class Store:
    def __init__(self, keys: dict[str, str]) -> None:
        self.keys = keys

    def get_api_key(self, provider: str) -> str | None:
        return self.keys.get(provider)


class TeamCredentials(Credentials):
    def request_headers(self, provider: str, api_key: str | None) -> Mapping[str, str | None]:
        return {"X-Team": "blue", "Authorization": f"Bearer {api_key}"}


@pytest.fixture
def global_key() -> Iterator[None]:
    """Provider `acme` is registered in the process-wide registry with a key of its own."""
    default_registry.register_provider("acme", api="test-api", models=[{"id": "m1"}], api_key="global")
    yield
    default_registry.unregister_provider("acme")


def test_lookup_order_is_store_environment_configured_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider("openai", api="openai-completions", models=[{"id": "m"}], api_key="configured")
    credentials = Credentials(Store({}), env={}, registry=registry)
    assert credentials.get_api_key("openai") == "configured"
    assert Credentials(Store({}), env={"OPENAI_API_KEY": "env"}, registry=registry).get_api_key("openai") == "env"
    assert Credentials(Store({"openai": "stored"}), env={"OPENAI_API_KEY": "env"}).get_api_key("openai") == "stored"


@pytest.mark.usefixtures("global_key")
def test_a_callers_credentials_never_fall_back_to_the_global_registry() -> None:
    assert resolve_credentials(MODEL, StreamOptions()) == ("global", {})
    assert resolve_credentials(MODEL, StreamOptions(credentials=Credentials(env={}))) == (None, {})


@pytest.mark.usefixtures("global_key")
async def test_stream_reports_a_missing_key_of_the_callers_credentials(test_api: list[object]) -> None:
    message = await complete(MODEL, CTX, StreamOptions(credentials=Credentials(env={})))
    assert message.stop_reason == "error" and message.error_message == "No API key for provider: acme"
    assert test_api == []


def test_headers_are_merged_once() -> None:
    options = StreamOptions(credentials=TeamCredentials(Store({"acme": "k"})), headers={"X-Trace": "t"})
    apply_credentials(MODEL, options)
    assert options.api_key == "k"
    assert options.headers == {"X-Trace": "t", "X-Team": "blue", "Authorization": "Bearer k"}
    options.headers = {"X-Trace": "t"}  # a layer in between (an extension hook) drops the credential headers
    apply_credentials(MODEL, options)
    assert options.headers == {"X-Trace": "t"}


async def test_stream_sends_the_credential_headers_and_leaves_the_callers_options_alone(
    test_api: list[tuple[str | None, StreamOptions]],
) -> None:
    options = StreamOptions(credentials=TeamCredentials(Store({"acme": "k"})))
    assert (await complete(MODEL, CTX, options)).stop_reason == "stop"
    key, sent = test_api[0]
    assert key == "k" and sent.headers == {"X-Team": "blue", "Authorization": "Bearer k"}
    assert options.headers is None and options.api_key is None and not options.credentials_applied
