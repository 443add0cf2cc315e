"""Handlers of the checkpoint commands: `get_checkpoints`, `rewind`, `redo`, `recover_restore`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apex_coding_agent.modes.rpc.rpc_types import (
    GetCheckpointsCommand,
    RecoverRestoreCommand,
    RedoCommand,
    RewindCommand,
)

if TYPE_CHECKING:
    from apex_coding_agent.modes.rpc.rpc_commands import CommandContext


async def _get_checkpoints(ctx: CommandContext, command: GetCheckpointsCommand) -> dict[str, Any]:  # Any: JSON
    checkpoints = ctx.session.checkpoints
    return {
        "checkpoints": [point.to_wire() for point in checkpoints.get_checkpoints()],
        "canRedo": checkpoints.can_redo,
        "pendingRestore": checkpoints.pending_restore,
        "enabled": checkpoints.enabled,
    }


async def _rewind(ctx: CommandContext, command: RewindCommand) -> dict[str, Any]:  # Any: JSON
    checkpoints = ctx.session.checkpoints
    if command.dry_run:
        plan = checkpoints.plan_rewind(command.entry_id)
        return {
            "restore": [op.path for op, _ in plan.to_write],
            "unchanged": plan.unchanged,
            "conflicts": [conflict.to_wire() for conflict in plan.conflicts],
        }
    result = await checkpoints.rewind(command.entry_id, command.mode, command.overwrite)
    return result.to_wire()


async def _redo(ctx: CommandContext, command: RedoCommand) -> dict[str, Any]:  # Any: JSON
    return (await ctx.session.checkpoints.redo(command.overwrite)).to_wire()


async def _recover_restore(ctx: CommandContext, command: RecoverRestoreCommand) -> dict[str, Any]:  # Any: JSON
    written, conflicts = ctx.session.checkpoints.recover(command.action)
    return {"written": written, "conflicts": [conflict.to_wire() for conflict in conflicts]}


CHECKPOINT_HANDLERS: dict[str, Any] = {  # Any: a handler taking its own command model
    "get_checkpoints": _get_checkpoints,
    "rewind": _rewind,
    "redo": _redo,
    "recover_restore": _recover_restore,
}

__all__ = ["CHECKPOINT_HANDLERS"]
