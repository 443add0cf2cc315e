"""The llama.cpp router's models in every mode of the real `apex-code` (not only inside the app)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from llama_router_stub import RouterState

CLI = [sys.executable, "-m", "apex_coding_agent.cli"]


def _run(args: list[str], tmp_path: Path, url: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir(exist_ok=True)
    agent.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
    env.update(APEX_CODE_CODING_AGENT_DIR=str(agent), LLAMA_BASE_URL=url, LLAMA_API_KEY="secret")
    return subprocess.run(
        [*CLI, *args], cwd=work, env=env, input=stdin, capture_output=True, text=True, timeout=60, check=False
    )


def test_list_models_shows_loaded_and_on_demand_router_models(router: tuple[str, RouterState], tmp_path: Path) -> None:
    url, _ = router
    proc = _run(["--list-models"], tmp_path, url)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert ["llama.cpp", "gemma-idle"] in [row[:2] for row in rows]
    assert ["llama.cpp", "qwen-loaded"] in [row[:2] for row in rows]


def test_print_mode_runs_a_router_model_by_either_spelling(router: tuple[str, RouterState], tmp_path: Path) -> None:
    url, state = router
    first = _run(["--model", "llama.cpp/gemma-idle", "--permission-mode", "plan", "-p", "hi"], tmp_path, url)
    second = _run(
        ["--provider", "llama.cpp", "--model", "qwen-loaded", "--permission-mode", "plan", "-p", "hi"], tmp_path, url
    )
    assert (first.returncode, first.stdout) == (0, "gemma-idle answered\n"), first.stderr
    assert (second.returncode, second.stdout) == (0, "qwen-loaded answered\n"), second.stderr
    assert state.chat_models == ["gemma-idle", "qwen-loaded"]


def test_rpc_starts_with_the_router_as_its_only_model_source(router: tuple[str, RouterState], tmp_path: Path) -> None:
    url, _ = router
    proc = _run(["--mode", "rpc", "--permission-mode", "plan"], tmp_path, url, stdin='{"id":"1","type":"get_state"}\n')
    assert proc.returncode == 0, proc.stderr
    response = next(json.loads(line) for line in proc.stdout.splitlines() if '"response"' in line)
    assert response["success"] is True
    assert response["data"]["model"]["provider"] == "llama.cpp"


def test_a_router_that_went_down_still_lists_its_remembered_models(
    router: tuple[str, RouterState], tmp_path: Path
) -> None:
    url, state = router
    assert _run(["--list-models"], tmp_path, url).returncode == 0
    state.api_key = "changed"  # every request now fails, as for a router that is not there
    proc = _run(["--list-models", "gemma"], tmp_path, url)
    assert proc.returncode == 0, proc.stderr
    assert "gemma-idle" in proc.stdout
