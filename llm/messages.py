"""Chat messages, with images as litellm's standard content parts.

A message's ``content`` is a string, or a list of parts: ``{"type": "text", "text": ...}`` and
``{"type": "image_url", "image_url": {"url": "data:image/png;base64,...", "detail": ...}}`` (what
litellm passes to every vision-capable provider). Images are identified by the SHA-256 of their bytes:
the cache keys a request by that hash (not by the base64 text), and the trajectory records the hash in
place of the data, with the bytes kept aside to be written as files.
"""

from __future__ import annotations

import base64
import hashlib
import io
from collections import OrderedDict
from typing import Any

import numpy as np

Message = dict[str, Any]
_DATA_URL_PREFIX = "data:"
IMAGE_REF_PREFIX = "sha256:"


PNG_MEMO_SIZE = 16  # recent encodings kept: a tree search shows the pages of its nodes again and again
_png_memo: OrderedDict[bytes, bytes] = OrderedDict()


def array_digest(image: np.ndarray) -> bytes:
    """A digest of an image array's pixels and shape (SHA-1 over the buffer: ~2.5 ms for 1280x720 RGB)."""
    pixels = np.ascontiguousarray(image)
    return hashlib.sha1(pixels.data).digest() + repr((pixels.shape, pixels.dtype.str)).encode()


def png_bytes(image: np.ndarray) -> bytes:
    """``image`` (an RGB array) as PNG, with zlib's fastest level: the same pixels in a bigger file, at a
    fraction of the default level's time. The last :data:`PNG_MEMO_SIZE` encodings are kept by pixel
    digest, so a page shown again (a restored search node) is not encoded again."""
    key = array_digest(image)
    png = _png_memo.get(key)
    if png is None:
        from PIL import Image

        buffer = io.BytesIO()
        Image.fromarray(image).save(buffer, format="PNG", compress_level=1)
        png = _png_memo[key] = buffer.getvalue()
        if len(_png_memo) > PNG_MEMO_SIZE:
            _png_memo.popitem(last=False)
    _png_memo.move_to_end(key)
    return png


def image_part(image: bytes | Any, detail: str = "auto", mime: str = "image/png") -> dict[str, Any]:
    """A content part for ``image``: PNG/JPEG bytes, or an RGB array (encoded by :func:`png_bytes`)."""
    if not isinstance(image, bytes | bytearray):
        image, mime = png_bytes(image), "image/png"
    url = f"data:{mime};base64,{base64.b64encode(bytes(image)).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url, "detail": detail}}


def text_of(message: Message) -> str:
    """The text of a message (its text parts joined), whatever its content form."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in content or () if part.get("type") == "text")


def _image_bytes(url: str) -> bytes | None:
    if not url.startswith(_DATA_URL_PREFIX) or ";base64," not in url:
        return None
    try:
        return base64.b64decode(url.split(";base64,", 1)[1], validate=False)
    except ValueError:
        return None


def with_image_refs(messages: list[Message]) -> tuple[list[Message], dict[str, bytes]]:
    """``messages`` with every inline image replaced by ``sha256:<hex>``, and the bytes by hash.

    The first is what cache keys hash and trajectories record; text-only messages come back unchanged.
    """
    images: dict[str, bytes] = {}
    out: list[Message] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) or content is None:
            out.append(message)
            continue
        parts = []
        for part in content:
            url = (part.get("image_url") or {}).get("url") if part.get("type") == "image_url" else None
            data = _image_bytes(url) if isinstance(url, str) else None
            if data is None:
                parts.append(part)
                continue
            digest = hashlib.sha256(data).hexdigest()
            images[digest] = data
            parts.append({**part, "image_url": {**part["image_url"], "url": IMAGE_REF_PREFIX + digest}})
        out.append({**message, "content": parts})
    return out, images


# A text-only server's stand-in for an image it cannot be sent: the model learns a screenshot was there.
IMAGE_NOT_SENT = "(screenshot not sent: the model server accepts text only)"


def has_parts(messages: list[Message]) -> bool:
    """Whether any message's content is a list of parts (what a text-only chat template rejects)."""
    return any(isinstance(m.get("content"), list) for m in messages)


def as_text_only(messages: list[Message]) -> list[Message]:
    """``messages`` with every content list joined into one string, each image replaced by
    :data:`IMAGE_NOT_SENT`: the text the method sent, for a server that takes strings only."""
    out: list[Message] = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            out.append(message)
            continue
        pieces = [str(p.get("text", "")) if p.get("type") == "text" else IMAGE_NOT_SENT for p in content]
        out.append({**message, "content": "\n".join(pieces)})
    return out
