"""`PromptInput`: the input pipeline of an `AgentSession`'s prompts.

1. `/name args` naming an extension command runs the command at once (even while streaming);
2. the extensions' `input` event may transform the text or handle it;
3. `/skill:<name>`, then prompt templates, are expanded (`expand`);
4. before the run, `before_agent_start` handlers may add custom messages and replace the system prompt for it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

from apex_ai.types import ImageContent, now_ms
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.messages import CustomMessage
from apex_coding_agent.resources import ResourceLoader, Skill

log = logging.getLogger("apex_coding_agent.runtime.agent_session")  # the logger these messages always used

StreamingBehavior: TypeAlias = Literal["steer", "followUp"]
PromptSource: TypeAlias = Literal["interactive", "rpc", "extension"]


def _split_command(text: str) -> tuple[str | None, str]:
    """`("name", "args")` for `/name args`, `(None, "")` for anything else."""
    if not text.startswith("/"):
        return None, ""
    name, _, args = text[1:].partition(" ")
    return (name, args.strip()) if name else (None, "")


def custom_message(message: dict[str, Any]) -> CustomMessage:  # Any: {customType, content, display, details}
    data = dict(message)
    data.setdefault("timestamp", now_ms())
    return CustomMessage.model_validate(data)


class PromptInput:
    def __init__(self, resource_loader: ResourceLoader | None, extension_runner: ExtensionRunner | None) -> None:
        self._loader = resource_loader
        self._runner = extension_runner
        self.skill_errors: list[str] = []
        """Problems met while expanding `/skill:` input (the text then went on unexpanded)."""

    async def before_checks(
        self,
        text: str,
        images: Sequence[ImageContent] | None,
        source: PromptSource,
        streaming_behavior: StreamingBehavior | None,
    ) -> tuple[str, Sequence[ImageContent] | None] | None:
        """Steps 1-2: None when an extension command ran or an `input` handler handled the text, else the
        (possibly transformed) text and images."""
        runner = self._runner
        if runner is None:
            return text, images
        name, args = _split_command(text)
        if name is not None and runner.get_command(name) is not None:
            await runner.execute_command(name, args)
            return None
        if runner.has_handlers("input"):
            outcome = await runner.emit_input(text, list(images) if images else None, source, streaming_behavior)
            if outcome.action == "handled":
                return None
            if outcome.action == "transform":
                text = outcome.text if outcome.text is not None else text
                images = outcome.images if outcome.images is not None else images
        return text, images

    def reject_command(self, text: str) -> None:
        """An extension command is never queued: raise for one."""
        runner = self._runner
        name, _ = _split_command(text)
        if runner is not None and name is not None and runner.get_command(name) is not None:
            raise RuntimeError(f'Extension command "/{name}" cannot be queued; send it as a prompt instead.')

    def expand(self, text: str) -> str:
        """Step 3 (unchanged without a resource loader); an unreadable skill file is recorded in `skill_errors`
        and the text passes through."""
        if self._loader is None:
            return text
        return self._loader.expand_input(text, on_skill_error=self._skill_error)

    def _skill_error(self, skill: Skill, message: str) -> None:
        log.warning("skill %s: %s", skill.name, message)
        self.skill_errors.append(message)

    async def before_agent_start(
        self,
        text: str,
        images: Sequence[ImageContent] | None,
        base_system_prompt: str,
        options: ext.SystemPromptOptions,
    ) -> tuple[list[CustomMessage], str | None]:
        """Step 4: the custom messages to send with the prompt and the run's system prompt (None: the base one)."""
        runner = self._runner
        if runner is None or not runner.has_handlers("before_agent_start"):
            return [], None
        started = await runner.emit_before_agent_start(
            text, base_system_prompt, images=list(images) if images else None, options=options
        )
        return [custom_message(m.to_wire()) for m in started.messages], started.system_prompt


__all__ = ["PromptInput", "PromptSource", "StreamingBehavior", "custom_message"]
