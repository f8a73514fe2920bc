"""Which task module defines which names: an index that lets a run import only the modules a
task string needs, verified on every run against the files it stands for.

Importing every module of lighteval's two task folders costs about 20 s; a run over one task
needs one module. The index records, per module file, the names its `TASKS_TABLE` defined and
a key over everything that can change that table: the file's bytes, the bytes of the project
files it read while it was imported (and the names in any folder it listed), the bytes of the
code it imported from outside the project (a helper on `sys.path` from a sibling checkout, an
editable install's sources), the installed packages it reached (each by its top-level file or
folder and by the versioned metadata folders beside it, see `Stamps`), the installed lighteval
version and the Python version.
A record whose key no longer matches is not used: that module is imported (and re-indexed).
A name the index does not know, a module it has never seen, or any doubt means importing
everything, so a lazy run never finds less than a full one. What is not keyed: environment
variables, the clock, the network, and files opened outside the project (the interpreter's and
libraries' own reads of `/proc`, temporary files and the like, which change from run to run). A
table that depends on them needs `--cache-clear` (or `-p no:cacheprovider`) when they change.
Broken modules are never indexed: they are imported on every run, so their errors are always
current.
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

INDEX_VERSION = 2


@dataclass(frozen=True)
class ModuleRecord:
    """One module's names, and the key that says whether they still hold."""

    key: str
    names: tuple[str, ...]
    inputs: tuple[str, ...] = ()
    """Project files it read while it was imported, and code it imported from outside the
    project (absolute paths): part of its key, by their bytes."""
    installed: tuple[str, ...] = ()
    """The installed packages it reached (their top-level entries, see `inputs.Reach`): part
    of its key, by their stamps (see `Stamps`)."""


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
            if not isinstance(item, dict) or not isinstance(item.get("key"), str):
                continue
            names = _texts(item.get("names"))
            inputs = _texts(item.get("inputs") or [])
            installed = _texts(item.get("installed") or [])
            if names is not None and inputs is not None and installed is not None:
                records[path] = ModuleRecord(item["key"], names, inputs, installed)
        return cls(records)

    def to_json(self) -> dict[str, Any]:
        """The index as JSON data."""
        modules = {
            path: {
                "key": record.key,
                "names": list(record.names),
                "inputs": list(record.inputs),
                "installed": list(record.installed),
            }
            for path, record in sorted(self.records.items())
        }
        return {"version": INDEX_VERSION, "modules": modules}


def _texts(value: Any) -> tuple[str, ...] | None:
    """A list of strings read back, or None when it is anything else."""
    if isinstance(value, list) and all(isinstance(text, str) for text in value):
        return tuple(value)
    return None


def environment_key() -> str:
    """What every module's table also depends on: the Python and lighteval versions."""
    try:
        from importlib.metadata import version

        lighteval = version("lighteval")
    except Exception:
        lighteval = "-"
    return f"python {sys.version_info[:3]}; lighteval {lighteval}"


def module_key(
    path: Path,
    inputs: Iterable[str],
    environment: str,
    installed: Iterable[str] = (),
    stamps: Stamps | None = None,
) -> str | None:
    """The key of a module file: its bytes, its import-time inputs' bytes, the installed
    packages' stamps, the environment; None when a file cannot be read (then the record
    cannot be verified). `stamps` is shared by one verification of many records."""
    stamps = Stamps() if stamps is None else stamps
    digest = hashlib.sha256(environment.encode())
    for file in [str(path), *sorted(set(inputs) - {str(path)})]:
        try:
            data = _listing(file) if is_folder(file) else _file_bytes(file)
        except OSError:
            return None
        digest.update(file.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.sha256(data).digest())
    for top in sorted(set(installed)):
        stamp = stamps.of(top)
        if stamp is None:
            return None
        digest.update(f"{top}\0{stamp}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _file_bytes(file: str) -> bytes:
    """A file's bytes; a device, a pipe or a socket (`/dev/urandom`) is never read."""
    if not os.path.isfile(file):
        raise OSError(f"not a regular file: {file}")
    return Path(file).read_bytes()


class Stamps:
    """Installed packages' stamps, each worked out once for one verification of many records
    (lighteval's modules reach the same few dozen packages, in one or two site folders).

    A package's stamp is its top-level entry (its `__init__.py`; for a module or a namespace
    package, the entry itself) by inode, size and modification time, and the names of the
    distribution metadata folders beside it (`*.dist-info`, `*.egg-info`), which carry each
    installed distribution's version. pip writes a package's files anew when it installs it;
    an installer that keeps files' times, or an upgrade that rewrites only a namespace
    package's subpackages, still renames a metadata folder. None when the entry is gone.
    """

    def __init__(self) -> None:
        self._tops: dict[str, str | None] = {}
        self._sites: dict[str, str] = {}

    def of(self, top: str) -> str | None:
        """The stamp of an installed top-level entry."""
        if top not in self._tops:
            self._tops[top] = self._stamp(top)
        return self._tops[top]

    def _stamp(self, top: str) -> str | None:
        entry = os.path.join(top, "__init__.py")
        try:
            stat = os.stat(entry if os.path.isfile(entry) else top)
        except OSError:
            return None
        site = self._distributions(os.path.dirname(top))
        return f"{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}:{site}"

    def _distributions(self, site: str) -> str:
        """A digest of the distribution metadata folders' names in a site folder."""
        if site not in self._sites:
            try:
                names = sorted(
                    name for name in os.listdir(site) if name.endswith((".dist-info", ".egg-info"))
                )
            except OSError:
                names = []
            listed = "\0".join(names).encode("utf-8", "surrogateescape")
            self._sites[site] = hashlib.sha256(listed).hexdigest()[:16]
        return self._sites[site]


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
    path: Path,
    names: Iterable[str],
    inputs: Iterable[str],
    environment: str,
    installed: Iterable[str] = (),
) -> ModuleRecord | None:
    """The record of a module just imported; None when its files cannot be read."""
    inputs = tuple(sorted(set(inputs) - {str(path)}))
    tops = tuple(sorted(set(installed)))
    key = module_key(path, inputs, environment, tops)
    return None if key is None else ModuleRecord(key, tuple(sorted(set(names))), inputs, tops)


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
    stamps = Stamps()
    for path in candidates:
        record = index.records.get(str(path))
        key = (
            module_key(path, record.inputs, environment, record.installed, stamps)
            if record
            else None
        )
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
    from .inputs import reach_of

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
        reach = reach_of(modules, {origin, *loaded.opened}, within)
        read = (reach.project | reach.outside) - {origin}
        record = record_of(loaded.path, names.get(path, []), read, environment, reach.installed)
        if record is None:
            records.pop(path, None)
        else:
            records[path] = record
    return ModuleIndex(records)
