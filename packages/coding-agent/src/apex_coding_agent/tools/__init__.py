"""The built-in tools of Apex Code: read, bash, edit, write, grep, find, ls.

`create_coding_tools` gives the default active set (read, bash, edit, write); `create_all_tools` every built-in by
name; `create_read_only_tools` the ones that never modify anything.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from apex_agent.tools import AgentTool
from apex_coding_agent.tools._common import ReadFilter
from apex_coding_agent.tools.bash import BashTool, BashToolOptions, SessionEnvironment, SpawnContext, build_command_env
from apex_coding_agent.tools.bash_operations import BashOperations, LocalBashOperations, run_operations
from apex_coding_agent.tools.edit import EditOperations, EditTool, LocalEditOperations
from apex_coding_agent.tools.file_mutation_queue import with_file_mutation_queue
from apex_coding_agent.tools.find import FindEngine, FindOperations, FindTool
from apex_coding_agent.tools.grep import GrepEngine, GrepTool
from apex_coding_agent.tools.ls import LocalLsOperations, LsOperations, LsTool
from apex_coding_agent.tools.path_utils import expand_path, resolve_read_path, resolve_to_cwd
from apex_coding_agent.tools.read import LocalReadOperations, ReadOperations, ReadTool, ReadToolOptions
from apex_coding_agent.tools.shell import (
    ProcessOutcome,
    kill_process_tree,
    kill_tracked_process_groups,
    resolve_shell,
    run_process,
)
from apex_coding_agent.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    GREP_MAX_LINE_LENGTH,
    TruncationResult,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
)
from apex_coding_agent.tools.write import LocalWriteOperations, WriteOperations, WriteTool

ALL_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find", "ls")
DEFAULT_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write")
READ_ONLY_TOOL_NAMES: tuple[str, ...] = ("read", "grep", "find", "ls")


@dataclass
class ToolsOptions:
    """Per-tool settings passed to the factories; every field has a working default."""

    read: ReadToolOptions = field(default_factory=ReadToolOptions)
    bash: BashToolOptions = field(default_factory=BashToolOptions)
    grep_engine: GrepEngine = "auto"
    find_engine: FindEngine = "auto"
    agent_dir: str | None = None
    write_operations: WriteOperations | None = None
    edit_operations: EditOperations | None = None
    find_operations: FindOperations | None = None
    ls_operations: LsOperations | None = None
    bash_operations: BashOperations | None = None
    """Where `bash` runs commands (overrides `bash.operations` when set)."""
    read_filter: ReadFilter | None = None
    """Paths grep, find and ls leave out (and count) because reading them is denied; the permission gate's
    `read_filter` in a session. None: nothing is left out."""


def create_tool(name: str, cwd: str, options: ToolsOptions | None = None) -> AgentTool:
    """One built-in tool by name; unknown names raise `KeyError`."""
    opts = options or ToolsOptions()
    if name == "read":
        return ReadTool(cwd, opts.read)
    if name == "bash":
        if opts.bash_operations is not None:
            return BashTool(cwd, dataclasses.replace(opts.bash, operations=opts.bash_operations))
        return BashTool(cwd, opts.bash)
    if name == "edit":
        return EditTool(cwd, opts.edit_operations)
    if name == "write":
        return WriteTool(cwd, opts.write_operations)
    if name == "grep":
        return GrepTool(cwd, opts.grep_engine, opts.agent_dir, opts.read_filter)
    if name == "find":
        return FindTool(cwd, opts.find_engine, opts.agent_dir, opts.find_operations, opts.read_filter)
    if name == "ls":
        return LsTool(cwd, opts.ls_operations, opts.read_filter)
    raise KeyError(name)


def create_coding_tools(cwd: str, options: ToolsOptions | None = None) -> list[AgentTool]:
    """The default active set: read, bash, edit, write."""
    return [create_tool(name, cwd, options) for name in DEFAULT_TOOL_NAMES]


def create_read_only_tools(cwd: str, options: ToolsOptions | None = None) -> list[AgentTool]:
    """Tools that only look: read, grep, find, ls."""
    return [create_tool(name, cwd, options) for name in READ_ONLY_TOOL_NAMES]


def create_all_tools(cwd: str, options: ToolsOptions | None = None) -> dict[str, AgentTool]:
    """Every built-in, keyed by name, in the order of `ALL_TOOL_NAMES`."""
    return {name: create_tool(name, cwd, options) for name in ALL_TOOL_NAMES}


__all__ = [
    "ALL_TOOL_NAMES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "DEFAULT_TOOL_NAMES",
    "GREP_MAX_LINE_LENGTH",
    "READ_ONLY_TOOL_NAMES",
    "BashOperations",
    "BashTool",
    "BashToolOptions",
    "EditOperations",
    "EditTool",
    "FindEngine",
    "FindOperations",
    "FindTool",
    "GrepEngine",
    "GrepTool",
    "LocalBashOperations",
    "LocalEditOperations",
    "LocalLsOperations",
    "LocalReadOperations",
    "LocalWriteOperations",
    "LsOperations",
    "LsTool",
    "ProcessOutcome",
    "ReadFilter",
    "ReadOperations",
    "ReadTool",
    "ReadToolOptions",
    "SessionEnvironment",
    "SpawnContext",
    "ToolsOptions",
    "TruncationResult",
    "WriteOperations",
    "WriteTool",
    "build_command_env",
    "create_all_tools",
    "create_coding_tools",
    "create_read_only_tools",
    "create_tool",
    "expand_path",
    "format_size",
    "kill_process_tree",
    "kill_tracked_process_groups",
    "resolve_read_path",
    "resolve_shell",
    "resolve_to_cwd",
    "run_operations",
    "run_process",
    "truncate_head",
    "truncate_line",
    "truncate_tail",
    "with_file_mutation_queue",
]
