"""settings-and-trust.md §4-5: models.json providers, defaults, overrides, key order (checks 7-9)."""

import json
from pathlib import Path
from typing import Any

import pytest

from apex_ai.credentials import apply_credentials
from apex_ai.options import SimpleStreamOptions
from apex_ai.types import Model
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.extensions.api import ExtensionRuntime
from apex_coding_agent.extensions.types import ProviderRegistration


def _runtime(tmp_path: Path, models: Any, env: dict[str, str] | None = None) -> ModelRuntime:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "models.json").write_text(models if isinstance(models, str) else json.dumps(models))
    return ModelRuntime.create(agent, env=env or {})


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "OPENAI_API_KEY", "MY_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_local_provider_model_gets_defaults(tmp_path: Path) -> None:
    runtime = _runtime(
        tmp_path,
        {
            "providers": {
                "ollama": {
                    "baseUrl": "http://127.0.0.1:11434/v1",
                    "api": "openai-completions",
                    "apiKey": "ollama",
                    "models": [{"id": "qwen3:8b"}],
                }
            }
        },
    )
    model = runtime.registry.require_model("ollama", "qwen3:8b")
    assert (model.context_window, model.max_tokens, model.input, model.reasoning) == (128000, 16384, ["text"], False)
    assert model.name == "qwen3:8b" and model.api == "openai-completions"
    assert model.base_url == "http://127.0.0.1:11434/v1"
    assert runtime.get_api_key("ollama") == "ollama"
    assert runtime.is_available(model)


def test_unresolvable_key_makes_models_unavailable_and_commands_resolve(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    runtime = _runtime(
        tmp_path,
        {
            "providers": {
                "var": {
                    "baseUrl": "http://127.0.0.1:1/v1",
                    "api": "openai-completions",
                    "apiKey": "$MY_KEY",
                    "models": [{"id": "m"}],
                },
                "cmd": {
                    "baseUrl": "http://127.0.0.1:2/v1",
                    "api": "openai-completions",
                    "apiKey": f"!touch {marker} && echo k",
                    "models": [{"id": "m"}],
                },
                "lit": {
                    "baseUrl": "http://127.0.0.1:3/v1",
                    "api": "openai-completions",
                    "apiKey": "$$x",
                    "models": [{"id": "m"}],
                },
            }
        },
    )
    assert not runtime.is_available(runtime.registry.require_model("var", "m"))
    assert runtime.get_api_key("var") is None
    available = {m.provider for m in runtime.available_models()}
    assert {"cmd", "lit"} <= available and "var" not in available
    assert not marker.exists()  # availability never runs commands
    assert runtime.get_api_key("cmd") == "k"
    assert marker.exists()
    assert runtime.get_api_key("lit") == "$x"


def test_auth_json_key_beats_environment(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, {"providers": {}}, env={"ANTHROPIC_API_KEY": "from-env"})
    assert runtime.get_api_key("anthropic") == "from-env"
    runtime.auth.set("anthropic", {"type": "api_key", "key": "from-auth"})
    assert runtime.get_api_key("anthropic") == "from-auth"


def test_built_in_provider_base_url_override_keeps_models(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, {"providers": {"anthropic": {"baseUrl": "http://127.0.0.1:9999"}}})
    models = runtime.registry.list_models("anthropic")
    assert len(models) > 1
    assert {m.base_url for m in models} == {"http://127.0.0.1:9999"}


def test_models_of_a_built_in_provider_are_upserted_by_id(tmp_path: Path) -> None:
    runtime = _runtime(
        tmp_path,
        {
            "providers": {
                "openai": {
                    "models": [
                        {"id": "gpt-4o", "name": "Mine", "api": "openai-completions"},
                        {"id": "new-one", "api": "openai-responses"},
                    ]
                }
            }
        },
    )
    ids = [m.id for m in runtime.registry.list_models("openai")]
    assert "new-one" in ids and ids.count("gpt-4o") == 1
    assert runtime.registry.require_model("openai", "gpt-4o").name == "Mine"


def test_model_overrides_patch_built_in_models(tmp_path: Path) -> None:
    runtime = _runtime(
        tmp_path,
        {
            "providers": {
                "anthropic": {"modelOverrides": {"claude-sonnet-4-5": {"contextWindow": 1000000, "cost": {"input": 6}}}}
            }
        },
    )
    model = runtime.registry.require_model("anthropic", "claude-sonnet-4-5")
    assert model.context_window == 1000000
    assert model.cost.input == 6 and model.cost.output > 0


def test_bad_models_file_warns_and_keeps_built_ins(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, "{oops")
    warnings = runtime.drain_warnings()
    assert len(warnings) == 1 and "models.json" in warnings[0]
    assert runtime.registry.get_model("anthropic", "claude-sonnet-4-5") is not None


def test_new_provider_without_base_url_is_reported(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, {"providers": {"x": {"api": "openai-completions", "models": [{"id": "m"}]}}})
    assert runtime.registry.get_model("x", "m") is None
    assert any("baseUrl" in w for w in runtime.drain_warnings())


def test_headers_and_auth_header_resolved_per_request(tmp_path: Path) -> None:
    runtime = _runtime(
        tmp_path,
        {
            "providers": {
                "gw": {
                    "baseUrl": "http://127.0.0.1:4/v1",
                    "api": "openai-completions",
                    "apiKey": "k",
                    "authHeader": True,
                    "headers": {"X-Team": "$TEAM", "X-Gone": "$NOPE"},
                    "models": [{"id": "m"}],
                }
            }
        },
        env={"TEAM": "blue"},
    )
    assert runtime.request_headers("gw", "k") == {"X-Team": "blue", "Authorization": "Bearer k"}
    # The runtime is the session's one credential resolver: a request gets its key and headers from it alone.
    model = runtime.registry.require_model("gw", "m")
    options = SimpleStreamOptions(credentials=runtime, headers={"X-Trace": "t"})
    apply_credentials(model, options)
    assert options.api_key == "k"
    assert options.headers == {"X-Trace": "t", "X-Team": "blue", "Authorization": "Bearer k"}


def test_reload_picks_up_changes(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, {"providers": {}})
    assert runtime.registry.get_model("local", "m") is None
    (tmp_path / "agent" / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local": {
                        "baseUrl": "http://127.0.0.1:8080/v1",
                        "api": "openai-completions",
                        "models": [{"id": "m"}],
                    }
                }
            }
        )
    )
    runtime.reload()
    assert runtime.registry.get_model("local", "m") is not None


def test_runtime_key_from_the_command_line_makes_models_available(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, {"providers": {}})
    model = runtime.registry.require_model("openai", "gpt-4o")
    assert not runtime.is_available(model)
    runtime.auth.set_runtime_key("openai", "sk-cli")
    assert runtime.is_available(model)
    assert runtime.get_api_key("openai") == "sk-cli"


def _extension_provider(runtime: ModelRuntime, name: str, api_key: str) -> Model:
    """`name` registered the way an extension's `pi.register_provider(name, config)` does."""
    config = {
        "baseUrl": "http://127.0.0.1:1/v1",
        "api": "openai-completions",
        "apiKey": api_key,
        "models": [{"id": "m"}],
    }
    _register(_extension_layer(runtime), name, config)
    return runtime.registry.require_model(name, "m")


def test_an_extension_providers_api_key_is_resolved_like_a_models_json_key(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    runtime = _runtime(tmp_path, {"providers": {}}, env={"EXT_KEY": "from-var"})
    literal = _extension_provider(runtime, "lit", "plain-key")
    variable = _extension_provider(runtime, "var", "Bearer-${EXT_KEY}")
    unset = _extension_provider(runtime, "unset", "$MY_KEY")
    command = _extension_provider(runtime, "cmd", f"!touch {marker} && echo from-cmd")
    assert [runtime.is_available(m) for m in (literal, variable, unset, command)] == [True, True, False, True]
    assert not marker.exists()  # availability never runs commands
    keys = [runtime.get_api_key(name) for name in ("lit", "var", "unset", "cmd")]
    assert keys == ["plain-key", "Bearer-from-var", None, "from-cmd"]
    options = SimpleStreamOptions(credentials=runtime)
    apply_credentials(variable, options)
    assert options.api_key == "Bearer-from-var"


def test_an_extension_key_comes_last_in_the_key_order(tmp_path: Path) -> None:
    """`--api-key` -> auth.json -> environment -> models.json `apiKey` -> the extension's `apiKey`."""
    runtime = _runtime(
        tmp_path,
        {
            "providers": {
                "both": {
                    "baseUrl": "http://127.0.0.1:2/v1",
                    "api": "openai-completions",
                    "apiKey": "from-models-json",
                    "models": [{"id": "m"}],
                }
            }
        },
        env={"OPENAI_API_KEY": "from-env"},
    )
    _extension_provider(runtime, "both", "from-extension")
    _extension_provider(runtime, "openai", "from-extension")
    assert runtime.get_api_key("both") == "from-models-json"
    assert runtime.get_api_key("openai") == "from-env"
    runtime.auth.set("openai", {"type": "api_key", "key": "from-auth"})
    assert runtime.get_api_key("openai") == "from-auth"
    runtime.auth.set_runtime_key("openai", "from-cli")
    assert runtime.get_api_key("openai") == "from-cli"


def _extension_layer(runtime: ModelRuntime) -> ExtensionRuntime:
    """An extension runtime whose provider registrations go where a session sends them (the `ModelRuntime`)."""
    extensions = ExtensionRuntime()
    extensions.flush_providers(runtime)
    return extensions


def _register(extensions: ExtensionRuntime, name: str, config: dict[str, Any] | None) -> None:
    """What `pi.register_provider(name, config)` (or `pi.unregister_provider(name)` for None) does once flushed."""
    extensions.queue_provider(ProviderRegistration(name, config, "ext"))


def _snapshot(runtime: ModelRuntime, names: list[str]) -> dict[str, list[dict[str, Any]]]:
    return {name: [m.to_wire() for m in runtime.registry.list_models(name)] for name in names}


def test_reload_keeps_extension_providers_and_applies_models_json_changes(tmp_path: Path) -> None:
    openai = {"baseUrl": "http://127.0.0.1:3/v1", "api": "openai-completions"}
    runtime = _runtime(
        tmp_path,
        {
            "providers": {
                "same": {**openai, "models": [{"id": "from-json"}]},
                "json": {**openai, "models": [{"id": "a"}]},
            }
        },
        env={"TEAM": "blue"},
    )
    extensions = _extension_layer(runtime)
    _register(extensions, "same", {**openai, "apiKey": "k", "headers": {"X-Team": "$TEAM"}, "models": [{"id": "e"}]})
    _register(extensions, "other", {**openai, "models": [{"id": "o", "contextWindow": 4096}]})
    _register(extensions, "json", {"baseUrl": "http://127.0.0.1:4/v1"})  # an override of the models.json provider
    extension_names = ["same", "other"]
    before = _snapshot(runtime, extension_names)
    headers_before = runtime.request_headers("same", "k")
    assert [m["id"] for m in before["same"]] == ["e"]

    (tmp_path / "agent" / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "same": {**openai, "models": [{"id": "changed"}]},
                    "json": {**openai, "models": [{"id": "a"}, {"id": "b"}]},
                    "new": {**openai, "models": [{"id": "n"}]},
                }
            }
        )
    )
    for _ in range(2):  # reloading twice changes nothing more
        runtime.reload()
        assert _snapshot(runtime, extension_names) == before
        assert runtime.request_headers("same", "k") == headers_before == {"X-Team": "blue"}
        assert runtime.get_api_key("same") == "k"
        # models.json changes apply; the extension's override still sits on top of them.
        assert [(m.id, m.base_url) for m in runtime.registry.list_models("json")] == [
            ("a", "http://127.0.0.1:4/v1"),
            ("b", "http://127.0.0.1:4/v1"),
        ]
        assert [m.id for m in runtime.registry.list_models("new")] == ["n"]
    assert runtime.drain_warnings() == []

    # Unregistering the extension's provider brings back the models.json provider of that name (as reloaded).
    _register(extensions, "same", None)
    _register(extensions, "other", None)
    assert [m.id for m in runtime.registry.list_models("same")] == ["changed"]
    assert runtime.request_headers("same", "k") == {}
    assert runtime.registry.get_provider("other") is None
    runtime.reload()
    assert runtime.registry.get_provider("other") is None


def test_an_extension_providers_headers_and_auth_header_work_like_models_json(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    runtime = _runtime(tmp_path, {"providers": {}}, env={"TEAM": "blue"})
    extensions = _extension_layer(runtime)
    headers = {"X-Team": "$TEAM", "X-Unset": "$NOT_SET_ANYWHERE", "X-Cmd": f"!touch {marker} && echo from-cmd"}
    config = {"base_url": "http://127.0.0.1:5/v1", "api": "openai-completions", "headers": headers, "models": []}
    _register(extensions, "snake", {**config, "auth_header": True, "models": [{"id": "m"}]})
    model = runtime.registry.require_model("snake", "m")
    assert not marker.exists()  # registering (and listing) never runs a command
    assert not any("$" in value or "!" in value for value in (model.headers or {}).values())
    assert runtime.request_headers("snake", "key") == {
        "X-Team": "blue",
        "X-Cmd": "from-cmd",
        "Authorization": "Bearer key",
    }
    options = SimpleStreamOptions(credentials=runtime, api_key="key")
    apply_credentials(model, options)
    assert (options.headers or {}).get("X-Team") == "blue"


def test_an_unusable_extension_provider_config_is_reported_and_changes_nothing(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, {"providers": {}})
    reported: list[tuple[str, str]] = []
    extensions = ExtensionRuntime(report=lambda path, event, exc: reported.append((event, str(exc))))
    extensions.flush_providers(runtime)
    providers_before = runtime.registry.providers()
    _register(extensions, "bad", {"api": "openai-completions", "headers": {"X-N": 1}, "models": [{"id": "m"}]})
    _register(extensions, "worse", {"models": "m"})
    assert reported == [
        ("register_provider", "register_provider: provider 'bad': \"headers\" must map names to strings"),
        ("register_provider", 'register_provider: provider \'worse\': "models" must be a list of objects with an "id"'),
    ]
    assert runtime.registry.providers() == providers_before
    runtime.reload()
    assert runtime.registry.providers() == providers_before
