"""What a model is sent of an image, audio or video: the digest of its bytes, wherever they
come from, for every source alike.

A harness sends a model the bytes of an image, not its path: Inspect turns a file's path into a
data URI, lm-eval hands over the decoded image. So a record names media by a digest of their
bytes: from a path (read here, so a file of the project is recorded among the build's inputs),
a data URI (decoded), a URL (its local copy when the build has one: `fetch`), raw bytes, a
`datasets` image dict, a PIL image or a numpy array. A URL with no local copy is named as
written: it is what the model would be pointed at.
"""

from __future__ import annotations

import base64
import hashlib
import re
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
"""A URL's start (`https://`, `hf://`, `s3://`)."""

MEDIA_PARTS = {"image": "image", "audio": "audio", "video": "video"}
"""A message part's type -> the field holding its media (Inspect's `ContentImage.image`, ...)."""

Fetch = Callable[[str], bytes | None]
"""A URL's local copy's bytes, or None when the build has none."""


class UnreadableMedia(ValueError):
    """Media that names no bytes: a path that cannot be read, a value of no known kind."""


def media_digest(value: Any, fetch: Fetch | None = None) -> str:
    """`sha256:<hex>` of the media's bytes (see the module docstring)."""
    if isinstance(value, str) and URL.match(value):
        local = fetch(value) if fetch is not None else None
        data = local if local is not None else value.encode("utf-8")
    else:
        data = media_bytes(value)
    return "sha256:" + hashlib.sha256(data).hexdigest()


def media_bytes(value: Any) -> bytes:
    """The bytes of media given by value (not a URL): raw bytes, a `datasets` dict, a data URI,
    a path, a PIL image or a numpy array."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dict) and isinstance(value.get("bytes"), (bytes, bytearray)):
        return bytes(value["bytes"])
    if isinstance(value, dict) and isinstance(value.get("path"), str):
        return _file_bytes(value["path"])
    if isinstance(value, str) and value.startswith("data:"):
        return _data_uri_bytes(value)
    if isinstance(value, (str, Path)):
        return _file_bytes(str(value))
    if hasattr(value, "tobytes") and hasattr(value, "mode") and hasattr(value, "size"):
        return f"{value.mode}:{value.size}:".encode() + bytes(value.tobytes())  # a PIL image
    if hasattr(value, "tobytes") and hasattr(value, "dtype") and hasattr(value, "shape"):
        return f"{value.dtype}:{value.shape}:".encode() + bytes(value.tobytes())  # numpy
    raise UnreadableMedia(
        f"holds a {type(value).__module__}.{type(value).__qualname__}, which names no media "
        f"bytes (give bytes, a path, a data URI or a URL)"
    )


def _file_bytes(path: str) -> bytes:
    """A media file's bytes; one that cannot be read is an error, never a digest of its path
    (two clones would record two digests, and the model could not be sent it)."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UnreadableMedia(
            f"is the path {path!r}, which cannot be read ({exc.strerror or exc}); give the "
            f"media's bytes, or a path to an existing file"
        ) from None


def _data_uri_bytes(uri: str) -> bytes:
    """A `data:` URI's payload: base64 or percent-encoded."""
    header, _, payload = uri.partition(",")
    if header.endswith(";base64"):
        return base64.b64decode(payload)
    return urllib.parse.unquote_to_bytes(payload)


def digested_parts(value: Any, fetch: Fetch | None = None) -> Any:
    """Plain message data with every media part's media replaced by its digest (`{"type":
    "image", "image": "sha256:..."}`); anything else as it is."""
    if isinstance(value, list):
        return [digested_parts(item, fetch) for item in value]
    if not isinstance(value, dict):
        return value
    field = MEDIA_PARTS.get(str(value.get("type")))
    out = {key: digested_parts(item, fetch) for key, item in value.items()}
    if field is not None and field in value:
        out[field] = media_digest(value[field], fetch)
    return out
