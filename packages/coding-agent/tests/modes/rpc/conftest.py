"""RPC mode tests: every test gets a harness over its own tmp dirs (agent dir pointed there by env)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from rpc_harness import RpcHarness  # noqa: E402 - needs the path above


@pytest.fixture(autouse=True)
def _agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    agent = tmp_path / "agent"
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("APEX_CODE_CODING_AGENT_SESSION_DIR", raising=False)
    return agent


@pytest.fixture
def rpc(tmp_path: Path) -> RpcHarness:
    return RpcHarness(tmp_path)
