"""Batch runs: what a task costs beyond a bare SDK run, and how close 8 workers come to the ideal.

1. Overhead per task. A bare SDK run is `create_agent_session` with a session file, one prompt that makes the
   model write a file (a tool call, then an answer, from the scripted server) and `dispose`, in a warm process.
   A batch task does the same plus its copy of the repository (a git clone), a process of its own, the diff, the
   record and the summary line. A batch of N + 1 tasks runs on one worker; the median time between two tasks
   finishing (watched from outside, as summary lines appear) is a task's wall time without the batch's start-up,
   and the overhead is that minus the bare run.
2. Throughput. 100 tasks whose model takes 10 s to answer (the scripted reply's `wait_ms`) on 8 workers, against
   the ideal 100 x 10 s / 8.

Run with the workspace's python: `uv run python benchmarks/bench_batch.py [--tasks 100] [--model-seconds 10]`.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import itertools
import json
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent.batch import BatchOptions, TaskDefaults, read_summary, run_batch

WRITE = [
    {"when_last": '"role":"tool"', "text": "done", "usage": {"input": 10, "output": 2}, "repeat": True},
    {
        "tool_calls": [{"name": "write", "arguments": {"path": "out.txt", "content": "written\n"}}],
        "usage": {"input": 10, "output": 5},
        "repeat": True,
    },
]


def _repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    for i in range(20):
        (repo / f"module_{i}.py").write_text(f"VALUE = {i}\n" * 50)
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run(["git", "init", "--quiet", str(repo)], check=True)
    subprocess.run(["git", *identity, "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", *identity, "-C", str(repo), "commit", "--quiet", "-m", "start"], check=True)
    return repo


def _agent_dir(root: Path, server: ScriptedModelServer) -> Path:
    agent_dir = root / "agent"
    agent_dir.mkdir()
    provider = {"baseUrl": server.openai_base_url, "api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]}
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    return agent_dir


async def _bare_run(repo: Path, agent_dir: Path, sessions: Path) -> float:
    from apex_coding_agent import create_agent_session
    from apex_coding_agent.core.model_runtime import ModelRuntime
    from apex_coding_agent.core.permissions import PermissionGate
    from apex_coding_agent.session.session_manager import SessionManager

    start = time.perf_counter()
    models = ModelRuntime.create(str(agent_dir))
    model = models.registry.get_model("local", "m")
    result = await create_agent_session(
        cwd=str(repo),
        agent_dir=str(agent_dir),
        model=model,
        model_runtime=models,
        session_manager=SessionManager.create(str(repo), sessions),
        permission_gate=PermissionGate(repo, flag_mode="acceptEdits"),
        project_trusted=False,
    )
    await result.session.prompt("write the file")
    result.session.dispose()
    result.session.session_manager.close()
    await result.session.close_connections()
    elapsed = time.perf_counter() - start
    (repo / "out.txt").unlink()
    return elapsed


def _batch(root: Path, repo: Path, agent_dir: Path, name: str, tasks: int, workers: int) -> tuple[float, list[float]]:
    """(wall time of the batch, the gaps between consecutive tasks finishing, as summary lines appear)."""
    lines = [{"id": f"t{i}", "prompt": "write the file", "repo": str(repo)} for i in range(tasks)]
    task_file = root / f"{name}.jsonl"
    task_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    options = BatchOptions(
        tasks_file=task_file,
        out=root / name,
        agent_dir=str(agent_dir),
        workers=workers,
        defaults=TaskDefaults(model="local/m", permission_mode="acceptEdits"),
    )
    summary = root / name / "summary.jsonl"
    finished: list[float] = []
    done = threading.Event()

    def watch() -> None:
        seen = 0
        while not done.is_set():
            lines = summary.read_bytes().count(b"\n") if summary.exists() else 0
            finished.extend([time.perf_counter()] * (lines - seen))
            seen = lines
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    watcher.start()
    start = time.perf_counter()
    code = run_batch(options, io.StringIO())
    elapsed = time.perf_counter() - start
    done.set()
    watcher.join()
    records = read_summary(summary)
    failed = [f"{r.id}: {r.status} {r.reason or ''}" for r in records.values() if r.failed]
    assert code == 0 and len(records) == tasks, f"batch {name} failed ({len(records)} records): {failed[:5]}"
    return elapsed, [b - a for a, b in itertools.pairwise(finished)]


def overhead(rounds: int = 20) -> None:
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(WRITE) as server:
        root = Path(tmp)
        repo = _repo(root)
        agent_dir = _agent_dir(root, server)
        bare = [asyncio.run(_bare_run(repo, agent_dir, root / "sessions")) for _ in range(rounds + 3)][3:]
        elapsed, gaps = _batch(root, repo, agent_dir, "serial", rounds + 1, 1)
    per_task_ms = statistics.median(gaps) * 1000
    bare_ms = statistics.median(bare) * 1000
    print(f"bare SDK run (median of {rounds}): {bare_ms:.0f} ms")
    print(f"batch task on 1 worker (median gap between tasks finishing, {rounds} gaps): {per_task_ms:.0f} ms")
    print(f"overhead per task: {per_task_ms - bare_ms:.0f} ms (target <= 300 ms)")
    print(f"batch start-up (wall time minus the tasks): {elapsed - (rounds + 1) * per_task_ms / 1000:.1f} s")


def throughput(tasks: int, seconds: float, workers: int) -> None:
    slow: list[dict[str, Any]] = [{"text": "done", "wait_ms": seconds * 1000, "repeat": True}]
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(slow) as server:
        root = Path(tmp)
        repo = _repo(root)
        agent_dir = _agent_dir(root, server)
        elapsed, _ = _batch(root, repo, agent_dir, "slow", tasks, workers)
    ideal = tasks * seconds / workers
    print(
        f"{tasks} tasks of a {seconds:g} s model run on {workers} workers: {elapsed:.1f} s, ideal {ideal:.1f} s, "
        f"{elapsed / ideal:.2f}x the ideal (target <= 1.3x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--model-seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    overhead()
    throughput(args.tasks, args.model_seconds, args.workers)


if __name__ == "__main__":
    main()
