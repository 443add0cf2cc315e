"""`/login llama.cpp`: a llama.cpp router is reached by URL, with an optional key.

The credential is stored as `{"type": "api_key", "key"?: ..., "env": {"LLAMA_BASE_URL": url}}`, which is
where the built-in llama.cpp extension reads the server from; the runtime is then reloaded so the router's
models are listed at once (as at start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apex_coding_agent import LLAMA_DEFAULT_BASE_URL, LLAMA_PROVIDER_ID, AuthError, normalize_llama_url
from apex_tui.app._modal import show_modal
from apex_tui.widgets.pickers import InputDialog

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp


def login_llama(app: InteractiveApp) -> None:
    """Ask for the server URL (the stored one, else the default, is filled in), then the optional key."""
    stored = app.session.model_runtime.auth.get(LLAMA_PROVIDER_ID) or {}
    stored_env = stored.get("env") if isinstance(stored.get("env"), dict) else {}
    current = str((stored_env or {}).get("LLAMA_BASE_URL") or LLAMA_DEFAULT_BASE_URL)
    dialog = InputDialog(
        "llama.cpp server URL", app.keymap, text=current, hint="enter next · esc cancel", message="router address"
    )

    def submit(text: Any) -> None:  # Any: the dialog's payload (its text)
        try:
            url = normalize_llama_url(str(text) or LLAMA_DEFAULT_BASE_URL)
        except ValueError as exc:
            app.notify(str(exc), "error")
            return
        _ask_key(app, url)

    show_modal(app, dialog, {"submit": submit})


def _ask_key(app: InteractiveApp, url: str) -> None:
    dialog = InputDialog(
        f"API key for llama.cpp at {url} (optional)",
        app.keymap,
        masked=True,
        placeholder="leave empty when the server has no --api-key",
        hint="enter save · esc cancel",
    )

    def submit(text: Any) -> None:  # Any: the dialog's payload (its text)
        key = str(text).strip()
        credential: dict[str, Any] = {"type": "api_key", "env": {"LLAMA_BASE_URL": url}}  # Any: auth.json JSON
        if key:
            # A leading `$` would read as an environment reference: `$$` is the escape for a literal `$`.
            credential["key"] = "$" + key if key.startswith("$") else key
        try:
            app.session.model_runtime.auth.set(LLAMA_PROVIDER_ID, credential)
        except (AuthError, OSError) as exc:
            app.notify(f"Could not save the llama.cpp server: {exc}", "error")
            return
        app.notify(f"Saved llama.cpp server {url} in auth.json; listing its models…")
        app.spawn(_list_models(app))

    show_modal(app, dialog, {"submit": submit})


async def _list_models(app: InteractiveApp) -> None:
    """Reload the runtime (the built-in extension asks the router again) and say what it lists."""
    await app.runtime.reload()
    models = app.session.model_runtime.registry.list_models(LLAMA_PROVIDER_ID)
    if models:
        app.notify(f"llama.cpp: {len(models)} model(s) available — choose one with /model")
    else:
        app.notify("llama.cpp: no models listed yet — is the router running? /llama shows its state", "warning")
    app.update_footer()


__all__ = ["login_llama"]
