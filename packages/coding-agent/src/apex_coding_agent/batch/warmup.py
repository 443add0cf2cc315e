"""Imported by the local engine's fork server only: importing it runs throwaway tasks to warm the process up.

A task's first run in a fresh process spends about a second on what later runs get for free: modules imported on
first use (the tool-argument validator, the HTTP transport), schemas built on first use, the SDK's first client.
Every task process is forked from the fork server, so the server does that once, here, and each task starts
warm. The throwaway tasks run in a temporary folder deleted afterwards, with a model of the `faux` provider (a
tool call, then a reply: the session, the tools and print mode), then, for each model API the batch uses
(`APEX_CODE_BATCH_WARM_APIS`, comma-separated), one request to a closed loopback port (the SDK's client and its
transport, up to the refused connection). Nothing leaves the machine and nothing else is touched.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from apex_ai.providers.faux import faux_assistant_message, faux_provider, faux_tool_call
from apex_coding_agent.batch.control import BatchControl
from apex_coding_agent.batch.local_engine import WARM_APIS_VARIABLE
from apex_coding_agent.batch.tasks import BatchTask
from apex_coding_agent.batch.worker import TaskJob, run_task

_CLOSED_PORT = "http://127.0.0.1:1"
"""A loopback port nothing listens on (1 is reserved): a request there is refused at once."""


def _warm(api: str, root: Path) -> None:
    repo = root / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("a\n")
    agent_dir = root / "agent"
    agent_dir.mkdir()
    base = _CLOSED_PORT + ("/v1" if api.startswith("openai") else "")
    provider = {"baseUrl": base, "api": api, "apiKey": "warm", "models": [{"id": "warm"}]}
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"warm": provider}}))
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
    if api == "faux":
        faux_provider().set_responses(
            [
                faux_assistant_message(
                    [faux_tool_call("write", {"path": "warm.txt", "content": "warm\n"})], stop_reason="toolUse"
                ),
                faux_assistant_message("done"),
            ]
        )
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
    apis = ["faux", *filter(None, os.environ.get(WARM_APIS_VARIABLE, "").split(","))]
    for api in apis:
        with tempfile.TemporaryDirectory(prefix="apex-batch-warm-") as root:
            try:
                _warm(api, Path(root))
            except Exception:  # a cold start is slower, not wrong: the batch goes on without the warm-up
                pass


_warm_all()
