"""The `find` tool: list files by glob with fd, or a pure-Python walk when fd is missing."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal, Protocol

from apex_agent.tools import AgentTool, AgentToolResult, ToolExecutionError, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_coding_agent.tools._common import (
    Notice,
    ReadFilter,
    check_aborted,
    head_limited_result,
    limit_param,
    number_param,
    object_schema,
    optional_str,
    required_str,
    skipped_notice,
    string_param,
)
from apex_coding_agent.tools._process import choose_helper, locate_helper, run_helper
from apex_coding_agent.tools.ignore_walk import find_git_root, glob_to_regex, walk
from apex_coding_agent.tools.path_utils import resolve_to_cwd
from apex_coding_agent.tools.truncate import DEFAULT_MAX_BYTES

DEFAULT_FIND_LIMIT = 1000
FindEngine = Literal["auto", "fd", "python"]
FD_MISSING_MESSAGE = "fd is not available and could not be downloaded"
DEFAULT_IGNORE_GLOBS = ("**/node_modules/**", "**/.git/**")


class FindOperations(Protocol):
    """Replacement file listing (SSH, containers). `glob` returns absolute paths, directories ending in `/`."""

    async def exists(self, path: str) -> bool: ...

    async def glob(self, pattern: str, search_path: str, ignore: list[str], limit: int) -> list[str]: ...


FD_NOT_A_DIRECTORY = "[fd error]: Search path '{root}' is not a directory.\n[fd error]: No valid search paths given."


def find_fd(agent_dir: str | None = None) -> str | None:
    """`fd` (or Debian's `fdfind`) from PATH, else `<agent_dir>/bin/fd`."""
    return locate_helper(("fd", "fdfind"), agent_dir)


@lru_cache(maxsize=8)
def _fd_supports_no_require_git(fd: str) -> bool:
    # fd < 8.7 rejects the flag outright; ask its help text once per binary.
    try:
        help_text = subprocess.run([fd, "--help"], capture_output=True, text=True, timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "--no-require-git" in help_text


def _fd_honours_gitignore(fd: str, root: str) -> bool:
    """Whether `fd` applies .gitignore files under `root`: always inside a git repository, outside one only
    with `--no-require-git` (fd >= 8.7)."""
    return find_git_root(root) is not None or _fd_supports_no_require_git(fd)


def effective_pattern(pattern: str) -> tuple[str, bool]:
    """`(glob, full_path)`: a pattern with `/` is matched against the whole path, so it gets a `**/` prefix."""
    if "/" not in pattern:
        return pattern, False
    if pattern.startswith(("/", "**/")) or pattern == "**":
        return pattern, True
    return "**/" + pattern, True


class FindTool(AgentTool):
    name = "find"
    label = "find"
    description = (
        "Find files and directories by glob pattern, e.g. '*.py', '**/*.json' or 'src/**/*.spec.ts'. Hidden entries "
        "are included and .gitignore is respected. Paths are relative to the searched directory; directories end "
        f"with '/'. At most {DEFAULT_FIND_LIMIT} results (change with limit) and {DEFAULT_MAX_BYTES // 1024}KB."
    )
    parameters = object_schema(
        {
            "pattern": string_param("Glob to match, e.g. '*.py', '**/*.json' or 'src/**/*.spec.ts'"),
            "path": string_param("Directory to search (default: the working directory)"),
            "limit": number_param(f"Largest number of results (default: {DEFAULT_FIND_LIMIT})"),
        },
        ["pattern"],
    )
    prompt_snippet = "Find files by glob pattern (respects .gitignore)"
    capabilities: tuple[str, ...] = ("fs.read",)

    def __init__(
        self,
        cwd: str,
        engine: FindEngine = "auto",
        agent_dir: str | None = None,
        operations: FindOperations | None = None,
        read_filter: ReadFilter | None = None,
    ) -> None:
        self.cwd = cwd
        self.engine = engine
        self.agent_dir = agent_dir
        self.operations = operations
        self.read_filter = read_filter

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdateCallback | None,
    ) -> AgentToolResult:
        check_aborted(signal)
        pattern = required_str(params, "pattern")
        root = resolve_to_cwd(optional_str(params, "path") or ".", self.cwd)
        limit = limit_param(params, DEFAULT_FIND_LIMIT)
        denied = self.read_filter() if self.read_filter is not None else None
        skipped = 0
        if self.operations is not None:
            if not await self.operations.exists(root):
                raise ToolExecutionError(f"Path not found: {root}")
            if denied is None:
                results = await self.operations.glob(pattern, root, list(DEFAULT_IGNORE_GLOBS), limit)
            else:
                # Only the matches are known here, so only denied matches can be counted.
                found = await self.operations.glob(pattern, root, list(DEFAULT_IGNORE_GLOBS), 10**9)
                results = [path for path in found if not denied(path.rstrip("/"))]
                skipped = len(found) - len(results)
                results = results[:limit]
        else:
            if not os.path.exists(root):
                raise ToolExecutionError(f"Path not found: {root}")
            fd = choose_helper(self.engine, "fd", lambda: find_fd(self.agent_dir), FD_MISSING_MESSAGE)
            if fd is not None and self.engine == "auto" and not _fd_honours_gitignore(fd, root):
                fd = None  # the Python walk honours .gitignore outside a repository, as the tool promises
            if fd is not None:
                if denied is None:
                    results = await _find_with_fd(fd, pattern, root, limit, signal)
                else:
                    results, skipped = await _find_with_fd_filtered(fd, pattern, root, limit, signal, denied)
            elif not os.path.isdir(root):
                # fd refuses a file as its search path; the fallback gives the same answer so the backends agree.
                raise ToolExecutionError(FD_NOT_A_DIRECTORY.format(root=root))
            else:
                results, skipped = await asyncio.to_thread(_find_python, pattern, root, limit, signal, denied)
        check_aborted(signal)
        return _format(results, root, limit, skipped)


def _fd_argv(fd: str, pattern: str, root: str, limit: int | None) -> list[str]:
    glob, full_path = effective_pattern(pattern)
    argv = [fd, "--glob", "--color=never", "--hidden"]
    if find_git_root(root) is None and _fd_supports_no_require_git(fd):
        argv.append("--no-require-git")
    if limit is not None:
        argv += ["--max-results", str(limit)]
    if full_path:
        argv.append("--full-path")
    return [*argv, "--", glob, root]


async def _run_fd(argv: list[str], signal: AbortSignal | None) -> list[str]:
    lines: list[str] = []
    result = await run_helper(argv, lambda raw: lines.append(os.fsdecode(raw)), signal)
    lines = [line for line in lines if line]
    if result.exit_code != 0 and not lines:
        raise ToolExecutionError(result.stderr or f"fd exited with code {result.exit_code}")
    return lines


async def _find_with_fd(fd: str, pattern: str, root: str, limit: int, signal: AbortSignal | None) -> list[str]:
    return await _run_fd(_fd_argv(fd, pattern, root, limit), signal)


async def _find_with_fd_filtered(
    fd: str, pattern: str, root: str, limit: int, signal: AbortSignal | None, denied: Callable[[str], bool]
) -> tuple[list[str], int]:
    """Matches minus denied paths, and how many denied paths the walk met whatever the pattern: counting only
    denied *matches* would let the pattern probe the names inside a denied directory."""
    everything = await _run_fd(_fd_argv(fd, "**", root, None), signal)
    left_out = {path.rstrip("/") for path in everything if denied(path.rstrip("/"))}
    matches = await _run_fd(_fd_argv(fd, pattern, root, None), signal)
    results = [path for path in matches if path.rstrip("/") not in left_out]
    return results[:limit], len(left_out)


def _find_python(
    pattern: str, root: str, limit: int, signal: AbortSignal | None, denied: Callable[[str], bool] | None = None
) -> tuple[list[str], int]:
    glob, full_path = effective_pattern(pattern)
    regex: re.Pattern[str] = glob_to_regex(glob)
    results: list[str] = []
    skipped = 0
    for entry in walk(root, (".fdignore",), gitignore_outside_git=True):
        if signal is not None and signal.aborted:
            break
        if denied is not None and denied(entry.path):
            skipped += 1  # counted before matching, for the same reason as with fd
            continue
        if len(results) >= limit:
            if denied is None:
                break
            continue  # keep walking only to count what is left out
        subject = entry.path if full_path else os.path.basename(entry.path)
        if regex.match(subject.replace(os.sep, "/")) is not None:
            results.append(entry.path + "/" if entry.is_dir else entry.path)
    return results, skipped


def _relativize(path: str, root: str) -> str:
    trailing = "/" if path.endswith("/") else ""
    prefix = root.rstrip("/") + "/"
    if path.startswith(prefix):
        relative = path[len(prefix) :]
    elif os.path.isabs(path):
        relative = os.path.relpath(path, root)
    else:
        relative = path.removeprefix("./")
    relative = relative.rstrip("/").replace(os.sep, "/")
    return relative + trailing if relative else relative


def _format(results: list[str], root: str, limit: int, skipped: int = 0) -> AgentToolResult:
    relative = sorted(_relativize(path, root) for path in results)
    relative = [path for path in relative if path]
    if not relative:
        return head_limited_result("No files found matching pattern", skipped_notice(skipped))
    notices: list[Notice] = []
    if len(relative) >= limit:
        text = f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern"
        notices.append(Notice(text, {"resultLimitReached": limit}))
    return head_limited_result("\n".join(relative), notices, skipped_notice(skipped))


__all__ = ["DEFAULT_FIND_LIMIT", "FD_MISSING_MESSAGE", "FindEngine", "FindOperations", "FindTool", "find_fd"]
