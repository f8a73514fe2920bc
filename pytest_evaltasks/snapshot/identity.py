"""The canonical identity of any value a task config or a metric holds: structure, not `repr`.

The snapshot records metrics and config fields by identity, and the version gate calls a change
of identity a content change. So an identity must change whenever something that could change
what a model is sent or how it is scored changes (a setting, a function's body, a closed-over
value, a private attribute), and must never change between two clones of one project at two
paths, or between two processes (`PYTHONHASHSEED`): no memory address, no absolute path, no
private package name derived from one, no set order, no line number.

Values are encoded as JSON-able structures. A non-JSON value is a dict with one reserved *tag*
key (`__float__`, `__function__`, `__object__`, ...); a plain dict that holds a tag key is
encoded as a list of pairs, so no plain dict can pass for a tagged value. Code the project owns
(its file is inside `root`) is identified by a digest of its code object, and follows the
globals it names (so editing a helper a metric calls is a change); code the project does not own
(the stdlib, installed libraries) by its location name alone.

One call is one `_Walker`: it follows the path (cycles, the depth limit), identifies plain data
itself, and holds one part per other job, each in a module of its own and recursing through
it: `code_identity.CodeIdentity` (functions, methods, builtins, modules) and
`object_identity.ObjectIdentity` (classes and objects); what they share is in
`identity_parts`, and how paths are named in `engine/paths`. `_EXACT` and
`_Walker.handler_for` pick which part identifies a value.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
import os
import re
import sysconfig
import types
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path, PurePath
from typing import Any

from ..engine.paths import (
    SEPARATORS,
    absolute,
    format_3_paths,
    in_format_3,
    in_project,
    in_root,
    machine_text,
    path_text,
    project_of,
)
from .code_digest import bytecode_digest, canonical_json, source_digest
from .code_identity import CodeIdentity
from .identity_parts import (
    _ADVICE,
    _DESCRIPTORS,
    _PRIVATE,
    _PRIVATE_NAME,
    UnidentifiableValue,
    _digest,
)
from .object_identity import ObjectIdentity

__all__ = [
    "UnidentifiableValue",
    "format_3_identities",
    "identity",
    "identity_digest",
    "identity_text",
]

MAX_DEPTH = 100
"""Levels of nesting an identity follows; deeper is an error, never a `RecursionError`."""

SMALL_ARRAY = 10_000
"""Arrays of at most this many elements are recorded by value, larger ones by digest."""


_TAGS = frozenset(
    {
        "__array__",
        "__builtin__",
        "__bytes_sha256__",
        "__cached_property__",
        "__classmethod__",
        "__code__",
        "__complex__",
        "__cycle__",
        "__dict_items__",
        "__empty_cell__",
        "__enum__",
        "__float__",
        "__function__",
        "__method__",
        "__module__",
        "__object__",
        "__partial__",
        "__path__",
        "__property__",
        "__regex__",
        "__set__",
        "__staticmethod__",
        "__type__",
        "__unidentifiable__",
        "__unset__",
    }
)
"""Keys that mark a tagged value; a plain dict holding one is encoded as pairs instead."""


@contextlib.contextmanager
def format_3_identities() -> Iterator[None]:
    """Identities as format 3 made them, to verify a file in that format: code digested by
    its bytecode (which differs between Python versions), only code inside the root the
    project's own, paths outside the root as written (`paths.format_3_paths`)."""
    with format_3_paths():
        yield


def identity(value: Any, root: Path | None = None, path: str = "value") -> Any:
    """JSON-able structure (dicts with str keys, lists, str, int, float, bool, None).

    `root` is the project's root directory: code and paths inside it are the project's own,
    named relative to it. `path` names `value` in error messages.
    """
    walker = _Walker(root)
    try:
        return walker.walk(value, path)
    except RecursionError:
        raise UnidentifiableValue(
            f"{path} is nested too deeply to identify (Python's recursion limit): {_ADVICE}", path
        ) from None
    finally:
        walker.close()


def identity_text(value: Any, root: Path | None = None, path: str = "value") -> str:
    """Canonical compact JSON text of identity(): json.dumps(sort_keys=True,
    separators=(",", ":"), ensure_ascii=True)."""
    return _dumps(identity(value, root, path))


def identity_digest(value: Any, root: Path | None = None, path: str = "value") -> str:
    """First 16 hex digits of sha256 of identity_text."""
    return _digest(identity_text(value, root, path))


@functools.lru_cache(maxsize=1)
def _installed_roots() -> tuple[str, ...]:
    """Where the stdlib and installed packages live: never the project's own code."""
    paths = sysconfig.get_paths()
    found = {os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib") if key in paths}
    return tuple(sorted(found))


@functools.lru_cache(maxsize=8192)
def _owned_file(filename: str, root: Path, project: str | None) -> str | None:
    """`filename` relative to `root` (POSIX) when it is the project's own source, else None:
    inside `root`, or elsewhere in the project's checkout (a monorepo's scoring code beside
    the root directory); `project` None: inside `root` only, as format 3 had it.

    A file under `site-packages` or the stdlib is installed code even inside `root` (an
    in-project `.venv`): its identity must not change with the project's own edits.
    """
    if not filename or filename.startswith("<") or not os.path.isabs(filename):
        return None
    normalized = os.path.normpath(filename)
    relative = in_root(normalized, root)
    if relative is None and project is not None:
        relative = in_project(normalized, root, project)
    if relative is None or relative == ".":
        return None
    parts = relative.split("/")
    if "site-packages" in parts or "dist-packages" in parts:
        return None
    resolved = os.path.realpath(filename)
    if any(resolved.startswith(base + os.sep) for base in _installed_roots()):
        return None
    return relative


_dumps = canonical_json


def _float(value: float) -> Any:
    """A finite float is its JSON self (`1.0` is not `1`); NaN and infinities are tagged."""
    return value if math.isfinite(value) else {"__float__": repr(value)}


def _is_array(value: Any) -> bool:
    """numpy (or torch, pandas) arrays and scalars, duck-typed on the type: no numpy import."""
    kind = type(value)
    return hasattr(kind, "dtype") and hasattr(kind, "tolist")


def _is_native_callable(value: Any) -> bool:
    """A callable implemented in C with a name (a numpy ufunc, an `lru_cache` wrapper); an
    instance of a Python class with a `__call__` method is an object, named by its state."""
    if not callable(value):
        return False
    call = next(
        (
            owner.__dict__["__call__"]
            for owner in type(value).__mro__
            if "__call__" in owner.__dict__
        ),
        None,
    )
    return not isinstance(call, types.FunctionType) and isinstance(
        getattr(value, "__name__", None), str
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


_Handler = Callable[[Any, str], Any]
"""A handler bound to its part of a walker: identifies one kind of value found at a path."""


class _Walker:
    """One identity computation: the path being followed (for cycles, and the depth limit), the
    plain values, and one part per other job (code, objects), each recursing through it."""

    __slots__ = ("code", "code_digest", "depth", "objects", "on_path", "project", "root")

    def __init__(self, root: Path | None) -> None:
        self.root = root if root is None else absolute(root)
        self.project = None if root is None else project_of(root)
        self.code_digest = bytecode_digest if in_format_3() else source_digest
        self.depth = 0
        self.on_path: dict[int, int] = {}
        self.code: CodeIdentity = CodeIdentity(self)
        self.objects: ObjectIdentity = ObjectIdentity(self)

    def owned_file(self, filename: str) -> str | None:
        """`_owned_file` for this call's root and project."""
        return None if self.root is None else _owned_file(filename, self.root, self.project)

    def close(self) -> None:
        """Let go of the parts, which hold the walker: the call's caches are freed when it
        returns, not at the next garbage collection."""
        del self.code, self.objects

    # -- the walk -----------------------------------------------------------------------------

    def walk(self, value: Any, path: str) -> Any:
        """The identity of `value`, found at `path`."""
        kind = type(value)
        if kind is str:
            return self.text(value)
        if value is None or kind is bool or kind is int:
            return value
        if kind is float:
            return _float(value)
        if kind is type or isinstance(value, type):
            return self.objects.type_identity(value, path)
        bind = _EXACT.get(kind)
        handler = self.handler_for(value) if bind is None else bind(self)
        return self.nested(handler, value, path)

    def nested(self, handler: _Handler, value: Any, path: str) -> Any:
        """Run `handler` with `value` on the current path: a cycle is a marker, depth a limit."""
        key = id(value)
        seen = self.on_path.get(key)
        if seen is not None:
            return {"__cycle__": self.depth - seen + 1}
        if self.depth >= MAX_DEPTH:
            raise UnidentifiableValue(
                f"a value nested more than {MAX_DEPTH} levels deep at {path} has no canonical "
                f"identity: {_ADVICE}",
                path,
            )
        self.depth += 1
        self.on_path[key] = self.depth
        try:
            return handler(value, path)
        finally:
            del self.on_path[key]
            self.depth -= 1

    def lenient(self, value: Any, path: str) -> Any:
        """The identity of a value the user may not control (a global, a library's closure):
        an unidentifiable one is recorded by its type rather than refused."""
        try:
            return self.walk(value, path)
        except UnidentifiableValue:
            return {"__unidentifiable__": self.objects.class_location(type(value))[0]}

    def handler_for(self, value: Any) -> _Handler:
        """The handler for a value whose exact type has none: subclasses and other objects."""
        if isinstance(value, Enum):
            return self.enum
        if isinstance(value, logging.Logger):
            return self.objects.object_head
        if _is_array(value):
            return self.array
        if isinstance(value, functools.partial):
            return self.code.partial
        if isinstance(value, PurePath):
            return self.pure_path
        if isinstance(value, types.ModuleType):
            return self.code.module
        if isinstance(value, (dict, list, tuple, set, frozenset)):
            return self.objects.container_object
        if isinstance(value, (int, float, complex, str, bytes, bytearray)):
            return self.objects.scalar_object
        for kind in (staticmethod, classmethod, property, functools.cached_property):
            if isinstance(value, kind):
                return _EXACT[kind](self)
        if _is_native_callable(value):
            return self.code.native_callable
        return self.objects.instance

    # -- plain values -------------------------------------------------------------------------

    def text(self, value: str) -> str:
        """A string; an absolute path inside root, a machine folder anywhere in it, or a private
        package name, made portable."""
        if value[:1] in SEPARATORS or value[1:2] == ":":
            return value if self.root is None else path_text(value, self.root, self.project)
        if self.project is not None and os.sep in value:
            value = machine_text(value, self.root)
        if value.startswith(_PRIVATE):
            match = _PRIVATE_NAME.match(value)
            if match is not None:
                return value[match.end() :] or "<tasks>"
        return value

    def sequence(self, value: Any, path: str) -> list[Any]:
        return [self.walk(item, f"{path}[{index}]") for index, item in enumerate(value)]

    def mapping(self, value: Any, path: str) -> Any:
        """A dict: plain when its keys are strings (no tag), else sorted (key, value) pairs."""
        items = list(value.items())
        if all(type(key) is str for key, _ in items):
            keys = [self.text(key) for key, _ in items]
            if len(set(keys)) == len(keys) and _TAGS.isdisjoint(keys):
                return {
                    key: self.walk(item, f"{path}[{original!r}]")
                    for key, (original, item) in zip(keys, items, strict=True)
                }
        pairs = [
            (
                self.walk(key, f"{path}.keys()[{_short(key)}]"),
                self.walk(item, f"{path}[{_short(key)}]"),
            )
            for key, item in items
        ]
        ordered = sorted((_dumps(key), _dumps(item), key, item) for key, item in pairs)
        return {"__dict_items__": [[key, item] for _, _, key, item in ordered]}

    def set_(self, value: Any, path: str) -> Any:
        """A set: elements sorted by their canonical text, never by hash order."""
        items = [self.walk(item, f"{path}{{{_short(item)}}}") for item in value]
        return {"__set__": sorted(items, key=_dumps)}

    def bytes_(self, value: Any, path: str) -> Any:
        data = value.tobytes() if isinstance(value, memoryview) else bytes(value)
        return {"__bytes_sha256__": hashlib.sha256(data).hexdigest()}

    def complex_(self, value: Any, path: str) -> Any:
        return {"__complex__": repr(complex(value))}

    def regex(self, value: Any, path: str) -> Any:
        return {"__regex__": self.walk(value.pattern, f"{path}.pattern"), "flags": value.flags}

    def pure_path(self, value: Any, path: str) -> Any:
        text = str(value)
        if value.is_absolute():
            relative = text if self.root is None else path_text(text, self.root, self.project)
            if relative != text:
                return {"__path__": relative}
        return {"__path__": value.as_posix()}

    def array(self, value: Any, path: str) -> Any:
        """A numpy array or scalar: dtype, shape, and the values (or a digest when large)."""
        shape = [int(size) for size in getattr(value, "shape", ())]
        out: dict[str, Any] = {"__array__": str(value.dtype), "shape": shape}
        count = math.prod(shape)
        by_value = count <= SMALL_ARRAY or getattr(value.dtype, "kind", None) == "O"
        if by_value or not hasattr(value, "tobytes"):
            values = self.walk(value.tolist(), f"{path}.tolist()")
            if by_value:
                out["values"] = values
            else:
                out["sha256"] = hashlib.sha256(_dumps(values).encode("ascii")).hexdigest()
        else:
            out["sha256"] = hashlib.sha256(value.tobytes()).hexdigest()
        return out

    def enum(self, value: Any, path: str) -> Any:
        location, code = self.objects.type_parts(type(value), f"{path}.__class__")
        out = {
            "__enum__": f"{location}.{value.name}",
            "value": self.walk(value.value, f"{path}.value"),
        }
        if code is not None:
            out["code"] = code
        return out


_Binding = Callable[[_Walker], _Handler]
"""Picks a handler from a walker: bound, so that a part's handler runs on that walker's part."""


def _builtin(walker: _Walker) -> _Handler:
    """One binding for every builtin type (functions, method wrappers, descriptors)."""
    return walker.code.builtin


_EXACT: dict[type, _Binding] = {
    list: lambda walker: walker.sequence,
    tuple: lambda walker: walker.sequence,
    dict: lambda walker: walker.mapping,
    types.MappingProxyType: lambda walker: walker.mapping,
    set: lambda walker: walker.set_,
    frozenset: lambda walker: walker.set_,
    bytes: lambda walker: walker.bytes_,
    bytearray: lambda walker: walker.bytes_,
    memoryview: lambda walker: walker.bytes_,
    complex: lambda walker: walker.complex_,
    types.FunctionType: lambda walker: walker.code.function,
    types.MethodType: lambda walker: walker.code.method,
    types.BuiltinFunctionType: _builtin,
    types.MethodWrapperType: _builtin,
    **dict.fromkeys(_DESCRIPTORS, _builtin),
    types.ModuleType: lambda walker: walker.code.module,
    types.CodeType: lambda walker: walker.code.code_object,
    # `list[int]`: callable and named, but not a function
    types.GenericAlias: lambda walker: walker.objects.instance,
    types.UnionType: lambda walker: walker.code.union,
    functools.partial: lambda walker: walker.code.partial,
    re.Pattern: lambda walker: walker.regex,
    staticmethod: lambda walker: walker.code.static_method,
    classmethod: lambda walker: walker.code.class_method,
    property: lambda walker: walker.code.property_,
    functools.cached_property: lambda walker: walker.code.cached_property,
}
"""Handlers by exact type, tried before any `isinstance` test: each entry picks the handler from
the walker (plain values) or from its code or objects part."""
