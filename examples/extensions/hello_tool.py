"""A small Apex Code extension: one tool, one command and one event handler.

Load it for one run with `apex-code -e examples/extensions/hello_tool.py`, or copy it into
`~/.apex-code/agent/extensions/` (or a trusted project's `.apex-code/extensions/`) to load it every time.

An extension is a Python module with a function `extension(pi)`. Apex Code calls it once at startup with
`pi`, the extension API; the function registers what it adds and must not start background work (do that in
a `session_start` handler instead). Handlers and tools receive `ctx`, the extension context (cwd, mode, ui...).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from apex_coding_agent.extensions import ExtensionAPI, ToolDefinition


class HelloParams(BaseModel):
    """The tool's parameters; their JSON schema is what the model sees."""

    name: str = Field(description="Who to greet")


async def _hello(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any) -> dict[str, Any]:
    # Returning {content, details}: `content` goes to the model, `details` only to renderers and the session.
    name = params["name"]
    return {"content": [{"type": "text", "text": f"Hello, {name}!"}], "details": {"greeted": name}}


def extension(pi: ExtensionAPI) -> None:
    """Register the `hello` tool, the `/hello` command and a `tool_call` guard."""
    pi.register_tool(
        ToolDefinition(
            name="hello",
            label="Hello",
            description="Greet someone by name.",
            parameters=HelloParams,
            execute=_hello,
            prompt_snippet="Greet someone by name",
        )
    )

    @pi.register_command("hello", description="Say hello in the UI")
    async def hello_command(args: str, ctx: Any) -> None:
        ctx.ui.notify(f"Hello, {args.strip() or 'world'}!", "info")

    @pi.on("tool_call")
    async def no_greeting_robots(event: Any, ctx: Any) -> dict[str, Any] | None:
        # Block the call (the model gets an error result with the reason) instead of running the tool.
        if event.tool_name == "hello" and str(event.input.get("name", "")).lower() == "robot":
            return {"block": True, "reason": "Robots are not greeted"}
        return None
