"""Issue 4 "Bad input": unusable settings/models.json give a warning naming the file and defaults, never a crash.

Bytes that are not UTF-8 (a file saved as UTF-16, say) and JSON nested past the parser's recursion limit are not
`json.JSONDecodeError`s, so they are checked here next to plain syntax errors. auth.json, permissions.json and
trust.json raise their own typed errors (the spec calls those files invalid), never a bare decoding error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apex_coding_agent.core.auth_storage import AuthError, AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.core.trust import TrustFileError, TrustStore, resolve_project_trusted

UNUSABLE = {
    "syntax": b"{not json",
    "utf16": '{"theme": "light"}'.encode("utf-16"),
    "latin1": '{"theme": "caf\xe9"}'.encode("latin-1"),
    "nested": b"[" * 100_000,
    "array": b"[1, 2]",
}


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


@pytest.mark.parametrize("content", UNUSABLE.values(), ids=UNUSABLE.keys())
def test_unusable_settings_files_warn_with_their_path_and_use_defaults(tmp_path: Path, content: bytes) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "proj"
    (agent).mkdir()
    (cwd / ".apex-code").mkdir(parents=True)
    (agent / "settings.json").write_bytes(content)
    (cwd / ".apex-code" / "settings.json").write_bytes(content)
    settings = SettingsManager.create(cwd, agent, project_trusted=True)
    warnings = [str(e) for e in settings.drain_errors()]
    assert len(warnings) == 2
    assert warnings[0].startswith(f"Warning: (load, global settings) {agent / 'settings.json'}: ")
    assert warnings[1].startswith(f"Warning: (load, project settings) {cwd / '.apex-code' / 'settings.json'}: ")
    assert settings.get("theme") is None
    assert settings.get_int("compaction.reserveTokens", 16384) == 16384
    assert (agent / "settings.json").read_bytes() == content  # left for the user to repair


@pytest.mark.parametrize("content", UNUSABLE.values(), ids=UNUSABLE.keys())
def test_unusable_models_json_warns_with_its_path_and_keeps_built_ins(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "models.json").write_bytes(content)
    runtime = ModelRuntime.create(tmp_path, env={})
    [warning] = runtime.drain_warnings()
    assert str(tmp_path / "models.json") in warning
    assert warning.endswith("using the built-in models only")
    assert runtime.registry.get_model("anthropic", "claude-sonnet-4-5") is not None
    assert (tmp_path / "models.json").read_bytes() == content


@pytest.mark.parametrize("content", UNUSABLE.values(), ids=UNUSABLE.keys())
def test_unusable_auth_json_is_an_auth_error_naming_the_file(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "auth.json").write_bytes(content)
    storage = AuthStorage(tmp_path / "auth.json")
    with pytest.raises(AuthError, match=str(tmp_path / "auth.json")):
        storage.get("anthropic")


@pytest.mark.parametrize("content", UNUSABLE.values(), ids=UNUSABLE.keys())
async def test_unusable_permissions_json_blocks_every_call(tmp_path: Path, content: bytes) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "proj"
    agent.mkdir()
    cwd.mkdir()
    (agent / "permissions.json").write_bytes(content)
    gate = PermissionGate.load(cwd, agent, policy_path=agent / "no-policy.json", flag_mode="bypassPermissions")
    allowed, reason = await gate.authorize("read", {"path": "a.txt"})
    assert not allowed
    assert reason == "Permission configuration could not be loaded (user); refusing to run read."


@pytest.mark.parametrize("content", UNUSABLE.values(), ids=UNUSABLE.keys())
def test_unusable_trust_json_is_a_trust_file_error(tmp_path: Path, content: bytes) -> None:
    cwd = tmp_path / "proj"
    (cwd / ".apex-code").mkdir(parents=True)
    (cwd / ".apex-code" / "settings.json").write_text(json.dumps({"theme": "x"}))
    store = TrustStore(tmp_path / "trust.json")
    store.path.write_bytes(content)
    with pytest.raises(TrustFileError, match=str(store.path)):
        resolve_project_trusted(cwd, store, home=tmp_path / "home")


def test_a_broken_settings_file_warns_once_across_reloads(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text("{broken")
    settings = SettingsManager.create(tmp_path, agent, project_trusted=False)
    settings.set_project_trusted(True)  # the startup re-reads both files once trust is decided
    settings.reload()
    assert len(settings.drain_errors()) == 1
    (agent / "settings.json").write_text('{"theme": "light"}')
    settings.reload()
    assert settings.drain_errors() == [] and settings.get("theme") == "light"
    (agent / "settings.json").write_text("{broken again")
    settings.reload()
    assert len(settings.drain_errors()) == 1  # broken anew: reported anew
