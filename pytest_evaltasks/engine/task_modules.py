"""Find and import task modules, quietly, recording what each one imported.

Every `*.py` directly in a task directory and every subdirectory's `main.py` is a task module.
A module inside an importable package (lighteval's own task folders, for instance) is imported
under its real name, so it is the same module lighteval imports; any other gets a private
package per directory, so `tasks/json.py` never shadows the standard library. Either way the
source is compiled afresh: a cached `.pyc` is trusted on mtime and size alone.

Importing is where task files misbehave: they print, warn, log, exit, or try the network.
What they print is kept and reported only if the import fails; `SystemExit` and any other
`BaseException` but `KeyboardInterrupt` make that one module broken, never the run.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.machinery
import importlib.util
import io
import logging
import os
import sys
import traceback
import types
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .inputs import InputRecorder
from .private_caches import private_caches

PROVIDED = {
    "lighteval.tasks.lighteval_task": "LightevalTaskConfig",
    "lighteval.tasks.requests": "Doc, SamplingMethod",
    "lighteval.metrics.metrics": "Metrics",
}
"""lighteval modules whose names pytest_evaltasks itself provides (for the porting hint)."""

IGNORE_FILE = "_"
"""A file name starting with this is never imported as a task module (helpers, scripts)."""


@dataclass
class LoadedModule:
    """One task module after its import: the module, or why there is none."""

    path: Path
    name: str
    module: types.ModuleType | None = None
    error: str | None = None
    edges: dict[str, set[str]] = field(default_factory=dict)
    """Module name -> modules it imported, for every import made while this one was imported
    (its own, and those of modules it loaded for the first time)."""
    opened: set[str] = field(default_factory=set)
    """Files opened while it was imported (absolute paths)."""
    read: dict[tuple[str, bool, int], frozenset[str]] = field(default_factory=dict)
    """The project files its import read, as last worked out (`imported_inputs`), by what it
    was worked out for."""

    @property
    def imports(self) -> set[str]:
        """The modules this one imported directly."""
        return self.edges.get(self.name, set())


def installed(path: Path) -> bool:
    """A file of an installed package (lighteval's own task folders): one its user cannot edit,
    so its quirks are followed as the package follows them, with a warning."""
    from .inputs import installed_file

    return installed_file(os.path.abspath(path))


def discover(directory: Path) -> list[Path]:
    """The task modules of one directory, in sorted order: `*.py`, then `*/main.py`."""
    files = sorted(
        path
        for path in directory.glob("*.py")
        if path.name != "__init__.py" and not path.name.startswith(IGNORE_FILE)
    )
    subdirs = sorted(
        d
        for d in directory.iterdir()
        if not d.name.startswith(IGNORE_FILE) and (d / "main.py").is_file()
    )
    return files + [subdir / "main.py" for subdir in subdirs]


PRIVATE_PREFIX = "_evaltasks_"
"""The name of the private package a task folder's modules are imported into (when they cannot
be imported by their real dotted names)."""


def module_name_for(path: Path) -> str:
    """The name a task file is imported under: its real dotted name when it is importable
    as such, else a name in a private package derived from its directory's absolute path."""
    real = _real_name(path)
    if real is not None:
        return real
    directory = path.parent
    if path.name == "main.py":  # `family/main.py`: `__dir` keeps it apart from `family.py`
        package = _private_package(directory.parent)
        return f"{_private_package(directory, f'{package}.{directory.name}__dir')}.main"
    return f"{_private_package(directory)}.{path.stem}"


def _real_name(path: Path) -> str | None:
    """`a.b.c` when some `sys.path` entry holds `path` as `a/b/c.py` and importing that name
    would load this very file (lighteval's task folders are namespace packages)."""
    resolved = path.resolve()
    for entry in _path_entries(tuple(sys.path)):
        if entry not in resolved.parents:
            continue
        relative = resolved.relative_to(entry)
        parts = [*relative.parts[:-1], relative.stem]
        if len(parts) < 2 or not all(part.isidentifier() for part in parts):
            continue
        if not (entry / parts[0] / "__init__.py").is_file():
            continue  # only inside a regular package: a project's own folder keeps its own
        name = ".".join(parts)
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.origin and Path(spec.origin).resolve() == resolved:
            return name
    return None


@functools.lru_cache(maxsize=8)
def _path_entries(entries: tuple[str, ...]) -> list[Path]:
    """`sys.path` resolved, once per distinct `sys.path`."""
    resolved: list[Path] = []
    for entry in entries:
        try:
            resolved.append(Path(entry or ".").resolve())
        except OSError:
            continue
    return resolved


def _private_package(directory: Path, name: str | None = None) -> str:
    """Register a package for a task directory so its modules can use relative imports."""
    resolved = directory.resolve()
    if name is None:
        digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:10]
        name = f"{PRIVATE_PREFIX}{digest}"
    if name not in sys.modules:
        package = types.ModuleType(name)
        package.__path__ = [str(resolved)]
        # a spec, as an imported package has, so `importlib.resources.files(__package__)` and
        # other spec readers find the folder's files
        folder = [str(resolved)]
        loader = importlib.machinery.NamespaceLoader(name, folder, _no_spec)
        spec = importlib.machinery.ModuleSpec(name, loader, is_package=True)
        spec.submodule_search_locations = folder
        package.__spec__ = spec
        package.__loader__ = loader
        package.__package__ = name
        sys.modules[name] = package
    return name


def _no_spec(name: str, path: object) -> None:
    """A task folder's package never looks for more folders of itself."""
    return None


def forget_modules(folders: Iterable[str], below: Iterable[str] = ()) -> None:
    """Forget every loaded module whose file lies in one of `folders` (or anywhere below one of
    `below`), so the next import runs it afresh: a build then starts from the module state a
    new process of its harness starts from (a module-level `random.Random(42)` at its seed)."""
    exact = {os.path.realpath(folder) for folder in folders}
    under = tuple(os.path.join(os.path.realpath(folder), "") for folder in below)
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or name.startswith(PRIVATE_PREFIX):
            continue  # a task folder's private package, kept by the registry (run afresh anyway)
        folder = os.path.dirname(os.path.realpath(file))
        if folder in exact or (under and os.path.join(folder, "").startswith(under)):
            del sys.modules[name]


def load_module(path: Path, name: str) -> LoadedModule:
    """Import one task module, quietly; a failure is recorded with its output and a hint."""
    loaded = LoadedModule(path, name)
    output = io.StringIO()
    recorder = InputRecorder(name)
    try:
        with _quiet(output), recorder, private_caches():
            loaded.module = _import(path, name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit from a script's argparse, too
        captured = output.getvalue().strip()[-2000:]
        shown = "".join(f"  | {line}\n" for line in captured.split("\n")) if captured else ""
        loaded.error = (
            (f"output while importing:\n{shown}" if shown else "")
            + traceback.format_exc(limit=-3)
            + porting_hint(exc, recorder.failed)
            + sibling_hint(exc, path)
        )
    loaded.edges = recorder.edges
    loaded.opened = recorder.files
    return loaded


def _import(path: Path, name: str) -> types.ModuleType:
    """Execute the file's current source as module `name` (an imported one is reused)."""
    existing = sys.modules.get(name)
    if (
        existing is not None
        and not name.startswith(PRIVATE_PREFIX)
        and getattr(existing, "__file__", None) == str(path.resolve())
    ):
        return existing  # imported by another module under its real name: one identity
    spec = importlib.util.spec_from_file_location(name, path.resolve())
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


@contextlib.contextmanager
def _quiet(output: io.StringIO) -> Iterator[None]:
    """Keep what a module prints, warns or logs while it is imported."""
    root = logging.getLogger()
    handler = logging.StreamHandler(output)
    saved = root.handlers[:]
    root.handlers = [handler]
    try:
        with (
            contextlib.redirect_stdout(output),
            contextlib.redirect_stderr(output),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")
            yield
    finally:
        root.handlers = saved


def sibling_hint(exc: BaseException, path: Path) -> str:
    """Advice when a task file imports a helper of its own folder by its plain name
    (`from _prompts import ...`): each task folder is imported as a package of its own, so the
    helper is found only by a relative import (README.md, "Write a task")."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return ""
    parts = exc.name.split(".")
    folder = path.parent
    helper = folder.joinpath(*parts)
    if parts[0] == folder.name and len(parts) > 1:  # `from tasks._prompts import ...`
        helper = folder.joinpath(*parts[1:])
        parts = parts[1:]
    found = [file for file in (helper.with_suffix(".py"), helper / "__init__.py") if file.is_file()]
    if not found:
        return ""
    relative = "." + ".".join(parts)
    return (
        f"hint: {exc.name!r} is {found[0].relative_to(folder.parent).as_posix()} beside this "
        f"task file; "
        f"import it relatively: `from {relative} import ...` (each task folder is imported as a "
        f"package of its own, so a plain `import {exc.name}` does not find it)\n"
    )


def porting_hint(exc: BaseException, failed: str | None) -> str:
    """Advice when a task file imports lighteval and lighteval is not installed."""
    if not isinstance(exc, ImportError) or (exc.name or "").split(".")[0] != "lighteval":
        return ""
    wanted = failed if failed and failed.startswith("lighteval") else exc.name or "lighteval"
    provided = PROVIDED.get(wanted)
    if provided is not None:
        return (
            f"hint: lighteval is not installed, and this file imports {wanted}. Either install "
            f"lighteval (pip install lighteval==0.13.0, or this package's `lighteval` extra: "
            f"pip install -e '.[lighteval]' from its clone), or import "
            f"`{provided}` from pytest_evaltasks instead: "
            f"`from pytest_evaltasks import {provided}`\n"
        )
    return (
        f"hint: lighteval is not installed, and this file needs lighteval's {wanted}, which "
        f"pytest-evaltasks does not provide (only LightevalTaskConfig, Doc, SamplingMethod and "
        f"Metrics). Install lighteval to check it in place: pip install lighteval==0.13.0 "
        f"(or this package's `lighteval` extra: pip install -e '.[lighteval]' from its clone)\n"
    )
