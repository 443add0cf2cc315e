"""The environment variables that hold each provider's API key.

The lookup order of a request (its own key, a caller's store, then these) lives in `apex_ai.credentials`;
`apex_ai` never reads credential files itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

ENV_API_KEYS: Final[Mapping[str, tuple[str, ...]]] = {
    # ANTHROPIC_AUTH_TOKEN comes first: it is the bearer token of gateways and wins over a stray API key.
    "anthropic": ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "nvidia": ("NVIDIA_API_KEY",),
    "moonshotai": ("MOONSHOT_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
    "google": ("GEMINI_API_KEY",),
    "github-copilot": ("COPILOT_GITHUB_TOKEN",),
    "azure-openai-responses": ("AZURE_OPENAI_API_KEY",),
    "llama.cpp": ("LLAMA_API_KEY",),
}
"""Provider -> environment variables holding its key, in lookup order."""

OPTIONAL_KEY_DEFAULTS: Final[Mapping[str, str]] = {"llama.cpp": "local"}
"""Keyless local servers still need some key for the SDK; these providers get a placeholder."""

LLAMA_DEFAULT_BASE_URL: Final = "http://127.0.0.1:8080"
_OAUTH_MARKER: Final = "sk-ant-oat"


def _lookup(name: str, env: Mapping[str, str] | None) -> str | None:
    if env is not None:
        value = env.get(name)
        if value:
            return value
    value = os.environ.get(name)
    return value or None


def get_env_api_key(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """The first non-empty key variable of `provider`, each looked up in `env` before `os.environ`.

    Falls back to the placeholder of providers whose key is optional (llama.cpp: `"local"`).
    """
    for name in ENV_API_KEYS.get(provider, ()):
        value = _lookup(name, env)
        if value is not None:
            return value
    return OPTIONAL_KEY_DEFAULTS.get(provider)


def is_anthropic_oauth_token(key: str | None) -> bool:
    """True for an Anthropic OAuth token, which is sent as a bearer with Claude Code identity headers."""
    return key is not None and _OAUTH_MARKER in key


def llama_base_url(env: Mapping[str, str] | None = None) -> str:
    """The llama.cpp server root (`LLAMA_BASE_URL`, default http://127.0.0.1:8080); inference is at `/v1`."""
    return (_lookup("LLAMA_BASE_URL", env) or LLAMA_DEFAULT_BASE_URL).rstrip("/")


__all__ = [
    "ENV_API_KEYS",
    "LLAMA_DEFAULT_BASE_URL",
    "OPTIONAL_KEY_DEFAULTS",
    "get_env_api_key",
    "is_anthropic_oauth_token",
    "llama_base_url",
]
