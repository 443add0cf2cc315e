"""The hidden built-in llama.cpp extension.

Its provider registers in every mode, its `/llama` command only in interactive mode. While it loads it asks a
configured router for its models (briefly; the last answer is remembered for when the router is down, see
`catalog.py`): every model on disk when the router loads on demand, only the loaded ones when it runs
with `--no-models-autoload`. `/llama` shows the router's models: choosing an unloaded one loads it (asking
first when others are loaded — never unloading silently), choosing a loaded one unloads it, `Download model…`
searches Hugging Face (or takes `owner/repo[:quant]`), lets the user pick a quantization and has the router
download it (`flows.py`). Escape while a load or download runs asks whether to stop it. A router that
cannot be reached offers `Retry`/`Close`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from apex_coding_agent.extensions.api import ExtensionAPI
from apex_coding_agent.extensions.llama.catalog import CatalogCache, RouterCatalog, fetch_catalog, startup_catalog
from apex_coding_agent.extensions.llama.client import (
    LLAMA_PROVIDER_ID,
    LlamaClient,
    LlamaConfig,
    LlamaRouterError,
    RouterModel,
    provider_config,
    resolve_llama_config,
)
from apex_coding_agent.extensions.llama.flows import HubFactory, download_flow, wait_or_stop
from apex_coding_agent.extensions.llama.hub import HF_BASE_URL, HubClient, find_hf_token
from apex_coding_agent.extensions.loader import InlineExtension

NOT_CONFIGURED = "Configure llama.cpp with /login llama.cpp"
DOWNLOAD_OPTION = "Download model…"
UNLOAD_ALL = "Unload all and load"
KEEP_LOADED = "Keep loaded and load"
CANCEL = "Cancel"
BUILTIN_NAME = "<builtin:llama.cpp>"

ConfigSource = Callable[[], LlamaConfig]
ClientFactory = Callable[[LlamaConfig], LlamaClient]


class _LlamaExtension:
    def __init__(
        self,
        config_source: ConfigSource,
        client_factory: ClientFactory,
        interactive: bool | None,
        hub_factory: HubFactory,
        cache: CatalogCache | None,
    ) -> None:
        self._cache = cache
        self._config_source = config_source
        self._client_factory = client_factory
        self._interactive = interactive
        self._hub_factory = hub_factory
        self._command_registered = False

    async def __call__(self, pi: ExtensionAPI) -> None:
        # The models must be known before the CLI resolves `--model`, lists models or opens the app: ask the
        # router now (briefly), falling back to the models it listed last time (catalog.py).
        config = self._config_source()
        fresh = False
        catalog: RouterCatalog | None = None
        if config.configured:
            catalog, fresh = await startup_catalog(config, self._client_factory, self._cache)
        pi.register_provider(LLAMA_PROVIDER_ID, provider_config(config, catalog.usable if catalog else []))
        if self._interactive:
            self._register_command(pi)

        async def on_session_start(event: Any, ctx: Any) -> None:  # Any: SessionStartEvent, ExtensionContext
            nonlocal fresh
            if self._interactive is None and ctx.mode == "tui":
                self._register_command(pi)
            current = self._config_source()
            # A fresh answer from start-up is not asked for twice; a router that was down gets another try.
            if current.configured and not (fresh and current == config):
                await self.refresh(pi, current, quiet=True)
            fresh = False

        pi.on("session_start", on_session_start)

    def _register_command(self, pi: ExtensionAPI) -> None:
        if self._command_registered:
            return
        self._command_registered = True

        async def llama_command(args: str, ctx: Any) -> None:  # Any: ExtensionCommandContext
            await self.run_command(pi, ctx)

        pi.register_command("llama", llama_command, description="Manage llama.cpp router models")

    async def refresh(self, pi: ExtensionAPI, config: LlamaConfig, *, quiet: bool = False) -> list[RouterModel]:
        """Re-register the provider with the models a request may use now (remembering them); router errors
        are raised unless `quiet`. Returns the listed models."""
        client = self._client_factory(config)
        try:
            catalog = await fetch_catalog(client)
        except LlamaRouterError:
            if quiet:
                return []
            raise
        finally:
            await client.aclose()
        if self._cache is not None:
            self._cache.save(config.base_url, catalog)
        pi.register_provider(LLAMA_PROVIDER_ID, provider_config(config, catalog.usable))
        return catalog.usable

    async def run_command(self, pi: ExtensionAPI, ctx: Any) -> None:  # Any: ExtensionCommandContext
        config = self._config_source()
        if not config.configured:
            ctx.ui.notify(NOT_CONFIGURED, "warning")
            return
        client = self._client_factory(config)
        try:
            while True:
                try:
                    await self._interact(client, config, ctx)
                except LlamaRouterError as exc:
                    choice = await ctx.ui.select(f"llama.cpp: {exc}", ["Retry", "Close"])
                    if choice == "Retry":
                        continue
                    return
                await self.refresh(pi, config, quiet=True)
                return
        finally:
            await client.aclose()

    async def _interact(self, client: LlamaClient, config: LlamaConfig, ctx: Any) -> None:
        models = await client.list_models()
        labels = [f"{m.id} ({m.state})" for m in models]
        choice = await ctx.ui.select(f"llama.cpp router at {config.base_url}", [*labels, DOWNLOAD_OPTION])
        if choice is None:
            return
        if choice == DOWNLOAD_OPTION:
            await download_flow(ctx, client, self._hub_factory)
            return
        model = models[labels.index(choice)]
        if model.state == "loaded":
            await client.unload_model(model.id)
            ctx.ui.notify(f"Unloaded {model.id}", "info")
            return
        others = [m for m in models if m.state == "loaded" and m.id != model.id]
        replaced: list[RouterModel] = []
        if others:
            names = ", ".join(m.id for m in others)
            answer = await ctx.ui.select(f"Loaded: {names}", [UNLOAD_ALL, KEEP_LOADED, CANCEL])
            if answer not in (UNLOAD_ALL, KEEP_LOADED):
                return
            if answer == UNLOAD_ALL:
                replaced = others
                for other in others:
                    await client.unload_model(other.id)

        async def stop() -> None:
            await client.unload_model(model.id)
            ctx.ui.notify(f"Stopped loading {model.id}", "info")
            for previous in replaced:  # what "Unload all and load" unloaded comes back
                await client.load_model(previous.id)
            if replaced:
                ctx.ui.notify("Restored " + ", ".join(m.id for m in replaced), "info")

        if await wait_or_stop(ctx, "Loading", model.id, client.load_model(model.id), stop):
            ctx.ui.notify(f"Loaded {model.id}", "info")


def create_llama_extension(
    *,
    get_credential: Callable[[str], Mapping[str, Any] | None] | None = None,  # Any: stored credential JSON
    env: Mapping[str, str] | None = None,
    interactive: bool | None = None,
    client_factory: ClientFactory | None = None,
    hub_url: str = HF_BASE_URL,
    cache_path: str | Path | None = None,
) -> InlineExtension:
    """The built-in extension. `get_credential(provider)` reads the stored credential (e.g. `AuthStorage.get`).

    `cache_path` is where the router's last model list is remembered for starts while it is down (the CLI
    passes `<agent dir>/llama-models.json`); None remembers nothing.

    `interactive=None` decides at `session_start` from `ctx.mode` (`tui` registers `/llama`). `hub_url` is the
    Hugging Face address searched by `Download model…`; its token comes from `find_hf_token(env)`.
    """

    def config_source() -> LlamaConfig:
        credential = get_credential(LLAMA_PROVIDER_ID) if get_credential is not None else None
        return resolve_llama_config(credential, env)

    def hub_factory() -> HubClient:
        return HubClient(hub_url, find_hf_token(os.environ if env is None else env))

    factory = _LlamaExtension(
        config_source,
        client_factory or (lambda config: LlamaClient(config)),
        interactive,
        hub_factory,
        CatalogCache(Path(cache_path)) if cache_path is not None else None,
    )
    return InlineExtension(factory, BUILTIN_NAME, hidden=True)


__all__ = ["BUILTIN_NAME", "NOT_CONFIGURED", "create_llama_extension"]
