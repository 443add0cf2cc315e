"""The interactive permission responder: `Allow once` / `Allow for this session` / `Deny`.

The permission gate awaits the responder while the agent waits on the tool call. The responder shows a
`SelectDialog` in the editor slot and resolves with the answer; Esc (cancel) denies. Parallel tool calls ask one
at a time. An aborted run cancels the wait and the dialog goes away.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from apex_coding_agent import PermissionGate, ResponderAnswer
from apex_tui.app._modal import show_modal
from apex_tui.widgets.pickers import SelectDialog

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

ALLOW_ONCE: Final = "Allow once"
ALLOW_SESSION: Final = "Allow for this session"
DENY: Final = "Deny"
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


def session_choice(gate: PermissionGate | None, tool_name: str, rule_for_call: str | None) -> str | None:
    """What `Allow for this session` would remember (a rule, or every call of a tool without arguments to match);
    None when no rule can describe the call: the choice would allow only this call, which `Allow once` does."""
    if rule_for_call is not None:
        return f"{tool_name} {rule_for_call}"
    if gate is not None and gate.contract(tool_name).matcher == "none":
        return f"every {tool_name} call"
    return None


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
        remembered = session_choice(gate, tool_name, rule_for_call)
        answers: dict[str, ResponderAnswer] = {ALLOW_ONCE: "allow_once"}
        descriptions = ["this call"]
        if remembered is not None:
            answers[ALLOW_SESSION] = "always"
            descriptions.append(remembered)
        answers[DENY] = "deny"
        descriptions.append(f"{tool_name} is not run")
        dialog = SelectDialog(
            f"Allow {tool_name}?",
            list(answers),
            app.keymap,
            message=describe_call(tool_name, args),
            descriptions=descriptions,
        )

        def settle(value: ResponderAnswer) -> None:
            if not answer.done():
                answer.set_result(value)

        modal = show_modal(
            app,
            dialog,
            {"select": lambda option: settle(answers[str(option)]), "cancel": lambda _: settle("deny")},
        )
        app.status.stop()
        app.redraw()
        try:
            return await answer
        finally:
            modal.close()
            if app.session.is_streaming:
                app.status.start("Working...")
