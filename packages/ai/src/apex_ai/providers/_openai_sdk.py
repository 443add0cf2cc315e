"""The `openai` SDK client both OpenAI adapters (`openai-completions`, `openai-responses`) drive.

The SDK is imported on first use (~0.7 s), never at module import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_ai.options import StreamOptions
from apex_ai.providers._shared import merge_headers, sdk_http_client, timeout_seconds
from apex_ai.types import Model

if TYPE_CHECKING:
    from openai import AsyncOpenAI

PLACEHOLDER_API_KEY = "none"
"""Sent when no key is known (keyless local servers, or the caller passes its own Authorization header)."""


def openai_client(
    model: Model, options: StreamOptions, api_key: str | None, default_base_url: str | None
) -> AsyncOpenAI:
    """A client for one request: our retries only, the merged headers, `model.base_url` else `default_base_url`.

    A `default_base_url` of None lets the SDK choose (OPENAI_BASE_URL from the environment, then its own).
    """
    import openai  # lazily: importing the SDK costs ~0.7 s

    return openai.AsyncOpenAI(
        api_key=api_key or PLACEHOLDER_API_KEY,
        base_url=model.base_url or default_base_url,
        http_client=sdk_http_client(options),
        max_retries=0,  # retries are ours, so they stay abortable and capped
        default_headers=merge_headers(model, options),
        timeout=timeout_seconds(options),
    )


__all__ = ["PLACEHOLDER_API_KEY", "openai_client"]
