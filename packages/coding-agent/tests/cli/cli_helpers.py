"""Running the real `apex-code` as a subprocess against a scripted model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from apex_ai.scripted_server import ScriptedModelServer

CLI = [sys.executable, "-m", "apex_coding_agent.cli"]


def write_models(agent_dir: Path, server: ScriptedModelServer, api: str = "openai-completions") -> None:
    base = server.anthropic_base_url if api == "anthropic-messages" else server.openai_base_url
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local": {"baseUrl": base, "api": api, "apiKey": "test-key", "models": [{"id": "fake-model"}]}
                }
            }
        )
    )


def env_for(agent_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
    env["APEX_CODE_CODING_AGENT_DIR"] = str(agent_dir)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_cli(
    args: list[str], cwd: Path, agent_dir: Path, stdin: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env=env_for(agent_dir),
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]
