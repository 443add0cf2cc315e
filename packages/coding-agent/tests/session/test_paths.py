"""Agent dir, sessions root and per-cwd session dir naming (spec sessions.md §2)."""

from pathlib import Path

import pytest

from apex_coding_agent.paths import (
    default_session_dir,
    encode_cwd,
    get_agent_dir,
    resolve_session_dir,
)


def test_encode_cwd() -> None:
    assert encode_cwd("/a/b:c") == "--a-b-c--"
    assert encode_cwd("/home/u/my proj") == "--home-u-my proj--"


def test_agent_dir_env_and_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_DIR", "~/x")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert get_agent_dir() == tmp_path / "x"
    monkeypatch.delenv("APEX_CODE_CODING_AGENT_DIR")
    assert get_agent_dir() == tmp_path / ".apex-code" / "agent"
    assert default_session_dir("/a/b:c") == tmp_path / ".apex-code" / "agent" / "sessions" / "--a-b-c--"


def test_session_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert resolve_session_dir("/w", "/cli", "rel") == Path("/cli")
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_SESSION_DIR", "/env")
    assert resolve_session_dir("/w", None, "rel") == Path("/env")
    monkeypatch.delenv("APEX_CODE_CODING_AGENT_SESSION_DIR")
    assert resolve_session_dir("/w", None, "rel") == Path("/w/rel")
    assert resolve_session_dir("/w") == default_session_dir("/w")
