"""The extension UI sub-protocol (spec modes.md §7, acceptance check 15)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from apex_ai.abort import AbortController
from apex_coding_agent.modes.rpc.rpc_types import ExtensionUiResponse
from apex_coding_agent.modes.rpc.rpc_ui import THEME_UNSUPPORTED, RpcUi


def make_ui() -> tuple[RpcUi, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []
    counter = itertools.count(1)
    return RpcUi(sent.append, new_id=lambda: f"u{next(counter)}"), sent


async def test_confirm_times_out_to_false() -> None:
    ui, sent = make_ui()
    assert await ui.confirm("Delete?", "really", timeout=50) is False
    assert sent == [
        {
            "type": "extension_ui_request",
            "id": "u1",
            "method": "confirm",
            "title": "Delete?",
            "message": "really",
            "timeout": 50,
        }
    ]
    assert ui.pending_count == 0


async def test_confirm_resolved_by_matching_reply() -> None:
    ui, sent = make_ui()
    task = asyncio.create_task(ui.confirm("Delete?", "really", timeout=5000))
    await asyncio.sleep(0)
    assert ui.handle_response(ExtensionUiResponse(id="other", confirmed=False)) is False
    assert ui.handle_response(ExtensionUiResponse(id=sent[0]["id"], confirmed=True)) is True
    assert await task is True
    assert ui.handle_response(ExtensionUiResponse(id=sent[0]["id"], confirmed=True)) is False


async def test_select_input_editor_values_and_cancel() -> None:
    ui, sent = make_ui()
    select = asyncio.create_task(ui.select("Pick", ["a", "b"]))
    text = asyncio.create_task(ui.input("Name", placeholder="n"))
    edit = asyncio.create_task(ui.editor("Edit", prefill="x"))
    await asyncio.sleep(0)
    assert [r["method"] for r in sent] == ["select", "input", "editor"]
    assert sent[0]["options"] == ["a", "b"] and "timeout" not in sent[0]
    assert sent[1]["placeholder"] == "n" and sent[2]["prefill"] == "x"
    ui.handle_response(ExtensionUiResponse(id="u1", value="b"))
    ui.handle_response(ExtensionUiResponse(id="u2", cancelled=True))
    ui.handle_response(ExtensionUiResponse(id="u3", value="edited"))
    assert (await select, await text, await edit) == ("b", None, "edited")


async def test_abort_signal_resolves_to_default() -> None:
    ui, _ = make_ui()
    controller = AbortController()
    task = asyncio.create_task(ui.select("Pick", ["a"], signal=controller.signal))
    await asyncio.sleep(0)
    controller.abort()
    assert await task is None
    controller2 = AbortController()
    controller2.abort()
    assert await ui.confirm("t", "m", signal=controller2.signal) is False


async def test_cancel_all_on_shutdown() -> None:
    ui, _ = make_ui()
    task = asyncio.create_task(ui.confirm("t", "m"))
    await asyncio.sleep(0)
    ui.cancel_all()
    assert await task is False


def test_fire_and_forget_requests() -> None:
    ui, sent = make_ui()
    ui.notify("hello", "warning")
    ui.set_status("git", "clean")
    ui.set_status("git")
    ui.set_widget("w", ["l1"], "belowEditor")
    ui.set_widget("w")
    ui.set_title("T")
    ui.set_editor_text("draft")
    ui.paste_to_editor("more")
    assert [{k: v for k, v in r.items() if k not in ("type", "id")} for r in sent] == [
        {"method": "notify", "message": "hello", "notifyType": "warning"},
        {"method": "setStatus", "statusKey": "git", "statusText": "clean"},
        {"method": "setStatus", "statusKey": "git"},
        {"method": "setWidget", "widgetKey": "w", "widgetLines": ["l1"], "widgetPlacement": "belowEditor"},
        {"method": "setWidget", "widgetKey": "w"},
        {"method": "setTitle", "title": "T"},
        {"method": "set_editor_text", "text": "draft"},
        {"method": "set_editor_text", "text": "more"},
    ]
    assert all(r["type"] == "extension_ui_request" for r in sent)
    assert len({r["id"] for r in sent}) == len(sent)


async def test_degraded_features() -> None:
    ui, sent = make_ui()
    assert await ui.custom(object()) is None
    assert ui.get_editor_text() == ""
    assert ui.get_tools_expanded() is False
    assert ui.get_all_themes() == []
    assert ui.get_theme() is None
    assert ui.set_theme("dark") == {"success": False, "error": THEME_UNSUPPORTED}
    ui.set_working_message("busy")
    ui.set_footer(None)
    assert sent == []


def test_default_ids_are_uuids() -> None:
    sent: list[dict[str, Any]] = []
    RpcUi(sent.append).notify("x")
    assert len(sent[0]["id"]) == 36 and sent[0]["id"].count("-") == 4
