"""The llama.cpp integration: the router client (`client`, re-exported here), the remembered model catalog
(`catalog`), Hugging Face lookups (`hub`), the long-running `/llama` flows (`flows`) and the hidden built-in
extension that ties them together (`extension`). Imported on demand: it pulls in httpx2.
"""

from .client import (
    API,
    DEFAULT_BASE_URL,
    LLAMA_COMPAT,
    ON_DEMAND_STATES,
    PROVIDER_ID,
    LlamaClient,
    LlamaConfig,
    LlamaRouterError,
    RouterEvent,
    RouterModel,
    normalize_llama_url,
    provider_config,
    resolve_llama_config,
    to_model,
    usable_models,
)

__all__ = [
    "API",
    "DEFAULT_BASE_URL",
    "LLAMA_COMPAT",
    "ON_DEMAND_STATES",
    "PROVIDER_ID",
    "LlamaClient",
    "LlamaConfig",
    "LlamaRouterError",
    "RouterEvent",
    "RouterModel",
    "normalize_llama_url",
    "provider_config",
    "resolve_llama_config",
    "to_model",
    "usable_models",
]
