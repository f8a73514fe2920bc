"""Caches a build goes through, made private to it, so that what it reads is the same on a cold
or a warm cache.

`datasets` keeps what it prepares from files in a cache keyed by the files' names and times:
a warm cache answers without opening them, so a task module that calls
`datasets.load_dataset("json", data_files="tasks/style.jsonl")` would read the file (and record
it among its inputs) in a fresh clone but not after any earlier run, and a sibling module that
loads the same file would not read it at all. While a task module is imported or a task is
built (`private_caches`), every `datasets` builder over local files (`load_dataset`,
`Dataset.from_json` and its kind) caches in a folder of that scope's own: its files are
opened, and seen, every time. Caching stays on (`.map` results are reused within a build, as
the harnesses rely on); a dataset from the Hub keeps the user's cache, where
`HF_HUB_OFFLINE=1` finds it, since it is not a project file.

The folders live in the run's temporary folder (`run_folder`), removed as the run ends;
nothing in them is ever a task's input (`inputs.exclude_folder`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import tempfile
import threading
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from . import inputs
from .run_folder import run_folder

TARGET = "datasets.builder"
"""The module whose `DatasetBuilder` every `datasets` load of files goes through
(`load_dataset`, `Dataset.from_json` and its kind)."""

_lock = threading.Lock()
_depth = 0
_scope: Scope | None = None
"""The outermost active scope."""
_root: str | None = None


@dataclass
class Scope:
    """One import's or build's caches: a folder of its own, and what it saw `datasets` do."""

    folder: str
    results: dict[str, set[str]] = field(default_factory=dict)
    """A dataset's fingerprint -> the fingerprints of the cached results made from it."""

    @property
    def state_dependent(self) -> bool:
        """Whether one dataset was made into two different results: a hook whose state moved
        between two calls (a module-level `random.Random(42)` that each `.map` draws on), so a
        second build over this scope's warm cache gives what a harness gives on any run but the
        first (each call then reuses the first result, and the hook's state never moves)."""
        return any(len(made) > 1 for made in self.results.values())


@contextlib.contextmanager
def private_caches() -> Iterator[Scope]:
    """A scope (a task module's import, a task's build) whose `datasets` builders over local
    files, and whose datasets' cached results, cache in a fresh folder of its own; nested
    scopes share the outermost's."""
    global _depth, _scope
    with _lock:
        if _depth == 0:
            _scope = Scope(tempfile.mkdtemp(prefix="scope-", dir=_process_root()))
        _depth += 1
        scope = _scope
    assert scope is not None
    _patch_when_loaded()
    try:
        yield scope
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _scope = None


def _process_root() -> str:
    """This process's folder of scope caches, in the run's temporary folder (`run_folder`)."""
    global _root
    if _root is None:
        _root = tempfile.mkdtemp(prefix="caches-", dir=run_folder())
        inputs.exclude_folder(_root)
    return _root


def _patch_when_loaded() -> None:
    """Patch `datasets.builder` now if it is loaded, else as soon as something imports it."""
    module = sys.modules.get(TARGET)
    if module is not None:
        _patch(module)
    elif not any(isinstance(finder, _PatchOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport())


def _patch(module: types.ModuleType) -> None:
    """`DatasetBuilder.__init__` made to cache in the active scope's folder for local files,
    and `Dataset.map`'s (and `filter`'s, `shuffle`'s) cached results written there for every
    dataset."""
    _patch_results(sys.modules["datasets.arrow_dataset"].Dataset)
    builder = module.DatasetBuilder
    original = builder.__init__
    if getattr(original, "_evaltasks_private", False):
        return

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        scope = _scope
        if scope is not None and reads_local_files(kwargs.get("data_files")):
            folder = os.path.join(scope.folder, "datasets")
            if args:  # cache_dir is the first parameter
                args = (folder, *args[1:])
            else:
                kwargs["cache_dir"] = folder
        original(self, *args, **kwargs)

    __init__._evaltasks_private = True  # type: ignore[attr-defined]
    builder.__init__ = __init__


def _patch_results(dataset: Any) -> None:
    """A dataset's cached results (a `process_docs` hook's `.map`) kept in the active scope's
    folder: reused within a build, as `datasets` reuses them for a harness's own run, but
    never across builds, nor written into the user's cache beside a Hub dataset's files."""
    original = dataset._get_cache_file_path
    if getattr(original, "_evaltasks_private", False):
        return

    @functools.wraps(original)
    def _get_cache_file_path(self: Any, fingerprint: str) -> str:
        scope = _scope
        if scope is None or not self.cache_files or not _caching():
            return str(original(self, fingerprint))
        scope.results.setdefault(str(self._fingerprint), set()).add(fingerprint)
        folder = os.path.join(scope.folder, "results")
        os.makedirs(folder, exist_ok=True)
        return os.path.join(folder, f"cache-{fingerprint}.arrow")

    _get_cache_file_path._evaltasks_private = True  # type: ignore[attr-defined]
    dataset._get_cache_file_path = _get_cache_file_path


def _caching() -> bool:
    """Whether `datasets` caches results (a user may turn it off)."""
    fingerprint = sys.modules.get("datasets.fingerprint")
    return bool(getattr(fingerprint, "is_caching_enabled", lambda: True)())


def reads_local_files(data_files: Any) -> bool:
    """Whether a builder's data files are local files (none is a URL; a chained URL such as
    `zip://member::/data/rows.zip` counts by its last part)."""
    from .rows import data_file_strings

    strings = list(data_file_strings(data_files))
    return bool(strings) and not any("://" in text.rsplit("::", 1)[-1] for text in strings)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches `datasets.builder` right after its first import (whoever imports it: a task
    module, a harness, this package), so the package is never imported just to patch it."""

    def find_spec(
        self, fullname: str, path: Any, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != TARGET:
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: types.ModuleType) -> None:
            run(module)
            _patch(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
