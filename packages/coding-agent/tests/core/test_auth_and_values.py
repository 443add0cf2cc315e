"""settings-and-trust.md §4 value references and §5 auth.json."""

import json
import stat
from pathlib import Path

import pytest

from apex_coding_agent.core.auth_storage import AuthError, AuthStorage
from apex_coding_agent.core.config_values import interpolate, is_resolvable, resolve_value


def test_variable_references() -> None:
    env = {"MY_KEY": "k1", "FOO_BAR": "fb"}
    assert resolve_value("$MY_KEY", env) == "k1"
    assert resolve_value("pre-${MY_KEY}-post", env) == "pre-k1-post"
    assert resolve_value("$FOO_BAR", env) == "fb"
    assert resolve_value("$$x", env) == "$x"
    assert resolve_value("$!x", env) == "!x"
    assert resolve_value("MY_KEY", env) == "MY_KEY"  # a bare name is a literal
    assert resolve_value("$MISSING", env) is None
    assert interpolate("a $MISSING b", env) is None


def test_command_reference_runs_only_when_asked() -> None:
    assert resolve_value("!echo k") == "k"
    assert resolve_value("!exit 3") is None
    # Availability checks never execute commands: a marker file proves it.
    marker = Path("ran")
    assert is_resolvable(f"!touch {marker}") is True
    assert not marker.exists()
    assert is_resolvable("$NOPE_NOT_SET", {}) is False


def test_auth_file_is_created_0600_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "auth.json"
    store = AuthStorage(path, env={"SECRET": "from-env-ref"})
    store.set("anthropic", {"type": "api_key", "key": "sk-stored"})
    store.set("openai", {"type": "api_key", "key": "$SECRET"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["anthropic"] == {"type": "api_key", "key": "sk-stored"}
    assert store.get_api_key("anthropic") == "sk-stored"
    assert store.get_api_key("openai") == "from-env-ref"
    store.set_runtime_key("anthropic", "sk-cli")
    assert store.get_api_key("anthropic") == "sk-cli"
    store.remove("openai")
    assert store.get_api_key("openai") is None
    assert "openai" not in json.loads(path.read_text())


def test_invalid_credential_shape_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text(json.dumps({"groq": {"type": "api_key", "key": 5}, "openai": {"type": "api_key", "key": "sk"}}))
    with pytest.raises(AuthError, match='Invalid auth.json credential for provider "groq"'):
        AuthStorage(path).get("groq")
    # Key lookups ignore the bad entry (start-up reports it), so the other providers keep working.
    store = AuthStorage(path)
    assert store.problems() == [f'{path}: invalid credential for provider "groq" (ignored)']
    assert store.get_api_key("groq") is None and not store.has_credential("groq")
    assert store.get_api_key("openai") == "sk"
    with pytest.raises(AuthError, match='Invalid auth.json credential for provider "x"'):
        AuthStorage(path).set("x", {"type": "password"})


def test_provider_scoped_env(tmp_path: Path) -> None:
    store = AuthStorage(tmp_path / "auth.json")
    store.set("llama.cpp", {"type": "api_key", "env": {"LLAMA_BASE_URL": "http://127.0.0.1:9"}})
    assert store.provider_env("llama.cpp") == {"LLAMA_BASE_URL": "http://127.0.0.1:9"}
    assert store.get_api_key("llama.cpp") is None
