"""The first prompt of a run: piped stdin, `@file` arguments and the first message.

Text files are inlined as `<file name="ABS">\\n<content>\\n</file>\\n`; images become attachments
with an empty `<file>` tag naming them. The three parts are concatenated with no separator, in
the order stdin, files, message.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from apex_ai.types import ImageContent
from apex_coding_agent.tools.image import detect_image_mime, prepare_image


class FileArgumentError(ValueError):
    """An `@file` argument that cannot be read."""


@dataclass
class InitialMessage:
    text: str = ""
    images: list[ImageContent] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.text and not self.images


def read_file_arguments(files: list[str], cwd: str | Path) -> InitialMessage:
    """Inline each `@file`; raises `FileArgumentError` naming the first file that cannot be read."""
    out = InitialMessage()
    for name in files:
        path = Path(os.path.expanduser(name))
        if not path.is_absolute():
            path = Path(cwd) / path
        path = Path(os.path.normpath(path))
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise FileArgumentError(f"Cannot read @{name}: {exc.strerror or exc}") from exc
        mime = detect_image_mime(raw[:64])
        if mime is not None:
            prepared = prepare_image(raw, mime)
            if prepared.data is not None:
                out.images.append(ImageContent(data=prepared.data, mime_type=prepared.mime_type))
                out.text += f'<file name="{path}"></file>\n'
                continue
            out.text += f'<file name="{path}">\n({prepared.error})\n</file>\n'
            continue
        content = raw.decode("utf-8", errors="replace")
        out.text += f'<file name="{path}">\n{content}\n</file>\n'
    return out


def build_initial_message(
    stdin_text: str | None, files: list[str], first_message: str | None, cwd: str | Path
) -> InitialMessage:
    """stdin (trimmed; empty counts as none) + file texts + the first message."""
    parts = read_file_arguments(files, cwd)
    stdin_part = (stdin_text or "").strip()
    return InitialMessage(stdin_part + parts.text + (first_message or ""), parts.images)


__all__ = ["FileArgumentError", "InitialMessage", "build_initial_message", "read_file_arguments"]
