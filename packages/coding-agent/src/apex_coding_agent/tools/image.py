"""Image sniffing and preparation for the `read` tool.

Pillow is optional: with it, large images are scaled to fit; without it, images already within the limits are sent
as they are and larger ones produce a text-only explanation.
"""

from __future__ import annotations

import base64
import importlib
import io
from dataclasses import dataclass
from typing import Any

MAX_IMAGE_DIMENSION = 2000
MAX_IMAGE_BASE64_BYTES = int(4.5 * 1024 * 1024)


def detect_image_mime(head: bytes) -> str | None:
    """MIME type from magic bytes (JPEG, PNG unless animated, GIF, WebP, BMP), else None."""
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        # An APNG carries an acTL chunk before its first IDAT; providers reject those as PNG.
        idat = head.find(b"IDAT")
        actl = head.find(b"acTL")
        if actl != -1 and (idat == -1 or actl < idat):
            return None
        return "image/png"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM"):
        return "image/bmp"
    return None


@dataclass(frozen=True)
class PreparedImage:
    """Either `data` (base64) with its `mime_type`, or `error` saying why the image cannot be attached."""

    mime_type: str
    data: str | None
    hints: list[str]
    error: str | None = None


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def prepare_image(raw: bytes, mime_type: str, auto_resize: bool = True) -> PreparedImage:
    """Base64 data that fits the limits, resizing with Pillow when it is installed and `auto_resize` is on."""
    encoded = _b64(raw)
    if not auto_resize:
        return PreparedImage(mime_type, encoded, [])
    try:
        pil_image = importlib.import_module("PIL.Image")
    except ImportError:
        if len(encoded) <= MAX_IMAGE_BASE64_BYTES:
            return PreparedImage(mime_type, encoded, [])
        return PreparedImage(
            mime_type, None, [], "Image is too large to attach and cannot be resized (Pillow is not installed)."
        )
    try:
        return _resize_with_pillow(pil_image, raw, mime_type, encoded)
    except Exception as exc:  # Pillow raises many unrelated types for corrupt input; all mean "cannot process"
        return PreparedImage(mime_type, None, [], f"Could not process image: {exc}")


def _resize_with_pillow(pil_image: Any, raw: bytes, mime_type: str, encoded: str) -> PreparedImage:
    # Pillow is imported dynamically (optional, untyped here), so its objects are handled as Any-like.
    image = pil_image.open(io.BytesIO(raw))
    width, height = image.size
    if width <= MAX_IMAGE_DIMENSION and height <= MAX_IMAGE_DIMENSION and len(encoded) <= MAX_IMAGE_BASE64_BYTES:
        return PreparedImage(mime_type, encoded, [])
    hints: list[str] = []
    scale = min(1.0, MAX_IMAGE_DIMENSION / width, MAX_IMAGE_DIMENSION / height)
    out_mime = mime_type if mime_type in ("image/png", "image/jpeg") else "image/png"
    if out_mime != mime_type:
        hints.append(f"Converted from {mime_type} to {out_mime}.")
    for _attempt in range(6):
        new_size = (max(1, int(width * scale)), max(1, int(height * scale)))
        resized = image.resize(new_size)
        buffer = io.BytesIO()
        if out_mime == "image/jpeg":
            resized.convert("RGB").save(buffer, format="JPEG", quality=85)
        else:
            resized.save(buffer, format="PNG")
        data = _b64(buffer.getvalue())
        if len(data) <= MAX_IMAGE_BASE64_BYTES:
            if new_size != (width, height):
                hints.append(f"Resized from {width}x{height} to {new_size[0]}x{new_size[1]}.")
            return PreparedImage(out_mime, data, hints)
        scale *= 0.7
    return PreparedImage(mime_type, None, [], "Image is too large to attach even after resizing.")
