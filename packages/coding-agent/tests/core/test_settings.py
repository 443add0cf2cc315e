"""settings-and-trust.md §2 and §3: merging, trust gating, bad files, key-wise writes, legacy env names."""

import io
import json
from pathlib import Path

import pytest

from apex_coding_agent.core import env as apex_env
from apex_coding_agent.core.settings import SettingsManager, deep_merge, migrate_settings


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    agent_dir, cwd = tmp_path / "agent", tmp_path / "project"
    cwd.mkdir()
    _write(agent_dir / "settings.json", {"compaction": {"enabled": True, "reserveTokens": 16384}})
    _write(cwd / ".apex-code" / "settings.json", {"compaction": {"reserveTokens": 8192}})
    return agent_dir, cwd


def test_trusted_project_overrides_key_by_key(dirs: tuple[Path, Path]) -> None:
    agent_dir, cwd = dirs
    settings = SettingsManager.create(cwd, agent_dir, project_trusted=True)
    assert settings.get("compaction") == {"enabled": True, "reserveTokens": 8192}


def test_untrusted_project_is_ignored(dirs: tuple[Path, Path]) -> None:
    agent_dir, cwd = dirs
    settings = SettingsManager.create(cwd, agent_dir, project_trusted=False)
    assert settings.get("compaction.reserveTokens") == 16384
    settings.set_project_trusted(True)
    assert settings.get("compaction.reserveTokens") == 8192


def test_deep_merge_replaces_arrays_scalars_and_explicit_null() -> None:
    merged = deep_merge({"a": {"b": 1, "c": [1, 2]}, "d": 1}, {"a": {"c": [3]}, "d": None})
    assert merged == {"a": {"b": 1, "c": [3]}, "d": None}


def test_malformed_global_file_uses_defaults_and_is_kept_until_a_setter_runs(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "settings.json").write_text("{not json")
    settings = SettingsManager.create(tmp_path, agent_dir)
    errors = settings.drain_errors()
    assert len(errors) == 1
    assert str(errors[0]).startswith("Warning: (load, global settings) ")
    assert "invalid JSON" in str(errors[0])
    assert settings.drain_errors() == []
    assert settings.get_bool("compaction.enabled", True) is True
    assert (agent_dir / "settings.json").read_text() == "{not json"
    settings.set("theme", "light")
    assert json.loads((agent_dir / "settings.json").read_text()) == {"theme": "light"}


def test_setter_writes_only_its_key_and_keeps_keys_added_by_others(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    _write(agent_dir / "settings.json", {"theme": "dark"})
    settings = SettingsManager.create(tmp_path, agent_dir)
    # Another process adds a key after we loaded the file.
    _write(agent_dir / "settings.json", {"theme": "dark", "quietStartup": True})
    settings.set("retry.maxRetries", 5)
    on_disk = json.loads((agent_dir / "settings.json").read_text())
    assert on_disk == {"theme": "dark", "quietStartup": True, "retry": {"maxRetries": 5}}
    settings.unset("retry.maxRetries")
    assert json.loads((agent_dir / "settings.json").read_text())["retry"] == {}


def test_directory_is_created_only_when_writing(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    settings = SettingsManager.create(tmp_path, agent_dir)
    assert not agent_dir.exists()
    settings.set("theme", "light")
    assert (agent_dir / "settings.json").read_text().endswith("\n")


def test_global_only_keys_are_not_read_from_the_project(tmp_path: Path) -> None:
    agent_dir, cwd = tmp_path / "agent", tmp_path / "p"
    _write(cwd / ".apex-code" / "settings.json", {"defaultProjectTrust": "always", "httpProxy": "http://x"})
    settings = SettingsManager.create(cwd, agent_dir, project_trusted=True)
    assert settings.get("defaultProjectTrust") is None
    assert settings.get("httpProxy") is None


def test_legacy_keys_are_migrated_on_load() -> None:
    migrated = migrate_settings(
        {
            "queueMode": "all",
            "websockets": True,
            "skills": {"enableSkillCommands": False, "customDirectories": ["~/s"]},
            "retry": {"maxDelayMs": 1000},
        }
    )
    assert migrated == {
        "steeringMode": "all",
        "transport": "websocket",
        "enableSkillCommands": False,
        "skills": ["~/s"],
        "retry": {"provider": {"maxRetryDelayMs": 1000}},
    }


def test_typed_getters_fall_back_on_invalid_values() -> None:
    settings = SettingsManager.in_memory({"editorPaddingX": 9, "treeFilterMode": "bogus", "quietStartup": "yes"})
    assert settings.get_int("editorPaddingX", 0, minimum=0, maximum=3) == 0
    assert settings.get_choice("treeFilterMode", ("default", "no-tools"), "default") == "default"
    assert settings.get_bool("quietStartup", False) is False


def test_overrides_win_and_are_not_written(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    _write(agent_dir / "settings.json", {"theme": "dark"})
    settings = SettingsManager.create(tmp_path, agent_dir)
    settings.apply_overrides({"theme": "light"})
    assert settings.get("theme") == "light"
    settings.set("quietStartup", True)
    assert json.loads((agent_dir / "settings.json").read_text()) == {"theme": "dark", "quietStartup": True}


def test_legacy_env_name_works_with_one_deprecation_line() -> None:
    apex_env._reset_warnings_for_tests()
    out = io.StringIO()
    env = {"PI_OFFLINE": "1"}
    assert apex_env.is_offline(env, warn_stream=out) is True
    assert apex_env.is_offline(env, warn_stream=out) is True
    assert out.getvalue() == "Apex Code: PI_OFFLINE is deprecated; use APEX_CODE_OFFLINE.\n"


def test_canonical_env_name_wins_over_a_different_legacy_value() -> None:
    apex_env._reset_warnings_for_tests()
    out = io.StringIO()
    value = apex_env.get_env(
        "CACHE_RETENTION", {"APEX_CODE_CACHE_RETENTION": "long", "PI_CACHE_RETENTION": "short"}, warn_stream=out
    )
    assert value == "long"
    assert "both APEX_CODE_CACHE_RETENTION and legacy PI_CACHE_RETENTION are set" in out.getvalue()
    assert apex_env.child_env_pairs("SESSION_ID", "s1") == {"APEX_CODE_SESSION_ID": "s1", "PI_SESSION_ID": "s1"}
