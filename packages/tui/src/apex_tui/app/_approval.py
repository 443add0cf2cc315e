"""The interactive permission responder (settings-and-trust.md §7): `Allow once` / `Always allow` / `Deny`.

The permission gate awaits the responder while the agent waits on the tool call. The responder shows a
`SelectDialog` in the editor slot and resolves with the answer; Esc (cancel) denies. Parallel tool calls ask one
at a time. An aborted run cancels the wait and the dialog goes away.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from apex_coding_agent.core.permissions import PermissionGate, ResponderAnswer
from apex_tui.app._modal import show_modal
from apex_tui.widgets.pickers import SelectDialog

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

ANSWERS: Final[dict[str, ResponderAnswer]] = {"Allow once": "allow_once", "Always allow": "always", "Deny": "deny"}
MAX_ARG_CHARS = 400


def describe_call(tool_name: str, args: Mapping[str, Any]) -> str:
    """The call as the question shows it: the command for bash, the path for file tools, else compact JSON."""
    # Any: tool arguments are JSON values of the tool's own schema.
    if tool_name == "bash" and isinstance(args.get("command"), str):
        text = str(args["command"])
    elif isinstance(args.get("path"), str):
        text = str(args["path"])
    else:
        text = json.dumps(dict(args), ensure_ascii=False, sort_keys=True)
    return text if len(text) <= MAX_ARG_CHARS else text[: MAX_ARG_CHARS - 1] + "…"


def always_description(gate: PermissionGate | None, tool_name: str, rule_for_call: str | None) -> str:
    """What `Always allow` will remember for this session (the gate adds a rule only when it can name one)."""
    if rule_for_call is not None:
        return f"for this session: {tool_name} {rule_for_call}"
    if gate is not None and gate.contract(tool_name).matcher == "none":
        return f"for this session: every {tool_name} call"
    return "this call only (no rule can describe it)"


class ApprovalResponder:
    """The `Responder` of the app's permission gate (bound in `InteractiveApp._bind_session`)."""

    def __init__(self, app: InteractiveApp) -> None:
        self.app = app
        self._lock = asyncio.Lock()
        self.asked = 0

    async def __call__(self, tool_name: str, args: Mapping[str, Any], rule_for_call: str | None) -> ResponderAnswer:
        """Ask the user; `deny` when the dialog is dismissed."""
        # Any: see describe_call.
        async with self._lock:
            return await self._ask(tool_name, args, rule_for_call)

    async def _ask(self, tool_name: str, args: Mapping[str, Any], rule_for_call: str | None) -> ResponderAnswer:
        app = self.app
        self.asked += 1
        answer: asyncio.Future[ResponderAnswer] = asyncio.get_running_loop().create_future()
        gate = app.session.permission_gate
        dialog = SelectDialog(
            f"Allow {tool_name}?",
            list(ANSWERS),
            app.keymap,
            message=describe_call(tool_name, args),
            descriptions=["", always_description(gate, tool_name, rule_for_call), f"{tool_name} is not run"],
        )

        def settle(value: ResponderAnswer) -> None:
            if not answer.done():
                answer.set_result(value)

        modal = show_modal(
            app,
            dialog,
            {"select": lambda option: settle(ANSWERS[str(option)]), "cancel": lambda _: settle("deny")},
        )
        app.status.stop()
        app.redraw()
        try:
            return await answer
        finally:
            modal.close()
            if app.session.is_streaming:
                app.status.start("Working...")
