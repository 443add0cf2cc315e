"""The real `apex-code` against a real llama.cpp server running a tiny random-weight model.

The model's text is noise, so these tests check what does not depend on it: runs complete or fail the way a
user is told they do, streams can be aborted, a server that dies mid-stream is an error, the router's models
are listed without the app, and small windows never get a reply capped to nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import LlamaServer

CLI = [sys.executable, "-m", "apex_coding_agent.cli"]
APIS = ["openai-completions", "anthropic-messages"]


def _agent(tmp_path: Path, server: LlamaServer, api: str, model: str, window: int, max_tokens: int) -> Path:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    base = server.url if api == "anthropic-messages" else f"{server.url}/v1"
    provider = {
        "baseUrl": base,
        "api": api,
        "apiKey": "local",
        "models": [{"id": model, "contextWindow": window, "maxTokens": max_tokens}],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    (agent / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
    return agent


def _env(agent: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
    env.update(APEX_CODE_CODING_AGENT_DIR=str(agent), **extra)
    return env


def _run(args: list[str], cwd: Path, agent: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(exist_ok=True)
    return subprocess.run(
        [*CLI, *args], cwd=cwd, env=_env(agent, **extra), capture_output=True, text=True, timeout=180, check=False
    )


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("api", APIS)
def test_print_and_json_modes_complete(serve: type[LlamaServer], models_dir: Path, tmp_path: Path, api: str) -> None:
    server = serve(["-m", str(models_dir / "tiny-4k.gguf"), "-c", "4096", "-np", "1"])
    agent = _agent(tmp_path, server, api, "tiny-4k", 4096, 48)
    printed = _run(["--permission-mode", "plan", "-p", "hello"], tmp_path / "work", agent)
    assert printed.returncode == 0, printed.stderr

    streamed = _run(["--mode", "json", "--permission-mode", "plan", "hello"], tmp_path / "work", agent)
    lines = _lines(streamed.stdout)
    assert streamed.returncode == 0, streamed.stderr
    assert lines[-1]["type"] == "result" and lines[-1]["status"] == "completed"
    replies = [e["message"] for e in lines if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    usage = replies[-1]["usage"]
    # The second run repeats the first one's prompt: the server may report it as read from its cache.
    assert usage["input"] + usage["cacheRead"] > 0 and replies[-1]["stopReason"] in ("stop", "length")


@pytest.mark.parametrize("api", APIS)
def test_rpc_prompt_and_abort(serve: type[LlamaServer], models_dir: Path, tmp_path: Path, api: str) -> None:
    server = serve(["-m", str(models_dir / "tiny-4k.gguf"), "-c", "4096", "-np", "1"])
    agent = _agent(tmp_path, server, api, "tiny-4k", 4096, 3500)
    (tmp_path / "work").mkdir()
    with subprocess.Popen(
        [*CLI, "--mode", "rpc", "--permission-mode", "plan", "--no-session"],
        cwd=tmp_path / "work",
        env=_env(agent),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"id": "p", "type": "prompt", "message": "write a long story"}) + "\n")
        proc.stdin.flush()
        records: list[dict[str, Any]] = []
        aborted = False
        for raw in proc.stdout:
            record = json.loads(raw)
            records.append(record)
            if record.get("type") == "message_update" and not aborted:
                proc.stdin.write(json.dumps({"id": "a", "type": "abort"}) + "\n")
                proc.stdin.flush()
                aborted = True
            answered = any(r.get("id") == "a" and r.get("type") == "response" for r in records)
            if answered and any(r.get("type") == "agent_settled" for r in records):
                break
        proc.communicate(timeout=30)
    assert aborted
    assert any(r.get("id") == "a" and r.get("success") is True for r in records)
    end = next(r for r in records if r.get("type") == "agent_end")
    assert end["stopReason"] == "aborted"


def test_a_server_killed_mid_stream_is_an_error(serve: type[LlamaServer], models_dir: Path, tmp_path: Path) -> None:
    server = serve(["-m", str(models_dir / "tiny-4k.gguf"), "-c", "4096", "-np", "1"])
    agent = _agent(tmp_path, server, "openai-completions", "tiny-4k", 4096, 3500)
    (tmp_path / "work").mkdir()
    with subprocess.Popen(
        [*CLI, "--mode", "json", "--permission-mode", "plan", "write a long story"],
        cwd=tmp_path / "work",
        env=_env(agent),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        lines: list[dict[str, Any]] = []
        for raw in proc.stdout:
            lines.append(json.loads(raw))
            if lines[-1].get("type") == "message_update" and server.process.poll() is None:
                server.process.kill()
        proc.wait(timeout=60)
    assert proc.returncode == 1
    assert lines[-1]["type"] == "result" and lines[-1]["status"] == "error"


def test_the_router_lists_and_runs_its_models_headless(
    serve: type[LlamaServer], models_dir: Path, tmp_path: Path
) -> None:
    router = serve(["--models-dir", str(models_dir), "--models-max", "1"])
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
    listed = _run(["--list-models"], tmp_path / "work", agent, LLAMA_BASE_URL=router.url)
    assert listed.returncode == 0, listed.stderr
    names = [row.split()[1] for row in listed.stdout.splitlines()[1:] if row.startswith("llama.cpp")]
    assert sorted(names) == ["tiny-2k", "tiny-4k"]
    # Not loaded yet: the router loads it on demand for the request.
    run = _run(
        ["--model", "llama.cpp/tiny-2k", "--permission-mode", "plan", "--mode", "json", "hi"],
        tmp_path / "work",
        agent,
        LLAMA_BASE_URL=router.url,
    )
    assert run.returncode == 0, run.stderr
    assert _lines(run.stdout)[-1]["status"] == "completed"


@pytest.mark.parametrize(("model", "window"), [("tiny-2k", 2048), ("tiny-4k", 4096)])
def test_small_windows_answer_or_say_the_context_is_full(
    serve: type[LlamaServer], models_dir: Path, tmp_path: Path, model: str, window: int
) -> None:
    server = serve(["-m", str(models_dir / f"{model}.gguf"), "-c", str(window), "-np", "1"])
    agent = _agent(tmp_path, server, "openai-completions", model, window, window)
    run = _run(["--mode", "json", "--permission-mode", "plan", "hello"], tmp_path / "work", agent)
    lines = _lines(run.stdout)
    result = lines[-1]
    if result["status"] == "completed":
        assert run.returncode == 0
        replies = [e["message"] for e in lines if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
        # A reply capped to a token or two is the bug this guards against.
        assert replies[-1]["stopReason"] == "stop" or replies[-1]["usage"]["output"] >= 64
    else:
        assert run.returncode == 1 and result["status"] == "error"
        assert "context full" in (run.stderr + run.stdout)
