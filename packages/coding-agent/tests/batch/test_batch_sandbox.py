"""The kernel's part of a batch task's safety: the Landlock write restriction and killing a task's whole tree."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from apex_coding_agent.batch.sandbox import landlock_abi
from apex_coding_agent.batch.task_process import descendants, kill_tree

RESTRICTED = """
import subprocess, sys
from apex_coding_agent.batch.sandbox import restrict_writes
inside, outside = sys.argv[1], sys.argv[2]
assert restrict_writes([inside])
for command in sys.argv[3:]:
    done = subprocess.run(["bash", "-c", command], cwd=inside, capture_output=True, text=True)
    print(done.returncode, flush=True)
"""


def test_a_restricted_process_and_its_commands_write_only_inside_the_allowed_folder(tmp_path: Path) -> None:
    assert landlock_abi() >= 1, "this machine's kernel has Landlock (the batch tests rely on it)"
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (outside / "old.txt").write_text("old\n")
    (inside / "link").symlink_to(outside)
    refused = [
        f"echo x > {outside}/new",
        f"echo x >> {outside}/old.txt",
        f": > {outside}/old.txt",
        "touch ../escaped",
        "echo y > link/through",
        f"rm {outside}/old.txt",
        f"ln -s {inside} {outside}/back",
        f"mkdir {outside}/dir",
    ]
    allowed = [
        "echo mine > own.txt && mkdir -p d/e && mv own.txt d/e/ && cp d/e/own.txt copy.txt",
        "echo quiet > /dev/null",
        "rm -r d && rm link",
    ]
    done = subprocess.run(
        [sys.executable, "-c", RESTRICTED, str(inside), str(outside), *refused, *allowed],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    codes = [int(line) for line in done.stdout.split()]
    assert codes == [1] * len(refused) + [0] * len(allowed), done.stdout
    assert sorted(p.name for p in outside.iterdir()) == ["old.txt"]
    assert (outside / "old.txt").read_text() == "old\n"
    assert not (tmp_path / "escaped").exists()
    assert sorted(p.name for p in inside.iterdir()) == ["copy.txt"]
    # The restriction stays with that process: this one still writes anywhere.
    (outside / "after.txt").write_text("free\n")


SUBREAPER = """
import ctypes, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER, as a task's process does
subprocess.Popen(["bash", "-c", "(setsid sleep 300 &); trap '' TERM; sleep 300 & wait"])
print("started", flush=True)
time.sleep(300)
"""


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_kill_tree_reaches_orphans_in_other_sessions_and_commands_ignoring_sigterm() -> None:
    with subprocess.Popen([sys.executable, "-c", SUBREAPER], stdout=subprocess.PIPE, text=True) as root:
        _kill_the_tree_of(root)


def _kill_the_tree_of(root: subprocess.Popen[str]) -> None:
    try:
        assert root.stdout is not None and root.stdout.readline() == "started\n"
        deadline = time.monotonic() + 10
        while len(found := descendants(root.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        # bash, its `sleep`, and the `setsid sleep` whose parent exited (it came back to the subreaper).
        assert len(found) == 3, found
        kill_tree(root.pid)
        assert root.wait(timeout=10) == -9
        deadline = time.monotonic() + 10  # SIGKILL is delivered as each process next runs
        while (alive := [pid for pid in found if _running(pid)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert alive == []
    finally:
        if root.poll() is None:
            root.kill()
