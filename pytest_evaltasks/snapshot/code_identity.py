"""The identity of code, for one walker (`identity`): functions by their location, and the
project's own by a digest of their code and the globals they name; methods, builtins, native
callables, partials, descriptors, code objects and modules."""

from __future__ import annotations

import os
import sys
import types
from typing import Any

from .identity_parts import (
    _DESCRIPTORS,
    _PRIVATE,
    Walk,
    _code_names,
    _digest,
    _dumps,
    _is_dunder,
    _public_module,
    _within,
)


class CodeIdentity:
    """Code, for one walker: functions (by location, and the project's own by a digest of their
    code and the globals they name), methods, builtins, native callables, partials, descriptors,
    code objects and modules. `functions` keeps each function identified in this call (and the
    function, so that its id is not reused)."""

    __slots__ = ("functions", "walker")

    def __init__(self, walker: Walk) -> None:
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
