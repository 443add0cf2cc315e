"""Image placeholders: text lines standing in for images in user and tool blocks.

Inline terminal graphics are not drawn; every image shows as one muted line naming its type and, when known, its
pixel size: `[image #1: image/png 640x480]`. The app builds `ImageRef`s from `ImageContent` blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import urwid

from apex_tui.widgets._canvas import text_canvas


@dataclass(frozen=True)
class ImageRef:
    """What a placeholder says about an image."""

    mime_type: str = "image"
    width: int | None = None
    height: int | None = None


def image_label(image: ImageRef, number: int) -> str:
    """`[image #<number>: <mime type>[ <w>x<h>]]`."""
    size = f" {image.width}x{image.height}" if image.width and image.height else ""
    return f"[image #{number}: {image.mime_type}{size}]"


def image_lines(images: Sequence[ImageRef]) -> list[str]:
    """One placeholder line per image, numbered from 1."""
    return [image_label(image, number) for number, image in enumerate(images, start=1)]


def image_canvases(images: Sequence[ImageRef], width: int) -> list[urwid.Canvas]:
    """The placeholder lines as canvases (none for no images)."""
    return [text_canvas(("muted", line), width) for line in image_lines(images)]
