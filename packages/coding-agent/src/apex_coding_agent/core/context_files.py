"""Context files: AGENTS.md and friends.

One file per directory (the first that exists of `CONTEXT_FILE_NAMES`), from the agent dir and
from every directory between `/` and the cwd, outermost first. They are always loaded, trusted
project or not: they are instructions to read, not configuration that runs. In an untrusted project a context file
must resolve inside the project, so a hostile repository cannot link `AGENTS.md` to a private file and have it sent
to the model; and every file is capped at `MAX_CONTEXT_FILE_BYTES`.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MAX_CONTEXT_FILE_BYTES = 256 * 1024
CONTEXT_FILE_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")


@dataclass(frozen=True)
class ContextFile:
    path: Path
    content: str


def _first_context_file(directory: Path) -> Path | None:
    for name in CONTEXT_FILE_NAMES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


def _main_checkout_of_worktree(cwd: Path) -> tuple[Path, Path] | None:
    """(worktree root, main checkout root) when cwd is in a linked worktree nested in its main checkout."""
    git_file: Path | None = None
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").is_file():
            git_file = directory / ".git"
            break
        if (directory / ".git").is_dir():
            return None
    if git_file is None:
        return None
    try:
        text = git_file.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text.split(":", 1)[1].strip())
    if not gitdir.is_absolute():
        gitdir = (git_file.parent / gitdir).resolve()
    # <main>/.git/worktrees/<name>
    if gitdir.parent.name != "worktrees":
        return None
    main = gitdir.parent.parent.parent
    worktree = git_file.parent
    return (worktree, main) if worktree.is_relative_to(main) and worktree != main else None


def discover_context_files(
    cwd: str | Path,
    agent_dir: str | Path,
    *,
    warn: Callable[[str], None] | None = None,
    project_trusted: bool = True,
) -> list[ContextFile]:
    """Context files in load order: the agent dir's, then root-first down to the cwd.

    With `project_trusted=False`, a file found in the project (the git root containing the cwd, or the cwd) whose
    real path lies outside the project is skipped with a warning. Files longer than `MAX_CONTEXT_FILE_BYTES` are
    cut there, with a warning.
    """
    root = Path(os.path.realpath(cwd))
    candidates: list[Path] = []
    global_file = _first_context_file(Path(agent_dir))
    if global_file is not None:
        candidates.append(global_file)
    walk = [root, *root.parents]
    walk.reverse()
    worktree = _main_checkout_of_worktree(root)
    own_names: set[str] = set()
    if worktree is not None:
        own = _first_context_file(worktree[0])
        own_names = {own.name} if own is not None else set()
    project = git_root(root) or root
    for directory in walk:
        found = _first_context_file(directory)
        if found is None:
            continue
        if worktree is not None and directory == worktree[1] and found.name in own_names:
            continue  # the worktree's own copy of this file applies; the main checkout's would be a duplicate
        if not project_trusted and directory.is_relative_to(project):
            real = Path(os.path.realpath(found))
            if not real.is_relative_to(project):
                if warn is not None:
                    warn(
                        f"Warning: skipped context file {found}: it resolves to {real}, outside the project, "
                        "and the project is not trusted"
                    )
                continue
        candidates.append(found)
    out: list[ContextFile] = []
    seen: set[Path] = set()
    for path in candidates:
        real = Path(os.path.realpath(path))
        if real in seen:
            continue
        seen.add(real)
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_CONTEXT_FILE_BYTES + 1)
            final = len(data) <= MAX_CONTEXT_FILE_BYTES
            if not final:
                data = data[:MAX_CONTEXT_FILE_BYTES]
                if warn is not None:
                    warn(
                        f"Warning: context file {path} is larger than {MAX_CONTEXT_FILE_BYTES // 1024} KB; "
                        "only its beginning is used"
                    )
            # Not final after a cut: a multi-byte character split by it is dropped instead of failing the file.
            text = codecs.getincrementaldecoder("utf-8")().decode(data, final=final)
            out.append(ContextFile(path, text.replace("\r\n", "\n").replace("\r", "\n")))
        except (OSError, UnicodeDecodeError) as exc:
            if warn is not None:
                warn(f"Warning: could not read context file {path}: {exc}")
    return out


def git_root(cwd: str | Path) -> Path | None:
    """The repository root containing cwd, or None outside a repository (no git binary needed)."""
    start = Path(os.path.realpath(cwd))
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


__all__ = ["CONTEXT_FILE_NAMES", "MAX_CONTEXT_FILE_BYTES", "ContextFile", "discover_context_files", "git_root"]
