"""What the parts of an identity share (`identity` walks a value, `code_identity` and
`object_identity` identify code and objects through it): the error, the private names, the
digests, and the walker as they see it (`Walk`)."""

from __future__ import annotations

import hashlib
import os
import re
import types
import weakref
from collections.abc import Iterator
from typing import Any, Protocol

from .code_digest import DIGEST_SIZE, canonical_json

_dumps = canonical_json

_PRIVATE_NAME = re.compile(r"_evaltasks_[0-9a-f]+(?:\.|$)")
_CODE_NAMES: weakref.WeakKeyDictionary[types.CodeType, frozenset[str]] = weakref.WeakKeyDictionary()
_SLOTS: weakref.WeakKeyDictionary[type, tuple[tuple[str, Any], ...]] = weakref.WeakKeyDictionary()


class Walk(Protocol):
    """The walker, as the parts of an identity call it back."""

    root: Any
    project: str | None
    code_digest: Any
    objects: Any

    def walk(self, value: Any, path: str) -> Any: ...

    def lenient(self, value: Any, path: str) -> Any: ...

    def nested(self, handler: Any, value: Any, path: str) -> Any: ...

    def owned_file(self, filename: str) -> str | None: ...

    def sequence(self, value: Any, path: str) -> list[Any]: ...

    def mapping(self, value: Any, path: str) -> Any: ...

    def set_(self, value: Any, path: str) -> Any: ...


class UnidentifiableValue(TypeError):
    """A value with no canonical identity; the message names the path and the type and says
    what to do."""

    path: str

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


_ADVICE = "give it a canonical value, or keep it out of the metric's attributes"


_PRIVATE = "_evaltasks_"


_DESCRIPTORS = (
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
    types.MemberDescriptorType,
    types.GetSetDescriptorType,
)
"""Builtin descriptors (`str.lower`, a slot): named by their class and name."""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:DIGEST_SIZE]


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _is_sunder(name: str) -> bool:
    """`_name_`: enum's and other frameworks' machinery, not the class's behaviour."""
    return len(name) > 2 and name[0] == name[-1] == "_" and name[1] != "_" and name[-2] != "_"


def _public_module(name: object) -> str:
    """A module name without the private package derived from an absolute path."""
    if not isinstance(name, str):
        return "?"
    if name.startswith(_PRIVATE):
        match = _PRIVATE_NAME.match(name)
        if match is not None:
            return name[match.end() :] or "<tasks>"
    return name


def _within(filename: str, directory: str) -> bool:
    """Whether `filename` is inside `directory`, compared as normalized absolute paths."""
    base = os.path.normpath(directory)
    return os.path.normpath(filename).startswith(base + os.sep)


def _code_names(code: types.CodeType) -> frozenset[str]:
    """Every global or attribute name a code object (or code nested in it) uses."""
    cached = _CODE_NAMES.get(code)
    if cached is None:
        names = set(code.co_names)
        for item in code.co_consts:
            if isinstance(item, types.CodeType):
                names |= _code_names(item)
        cached = frozenset(names)
        _CODE_NAMES[code] = cached
    return cached


def _custom_reduce(cls: type) -> bool:
    """Whether a class (not `object`) says how it pickles: its own statement of its state."""
    for owner in cls.__mro__:
        if owner is object:
            return False
        if "__reduce_ex__" in owner.__dict__ or "__reduce__" in owner.__dict__:
            return True
    return False


def _slots(cls: type) -> tuple[tuple[str, Any], ...]:
    """(attribute name, slot descriptor) for every `__slots__` entry along the MRO."""
    cached = _SLOTS.get(cls)
    if cached is None:
        found: list[tuple[str, Any]] = []
        for owner in cls.__mro__:
            declared = owner.__dict__.get("__slots__", ())
            for slot in (declared,) if isinstance(declared, str) else declared:
                if slot in ("__dict__", "__weakref__") or not isinstance(slot, str):
                    continue
                name = slot
                if slot.startswith("__") and not slot.endswith("__"):
                    stripped = owner.__name__.lstrip("_")
                    name = f"_{stripped}{slot}" if stripped else slot
                descriptor = owner.__dict__.get(name)
                if isinstance(descriptor, types.MemberDescriptorType):
                    found.append((name, descriptor))
        cached = tuple(found)
        _SLOTS[cls] = cached
    return cached


def _iterate(value: Any) -> Iterator[Any]:
    """A list or tuple subclass's own items, whatever its `__iter__` says."""
    kind = list if isinstance(value, list) else tuple
    return kind.__iter__(value)
