"""The texts of the errors an `AgentSession` raises or reports (shared by the session and its collaborators)."""

from __future__ import annotations

STREAMING_WITHOUT_BEHAVIOR = (
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
)
CANCELLED_TEXT = "Compaction cancelled"
"""What a manual `compact()` raises when the compaction was aborted or an extension cancelled it."""
COMPACTING_TEXT = "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry."
NAVIGATE_WHILE_STREAMING = "Wait for the current response to finish before navigating the session tree."
NAVIGATE_WHILE_COMPACTING = "Wait for compaction to finish before navigating the session tree."
NO_MODEL_TEXT = (
    "No model selected.\n\nChoose one with --model or /model, or set defaultProvider and defaultModel in settings.json."
)


def no_api_key_text(provider: str) -> str:
    return (
        f"No API key found for {provider}.\n\n"
        "Set the provider's API key environment variable or add the key to auth.json."
    )


__all__ = [
    "CANCELLED_TEXT",
    "COMPACTING_TEXT",
    "NAVIGATE_WHILE_COMPACTING",
    "NAVIGATE_WHILE_STREAMING",
    "NO_MODEL_TEXT",
    "STREAMING_WITHOUT_BEHAVIOR",
    "no_api_key_text",
]
