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
itself, and holds one part per other job, each recursing through it: `_CodeIdentity` (functions,
methods, builtins, modules) and `_ObjectIdentity` (classes and objects). `_EXACT` and
`_Walker.handler_for` pick which of them identifies a value.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
import os
import re
import sys
import sysconfig
import types
import weakref
from collections import defaultdict
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
from .code_digest import DIGEST_SIZE, bytecode_digest, canonical_json, source_digest

MAX_DEPTH = 100
"""Levels of nesting an identity follows; deeper is an error, never a `RecursionError`."""

SMALL_ARRAY = 10_000
"""Arrays of at most this many elements are recorded by value, larger ones by digest."""

_PRIVATE = "_evaltasks_"
_PRIVATE_NAME = re.compile(r"_evaltasks_[0-9a-f]+(?:\.|$)")
_ADVICE = "give it a canonical value, or keep it out of the metric's attributes"

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

_DESCRIPTORS = (
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
    types.MemberDescriptorType,
    types.GetSetDescriptorType,
)
"""Builtin descriptors (`str.lower`, a slot): named by their class and name."""


class UnidentifiableValue(TypeError):
    """A value with no canonical identity; the message names the path and the type and says
    what to do."""

    path: str

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


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


def _within(filename: str, directory: str) -> bool:
    """Whether `filename` is inside `directory`, compared as normalized absolute paths."""
    base = os.path.normpath(directory)
    return os.path.normpath(filename).startswith(base + os.sep)


def _public_module(name: object) -> str:
    """A module name without the private package derived from an absolute path."""
    if not isinstance(name, str):
        return "?"
    if name.startswith(_PRIVATE):
        match = _PRIVATE_NAME.match(name)
        if match is not None:
            return name[match.end() :] or "<tasks>"
    return name


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _is_sunder(name: str) -> bool:
    """`_name_`: enum's and other frameworks' machinery, not the class's behaviour."""
    return len(name) > 2 and name[0] == name[-1] == "_" and name[1] != "_" and name[-2] != "_"


_dumps = canonical_json


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:DIGEST_SIZE]


def _float(value: float) -> Any:
    """A finite float is its JSON self (`1.0` is not `1`); NaN and infinities are tagged."""
    return value if math.isfinite(value) else {"__float__": repr(value)}


_CODE_NAMES: weakref.WeakKeyDictionary[types.CodeType, frozenset[str]] = weakref.WeakKeyDictionary()


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


_SLOTS: weakref.WeakKeyDictionary[type, tuple[tuple[str, Any], ...]] = weakref.WeakKeyDictionary()


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


def _custom_reduce(cls: type) -> bool:
    """Whether a class (not `object`) says how it pickles: its own statement of its state."""
    for owner in cls.__mro__:
        if owner is object:
            return False
        if "__reduce_ex__" in owner.__dict__ or "__reduce__" in owner.__dict__:
            return True
    return False


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
        self.code = _CodeIdentity(self)
        self.objects = _ObjectIdentity(self)

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


class _CodeIdentity:
    """Code, for one walker: functions (by location, and the project's own by a digest of their
    code and the globals they name), methods, builtins, native callables, partials, descriptors,
    code objects and modules. `functions` keeps each function identified in this call (and the
    function, so that its id is not reused)."""

    __slots__ = ("functions", "walker")

    def __init__(self, walker: _Walker) -> None:
        self.walker = walker
        self.functions: dict[int, tuple[Any, Any]] = {}

    def function(self, fn: Any, path: str) -> Any:
        """A Python function: location, code digest (own code), defaults, closure, attributes."""
        cached = self.functions.get(id(fn))
        if cached is not None:
            return cached[1]
        location, owned = self.function_location(fn)
        out: dict[str, Any] = {"__function__": location}
        inner = self.walker.walk if owned else self.walker.lenient
        if owned:
            out["code"] = self.walker.code_digest(fn.__code__)
            references = self.references(fn, path)
            if references:
                out["globals"] = _digest(_dumps(references))
        if fn.__defaults__:
            out["defaults"] = [
                inner(item, f"{path}.__defaults__[{index}]")
                for index, item in enumerate(fn.__defaults__)
            ]
        if fn.__kwdefaults__:
            out["kwdefaults"] = {
                name: inner(item, f"{path}.__kwdefaults__[{name!r}]")
                for name, item in fn.__kwdefaults__.items()
            }
        if fn.__closure__:
            closure: dict[str, Any] = {}
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=True):
                try:
                    contents = cell.cell_contents
                except ValueError:
                    closure[name] = {"__empty_cell__": True}
                    continue
                closure[name] = inner(contents, f"{path}.__closure__[{name!r}]")
            out["closure"] = closure
        if fn.__dict__:
            out["attrs"] = {
                str(name): inner(item, f"{path}.{name}") for name, item in fn.__dict__.items()
            }
        self.functions[id(fn)] = (fn, out)
        return out

    def function_location(self, fn: Any) -> tuple[str, bool]:
        """`relative/path.py:qualname` for the project's own code, else `module:qualname` (the
        module named by its path when it is an own file); and whether the code is the
        project's own, so that its code digest is recorded."""
        filename = fn.__code__.co_filename
        qualname = getattr(fn, "__qualname__", None) or fn.__name__
        relative = self.walker.owned_file(filename)
        if relative is not None:
            return f"{relative}:{qualname}", True
        module = getattr(fn, "__module__", None)
        holder = sys.modules.get(module) if isinstance(module, str) else None
        source = getattr(holder, "__file__", None)
        if holder is not None:
            location, module_owned = self.module_location(holder)
        else:
            location, module_owned = _public_module(module), False
        if filename.startswith("<") and not filename.startswith("<frozen"):
            # Generated code (a dataclass's `__init__`, a namedtuple's `__new__`): the module it
            # was generated for says whose it is; generated for no module, it is digested.
            owned = module_owned if isinstance(source, str) else True
        else:
            # A task file outside root, imported into the private package, is the project's
            # own; a library's wrapper that copied an own function's `__module__` is not.
            owned = (
                module_owned
                and isinstance(source, str)
                and _within(filename, os.path.dirname(source))
            )
        return f"{location}:{qualname}", owned

    def references(self, fn: Any, path: str) -> dict[str, Any]:
        """The globals an own function names (helpers it calls, constants it reads)."""
        names = _code_names(fn.__code__)
        namespace = fn.__globals__
        found: dict[str, Any] = {}
        for name in sorted(names):
            if _is_dunder(name) or name not in namespace:
                continue
            found[name] = self.reference(namespace[name], f"{path}.__globals__[{name!r}]", names)
        return found

    def reference(self, value: Any, path: str, names: frozenset[str]) -> Any:
        """A global named by own code; an own module is followed into the names used."""
        if isinstance(value, types.ModuleType):
            return self.walker.nested(
                lambda module, where: self.module_reference(module, where, names),
                value,
                path,
            )
        return self.walker.lenient(value, path)

    def module_reference(self, module: Any, path: str, names: frozenset[str]) -> Any:
        location, owned = self.module_location(module)
        out: dict[str, Any] = {"__module__": location}
        if owned:
            namespace = module.__dict__
            attrs = {
                name: self.reference(namespace[name], f"{path}.{name}", names)
                for name in sorted(names)
                if name in namespace and not _is_dunder(name)
            }
            if attrs:
                out["attrs"] = attrs
        return out

    def method(self, value: Any, path: str) -> Any:
        """A bound method: its function and the object it is bound to."""
        named = self.module_attribute(value, value.__self__)
        if named is not None:
            return {"__method__": named}
        return {
            "__method__": self.walker.walk(value.__func__, f"{path}.__func__"),
            "self": self.walker.walk(value.__self__, f"{path}.__self__"),
        }

    def module_attribute(self, value: Any, owner: Any) -> str | None:
        """`random:shuffle` for a method of a library's hidden singleton that its module
        exposes under the method's name: named, not walked (its state changes as it is used)."""
        if isinstance(owner, (type, types.ModuleType)) or owner is None:
            return None
        if self.walker.objects.class_location(type(owner))[1]:
            return None
        module_name = type(owner).__module__
        module = sys.modules.get(module_name)
        name = getattr(value, "__name__", None)
        if module is None or not isinstance(name, str):
            return None
        candidate = module.__dict__.get(name)
        if candidate is None or type(candidate) is not type(value) or candidate != value:
            return None
        return f"{_public_module(module_name)}:{name}"

    def builtin(self, value: Any, path: str) -> Any:
        """A builtin function, method or descriptor: `module:qualname`, and what it is bound to."""
        objclass = getattr(value, "__objclass__", None)
        if isinstance(value, _DESCRIPTORS) and isinstance(objclass, type):
            location = self.walker.objects.class_location(objclass)[0]
            return {"__builtin__": f"{location}.{value.__name__}"}
        owner = getattr(value, "__self__", None)
        qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", "?")
        module = getattr(value, "__module__", None)
        if owner is None or isinstance(owner, types.ModuleType):
            if not isinstance(module, str):
                module = owner.__name__ if owner is not None else "builtins"
            return {"__builtin__": f"{_public_module(module)}:{qualname}"}
        named = self.module_attribute(value, owner)
        if named is not None:
            return {"__builtin__": named}
        if not isinstance(module, str):
            module = (owner if isinstance(owner, type) else type(owner)).__module__
        return {
            "__builtin__": f"{_public_module(module)}:{qualname}",
            "self": self.walker.walk(owner, f"{path}.__self__"),
        }

    def native_callable(self, value: Any, path: str) -> Any:
        """A named callable implemented in C (numpy ufunc, `lru_cache` wrapper): its name, its
        type, and the function it wraps, if any (an own function under `lru_cache`)."""
        module = getattr(value, "__module__", None)
        if not isinstance(module, str):
            module = type(value).__module__
        qualname = getattr(value, "__qualname__", None)
        if not isinstance(qualname, str):
            qualname = value.__name__
        out: dict[str, Any] = {
            "__builtin__": f"{_public_module(module)}:{qualname}",
            "type": self.walker.objects.class_location(type(value))[0],
        }
        wrapped = getattr(value, "__wrapped__", None)
        library_function = (
            isinstance(wrapped, types.FunctionType)
            and not wrapped.__closure__
            and not self.function_location(wrapped)[1]
        )
        if wrapped is not None and not library_function:  # a library's own function: its name
            out["wrapped"] = self.walker.walk(wrapped, f"{path}.__wrapped__")
        return out

    def partial(self, value: Any, path: str) -> Any:
        out: dict[str, Any] = {
            "__partial__": self.walker.walk(value.func, f"{path}.func"),
            "args": self.walker.sequence(value.args, f"{path}.args"),
            "keywords": self.walker.mapping(value.keywords, f"{path}.keywords"),
        }
        attrs = getattr(value, "__dict__", None)
        if attrs:
            out["attrs"] = self.walker.mapping(attrs, path)
        return out

    def static_method(self, value: Any, path: str) -> Any:
        return {"__staticmethod__": self.walker.walk(value.__func__, f"{path}.__func__")}

    def class_method(self, value: Any, path: str) -> Any:
        return {"__classmethod__": self.walker.walk(value.__func__, f"{path}.__func__")}

    def property_(self, value: Any, path: str) -> Any:
        return {
            "__property__": [
                self.walker.walk(value.fget, f"{path}.fget"),
                self.walker.walk(value.fset, f"{path}.fset"),
                self.walker.walk(value.fdel, f"{path}.fdel"),
            ]
        }

    def cached_property(self, value: Any, path: str) -> Any:
        return {"__cached_property__": self.walker.walk(value.func, f"{path}.func")}

    def union(self, value: Any, path: str) -> Any:
        """`int | None`, which cannot be pickled: its members."""
        return {"__object__": "types:UnionType", "args": self.walker.sequence(value.__args__, path)}

    def code_object(self, value: Any, path: str) -> Any:
        return {"__code__": self.walker.code_digest(value)}

    def module(self, value: Any, path: str) -> Any:
        return {"__module__": self.module_location(value)[0]}

    def module_location(self, module: Any) -> tuple[str, bool]:
        """A module's relative path when it is the project's own, else its (public) name."""
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str):
            relative = self.walker.owned_file(filename)
            if relative is not None:
                return relative, True
        name = getattr(module, "__name__", None)
        return _public_module(name), isinstance(name, str) and name.startswith(_PRIVATE)


class _ObjectIdentity:
    """Classes and objects, for one walker: a class by its location (and the project's own by a
    digest of its code), an object by its class and its whole state. `classes` keeps each
    class's location in this call, and its digest once made."""

    __slots__ = ("classes", "walker")

    def __init__(self, walker: _Walker) -> None:
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


def _iterate(value: Any) -> Iterator[Any]:
    """A list or tuple subclass's own items, whatever its `__iter__` says."""
    kind = list if isinstance(value, list) else tuple
    return kind.__iter__(value)


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
