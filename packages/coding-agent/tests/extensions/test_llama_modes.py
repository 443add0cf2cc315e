"""`/llama` is interactive-only (modes.md §2, resources.md §8): the CLI's built-in llama.cpp extension registers it
only when `session_start` reports the TUI, so RPC neither lists it in `get_commands` nor runs it for `prompt`
(the text goes to the model, as pi does)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from apex_ai.models import ModelRegistry
from apex_ai.providers.faux import FauxProvider, faux_assistant_message
from apex_ai.types import AssistantMessage, Context, TextContent, UserMessage
from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.cli.startup import build_runtime_from_args
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.extensions.bindings import Mode
from apex_coding_agent.modes.rpc.rpc_mode import run_rpc_mode
from apex_coding_agent.runtime import AgentSessionRuntime


class Setup:
    """A faux provider behind the CLI's own runtime builder (built-in llama.cpp extension included)."""

    def __init__(self, root: Path) -> None:
        self.cwd, self.agent_dir = root / "work", root / "agent"
        self.cwd.mkdir()
        self.agent_dir.mkdir()
        self.faux = FauxProvider(provider="faux", models=[{"id": "faux-1"}])
        registry = ModelRegistry(load_catalog=False)
        registry.register_provider("faux", api="faux", base_url="http://localhost:0", models=self.faux.models)
        self.models = ModelRuntime(None, AuthStorage.in_memory(), registry=registry)
        self.contexts: list[Context] = []

    def reply(self, text: str) -> None:
        def step(context: Context, *_: Any) -> AssistantMessage:  # Any: options, state, model of a FauxStep
            self.contexts.append(context)
            return faux_assistant_message(text)

        self.faux.set_responses([step])

    async def runtime(self, mode: Mode) -> AgentSessionRuntime:
        args = parse_args(["--model", "faux/faux-1", "--no-session"])
        build = await build_runtime_from_args(
            args, cwd=str(self.cwd), agent_dir=self.agent_dir, mode=mode, model_runtime=self.models
        )
        assert build.errors == [] and build.runtime is not None
        return build.runtime


def user_text(message: UserMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(block.text for block in message.content if isinstance(block, TextContent))


def command_names(runtime: AgentSessionRuntime) -> list[str]:
    assert runtime.extension_runner is not None
    return [command.name for command in runtime.extension_runner.get_commands()]


async def test_only_the_interactive_app_gets_the_llama_command(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    cases: list[tuple[Mode, list[str]]] = [("tui", ["llama"]), ("rpc", []), ("json", []), ("print", [])]
    for mode, expected in cases:
        runtime = await setup.runtime(mode)
        try:
            await runtime.start_extensions()
            assert command_names(runtime) == expected, mode
        finally:
            await runtime.dispose()


class Pipes:
    """RPC's stdin as a real pipe; its stdout as a file the test reads back."""

    def __init__(self, root: Path) -> None:
        read_end, self._write_end = os.pipe()
        self.stdin = open(read_end, "rb", buffering=0)
        self.out_path = root / "rpc-out.jsonl"
        self.stdout = open(self.out_path, "wb", buffering=0)

    def send(self, record: dict[str, Any]) -> None:
        os.write(self._write_end, json.dumps(record).encode() + b"\n")

    def close_input(self) -> None:
        os.close(self._write_end)

    def records(self) -> list[dict[str, Any]]:
        text = self.out_path.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    async def until(self, predicate: Any, polls: int = 400) -> dict[str, Any]:  # Any: a record predicate
        for _ in range(polls):
            found = [record for record in self.records() if predicate(record)]
            if found:
                return found[0]
            await asyncio.sleep(0.01)
        raise AssertionError(f"no such record in {self.records()}")


async def test_rpc_does_not_list_or_run_llama_and_sends_the_text_to_the_model(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    runtime = await setup.runtime("rpc")
    setup.reply("no llama here")
    pipes = Pipes(tmp_path)
    server = asyncio.ensure_future(run_rpc_mode(runtime, stdin=pipes.stdin, stdout=pipes.stdout, handle_signals=False))
    try:
        pipes.send({"id": "c", "type": "get_commands"})
        listed = await pipes.until(lambda r: r.get("type") == "response" and r.get("id") == "c")
        assert listed["success"] is True
        assert "llama" not in [command["name"] for command in listed["data"]["commands"]]

        pipes.send({"id": "p", "type": "prompt", "message": "/llama"})
        await pipes.until(lambda r: r.get("type") == "agent_end")
    finally:
        pipes.close_input()
        assert await asyncio.wait_for(server, 5) == 0
        pipes.stdin.close()
        pipes.stdout.close()

    # The model was asked, with "/llama" as the user's text; no dialog was opened for it.
    (context,) = setup.contexts
    users = [m for m in context.messages if isinstance(m, UserMessage)]
    assert [user_text(m) for m in users] == ["/llama"]
    records = pipes.records()
    assert not [r for r in records if r.get("type") == "extension_ui_request"]
    prompt_response = next(r for r in records if r.get("type") == "response" and r.get("id") == "p")
    assert prompt_response["success"] is True
