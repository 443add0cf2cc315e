"""Imported by the local engine's fork server only: importing it runs one throwaway task per model API.

A task's first run in a fresh process spends about a second on what later runs get for free: modules imported on
first use (the tool-argument validator, the HTTP transport), schemas built on first use, the SDK's first client.
Every task process is forked from the fork server, so the server does that once, here, and each task starts
warm. The throwaway tasks run against a scripted model server on a loopback port in a temporary folder that is
deleted afterwards; nothing else is touched. `APEX_CODE_BATCH_WARM_APIS` (comma-separated) names the APIs.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent.batch.control import BatchControl
from apex_coding_agent.batch.local_engine import WARM_APIS_VARIABLE
from apex_coding_agent.batch.tasks import BatchTask
from apex_coding_agent.batch.worker import TaskJob, run_task

_SCENARIO = [
    {"when_last": '"(role|type)":"(tool|function_call_output)"|tool_result', "text": "done", "repeat": True},
    {"tool_calls": [{"name": "write", "arguments": {"path": "warm.txt", "content": "warm\n"}}], "repeat": True},
]


def _warm(api: str, root: Path) -> None:
    repo = root / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("a\n")
    agent_dir = root / "agent"
    agent_dir.mkdir()
    with ScriptedModelServer(_SCENARIO) as server:
        base = server.anthropic_base_url if api == "anthropic-messages" else server.openai_base_url
        provider = {"baseUrl": base, "api": api, "apiKey": "warm", "models": [{"id": "warm"}]}
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"warm": provider}}))
        task = BatchTask(id="warm", prompt="warm up", repo=str(repo), model="warm/warm", permission_mode="acceptEdits")
        job = TaskJob(
            task=task,
            out_dir=str(root / "out" / "tasks" / "warm"),
            work_dir=str(root / "out" / "work" / "warm"),
            cache_dir=str(root / "out" / "cache"),
            batch_dir=str(root / "out"),
            agent_dir=str(agent_dir),
        )
        run_task(job, BatchControl())


def _warm_all() -> None:
    for api in filter(None, os.environ.get(WARM_APIS_VARIABLE, "").split(",")):
        with tempfile.TemporaryDirectory(prefix="apex-batch-warm-") as root:
            try:
                _warm(api, Path(root))
            except Exception:  # a cold start is slower, not wrong: the batch goes on without the warm-up
                pass


_warm_all()
