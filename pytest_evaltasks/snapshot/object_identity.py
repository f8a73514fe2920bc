"""The identity of classes and objects, for one walker (`identity`): a class by its location
and, for the project's own, its body; an object by its class and its whole state (`__dict__`
and `__slots__`, private attributes included), or how it reduces itself."""

from __future__ import annotations

import functools
import sys
import types
from collections import defaultdict
from typing import Any

from .identity_parts import (
    _ADVICE,
    _PRIVATE,
    UnidentifiableValue,
    Walk,
    _custom_reduce,
    _digest,
    _dumps,
    _is_dunder,
    _is_sunder,
    _iterate,
    _public_module,
    _slots,
)


class ObjectIdentity:
    """Classes and objects, for one walker: a class by its location (and the project's own by a
    digest of its code), an object by its class and its whole state. `classes` keeps each
    class's location in this call, and its digest once made."""

    __slots__ = ("classes", "walker")

    def __init__(self, walker: Walk) -> None:
        self.walker = walker
        self.classes: dict[int, tuple[type, str, Any]] = {}

    def class_location(self, cls: type) -> tuple[str, bool]:
        """`relative/path.py:qualname` for a class of the project's own files, else
        `module:qualname`; and whether the class is the project's own."""
        cached = self.classes.get(id(cls))
        if cached is not None:
            return cached[1], cached[2] is not None
        module = getattr(cls, "__module__", None)
        qualname = getattr(cls, "__qualname__", cls.__name__)
        holder = sys.modules.get(module) if isinstance(module, str) else None
        filename = getattr(holder, "__file__", None)
        relative = self.walker.owned_file(filename) if isinstance(filename, str) else None
        if relative is not None:
            location, owned = f"{relative}:{qualname}", True
        else:
            private = isinstance(module, str) and module.startswith(_PRIVATE)
            location, owned = f"{_public_module(module)}:{qualname}", private
        self.classes[id(cls)] = (cls, location, ... if owned else None)
        return location, owned

    def type_parts(self, cls: type, path: str) -> tuple[str, Any]:
        """A class's location and, for the project's own classes, a digest of its code."""
        location, owned = self.class_location(cls)
        if not owned:
            return location, None
        code = self.classes[id(cls)][2]
        if code is ...:
            code = self.walker.nested(self.class_digest, cls, path)
            if isinstance(code, str):
                self.classes[id(cls)] = (cls, location, code)
        return location, code

    def type_identity(self, cls: type, path: str) -> Any:
        location, code = self.type_parts(cls, path)
        out: dict[str, Any] = {"__type__": location}
        if code is not None:
            out["code"] = code
        return out

    def class_digest(self, cls: type, path: str) -> str:
        """A digest of an own class's methods, properties and plain attributes, its bases and
        its metaclass. Generated dunder data (`__dict__`, `__dataclass_fields__`, pydantic's
        schema) and `_sunder_` machinery (enum's maps) are left out: methods cover them."""
        walker = self.walker
        body: dict[str, Any] = {}
        for name, attr in cls.__dict__.items():
            where = f"{path}.{name}"
            if isinstance(
                attr,
                (
                    types.FunctionType,
                    staticmethod,
                    classmethod,
                    property,
                    functools.cached_property,
                ),
            ):
                body[name] = walker.walk(attr, where)
            elif (
                _is_dunder(name)
                or _is_sunder(name)
                or name == "_abc_impl"
                or isinstance(attr, (types.MemberDescriptorType, types.GetSetDescriptorType))
            ):
                continue
            else:
                body[name] = walker.lenient(attr, where)
        bases = [
            walker.walk(base, f"{path}.__bases__[{index}]")
            for index, base in enumerate(cls.__bases__)
            if base is not object
        ]
        metaclass = type(cls)
        structure = {
            "attrs": body,
            "bases": bases,
            "metaclass": None if metaclass is type else walker.walk(metaclass, f"{path}.__class__"),
        }
        return _digest(_dumps(structure))

    def instance(self, value: Any, path: str) -> Any:
        """Any other object: its class and all its instance attributes, or what its class says
        its state is (`__reduce__`, `__getstate__`). An object whose state lives in C and that
        cannot say what it is (a lock, an open file, a generator) is refused."""
        cls = type(value)
        out = self.object_head(value, path)
        if _custom_reduce(cls):
            try:
                reduced = value.__reduce_ex__(4)
            except Exception as exc:
                raise self.unidentifiable(value, path, f"it cannot be pickled: {exc}") from None
            out["reduce"] = self.reduced(reduced, path)
            return out
        try:
            object.__reduce_ex__(value, 4)  # refuses an object whose state lives in C
        except Exception as exc:
            raise self.unidentifiable(value, path, f"it cannot be pickled: {exc}") from None
        if cls.__getstate__ is not object.__getstate__:  # type: ignore[comparison-overlap]
            try:
                state = value.__getstate__()
            except Exception as exc:
                raise self.unidentifiable(value, path, f"its __getstate__ failed: {exc}") from None
            if isinstance(state, dict) and all(type(key) is str for key in state):
                out["state"] = {
                    key: self.walker.walk(item, f"{path}.{key}") for key, item in state.items()
                }
            else:
                out["getstate"] = self.walker.walk(state, f"{path}.__getstate__()")
            return out
        out["state"] = self.attributes(value, path)
        return out

    def unidentifiable(self, value: Any, path: str, reason: str) -> UnidentifiableValue:
        """The refusal of an object that cannot say what its state is: its path and type."""
        kind = type(value)
        return UnidentifiableValue(
            f"{path} holds a {kind.__module__}.{kind.__qualname__}, which has no canonical "
            f"identity ({reason}): {_ADVICE}",
            path,
        )

    def object_head(self, value: Any, path: str) -> dict[str, Any]:
        """An object's class; all that is recorded of a logger, which never changes a prompt
        or a score, and whose name is its module's (private, path-derived) name."""
        location, code = self.type_parts(type(value), f"{path}.__class__")
        out: dict[str, Any] = {"__object__": location}
        if code is not None:
            out["code"] = code
        return out

    def attributes(self, value: Any, path: str) -> dict[str, Any]:
        """Every instance attribute: the whole `__dict__` and every slot along the MRO."""
        state: dict[str, Any] = {}
        try:
            attrs = object.__getattribute__(value, "__dict__")
        except AttributeError:
            attrs = None
        if isinstance(attrs, dict):
            for name, item in attrs.items():
                state[str(name)] = self.walker.walk(item, f"{path}.{name}")
        for name, descriptor in _slots(type(value)):
            if name in state:
                continue
            try:
                item = descriptor.__get__(value, type(value))
            except AttributeError:
                state[name] = {"__unset__": True}
                continue
            state[name] = self.walker.walk(item, f"{path}.{name}")
        return state

    def reduced(self, reduced: Any, path: str) -> Any:
        """What `__reduce_ex__` returned: a global's name, or (callable, args, state, ...)."""
        if isinstance(reduced, str):
            return reduced
        if not isinstance(reduced, tuple) or not 2 <= len(reduced) <= 6:
            raise UnidentifiableValue(
                f"{path} reduces to a {type(reduced).__qualname__}, which has no canonical "
                f"identity: {_ADVICE}",
                path,
            )
        parts = []
        for index, part in enumerate(reduced):
            if index in (3, 4) and part is not None:
                part = list(part)  # items iterators
            parts.append(self.walker.walk(part, f"{path}.__reduce_ex__(4)[{index}]"))
        return parts

    def container_object(self, value: Any, path: str) -> Any:
        """A subclass of dict, list, tuple or set (a namedtuple, a defaultdict): its class, its
        items and its attributes."""
        out = self.object_head(value, path)
        if isinstance(value, dict):
            out["items"] = self.walker.mapping(dict(dict.items(value)), path)
            if isinstance(value, defaultdict):
                out["default_factory"] = self.walker.walk(
                    value.default_factory, f"{path}.default_factory"
                )
        elif isinstance(value, (set, frozenset)):
            out["items"] = self.walker.set_(value, path)
        else:
            out["items"] = self.walker.sequence(_iterate(value), path)
        out["state"] = self.attributes(value, path)
        return out

    def scalar_object(self, value: Any, path: str) -> Any:
        """A subclass of int, float, str or bytes: its class, its value and its attributes."""
        out = self.object_head(value, path)
        plain: Any
        if isinstance(value, int):
            plain = int.__int__(value)
        elif isinstance(value, float):
            plain = float.__float__(value)
        elif isinstance(value, complex):
            plain = complex(value.real, value.imag)
        elif isinstance(value, str):
            plain = str.__getitem__(value, slice(None))
        else:
            plain = bytes(value)
        out["value"] = self.walker.walk(plain, f"{path}")
        out["state"] = self.attributes(value, path)
        return out
