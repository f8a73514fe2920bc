"""Which task module defines which names: an index that lets a run import only the modules a
task string needs, verified on every run against the files it stands for.

Importing every module of lighteval's two task folders costs about 20 s; a run over one task
needs one module. The index records, per module file, the names its `TASKS_TABLE` defined and
a key over everything that can change that table: the file's bytes, the bytes of the project
files it read while it was imported (and the names in any folder it listed), the installed
lighteval version and the Python version.
A record whose key no longer matches is not used: that module is imported (and re-indexed).
A name the index does not know, a module it has never seen, or any doubt means importing
everything, so a lazy run never finds less than a full one. Broken modules are never indexed:
they are imported on every run, so their errors are always current.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .inputs import is_folder

INDEX_VERSION = 1


@dataclass(frozen=True)
class ModuleRecord:
    """One module's names, and the key that says whether they still hold."""

    key: str
    names: tuple[str, ...]
    inputs: tuple[str, ...] = ()
    """Project files it read while it was imported (absolute paths): part of its key."""


@dataclass
class ModuleIndex:
    """Module file (absolute path) -> its record."""

    records: dict[str, ModuleRecord] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> ModuleIndex:
        """An index read back; anything malformed is an empty index (everything is imported)."""
        if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
            return cls()
        records: dict[str, ModuleRecord] = {}
        for path, item in (data.get("modules") or {}).items():
            if isinstance(item, dict) and isinstance(item.get("key"), str):
                names = item.get("names")
                inputs = item.get("inputs") or []
                if isinstance(names, list) and all(isinstance(n, str) for n in [*names, *inputs]):
                    records[path] = ModuleRecord(item["key"], tuple(names), tuple(inputs))
        return cls(records)

    def to_json(self) -> dict[str, Any]:
        """The index as JSON data."""
        modules = {
            path: {"key": record.key, "names": list(record.names), "inputs": list(record.inputs)}
            for path, record in sorted(self.records.items())
        }
        return {"version": INDEX_VERSION, "modules": modules}


def environment_key() -> str:
    """What every module's table also depends on: the Python and lighteval versions."""
    try:
        from importlib.metadata import version

        lighteval = version("lighteval")
    except Exception:
        lighteval = "-"
    return f"python {sys.version_info[:3]}; lighteval {lighteval}"


def module_key(path: Path, inputs: Iterable[str], environment: str) -> str | None:
    """The key of a module file: its bytes, its import-time inputs' bytes, the environment;
    None when a file cannot be read (then the record cannot be verified)."""
    digest = hashlib.sha256(environment.encode())
    for file in [str(path), *sorted(set(inputs) - {str(path)})]:
        try:
            data = _listing(file) if is_folder(file) else Path(file).read_bytes()
        except OSError:
            return None
        digest.update(file.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def _listing(folder: str) -> bytes:
    """What a module that lists a folder sees of it: the names in it (the files it then opens
    are inputs of their own)."""
    return "\0".join(sorted(os.listdir(folder))).encode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Selection:
    """The modules a run imports, and why the rest are not imported."""

    modules: list[Path] | None
    """The module files to import; None: all of them."""
    reason: str


def record_of(
    path: Path, names: Iterable[str], inputs: Iterable[str], environment: str
) -> ModuleRecord | None:
    """The record of a module just imported; None when its files cannot be read."""
    inputs = tuple(sorted(set(inputs) - {str(path)}))
    key = module_key(path, inputs, environment)
    return None if key is None else ModuleRecord(key, tuple(sorted(set(names))), inputs)


def select_modules(
    index: ModuleIndex,
    candidates: list[Path],
    wanted: list[str],
    environment: str,
    prefix: bool = False,
) -> Selection:
    """The modules that can define the `wanted` names (or names under a wanted prefix, a
    superset; with `prefix`, any name that starts with one), from verified records. Every
    unverified or unknown module is imported too, and a wanted name no record knows, with no
    other module to import, means importing everything."""
    imported: list[Path] = []
    known: dict[str, list[Path]] = {}
    for path in candidates:
        record = index.records.get(str(path))
        key = module_key(path, record.inputs, environment) if record else None
        if record is None or key != record.key:
            imported.append(path)  # new, changed or never indexed: import it to know
            continue
        for name in record.names:
            known.setdefault(name, []).append(path)
    for name in wanted:
        found = [
            path
            for known_name, paths in known.items()
            if known_name == name or known_name.startswith(name if prefix else f"{name}:")
            for path in paths
        ]
        if not found and not imported:
            return Selection(None, f"{name!r} is not in the module index")
        imported.extend(path for path in found if path not in imported)
    return Selection(imported, "")


def updated(index: ModuleIndex, registry: Any, within: Path, environment: str) -> ModuleIndex:
    """The index with a record for every module `registry` imported without error (a broken
    one loses its record: it is imported on every run)."""
    from .inputs import inputs_of

    records = dict(index.records)
    names: dict[str, list[str]] = {}
    for entry in registry.entries.values():
        names.setdefault(str(entry.origin), []).append(entry.name)
    for unusable in registry.unusable.values():
        for path in unusable.paths:
            names.setdefault(str(path), []).append(unusable.name)
    broken = {str(module.path) for module in registry.broken}
    for loaded in registry.modules:
        path = str(loaded.path)
        if path in broken or loaded.module is None:
            records.pop(path, None)
            continue
        modules = {loaded.name, *(t for targets in loaded.edges.values() for t in targets)}
        origin = str(loaded.path.resolve())
        read = inputs_of(modules, {origin, *loaded.opened}, within) - {origin}
        record = record_of(loaded.path, names.get(path, []), read, environment)
        if record is None:
            records.pop(path, None)
        else:
            records[path] = record
    return ModuleIndex(records)
