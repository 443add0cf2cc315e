"""Which llama.cpp router models the `llama.cpp` provider lists, fetched at start and remembered.

Every mode needs the router's models before it resolves `--model`, lists `--list-models` or opens the app,
so the built-in extension asks the router while it loads (with a short time limit) instead of waiting for
`session_start`. The last answer is kept in `llama-models.json` in the agent dir: when the router is down
at start, the remembered models are listed (a request then fails with the router's own error, which says
more than "no such model").
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from apex_ai.types import now_ms
from apex_coding_agent.core.file_lock import write_atomic
from apex_coding_agent.extensions.llama.client import (
    LlamaClient,
    LlamaConfig,
    LlamaRouterError,
    RouterModel,
    usable_models,
)

STARTUP_TIMEOUT_S: Final = 2.0
"""How long start-up waits for the router; a router that is not running refuses at once."""
CACHE_FILE: Final = "llama-models.json"

log = logging.getLogger(__name__)


class RouterCatalog:
    """One answer of the router: its models and whether it loads them on demand."""

    def __init__(self, models: list[RouterModel], autoload: bool) -> None:
        self.models = models
        self.autoload = autoload

    @property
    def usable(self) -> list[RouterModel]:
        return usable_models(self.models, self.autoload)


async def fetch_catalog(client: LlamaClient) -> RouterCatalog:
    """The router's models and its autoload setting; raises `LlamaRouterError`."""
    models = await client.list_models()
    return RouterCatalog(models, await client.models_autoload())


class CatalogCache:
    """The last catalog fetched from a router, per base URL, in one JSON file (written atomically)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, base_url: str) -> RouterCatalog | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            entry = data["routers"][base_url]
            models = [RouterModel.model_validate(item) for item in entry["models"]]
            return RouterCatalog(models, bool(entry["modelsAutoload"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, ValidationError) as exc:
            log.warning("ignoring %s: %s", self.path, exc)
            return None

    def save(self, base_url: str, catalog: RouterCatalog) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            routers = data["routers"] if isinstance(data, dict) and isinstance(data.get("routers"), dict) else {}
        except (OSError, ValueError):
            routers = {}
        routers[base_url] = {
            "modelsAutoload": catalog.autoload,
            "models": [m.model_dump(mode="json", exclude_none=True) for m in catalog.models],
            "fetchedAt": now_ms(),
        }
        try:
            write_atomic(self.path, json.dumps({"routers": routers}, indent=2) + "\n")
        except OSError as exc:  # a read-only agent dir costs the memory of this answer, nothing else
            log.warning("could not remember the llama.cpp models in %s: %s", self.path, exc)


async def startup_catalog(
    config: LlamaConfig,
    client_factory: Callable[[LlamaConfig], LlamaClient],
    cache: CatalogCache | None,
    timeout: float = STARTUP_TIMEOUT_S,
) -> tuple[RouterCatalog | None, bool]:
    """(the catalog to list, whether it came from the router now) — the remembered one when the router fails."""
    client = client_factory(config)
    try:
        catalog = await asyncio.wait_for(fetch_catalog(client), timeout)
    except (LlamaRouterError, TimeoutError) as exc:
        log.debug("llama.cpp router at %s not reachable at start: %s", config.base_url, exc)
        return (cache.load(config.base_url) if cache is not None else None), False
    finally:
        await client.aclose()
    if cache is not None:
        cache.save(config.base_url, catalog)
    return catalog, True


__all__ = ["CACHE_FILE", "STARTUP_TIMEOUT_S", "CatalogCache", "RouterCatalog", "fetch_catalog", "startup_catalog"]
