"""A canonical text encoding of doc values: what the fingerprint hashes, never a Python `repr`.

Two values that mean the same thing encode the same way, whatever container or library version
made them: a tuple is a list, a numpy scalar or array is the Python value, mapping keys are
sorted. Two values that differ encode differently: `True` is not `1`, `1.0` is not `1`. A value
of any other type (a set, an arbitrary object) has no canonical form and is an error that names
the field and the type, rather than a hash that changes from run to run.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
from enum import Enum
from typing import Any


class UnencodableValue(TypeError):
    """A doc field holds a value with no canonical encoding."""

    def __init__(self, path: str, value: Any) -> None:
        super().__init__(
            f"field {path!r} holds a {type(value).__module__}.{type(value).__qualname__}, which "
            f"has no canonical encoding (use str, int, float, bool, None, lists and dicts with "
            f"string keys)"
        )
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


def canonical(fields: list[Any], names: tuple[str, ...]) -> str:
    """The canonical text of a list of field values; `names` name them in errors."""
    try:
        return _ENCODER.encode(fields)
    except (TypeError, ValueError):
        for name, value in zip(names, fields, strict=True):
            _locate(value, name)
        raise


def _locate(value: Any, path: str) -> None:
    """Raise `UnencodableValue` at the first part of `value` that cannot be encoded."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise UnencodableValue(f"{path} key {key!r}", key)
            _locate(item, f"{path}[{key!r}]")
        try:
            _ENCODER.encode(value)
        except TypeError:  # keys of mixed types cannot be sorted
            raise UnencodableValue(f"{path} keys", next(iter(value))) from None
        return
    if isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            _locate(item, f"{path}[{position}]")
        return
    try:
        _ENCODER.encode(value)
    except (TypeError, ValueError):
        raise UnencodableValue(path, value) from None


def image_digest(image: Any) -> str:
    """A digest of an image's bytes: PIL images, numpy arrays, raw bytes, `datasets` dicts."""
    if isinstance(image, (bytes, bytearray, memoryview)):
        data = bytes(image)
    elif isinstance(image, dict) and isinstance(image.get("bytes"), (bytes, bytearray)):
        data = bytes(image["bytes"])
    elif isinstance(image, str):
        data = image.encode("utf-8")  # a path or URL: what the model is pointed at
    elif hasattr(image, "tobytes") and hasattr(image, "mode") and hasattr(image, "size"):
        data = f"{image.mode}:{image.size}:".encode() + image.tobytes()  # a PIL image
    elif hasattr(image, "tobytes") and hasattr(image, "dtype") and hasattr(image, "shape"):
        data = f"{image.dtype}:{image.shape}:".encode() + image.tobytes()  # a numpy array
    else:
        raise UnencodableValue("images item", image)
    return "sha256:" + hashlib.sha256(data).hexdigest()
