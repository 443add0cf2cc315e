"""Each task's own copy of its repository, and the diff of what the task changed in it.

A git repository (a folder at a repository's top, or a URL) gets a new repository checked out at the task's
`ref` (default: the source's `HEAD`) that borrows the source's objects, so nothing is copied but the files of
the working tree and the source is never written; a URL is first mirrored once into the batch's cache, so a
hundred tasks on one repository fetch it once. A plain folder is copied, and its starting state is committed to a git directory kept
beside the copy (never inside it, so the agent sees the folder as it was). Either way the copy's starting commit
is the baseline of `diff.patch`: everything the task (setup, agent, check) left different, new files included.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from apex_coding_agent.batch.tasks import BatchTask

_IDENTITY = (
    "-c",
    "user.name=apex-code batch",
    "-c",
    "user.email=batch@apex-code.invalid",
    "-c",
    "commit.gpgsign=false",
)
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


class CopyError(Exception):
    """The task's copy could not be made (a missing ref, a failed clone); the message says which step failed."""


@dataclass(frozen=True)
class TaskCopy:
    """A prepared copy: the agent works in `path`; `git` runs git on it with the baseline's git directory."""

    path: Path
    git_dir: Path | None
    """A separate git directory (plain folders); None when `path` is a clone with its own `.git`."""
    base: str
    """The baseline commit."""

    def git(self, *args: str) -> list[str]:
        prefix = ["git", *_IDENTITY]
        if self.git_dir is not None:
            prefix += [f"--git-dir={self.git_dir}", f"--work-tree={self.path}"]
        else:
            prefix += ["-C", str(self.path)]
        return [*prefix, *args]


def _run(command: list[str], what: str, cwd: Path | None = None) -> str:
    env = {**os.environ, **_GIT_ENV}
    try:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise CopyError(f"{what}: {exc}") from exc
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise CopyError(f"{what}: {detail[-1] if detail else f'git exited with {done.returncode}'}")
    return done.stdout.strip()


def _git_source(folder: Path, ref: str | None) -> tuple[Path, str] | None:
    """(objects directory, commit of `ref`) when `folder` is the top of a git repository, else None; raises
    `CopyError` for a repository without `ref` (or without any commit)."""
    wanted = f"{ref or 'HEAD'}^{{commit}}"
    command = ["git", "-C", str(folder), "rev-parse", "--path-format=absolute", "--show-toplevel"]
    env = {**os.environ, **_GIT_ENV}
    done = subprocess.run([*command, "--git-path", "objects", wanted], env=env, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and len(lines) == 3:
        top, objects, commit = lines
        return (Path(objects), commit) if Path(top).resolve() == folder.resolve() else None
    probe = subprocess.run(command, env=env, capture_output=True, text=True)
    if probe.returncode != 0 or Path(probe.stdout.strip()).resolve() != folder.resolve():
        return None  # not a repository, or a folder inside one: copied as a plain folder
    raise CopyError(f"ref {ref or 'HEAD'!r} not found in {folder}")


def _mirror(url: str, cache_dir: Path) -> Path:
    """A bare mirror of `url` in the cache, cloned by the first task that needs it (the others wait on a lock)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    mirror = cache_dir / (hashlib.sha256(url.encode()).hexdigest()[:16] + ".git")
    with open(cache_dir / (mirror.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (mirror / "HEAD").exists():
            partial = mirror.with_suffix(".partial")
            shutil.rmtree(partial, ignore_errors=True)
            _run(["git", "clone", "--quiet", "--mirror", url, str(partial)], f"cloning {url}")
            partial.rename(mirror)
    return mirror


def _mirror_commit(mirror: Path, ref: str | None, url: str) -> str:
    wanted = f"{ref or 'HEAD'}^{{commit}}"
    done = subprocess.run(
        ["git", f"--git-dir={mirror}", "rev-parse", "--verify", "--quiet", wanted],
        env={**os.environ, **_GIT_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise CopyError(f"ref {ref or 'HEAD'!r} not found in {url}")
    return done.stdout.strip()


def _checkout(objects: Path, commit: str, dest: Path) -> TaskCopy:
    """A new repository at `dest` that borrows the source's objects (git's alternates: nothing is copied, the
    source is never written) with `commit` checked out, detached. Faster than `git clone` by a process or two."""
    _run(["git", "init", "--quiet", str(dest)], "making the copy")
    (dest / ".git" / "objects" / "info" / "alternates").write_text(f"{objects}\n")
    _run(["git", "-C", str(dest), "checkout", "--quiet", "--detach", commit], f"checking out {commit}")
    return TaskCopy(dest, None, commit)


def _copy_folder(source: Path, dest: Path, leave_out: Path) -> TaskCopy:
    def ignore(folder: str, names: list[str]) -> list[str]:
        # The batch's own output folder may lie inside the source: never copy it into a task's copy.
        return [name for name in names if Path(folder, name).resolve() == leave_out]

    try:
        shutil.copytree(source, dest, symlinks=True, ignore=ignore)
    except (OSError, shutil.Error) as exc:
        raise CopyError(f"copying {source}: {exc}") from exc
    git_dir = dest.parent / f"{dest.name}.baseline.git"
    copy = TaskCopy(dest, git_dir, "")
    _run(["git", "init", "--quiet", f"--separate-git-dir={git_dir}", str(dest)], "recording the baseline")
    # `init --separate-git-dir` leaves a `.git` file in the folder pointing at the git dir: the agent must not see it.
    (dest / ".git").unlink(missing_ok=True)
    _run(copy.git("add", "--all"), "recording the baseline")
    _run(copy.git("commit", "--quiet", "--no-verify", "--allow-empty", "-m", "baseline"), "recording the baseline")
    return TaskCopy(dest, git_dir, _run(copy.git("rev-parse", "HEAD"), "recording the baseline"))


def prepare_copy(task: BatchTask, dest: Path, cache_dir: Path, leave_out: Path) -> TaskCopy:
    """Make `dest` the task's copy of its repository at its ref; raises `CopyError`.

    `leave_out` (the batch's output folder) is never copied from a plain folder.
    """
    remove_copy(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if task.repo_is_url:
        mirror = _mirror(task.repo, cache_dir)
        return _checkout(mirror / "objects", _mirror_commit(mirror, task.ref, task.repo), dest)
    source = Path(task.repo)
    found = _git_source(source, task.ref)
    if found is not None:
        return _checkout(*found, dest)
    if task.ref is not None:
        raise CopyError(f"ref {task.ref!r} given, but {source} is not a git repository")
    return _copy_folder(source, dest, leave_out.resolve())


def write_diff(copy: TaskCopy, target: Path) -> int:
    """Write the binary-safe diff of the copy's working tree against its baseline to `target`; returns how many
    files differ. New files count: everything is staged (in the copy's own index) first."""
    _run(copy.git("add", "--all"), "staging the changes")
    env = {**os.environ, **_GIT_ENV}
    done = subprocess.run(
        copy.git("diff", "--cached", "--binary", "--no-color", "--no-ext-diff", copy.base),
        env=env,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise CopyError(f"diffing: {done.stderr.decode(errors='replace').strip()}")
    target.write_bytes(done.stdout)
    return sum(1 for line in done.stdout.split(b"\n") if line.startswith(b"diff --git "))


def private_temp_dir(dest: Path) -> Path:
    """The task's own temporary folder, beside its copy (deleted with it)."""
    return dest.parent / f"{dest.name}.tmp"


def remove_copy(dest: Path, keep: bool = False) -> None:
    """Delete a copy, its baseline git directory and its temporary folder, whatever state they are in; with
    `keep`, only the temporary folder."""
    paths = (
        [private_temp_dir(dest)] if keep else [dest, dest.parent / f"{dest.name}.baseline.git", private_temp_dir(dest)]
    )
    for path in paths:
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.exists():
            shutil.rmtree(path, ignore_errors=True)


__all__ = ["CopyError", "TaskCopy", "prepare_copy", "private_temp_dir", "remove_copy", "write_diff"]
