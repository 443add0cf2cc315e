"""A 429 answered to one task holds back the model requests of every other task on that provider.

Two tasks run in-process against the scripted server, sharing one `BatchControl` as the workers of a batch
share its proxy; the rate limiter is the inline extension every batch session gets.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from batch_helpers import write_agent_dir

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent.batch import BatchControl, BatchTask, TaskRecord
from apex_coding_agent.batch.worker import TaskJob, run_task


def _job(tmp_path: Path, task_id: str, agent_dir: Path) -> TaskJob:
    task = BatchTask(
        id=task_id, prompt="hello", repo=str(tmp_path / "repo"), model="local/fake-model", permission_mode="plan"
    )
    out = tmp_path / "out"
    return TaskJob(
        task=task,
        out_dir=str(out / "tasks" / task_id),
        work_dir=str(out / "work" / task_id),
        cache_dir=str(out / "cache"),
        batch_dir=str(out),
        agent_dir=str(agent_dir),
    )


def test_a_429_to_one_task_holds_back_the_others(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.txt").write_text("a\n")
    throttle = {"error": {"status": 429, "type": "rate_limit_error", "message": "slow down"}, "retry_after": 1}
    records: dict[str, TaskRecord] = {}
    control = BatchControl()

    def run(task_id: str) -> None:
        records[task_id] = run_task(_job(tmp_path, task_id, tmp_path / "agent"), control)

    with ScriptedModelServer([throttle, {"text": "fine", "repeat": True}]) as server:
        write_agent_dir(tmp_path / "agent", server.openai_base_url)
        first = threading.Thread(target=run, args=("first",))
        first.start()
        deadline = time.monotonic() + 30
        while control.throttle_count("local") == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        second = threading.Thread(target=run, args=("second",))
        second.start()
        first.join(60)
        second.join(60)
        requests = list(server.requests)
    assert {name: record.status for name, record in records.items()} == {"first": "completed", "second": "completed"}
    assert control.throttle_count("local") == 1
    assert len(requests) == 3, "the 429, the first task's retry and the second task's request"
    throttled_at = requests[0]["ts"]
    assert all(request["ts"] >= throttled_at + 0.9 for request in requests[1:]), "nobody asked during the pause"
    # One request per second had been sent; the rate is now half that: the two requests after the pause are paced.
    assert abs(requests[2]["ts"] - requests[1]["ts"]) >= 1.5
