"""The git scan in-process: whatever state a file was in before a command, its change carries its old content."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from checkpoint_helpers import git_init, tree

from apex_coding_agent.checkpoints.blobs import BlobStore
from apex_coding_agent.checkpoints.scan import ProjectScanner, ScanChange


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.mark.parametrize("below", [False, True], ids=["worktree-top", "folder-below-top"])
def test_every_kind_of_file_state_before_a_command_gives_its_old_content(tmp_path: Path, below: bool) -> None:
    top = tmp_path / "repo"
    root = top / "project" if below else top
    (root / "sub").mkdir(parents=True)
    if below:
        (top / "outside").write_text("committed\n")
    for name in ("clean", "dirty", "staged", "tool.sh", "gone", "sub/clean", "conflict"):
        (root / name).write_text(f"committed {name}\n")
    (root / ".gitignore").write_text("*.log\n")
    git_init(top)
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
    entries = "".join(f"100644 {blob} {stage}\t{'project/' if below else ''}conflict\n" for stage in (1, 2, 3))
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
    if below:
        (top / "outside").write_text("not in the project\n")
        (top / "outside-new").write_text("not in the project\n")
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


def _scan(scanner: ProjectScanner, command: Callable[[], None]) -> dict[str, ScanChange]:
    state = scanner.before()
    command()
    return {change.path: change for change in scanner.after(state)}


def _repo(tmp_path: Path) -> tuple[Path, ProjectScanner]:
    root = tmp_path / "project"
    for rel in ("a/one", "a/two", "b/three", "dir/inner/four", "top"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"committed {rel}\n")
    (root / ".gitignore").write_text("*.log\n")
    git_init(root)
    scanner = ProjectScanner(str(root), BlobStore(tmp_path / "agent" / "blobs"), 1 << 20)
    scanner.after(scanner.before())  # the first listing fills git's untracked cache in the private index
    return root, scanner


def test_the_untracked_cache_sees_new_folders_renames_and_a_folder_replaced_by_a_file(tmp_path: Path) -> None:
    root, scanner = _repo(tmp_path)
    nested = root / "a" / "new" / "deeper" / "file.txt"

    def create_nested() -> None:
        nested.parent.mkdir(parents=True)
        nested.write_text("nested\n")

    changes = _scan(scanner, create_nested)
    assert set(changes) == {"a/new/deeper/file.txt"}
    assert changes["a/new/deeper/file.txt"].before is None

    # An untracked file moved to another folder, and a tracked one: both ends of each move are changes.
    changes = _scan(
        scanner, lambda: (nested.rename(root / "b" / "moved.txt"), (root / "a" / "one").rename(root / "b" / "one"))
    )
    assert set(changes) == {"a/new/deeper/file.txt", "b/moved.txt", "a/one", "b/one"}
    assert scanner.store.get(changes["a/new/deeper/file.txt"].before or "") == b"nested\n"
    assert changes["a/new/deeper/file.txt"].after is None
    assert scanner.store.get(changes["a/one"].before or "") == b"committed a/one\n"

    def folder_to_file() -> None:
        shutil.rmtree(root / "dir")
        (root / "dir").write_text("now a file\n")

    changes = _scan(scanner, folder_to_file)
    assert set(changes) == {"dir/inner/four", "dir"}
    assert scanner.store.get(changes["dir/inner/four"].before or "") == b"committed dir/inner/four\n"
    assert changes["dir"].before is None and scanner.store.get(changes["dir"].after or "") == b"now a file\n"

    # And back: the file replaced by a folder holding a new file.
    def file_to_folder() -> None:
        (root / "dir").unlink()
        (root / "dir" / "inner").mkdir(parents=True)
        (root / "dir" / "inner" / "five").write_text("five\n")

    assert set(_scan(scanner, file_to_folder)) == {"dir", "dir/inner/five"}


def test_changes_in_one_folder_within_one_clock_tick_are_each_seen(tmp_path: Path) -> None:
    """Back-to-back commands that each add a file to the same folder: a folder's mtime has a coarse clock, so some
    of these land in the tick of the previous listing; every command must still see its own file."""
    root, scanner = _repo(tmp_path)
    for round_ in range(25):
        target = root / "a" / f"quick{round_}"
        changes = _scan(scanner, lambda target=target: target.write_text("x"))
        assert set(changes) == {f"a/quick{round_}"}, round_
        changes = _scan(scanner, target.unlink)
        assert set(changes) == {f"a/quick{round_}"}, round_
        assert changes[f"a/quick{round_}"].after is None


def test_ignore_rules_edited_in_place_are_followed(tmp_path: Path) -> None:
    root, scanner = _repo(tmp_path)
    (root / "old.log").write_text("ignored before\n")
    assert _scan(scanner, lambda: None) == {}

    def unignore_and_write() -> None:
        with open(root / ".gitignore", "r+") as handle:  # in place: the folder's mtime does not move
            handle.write("*.tmp\n")
        (root / "new.log").write_text("written\n")

    changes = _scan(scanner, unignore_and_write)
    assert {".gitignore", "new.log"} <= set(changes)
    (root / ".git" / "info").mkdir(exist_ok=True)
    changes = _scan(scanner, lambda: (root / ".git" / "info" / "exclude").write_text("new.log\nold.log\n"))
    assert "new.log" not in changes
    assert _scan(scanner, lambda: (root / "new.log").write_text("again\n")) == {}  # now ignored: not kept


def test_scanning_leaves_the_repository_as_it_was(tmp_path: Path) -> None:
    root, scanner = _repo(tmp_path)
    (root / "a" / "two").write_text("dirty\n")
    (root / "untracked").write_text("u\n")
    marker = tmp_path / "hook-ran"
    hook = root / ".git" / "hooks" / "post-index-change"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    _git(root, "update-index", "--split-index")  # writing a split index would add a shared index file
    marker.unlink(missing_ok=True)  # that write was the user's own: their hook ran for it

    def snapshot() -> tuple[dict[str, tuple[bytes, int]], str]:
        # Any git command that reads a split index touches the shared file's mtime (git's own expiry): content only.
        files = {
            path.relative_to(root).as_posix(): (
                path.read_bytes(),
                0 if path.name.startswith("sharedindex.") else path.stat().st_mtime_ns,
            )
            for path in sorted((root / ".git").rglob("*"))
            if path.is_file()
        }
        env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
        status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, env=env)
        return files, status.stdout

    before = snapshot()
    scanner = ProjectScanner(str(root), BlobStore(tmp_path / "agent" / "blobs"), 1 << 20)
    for _ in range(3):
        _scan(scanner, lambda: (root / "b" / "three").write_text("changed\n"))
        (root / "b" / "three").write_text("committed b/three\n")
    assert snapshot() == before
    assert not marker.exists()  # the user's hooks do not run for our copy
    assert "core.untrackedCache" not in (root / ".git" / "config").read_text()
    copy = scanner.private_index_folder
    assert copy is not None and os.path.isdir(copy)
    scanner.close()
    assert not os.path.exists(copy)


def test_a_private_index_copy_removed_from_under_the_scanner_is_taken_again(tmp_path: Path) -> None:
    """A temp-folder cleaner takes our copy away mid-session: a missing copy would read as an empty index (every file
    untracked, clean files' old content lost), so it is copied again."""
    root, scanner = _repo(tmp_path)
    folder = scanner.private_index_folder
    assert folder is not None
    shutil.rmtree(folder)
    changes = _scan(scanner, lambda: ((root / "a" / "one").write_text("x"), (root / "a" / "n").write_text("n")))
    assert set(changes) == {"a/one", "a/n"}
    assert scanner.store.get(changes["a/one"].before or "") == b"committed a/one\n"
    assert os.path.isfile(os.path.join(folder, "index"))
