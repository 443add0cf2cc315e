"""The extension UI sub-protocol of RPC mode: dialogs become JSONL requests.

`RpcUi` is what an extension's `ctx.ui` talks to in RPC mode. Dialog methods (`select`,
`confirm`, `input`, `editor`) write an `extension_ui_request` with a fresh uuid and wait for the
matching `extension_ui_response`; a timeout, an abort signal, a `cancelled` reply or shutdown
resolves them with the default (`None`, or `False` for `confirm`). Fire-and-forget methods
(`notify`, `set_status`, `set_widget`, `set_title`, `set_editor_text`) only write a request.
Terminal-only features are degraded to the documented no-ops/defaults.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any, Literal, TypeAlias

from apex_ai.abort import AbortSignal
from apex_coding_agent.modes.rpc.rpc_types import ExtensionUiResponse

NotifyType: TypeAlias = Literal["info", "warning", "error"]
WidgetPlacement: TypeAlias = Literal["aboveEditor", "belowEditor"]
WriteFn: TypeAlias = Callable[[dict[str, Any]], None]  # Any: JSON values

THEME_UNSUPPORTED = "Theme switching not supported in RPC mode"


class RpcUi:
    """Agent side of the extension UI sub-protocol; see the module docstring."""

    has_ui = True
    mode = "rpc"

    def __init__(self, write: WriteFn, new_id: Callable[[], str] | None = None) -> None:
        self._write = write
        self._new_id = new_id or (lambda: str(uuid.uuid4()))
        self._pending: dict[str, asyncio.Future[ExtensionUiResponse | None]] = {}

    # ----------------------------------------------------------------- replies from the client

    def handle_response(self, reply: ExtensionUiResponse) -> bool:
        """Resolve the dialog waiting for `reply.id`; unknown or already-settled ids are ignored (False)."""
        if not isinstance(reply.id, str):
            return False
        future = self._pending.pop(reply.id, None)
        if future is None or future.done():
            return False
        future.set_result(reply)
        return True

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    def cancel_all(self) -> None:
        """Shutdown: every open dialog resolves with its default."""
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_result(None)

    # ----------------------------------------------------------------- dialogs

    async def select(
        self, title: str, options: list[str], *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        """The chosen option, or None when cancelled/timed out/aborted."""
        reply = await self._ask({"method": "select", "title": title, "options": list(options)}, timeout, signal)
        return _string_value(reply)

    async def confirm(
        self, title: str, message: str, *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> bool:
        """True only for a reply with `confirmed: true`."""
        reply = await self._ask({"method": "confirm", "title": title, "message": message}, timeout, signal)
        return bool(reply is not None and not reply.cancelled and reply.confirmed is True)

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout: int | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        request: dict[str, Any] = {"method": "input", "title": title}  # Any: JSON values
        if placeholder is not None:
            request["placeholder"] = placeholder
        return _string_value(await self._ask(request, timeout, signal))

    async def editor(
        self, title: str, prefill: str | None = None, *, timeout: int | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        request: dict[str, Any] = {"method": "editor", "title": title}  # Any: JSON values
        if prefill is not None:
            request["prefill"] = prefill
        return _string_value(await self._ask(request, timeout, signal))

    async def _ask(
        self, fields: dict[str, Any], timeout: int | None, signal: AbortSignal | None
    ) -> ExtensionUiResponse | None:  # Any: JSON values
        if signal is not None and signal.aborted:
            return None
        request_id = self._new_id()
        future: asyncio.Future[ExtensionUiResponse | None] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        remove_abort = signal.add_callback(lambda: _settle(future)) if signal is not None else None
        request = {"type": "extension_ui_request", "id": request_id, **fields}
        if timeout is not None:
            request["timeout"] = timeout
        try:
            self._write(request)
            if timeout is None:
                return await future
            try:
                return await asyncio.wait_for(asyncio.shield(future), timeout / 1000)
            except TimeoutError:
                return None
        finally:
            self._pending.pop(request_id, None)
            if remove_abort is not None:
                remove_abort()

    # ----------------------------------------------------------------- fire and forget

    def notify(self, message: str, notify_type: NotifyType | None = None) -> None:
        request = self._request("notify", message=message)
        if notify_type is not None:
            request["notifyType"] = notify_type
        self._write(request)

    def set_status(self, key: str, text: str | None = None) -> None:
        """Show `text` under `key`; None clears it (the key `statusText` is then absent)."""
        request = self._request("setStatus", statusKey=key)
        if text is not None:
            request["statusText"] = text
        self._write(request)

    def set_widget(self, key: str, lines: list[str] | None = None, placement: WidgetPlacement | None = None) -> None:
        """Show `lines` as widget `key`; None clears it."""
        request = self._request("setWidget", widgetKey=key)
        if lines is not None:
            request["widgetLines"] = list(lines)
        if placement is not None:
            request["widgetPlacement"] = placement
        self._write(request)

    def set_title(self, title: str) -> None:
        self._write(self._request("setTitle", title=title))

    def set_editor_text(self, text: str) -> None:
        self._write(self._request("set_editor_text", text=text))

    def paste_to_editor(self, text: str) -> None:
        self.set_editor_text(text)

    def _request(self, method: str, **fields: Any) -> dict[str, Any]:  # Any: JSON values
        return {"type": "extension_ui_request", "id": self._new_id(), "method": method, **fields}

    # ----------------------------------------------------------------- degraded in RPC

    async def custom(self, *args: Any, **kwargs: Any) -> None:  # Any: signature of the TUI's custom()
        return None

    def get_editor_text(self) -> str:
        return ""

    def get_tools_expanded(self) -> bool:
        return False

    def set_tools_expanded(self, expanded: bool) -> None:
        return None

    def set_working_message(self, message: str | None = None) -> None:
        return None

    def set_working_indicator(self, *args: Any, **kwargs: Any) -> None:  # Any: TUI-only signature
        return None

    def set_footer(self, *args: Any, **kwargs: Any) -> None:  # Any: TUI-only signature
        return None

    def set_header(self, *args: Any, **kwargs: Any) -> None:  # Any: TUI-only signature
        return None

    def set_editor_component(self, *args: Any, **kwargs: Any) -> None:  # Any: TUI-only signature
        return None

    def get_all_themes(self) -> list[Any]:  # Any: theme objects exist only in the TUI
        return []

    def get_theme(self) -> None:
        return None

    def set_theme(self, theme: Any) -> dict[str, Any]:  # Any: name or theme object; result is JSON-like
        return {"success": False, "error": THEME_UNSUPPORTED}


def _settle(future: asyncio.Future[ExtensionUiResponse | None]) -> None:
    if not future.done():
        future.set_result(None)


def _string_value(reply: ExtensionUiResponse | None) -> str | None:
    if reply is None or reply.cancelled or not isinstance(reply.value, str):
        return None
    return reply.value


__all__ = ["THEME_UNSUPPORTED", "NotifyType", "RpcUi", "WidgetPlacement"]
