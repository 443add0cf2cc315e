"""settings-and-trust.md checks 5, 6, 10 and 12 end to end, where the unit tests only covered the pieces.

- 5: `APEX_CODE_CODING_AGENT_DIR=~/x` puts the global settings at `~/x/settings.json`, expanded.
- 6: only `PI_OFFLINE=1` set → offline, one deprecation line on the real stderr.
- 10: a print-mode startup applies project settings with `--approve` or a saved `true` for a parent directory,
  and ignores them with no decision (the last case is also in test_cli_startup.py).
- 12: a project with only `AGENTS.md` needs no trust; its context file is loaded even for an untrusted project.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apex_ai.models import ModelRegistry
from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.cli.startup import build_runtime_from_args
from apex_coding_agent.core import env as apex_env
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.core.trust import TrustStore, resolve_project_trusted
from apex_coding_agent.paths import get_agent_dir
from apex_coding_agent.runtime import create_agent_session
from apex_coding_agent.session import SessionManager


def test_check_5_agent_dir_with_tilde_holds_the_global_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_DIR", "~/x")
    agent = get_agent_dir()
    assert agent == tmp_path / "x"
    settings = SettingsManager.create(tmp_path, agent)
    settings.set("theme", "light")
    assert json.loads((tmp_path / "x" / "settings.json").read_text()) == {"theme": "light"}
    assert not (tmp_path / "~").exists()


def test_check_6_legacy_offline_variable_prints_one_line_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    apex_env._reset_warnings_for_tests()
    env = {"PI_OFFLINE": "1"}
    assert apex_env.is_offline(env) is True
    assert apex_env.is_offline(env) is True
    captured = capsys.readouterr()
    assert captured.err == "Apex Code: PI_OFFLINE is deprecated; use APEX_CODE_OFFLINE.\n"
    assert captured.out == ""


def _project(tmp_path: Path) -> tuple[Path, Path]:
    work, agent = tmp_path / "parent" / "work", tmp_path / "agent"
    (work / ".apex-code").mkdir(parents=True)
    (work / ".apex-code" / "settings.json").write_text(json.dumps({"enabledModels": ["local/m-c"]}))
    agent.mkdir()
    provider = {
        "baseUrl": "http://127.0.0.1:9/v1",
        "api": "openai-completions",
        "apiKey": "test-key",
        "models": [{"id": m} for m in ("m-a", "m-b", "m-c")],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    return work, agent


async def _print_mode_scope(work: Path, agent: Path, *flags: str) -> tuple[bool, list[str]]:
    args = parse_args(["--model", "local/m-a", "--no-session", *flags, "-p", "hi"])
    build = await build_runtime_from_args(args, cwd=str(work), agent_dir=agent, mode="print")
    assert build.runtime is not None, build.errors
    try:
        return build.project_trusted, [s.model.id for s in build.runtime.session.scoped_models]
    finally:
        await build.runtime.dispose()


async def test_check_10_print_mode_applies_project_settings_only_when_trusted(tmp_path: Path) -> None:
    work, agent = _project(tmp_path)
    assert await _print_mode_scope(work, agent) == (False, [])
    assert await _print_mode_scope(work, agent, "--approve") == (True, ["m-c"])
    assert not (agent / "trust.json").exists()  # --approve saves nothing
    TrustStore(agent / "trust.json").save({work.parent: True})
    assert await _print_mode_scope(work, agent) == (True, ["m-c"])


async def test_check_12_agents_md_needs_no_trust_and_loads_in_an_untrusted_project(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "AGENTS.md").write_text("Plain project rules.")
    decision = resolve_project_trusted(plain, TrustStore(tmp_path / "trust.json"), home=tmp_path / "home")
    assert (decision.trusted, decision.reason) == (True, "no-resources")

    configured = tmp_path / "configured"
    (configured / ".apex-code").mkdir(parents=True)
    (configured / ".apex-code" / "SYSTEM.md").write_text("PROJECT SYSTEM")
    (configured / "AGENTS.md").write_text("Configured project rules.")
    store = TrustStore(tmp_path / "trust.json")
    store.save({configured: False})
    declined = resolve_project_trusted(configured, store, home=tmp_path / "home")
    assert (declined.trusted, declined.reason) == (False, "saved")

    result = await create_agent_session(
        cwd=str(configured),
        agent_dir=str(tmp_path / "agent"),
        session_manager=SessionManager.in_memory(str(configured)),
        settings_manager=SettingsManager.in_memory({}),
        model_runtime=ModelRuntime(None, AuthStorage.in_memory(), registry=ModelRegistry(load_catalog=False)),
        permission_gate=PermissionGate(configured, flag_mode="bypassPermissions"),
        project_trusted=declined.trusted,
    )
    prompt = result.session.base_system_prompt
    assert f'<project_instructions path="{configured / "AGENTS.md"}">\nConfigured project rules.\n' in prompt
    assert "PROJECT SYSTEM" not in prompt
