"""A canonical text encoding of doc values: what the fingerprint hashes, never a Python `repr`.

Two values that mean the same thing encode the same way, whatever container or library version
made them: a tuple is a list, a numpy scalar or array is the Python value, mapping keys are
sorted. Two values that differ encode differently: `True` is not `1`, `1.0` is not `1`, and
(from format 3 on) the key `1` is not the key `"1"`. A value of any other type (a set, an
arbitrary object) has no canonical form and is an error that names the field and the type,
rather than a hash that changes from run to run.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

from ..engine.media import UnreadableMedia, media_digest

TYPED_KEYS = "\x00keys"
"""Marks a mapping encoded as `[key, value]` pairs, because a key is not a string (JSON would
turn the key `1` into `"1"`), or because a string key is this marker itself."""


class UnencodableValue(TypeError):
    """A doc field holds a value with no canonical encoding."""

    def __init__(self, path: str, value: Any, why: str | None = None) -> None:
        detail = why or (
            f"holds a {type(value).__module__}.{type(value).__qualname__}, which has no "
            f"canonical encoding (use str, int, float, bool, None, lists and dicts)"
        )
        shown = path if len(path) <= 80 else f"{path[:60]}...{path[-12:]}"
        super().__init__(f"field {shown!r} {detail}")
        self.path = path


def plain_value(value: Any) -> Any:
    """The JSON encoder's hook for types it does not know: numpy, enums, dataclasses, dates."""
    if hasattr(value, "dtype") and hasattr(value, "tolist"):  # numpy scalar or array
        return value.tolist()
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    if hasattr(value, "model_dump") and callable(value.model_dump):  # a pydantic model
        return value.model_dump()
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"sha256": hashlib.sha256(bytes(value)).hexdigest()}
    raise TypeError(value)


_ENCODER = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=plain_value
)
"""The C-accelerated encoder; `default` is called only for types JSON does not know."""

NESTING_LIMIT = 200
"""Levels of nesting a doc value may have: deeper is an error, never a `RecursionError`."""


def _chunk_encoder() -> Callable[[Any, int], list[str]] | None:
    """`_ENCODER`'s C encoder, made once: `JSONEncoder.encode` makes a new one per call, which
    costs as much as encoding a doc's few fields. None without the C accelerator."""
    make = getattr(json.encoder, "c_make_encoder", None)
    name = "c_encode_basestring_ascii" if _ENCODER.ensure_ascii else "c_encode_basestring"
    quote = getattr(json.encoder, name, None)
    if make is None or quote is None or _ENCODER.indent is not None:
        return None
    try:  # the arguments `JSONEncoder.iterencode` passes, read from `_ENCODER` itself
        encoder: Callable[[Any, int], list[str]] = make(
            None,  # no circularity markers: a cycle is too deep, as `_locate` reports it
            _ENCODER.default,
            quote,
            _ENCODER.indent,
            _ENCODER.key_separator,
            _ENCODER.item_separator,
            _ENCODER.sort_keys,
            _ENCODER.skipkeys,
            _ENCODER.allow_nan,
        )
    except TypeError:  # another signature: the encoder's own path
        return None
    return encoder


_CHUNKS = _chunk_encoder()


def canonical(fields: list[Any], names: tuple[str, ...]) -> str:
    """The canonical text of a list of field values; `names` name them in errors."""
    try:
        if _CHUNKS is not None:
            return "".join(_CHUNKS(fields, 0))
        return _ENCODER.encode(fields)
    except (TypeError, ValueError, RecursionError):
        for name, value in zip(names, fields, strict=True):
            _locate(value, name, 0)
        raise


def typed_keys(value: Any, path: str = "value", depth: int = 0) -> Any:
    """`value` with every mapping whose keys are not all strings as `{TYPED_KEYS: pairs}`.

    Pairs are sorted by the key's own canonical text, so key order never matters, and the
    key `1` stays apart from the key `"1"`. Values that hold no mapping come back as they are
    (the same object): only docs that carry dicts pay for the walk.
    """
    if depth > NESTING_LIMIT:
        raise UnencodableValue(path, value, _too_deep())
    if isinstance(value, dict):
        pairs = {
            key: typed_keys(item, f"{path}[{key!r}]", depth + 1) for key, item in value.items()
        }
        if all(type(key) is str and key != TYPED_KEYS for key in value):
            return pairs
        encoded = []
        for key, item in pairs.items():
            _locate(key, f"{path} key {key!r}", depth + 1)
            encoded.append((_ENCODER.encode(key), key, item))
        encoded.sort(key=lambda entry: entry[0])
        return {TYPED_KEYS: [[key, item] for _, key, item in encoded]}
    if isinstance(value, (list, tuple)):
        items = [typed_keys(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def _too_deep() -> str:
    return (
        f"is nested more than {NESTING_LIMIT} levels deep; flatten it (a doc field is data "
        f"sent or scored, not a recursive structure)"
    )


def _locate(value: Any, path: str, depth: int) -> None:
    """Raise `UnencodableValue` at the first part of `value` that cannot be encoded."""
    if depth > NESTING_LIMIT:
        raise UnencodableValue(path, value, _too_deep())
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise UnencodableValue(f"{path} key {key!r}", key)
            _locate(item, f"{path}[{key!r}]", depth + 1)
        try:
            _ENCODER.encode(value)
        except TypeError:  # keys of mixed types cannot be sorted
            raise UnencodableValue(f"{path} keys", next(iter(value))) from None
        return
    if isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            _locate(item, f"{path}[{position}]", depth + 1)
        return
    try:
        _ENCODER.encode(value)
    except (TypeError, ValueError):
        raise UnencodableValue(path, value) from None
    except RecursionError:
        raise UnencodableValue(path, value, _too_deep()) from None


def image_digest(image: Any, by_path_bytes: bool = True) -> str:
    """A digest of an image's bytes (`engine.media`): PIL images, numpy arrays, raw bytes,
    `datasets` dicts, data URIs and paths to image files (their bytes: the same image at another
    path is the same image).

    A URL is hashed as written: it is what the model is pointed at. Format 2 hashed every
    string as written (`by_path_bytes=False`), kept to verify format-2 files.
    """
    if isinstance(image, (str, Path)) and not by_path_bytes:
        return "sha256:" + hashlib.sha256(str(image).encode()).hexdigest()
    if isinstance(image, dict) and isinstance(image.get("path"), str) and not by_path_bytes:
        raise UnencodableValue("images item", image)
    try:
        return media_digest(image)
    except UnreadableMedia as exc:
        raise UnencodableValue("images item", image, str(exc)) from None
