"""The `grep` tool: search file contents with ripgrep, or a pure-Python walk when rg is missing."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from apex_agent.tools import AgentTool, AgentToolResult, ToolExecutionError, ToolUpdateCallback
from apex_ai.abort import AbortSignal
from apex_coding_agent.tools._common import (
    Notice,
    ReadFilter,
    boolean_param,
    check_aborted,
    head_limited_result,
    limit_param,
    number_param,
    object_schema,
    optional_int,
    optional_str,
    required_str,
    skipped_notice,
    string_param,
)
from apex_coding_agent.tools._process import choose_helper, locate_helper, run_helper
from apex_coding_agent.tools.ignore_walk import WalkEntry, glob_to_regex, walk
from apex_coding_agent.tools.path_utils import resolve_to_cwd
from apex_coding_agent.tools.truncate import DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, truncate_line

DEFAULT_GREP_LIMIT = 100
GrepEngine = Literal["auto", "ripgrep", "python"]
RG_MISSING_MESSAGE = "ripgrep (rg) is not available and could not be downloaded"


def find_ripgrep(agent_dir: str | None = None) -> str | None:
    """`rg` from PATH, else `<agent_dir>/bin/rg`."""
    return locate_helper(("rg",), agent_dir)


@dataclass(frozen=True)
class GrepQuery:
    pattern: str
    root: str
    glob: str | None
    ignore_case: bool
    literal: bool
    limit: int


@dataclass
class GrepHits:
    """Up to `limit` matching lines `(absolute path, line number)` and the total number of matches."""

    lines: list[tuple[str, int]]
    total: int
    matched_lines: int = 0
    skipped: int = 0  # files left out because reading them is denied


class GrepTool(AgentTool):
    name = "grep"
    label = "grep"
    description = (
        "Search file contents for a regular expression (or a fixed string with literal=true). Hidden files are "
        "searched and .gitignore is respected. Results look like path:line: text, with optional context lines. "
        f"At most {DEFAULT_GREP_LIMIT} matches (change with limit) and {DEFAULT_MAX_BYTES // 1024}KB are returned; "
        f"lines longer than {GREP_MAX_LINE_LENGTH} characters are cut."
    )
    parameters = object_schema(
        {
            "pattern": string_param("Regular expression to look for (a plain string when literal is true)"),
            "path": string_param("Directory or file to search (default: the working directory)"),
            "glob": string_param("Only search files whose path matches this glob, e.g. '*.py' or 'src/**/*.ts'"),
            "ignoreCase": boolean_param("Match without regard to letter case (default: false)"),
            "literal": boolean_param("Treat pattern as a fixed string instead of a regex (default: false)"),
            "context": number_param("Lines of context to show around each match (default: 0)"),
            "limit": number_param(f"Largest number of matches to return (default: {DEFAULT_GREP_LIMIT})"),
        },
        ["pattern"],
    )
    prompt_snippet = "Search file contents for patterns (respects .gitignore)"
    capabilities: tuple[str, ...] = ("fs.read",)

    def __init__(
        self,
        cwd: str,
        engine: GrepEngine = "auto",
        agent_dir: str | None = None,
        read_filter: ReadFilter | None = None,
    ) -> None:
        self.cwd = cwd
        self.engine = engine
        self.agent_dir = agent_dir
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
        context = max(0, optional_int(params, "context") or 0)
        limit = limit_param(params, DEFAULT_GREP_LIMIT)
        if not os.path.exists(root):
            raise ToolExecutionError(f"Path not found: {root}")
        query = GrepQuery(
            pattern,
            root,
            optional_str(params, "glob"),
            bool(params.get("ignoreCase")),
            bool(params.get("literal")),
            limit,
        )
        rg = choose_helper(self.engine, "ripgrep", lambda: find_ripgrep(self.agent_dir), RG_MISSING_MESSAGE)
        denied = self.read_filter() if self.read_filter is not None else None
        hits = await (_search_ripgrep(rg, query, signal, denied) if rg else _search_python(query, signal, denied))
        check_aborted(signal)
        return _format(hits, query, context)


def _rg_walk_flags(query: GrepQuery) -> list[str]:
    flags = ["--color=never", "--hidden"]
    if query.glob:
        flags += ["--glob", query.glob]
    return flags


async def _rg_denied_files(
    rg: str, query: GrepQuery, signal: AbortSignal | None, cwd: str, denied: Callable[[str], bool]
) -> set[str]:
    """The files rg would search that reading is denied for, found by listing them (not by searching them), so
    their number says nothing about what they contain."""
    listed: list[str] = []
    argv = [rg, "--files", *_rg_walk_flags(query), "--", query.root]
    result = await run_helper(argv, lambda raw: listed.append(os.fsdecode(raw)), signal, cwd)
    if result.exit_code not in (0, 1):
        raise ToolExecutionError(result.stderr or f"ripgrep exited with code {result.exit_code}")
    return {path for path in listed if path and denied(path)}


async def _search_ripgrep(
    rg: str, query: GrepQuery, signal: AbortSignal | None, denied: Callable[[str], bool] | None = None
) -> GrepHits:
    argv = [rg, "--json", "--line-number", *_rg_walk_flags(query)]
    if query.ignore_case:
        argv.append("--ignore-case")
    if query.literal:
        argv.append("--fixed-strings")
    argv += ["--", query.pattern, query.root]
    hits = GrepHits([], 0)
    counted = [0]
    # rg matches path globs against paths relative to its own cwd; run it in the searched directory so that
    # `src/*.py` means the same as in the Python fallback.
    cwd = query.root if os.path.isdir(query.root) else os.path.dirname(query.root)
    # A file given as the root was judged by the permission gate before the tool ran.
    left_out = await _rg_denied_files(rg, query, signal, cwd, denied) if denied and os.path.isdir(query.root) else set()
    hits.skipped = len(left_out)
    allowed_total = [0]

    def on_line(raw: bytes) -> None:
        try:
            event = json.loads(raw)
        except ValueError:
            return
        kind = event.get("type")
        if kind == "match":
            data = event["data"]
            path = _rg_text(data["path"])
            if path in left_out:
                return
            counted[0] += 1
            allowed_total[0] += len(data.get("submatches") or ()) or 1
            if len(hits.lines) < query.limit:
                hits.lines.append((path, int(data["line_number"])))
        elif kind == "summary":
            hits.total = int(event["data"]["stats"]["matches"])

    result = await run_helper(argv, on_line, signal, cwd)
    if result.exit_code not in (0, 1):
        raise ToolExecutionError(result.stderr or f"ripgrep exited with code {result.exit_code}")
    hits.matched_lines = counted[0]
    if left_out:
        hits.total = allowed_total[0]  # rg's own total counts the left-out files too
    hits.total = max(hits.total, counted[0])
    return hits


def _rg_text(value: dict[str, str]) -> str:
    # rg reports non-UTF-8 paths as base64 `bytes` instead of `text`.
    if "text" in value:
        return value["text"]
    return os.fsdecode(base64.b64decode(value["bytes"]))


def _compile(query: GrepQuery) -> re.Pattern[str]:
    source = re.escape(query.pattern) if query.literal else query.pattern
    flags = re.MULTILINE | (re.IGNORECASE if query.ignore_case else 0)
    try:
        return re.compile(source, flags)
    except re.error as exc:
        raise ToolExecutionError(f"regex parse error: {exc}") from exc


def _glob_filter(query: GrepQuery) -> tuple[re.Pattern[str], bool, bool] | None:
    """`(regex, negated, anchored)` for the `glob` parameter, matched like rg's override globs."""
    if not query.glob:
        return None
    glob = query.glob
    negated = glob.startswith("!")
    if negated:
        glob = glob[1:]
    anchored = "/" in glob.rstrip("/")
    return glob_to_regex(glob.lstrip("/")), negated, anchored


def _search_file(path: str, regex: re.Pattern[str], hits: GrepHits, limit: int) -> None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return
    if b"\x00" in data:
        return  # binary: rg skips these while walking
    text = data.decode("utf-8", "replace")
    if regex.search(text) is None:
        return
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        count = sum(1 for _ in regex.finditer(line))
        if count:
            hits.total += count
            hits.matched_lines += 1
            if len(hits.lines) < limit:
                hits.lines.append((path, number))


def _python_search_sync(
    query: GrepQuery, regex: re.Pattern[str], signal: AbortSignal | None, denied: Callable[[str], bool] | None
) -> GrepHits:
    hits = GrepHits([], 0)
    if os.path.isfile(query.root):
        _search_file(query.root, regex, hits, query.limit)
        return hits
    glob_filter = _glob_filter(query)
    prefix = len(query.root.rstrip("/")) + 1

    def glob_override(entry: WalkEntry) -> bool | None:
        # rg's `--glob` semantics: a matching glob wins over ignore files (`!g` drops, `g` keeps, even an ignored
        # path); a file no positive glob matches is dropped; a directory it does not match is left to the ignores.
        if glob_filter is None:
            return None
        glob_regex, negated, anchored = glob_filter
        relative = entry.path[prefix:]
        if glob_regex.match(relative if anchored else relative.rsplit("/", 1)[-1]) is not None:
            return not negated
        return None if negated or entry.is_dir else False

    for entry in walk(query.root, (".rgignore",), override=glob_override):
        if signal is not None and signal.aborted:
            break
        if entry.is_dir or entry.is_symlink:
            continue  # rg does not follow symlinks met while walking, to files or to directories
        if denied is not None and denied(entry.path):
            hits.skipped += 1
            continue
        _search_file(entry.path, regex, hits, query.limit)
    return hits


async def _search_python(
    query: GrepQuery, signal: AbortSignal | None, denied: Callable[[str], bool] | None = None
) -> GrepHits:
    regex = _compile(query)
    # The walk blocks on disk I/O; keep the event loop (and abort) responsive.
    return await asyncio.to_thread(_python_search_sync, query, regex, signal, denied)


def _file_lines(path: str, cache: dict[str, list[str] | None]) -> list[str] | None:
    if path not in cache:
        try:
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
            cache[path] = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        except OSError:
            cache[path] = None
    return cache[path]


def _format(hits: GrepHits, query: GrepQuery, context: int) -> AgentToolResult:
    if not hits.lines:
        return head_limited_result("No matches found", skipped_notice(hits.skipped))
    searched_file = os.path.isfile(query.root)
    root_prefix = query.root.rstrip("/") + "/"
    cache: dict[str, list[str] | None] = {}
    output: list[str] = []
    lines_truncated = False
    for path, number in sorted(hits.lines):
        if searched_file:
            shown_path = os.path.basename(path)
        else:
            shown_path = path[len(root_prefix) :] if path.startswith(root_prefix) else os.path.relpath(path, query.root)
            shown_path = shown_path.replace(os.sep, "/")
        lines = _file_lines(path, cache)
        if lines is None:
            output.append(f"{shown_path}:{number}: (unable to read file)")
            continue
        first, last = max(1, number - context), min(len(lines), number + context)
        for current in range(first, last + 1):
            text = truncate_line(lines[current - 1], GREP_MAX_LINE_LENGTH)
            lines_truncated = lines_truncated or len(text) != len(lines[current - 1])
            mark = ":" if current == number else "-"
            output.append(f"{shown_path}{mark}{current}{mark} {text}")

    limit_notices: list[Notice] = []
    if hits.matched_lines > len(hits.lines):
        text = (
            f"{len(hits.lines)} of {hits.total} total matches shown. "
            f"Use limit={query.limit * 2} for more, or refine pattern"
        )
        limit_notices.append(Notice(text, {"matchLimitReached": query.limit, "totalMatches": hits.total}))
    line_notices: list[Notice] = []
    if lines_truncated:
        text = f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
        line_notices.append(Notice(text, {"linesTruncated": True}))
    line_notices += skipped_notice(hits.skipped)
    return head_limited_result("\n".join(output), limit_notices, line_notices)


__all__ = ["DEFAULT_GREP_LIMIT", "RG_MISSING_MESSAGE", "GrepEngine", "GrepTool", "find_ripgrep"]
