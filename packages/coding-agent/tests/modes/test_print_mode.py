"""`run_print_mode` in-process (modes.md §4-5, check 7): a run cancelled by an extension ends as `aborted`, exit 1.

The cancel is real: an extension's `tool_call` handler calls `ctx.abort()` while the model's first reply (a bash
call) is being handled, so the run stops with an assistant reply whose `stopReason` is `aborted`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from apex_ai.models import ModelRegistry
from apex_ai.providers.faux import FauxProvider, faux_assistant_message, faux_tool_call
from apex_ai.types import AssistantMessage
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions import ExtensionAPI, InlineExtension
from apex_coding_agent.modes.print_mode import run_print_mode
from apex_coding_agent.runtime import AgentSessionRuntime
from apex_coding_agent.session import SessionManager


@pytest.fixture(autouse=True)
def _agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("APEX_CODE_CODING_AGENT_SESSION_DIR", raising=False)


def _aborting(pi: ExtensionAPI) -> None:
    pi.on("tool_call", lambda event, ctx: ctx.abort())


async def _runtime(root: Path, *extensions: InlineExtension) -> AgentSessionRuntime:
    faux = FauxProvider(models=[{"id": "faux-1"}], token_size=(2, 4))
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("bash", {"command": "echo hi"})], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ]
    )
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider("faux", api="faux", base_url="http://localhost:0", models=faux.models)
    return await AgentSessionRuntime.create(
        cwd=str(root),
        agent_dir=str(root / "agent"),
        model=faux.model("faux-1"),
        session_manager=SessionManager.in_memory(str(root)),
        settings_manager=SettingsManager.in_memory({}),
        model_runtime=ModelRuntime(None, AuthStorage.in_memory(), registry=registry),
        permission_gate=PermissionGate(root, flag_mode="bypassPermissions"),
        extensions=list(extensions),
    )


def _last_assistant(runtime: AgentSessionRuntime) -> AssistantMessage:
    last = runtime.session.messages[-1]
    assert isinstance(last, AssistantMessage)
    return last


async def test_json_run_aborted_by_an_extension_reports_aborted(tmp_path: Path) -> None:
    runtime = await _runtime(tmp_path, InlineExtension(_aborting, "aborting"))
    out, err = io.StringIO(), io.StringIO()

    code = await run_print_mode(runtime, "json", "run it", stdout=out, stderr=err)

    assert code == 1
    lines: list[dict[str, Any]] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["type"] == "session"
    assert lines[-1] == {"type": "result", "status": "aborted"}
    assert [line["type"] for line in lines[-3:]] == ["agent_end", "agent_settled", "result"]
    assert lines[-3]["stopReason"] == "aborted"
    assert any(line["type"] == "tool_execution_start" for line in lines)
    assert _last_assistant(runtime).stop_reason == "aborted"
    assert err.getvalue() == ""


async def test_text_run_aborted_by_an_extension_prints_the_reason_and_exits_1(tmp_path: Path) -> None:
    runtime = await _runtime(tmp_path, InlineExtension(_aborting, "aborting"))
    out, err = io.StringIO(), io.StringIO()

    code = await run_print_mode(runtime, "text", "run it", stdout=out, stderr=err)

    assert code == 1
    last = _last_assistant(runtime)
    assert last.stop_reason == "aborted" and last.error_message
    assert out.getvalue() == ""
    assert err.getvalue() == last.error_message + "\n"


async def test_the_same_run_without_the_abort_completes(tmp_path: Path) -> None:
    runtime = await _runtime(tmp_path)
    out, err = io.StringIO(), io.StringIO()

    code = await run_print_mode(runtime, "text", "run it", stdout=out, stderr=err)

    assert (code, out.getvalue(), err.getvalue()) == (0, "done\n", "")
