"""The llama.cpp integration: the router client (`client`, re-exported here), the remembered model catalog
(`catalog`), Hugging Face lookups (`hub`), the long-running `/llama` flows (`flows`) and the hidden built-in
extension that ties them together (`extension`). Imported on demand: it pulls in httpx2.
"""

from apex_coding_agent.extensions.llama.client import (
    API,
    LLAMA_COMPAT,
    LLAMA_DEFAULT_BASE_URL,
    LLAMA_PROVIDER_ID,
    ON_DEMAND_STATES,
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
    "LLAMA_DEFAULT_BASE_URL",
    "LLAMA_COMPAT",
    "ON_DEMAND_STATES",
    "LLAMA_PROVIDER_ID",
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
