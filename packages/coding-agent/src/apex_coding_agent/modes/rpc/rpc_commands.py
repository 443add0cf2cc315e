"""Handlers of the RPC commands: one function per command, session in, data out.

A handler returns the response `data` (JSON-ready), `NO_DATA` for commands without data, or raises:
the server turns any exception into a failure response carrying its message. `prompt` is not here:
its response timing belongs to the server (rpc_mode.py).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from apex_agent.messages import dump_message
from apex_coding_agent.export import export_session_html
from apex_coding_agent.modes.rpc.rpc_checkpoints import CHECKPOINT_HANDLERS
from apex_coding_agent.modes.rpc.rpc_types import (
    NO_DATA,
    AbortBashCommand,
    AbortCommand,
    AbortRetryCommand,
    BashCommand,
    CloneCommand,
    CompactCommand,
    CycleModelCommand,
    CycleThinkingLevelCommand,
    ExportHtmlCommand,
    FollowUpCommand,
    ForkCommand,
    GetAvailableModelsCommand,
    GetAvailableThinkingLevelsCommand,
    GetCommandsCommand,
    GetEntriesCommand,
    GetForkMessagesCommand,
    GetLastAssistantTextCommand,
    GetMcpServersCommand,
    GetMessagesCommand,
    GetSessionStatsCommand,
    GetStateCommand,
    GetTreeCommand,
    ListSessionsCommand,
    NewSessionCommand,
    RpcCommandBase,
    SearchSessionsCommand,
    SetAutoCompactionCommand,
    SetAutoRetryCommand,
    SetFollowUpModeCommand,
    SetModelCommand,
    SetSessionNameCommand,
    SetSteeringModeCommand,
    SetThinkingLevelCommand,
    SteerCommand,
    SwitchSessionCommand,
)
from apex_coding_agent.resources import ResourceLoader
from apex_coding_agent.runtime import AgentSession, AgentSessionRuntime, BashResult
from apex_coding_agent.session import TreeNode

JsonData: TypeAlias = Any  # Any: a JSON-ready value (dict/list/str/number/bool/None) or NO_DATA


class RawJson(str):
    """Pre-serialized JSON text used as response data (the tree: built iteratively, see `tree_json`)."""

    __slots__ = ()


@dataclass
class CommandContext:
    """What handlers may use besides the command: the runtime and the optional resource sources."""

    runtime: AgentSessionRuntime
    resource_loader: ResourceLoader | None = None
    extension_commands: Callable[[], list[dict[str, Any]]] = field(default=list)  # Any: JSON values

    @property
    def session(self) -> AgentSession:
        return self.runtime.session


Handler: TypeAlias = Callable[[CommandContext, Any], Awaitable[JsonData]]  # Any: the command model of its type
HANDLERS: dict[str, Handler] = {}


def _handles(kind: type[RpcCommandBase]) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[kind.model_fields["type"].default] = fn
        return fn

    return register


# --------------------------------------------------------------------------- queueing and control


@_handles(SteerCommand)
async def _steer(ctx: CommandContext, command: SteerCommand) -> JsonData:
    await ctx.session.steer(command.message, command.images)
    return NO_DATA


@_handles(FollowUpCommand)
async def _follow_up(ctx: CommandContext, command: FollowUpCommand) -> JsonData:
    await ctx.session.follow_up(command.message, command.images)
    return NO_DATA


@_handles(AbortCommand)
async def _abort(ctx: CommandContext, command: AbortCommand) -> JsonData:
    await ctx.session.abort()
    return NO_DATA


@_handles(AbortRetryCommand)
async def _abort_retry(ctx: CommandContext, command: AbortRetryCommand) -> JsonData:
    ctx.session.abort_retry()
    return NO_DATA


# --------------------------------------------------------------------------- state


def state_data(session: AgentSession) -> dict[str, Any]:  # Any: JSON values
    """The `get_state` payload, keys in the order of the pi capture."""
    model = session.model
    data: dict[str, Any] = {  # Any: JSON values
        "model": model.to_wire() if model is not None else None,
        "thinkingLevel": session.thinking_level,
        "isStreaming": session.is_streaming,
        "isCompacting": session.is_compacting,
        "steeringMode": session.agent.steering_mode,
        "followUpMode": session.agent.follow_up_mode,
    }
    if session.session_file is not None:
        data["sessionFile"] = session.session_file
    data["sessionId"] = session.session_id
    if session.session_name is not None:
        data["sessionName"] = session.session_name
    data["autoCompactionEnabled"] = session.settings_manager.get_bool("compaction.enabled", True)
    data["messageCount"] = len(session.agent.state.messages)
    data["pendingMessageCount"] = len(session.steering_messages) + len(session.follow_up_messages)
    if session.checkpoints.pending_restore:
        data["pendingRestore"] = True  # only when true: the state stays the original product's otherwise
    return data


@_handles(GetStateCommand)
async def _get_state(ctx: CommandContext, command: GetStateCommand) -> JsonData:
    return state_data(ctx.session)


@_handles(GetMessagesCommand)
async def _get_messages(ctx: CommandContext, command: GetMessagesCommand) -> JsonData:
    return {"messages": [dump_message(m) for m in ctx.session.agent.state.messages]}


# --------------------------------------------------------------------------- model and thinking


@_handles(SetModelCommand)
async def _set_model(ctx: CommandContext, command: SetModelCommand) -> JsonData:
    session = ctx.session
    for model in session.model_runtime.available_models():
        if model.provider == command.provider and model.id == command.model_id:
            session.set_model(model)
            return model.to_wire()
    raise LookupError(f"Model not found: {command.provider}/{command.model_id}")


@_handles(CycleModelCommand)
async def _cycle_model(ctx: CommandContext, command: CycleModelCommand) -> JsonData:
    result = ctx.session.cycle_model()
    if result is None:
        return None
    return {"model": result.model.to_wire(), "thinkingLevel": result.thinking_level, "isScoped": result.is_scoped}


@_handles(GetAvailableModelsCommand)
async def _get_available_models(ctx: CommandContext, command: GetAvailableModelsCommand) -> JsonData:
    return {"models": [m.to_wire() for m in ctx.session.model_runtime.available_models()]}


@_handles(SetThinkingLevelCommand)
async def _set_thinking_level(ctx: CommandContext, command: SetThinkingLevelCommand) -> JsonData:
    ctx.session.set_thinking_level(command.level)
    return NO_DATA


@_handles(CycleThinkingLevelCommand)
async def _cycle_thinking_level(ctx: CommandContext, command: CycleThinkingLevelCommand) -> JsonData:
    level = ctx.session.cycle_thinking_level()
    return None if level is None else {"level": level}


@_handles(GetAvailableThinkingLevelsCommand)
async def _get_thinking_levels(ctx: CommandContext, command: GetAvailableThinkingLevelsCommand) -> JsonData:
    return {"levels": ctx.session.get_available_thinking_levels()}


@_handles(SetSteeringModeCommand)
async def _set_steering_mode(ctx: CommandContext, command: SetSteeringModeCommand) -> JsonData:
    ctx.session.agent.steering_mode = command.mode
    return NO_DATA


@_handles(SetFollowUpModeCommand)
async def _set_follow_up_mode(ctx: CommandContext, command: SetFollowUpModeCommand) -> JsonData:
    ctx.session.agent.follow_up_mode = command.mode
    return NO_DATA


# --------------------------------------------------------------------------- compaction and retry


@_handles(CompactCommand)
async def _compact(ctx: CommandContext, command: CompactCommand) -> JsonData:
    # The response data is the CompactionResult, the same object `compaction_end.result` carries.
    result = await ctx.session.compact(command.custom_instructions)
    return result.to_wire()


@_handles(SetAutoCompactionCommand)
async def _set_auto_compaction(ctx: CommandContext, command: SetAutoCompactionCommand) -> JsonData:
    # The RPC command writes `compaction.enabled` to the global settings.
    ctx.session.settings_manager.set("compaction.enabled", command.enabled)
    return NO_DATA


@_handles(SetAutoRetryCommand)
async def _set_auto_retry(ctx: CommandContext, command: SetAutoRetryCommand) -> JsonData:
    ctx.session.settings_manager.set("retry.enabled", command.enabled)
    return NO_DATA


# --------------------------------------------------------------------------- user shell commands


def bash_data(result: BashResult) -> dict[str, Any]:  # Any: JSON values
    data: dict[str, Any] = {"output": result.output}  # Any: JSON values
    if result.exit_code is not None:
        data["exitCode"] = result.exit_code
    data["cancelled"] = result.cancelled
    data["truncated"] = result.truncated
    if result.full_output_path is not None:
        data["fullOutputPath"] = result.full_output_path
    return data


@_handles(BashCommand)
async def _bash(ctx: CommandContext, command: BashCommand) -> JsonData:
    # bash_execution_update events carry the request id as a string (numbers are spelled as JSON).
    event_id = None if command.id is None else command.id if isinstance(command.id, str) else json.dumps(command.id)
    result = await ctx.session.execute_bash(command.command, bool(command.exclude_from_context), id=event_id)
    return bash_data(result)


@_handles(AbortBashCommand)
async def _abort_bash(ctx: CommandContext, command: AbortBashCommand) -> JsonData:
    ctx.session.abort_bash()
    return NO_DATA


# --------------------------------------------------------------------------- session data


@_handles(GetSessionStatsCommand)
async def _get_session_stats(ctx: CommandContext, command: GetSessionStatsCommand) -> JsonData:
    return ctx.session.get_session_stats().to_wire()


@_handles(ExportHtmlCommand)
async def _export_html(ctx: CommandContext, command: ExportHtmlCommand) -> JsonData:
    session = ctx.session
    path = export_session_html(session.session_manager, command.output_path, session.cwd)
    return {"path": str(path)}


@_handles(GetForkMessagesCommand)
async def _get_fork_messages(ctx: CommandContext, command: GetForkMessagesCommand) -> JsonData:
    return {"messages": [{"entryId": m.entry_id, "text": m.text} for m in ctx.session.get_user_messages_for_forking()]}


@_handles(GetEntriesCommand)
async def _get_entries(ctx: CommandContext, command: GetEntriesCommand) -> JsonData:
    manager = ctx.session.session_manager
    entries = manager.get_entries()
    if command.since is not None:
        index = next((i for i, entry in enumerate(entries) if entry.id == command.since), None)
        if index is None:
            raise LookupError(f"Entry not found: {command.since}")
        entries = entries[index + 1 :]
    return {"entries": [entry.to_wire() for entry in entries], "leafId": manager.get_leaf_id()}


MAX_TREE_DEPTH = 256
"""Levels of nested `children` in one item of `get_tree`'s `tree` list; deeper parts continue as further items."""


TREE_NODES_PER_STEP = 2000
"""`get_tree` encodes this many nodes between two turns of the event loop, so other commands are answered meanwhile."""


def tree_json(roots: list[TreeNode], max_depth: int = MAX_TREE_DEPTH) -> RawJson:
    """`[{entry, children, label?, labelTimestamp?}, ...]` as JSON text, built without recursion.

    A tree at most `max_depth` levels deep is exactly the nested form: one item per root. Deeper, a node on level
    `max_depth` is written with `children: []` and each of its children starts a further item of the list, after
    the items already written (so a parent always comes before its continuations; each continuation's
    `entry.parentId` names the node it hangs under). Without that, a linear session of n entries would nest 2n
    JSON levels, and common decoders (Python's `json` among them) give up at about 1,000.
    """
    parts: list[str] = []
    for _ in _tree_parts(roots, max_depth, parts):
        pass
    return RawJson("".join(parts))


def _tree_parts(roots: list[TreeNode], max_depth: int, parts: list[str]) -> Iterator[None]:
    """Append the JSON text of `tree_json` to `parts`, pausing (yielding) after every node."""
    parts.append("[")
    first = True
    pending: deque[TreeNode] = deque(roots)
    while pending:
        if not first:
            parts.append(",")
        first = False
        # Work items: a node to open with its level, or a literal text to emit (closing brackets and separators).
        stack: list[tuple[TreeNode, int] | str] = [(pending.popleft(), 1)]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                parts.append(item)
                continue
            node, depth = item
            parts.append('{"entry":')
            parts.append(_dumps(node.entry.to_wire()))
            parts.append(',"children":[')
            tail = "]"
            if node.label is not None:
                tail += ',"label":' + _dumps(node.label)
            if node.label_timestamp is not None:
                tail += ',"labelTimestamp":' + _dumps(node.label_timestamp)
            stack.append(tail + "}")
            children = node.children
            if depth >= max_depth:
                pending.extend(children)
            else:
                for i in range(len(children) - 1, -1, -1):
                    stack.append((children[i], depth + 1))
                    if i:
                        stack.append(",")
            yield
    parts.append("]")


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""Compact JSON text of a JSON-ready value (one encoder: `json.dumps` with options builds one per call)."""


@_handles(GetTreeCommand)
async def _get_tree(ctx: CommandContext, command: GetTreeCommand) -> JsonData:
    # A large tree takes a while to encode: commands sent after this one may be answered first (matched by id).
    manager = ctx.session.session_manager
    roots, leaf_id = manager.get_tree(), manager.get_leaf_id()  # one snapshot, whatever is appended meanwhile
    parts: list[str] = ['{"tree":']
    for count, _ in enumerate(_tree_parts(roots, MAX_TREE_DEPTH, parts), 1):
        if count % TREE_NODES_PER_STEP == 0:
            await asyncio.sleep(0)
    parts.append(',"leafId":' + _dumps(leaf_id) + "}")
    return RawJson("".join(parts))


@_handles(GetLastAssistantTextCommand)
async def _get_last_assistant_text(ctx: CommandContext, command: GetLastAssistantTextCommand) -> JsonData:
    return {"text": ctx.session.get_last_assistant_text()}


@_handles(SetSessionNameCommand)
async def _set_session_name(ctx: CommandContext, command: SetSessionNameCommand) -> JsonData:
    name = command.name.strip()
    if not name:
        raise ValueError("Session name cannot be empty")
    # The session emits session_info_changed synchronously to our (sync) listener: it precedes the response.
    ctx.session.set_session_name(name)
    return NO_DATA


@_handles(GetMcpServersCommand)
async def _get_mcp_servers(ctx: CommandContext, command: GetMcpServersCommand) -> JsonData:
    from apex_coding_agent.mcp_servers.host import mcp_host_of

    host = mcp_host_of(ctx.runtime)
    return {"servers": host.snapshot() if host is not None else []}


@_handles(GetCommandsCommand)
async def _get_commands(ctx: CommandContext, command: GetCommandsCommand) -> JsonData:
    commands: list[dict[str, Any]] = list(ctx.extension_commands())  # Any: JSON values
    loader = ctx.resource_loader
    if loader is None:
        # Without a loader of its own the server lists the session's prompt templates and skills.
        commands.extend(dict(entry) for entry in ctx.session.get_resource_commands())
    else:
        for template in loader.prompt_templates:
            entry: dict[str, Any] = {"name": template.name}  # Any: JSON values
            if template.description:
                entry["description"] = template.description
            entry["source"] = "prompt"
            entry["sourceInfo"] = template.source_info.to_json()
            commands.append(entry)
        if loader.skill_commands_enabled:
            for skill in loader.skills:
                entry = {"name": f"skill:{skill.command_name}"}
                if skill.description:
                    entry["description"] = skill.description
                entry["source"] = "skill"
                entry["sourceInfo"] = skill.source_info.to_json()
                commands.append(entry)
    return {"commands": commands}


# --------------------------------------------------------------------------- replacing the session


@_handles(NewSessionCommand)
async def _new_session(ctx: CommandContext, command: NewSessionCommand) -> JsonData:
    await ctx.runtime.new_session(command.parent_session)
    return {"cancelled": ctx.runtime.last_change_cancelled}


@_handles(SwitchSessionCommand)
async def _switch_session(ctx: CommandContext, command: SwitchSessionCommand) -> JsonData:
    await ctx.runtime.switch_session(command.session_path)
    return {"cancelled": ctx.runtime.last_change_cancelled}


@_handles(ForkCommand)
async def _fork(ctx: CommandContext, command: ForkCommand) -> JsonData:
    result = await ctx.runtime.fork(command.entry_id, "before")
    return {"text": result.selected_text, "cancelled": result.cancelled}


@_handles(CloneCommand)
async def _clone(ctx: CommandContext, command: CloneCommand) -> JsonData:
    leaf = ctx.session.session_manager.get_leaf_id()
    if leaf is None:
        raise ValueError("Cannot clone session: no current entry selected")
    result = await ctx.runtime.fork(leaf, "at")
    return {"cancelled": result.cancelled}


HANDLERS.update(CHECKPOINT_HANDLERS)


@_handles(ListSessionsCommand)
async def _list_sessions(ctx: CommandContext, command: ListSessionsCommand) -> JsonData:
    from apex_coding_agent.session.listing import list_all_sessions, list_sessions

    manager = ctx.session.session_manager
    if command.all:
        infos = await asyncio.to_thread(list_all_sessions)
    else:  # a cold index is built here: off the event loop, so events keep flowing
        infos = await asyncio.to_thread(list_sessions, ctx.session.cwd, manager.session_dir)
    return {"sessions": [info.to_json() for info in infos]}


@_handles(SearchSessionsCommand)
async def _search_sessions(ctx: CommandContext, command: SearchSessionsCommand) -> JsonData:
    from apex_coding_agent.session.search import search_sessions

    own = ctx.session.session_manager.session_dir  # searched too when it is a custom dir outside the sessions root
    include = [own] if own is not None else []
    hits = await asyncio.to_thread(
        search_sessions, command.query, cwd=command.cwd, limit=command.limit, include=include
    )
    return {"hits": [hit.to_json() for hit in hits]}


__all__ = ["HANDLERS", "MAX_TREE_DEPTH", "CommandContext", "RawJson", "bash_data", "state_data", "tree_json"]
