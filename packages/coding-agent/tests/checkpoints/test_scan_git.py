"""The git scan in-process: whatever state a file was in before a command, its change carries its old content."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from checkpoint_helpers import git_init, tree

from apex_coding_agent.checkpoints.blobs import BlobStore
from apex_coding_agent.checkpoints.scan import ProjectScanner


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_every_kind_of_file_state_before_a_command_gives_its_old_content(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "sub").mkdir(parents=True)
    for name in ("clean", "dirty", "staged", "tool.sh", "gone", "sub/clean", "conflict"):
        (root / name).write_text(f"committed {name}\n")
    (root / ".gitignore").write_text("*.log\n")
    git_init(root)
    _git(root, "update-index", "--chmod=+x", "tool.sh")
    os.chmod(root / "tool.sh", 0o755)
    (root / "dirty").write_text("dirty before\n")
    (root / "staged").write_text("staged before\n")
    _git(root, "add", "staged")
    (root / "intent").write_text("intent before\n")
    _git(root, "add", "-N", "intent")
    (root / "untracked").write_text("untracked before\n")
    (root / "ignored.log").write_text("ignored\n")
    os.symlink("clean", root / "link")
    _git(root, "add", "link")
    # An unmerged entry: stages 1-3 for `conflict`, no stage 0.
    blob = subprocess.run(
        ["git", "hash-object", "-w", "conflict"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()
    entries = "".join(f"100644 {blob} {stage}\tconflict\n" for stage in (1, 2, 3))
    subprocess.run(["git", "update-index", "--index-info"], cwd=root, input=entries, text=True, check=True)
    (root / "conflict").write_text("conflict before\n")

    scanner = ProjectScanner(str(root), BlobStore(tmp_path / "agent" / "blobs"), 1 << 20)
    scanner.after(scanner.before())
    old = tree(root)
    state = scanner.before()
    for name in ("clean", "dirty", "staged", "tool.sh", "sub/clean", "intent", "untracked", "ignored.log", "conflict"):
        (root / name).write_text(f"after {name}\n")
    (root / "gone").unlink()
    (root / "created").write_text("new\n")
    changes = {change.path: change for change in scanner.after(state)}

    expected = {
        "clean",
        "dirty",
        "staged",
        "tool.sh",
        "sub/clean",
        "intent",
        "untracked",
        "conflict",
        "gone",
        "created",
    }
    assert set(changes) == expected  # the ignored file and the untouched symlink are not changes
    new = tree(root)
    for rel, change in changes.items():
        assert change.unknown is None, rel
        if rel == "created":
            assert change.before is None
        else:
            assert change.before is not None, rel
            assert scanner.store.get(change.before) == old[rel], rel
        assert (change.after is None) == (rel == "gone"), rel
        if change.after is not None:
            assert scanner.store.get(change.after) == new[rel], rel
    assert changes["tool.sh"].mode == 0o755
    assert changes["clean"].mode == 0o644
