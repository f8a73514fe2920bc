"""What a session or an early-exit command works out from its options before any item runs:
the registry (importing only the task modules the run can need), the plan, the renderings.

Every error here is the user's to fix before anything runs, so each becomes a
`pytest.UsageError` (exit code 4) that names the option.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import EvalTaskError

if TYPE_CHECKING:
    from ..engine.ports import Port
    from ..engine.registry import Registry
    from .options import Options
    from .plan import RunPlan
    from .profiles import Rendering

INDEX_KEY = "evaltasks/module-index"
"""Where the module index lives in pytest's cache."""


def is_worker(config: pytest.Config) -> bool:
    """This process is an xdist worker (its controller reports, writes and merges)."""
    return hasattr(config, "workerinput")


def build_registry(
    options: Options,
    config: pytest.Config | None = None,
    wanted: list[str] | None = None,
    prefix: bool = False,
) -> Registry:
    """The registry, with its errors as usage errors. With `wanted` names (and pytest's cache
    at hand), only the task modules that can define them are imported (`module_index`), and
    only the lm-eval YAML files that can define them are parsed (`sources/lm_eval/index`, whose
    index lives in the same cache; an xdist worker reads it and never writes it)."""
    from ..engine.registry import Registry

    only: list[Path] | None = None
    cache = getattr(config, "cache", None) if config is not None else None
    if wanted is not None and cache is not None:
        only = _indexed_modules(options, cache, wanted, prefix)
    worker = config is not None and is_worker(config)
    try:
        registry = Registry(
            options.task_dirs,
            options.custom_tasks,
            options.data_dir,
            only=only,
            wanted=wanted,
            cache=_ReadOnlyCache(cache) if worker and cache is not None else cache,
            root=options.root,
        )
    except EvalTaskError as exc:
        raise pytest.UsageError(str(exc)) from None
    if cache is not None:
        _save_index(cache, registry, options.root if config is not None else Path.cwd())
    return registry


def _indexed_modules(
    options: Options, cache: Any, wanted: list[str], prefix: bool
) -> list[Path] | None:
    """The module files a run over `wanted` names must import; None: all of them."""
    from ..engine.module_index import ModuleIndex, environment_key, select_modules
    from ..engine.sources import source_kind_of
    from ..engine.task_modules import discover
    from ..sources.lighteval.source import LIGHTEVAL

    candidates = [
        path
        for directory in options.task_dirs
        if directory.is_dir() and source_kind_of(directory) == LIGHTEVAL
        for path in discover(directory)
    ]
    index = ModuleIndex.from_json(cache.get(INDEX_KEY, None))
    selection = select_modules(index, candidates, wanted, environment_key(), prefix)
    if selection.modules is None or len(selection.modules) == len(candidates):
        return None
    return [*selection.modules, *options.custom_tasks]


class _ReadOnlyCache:
    """pytest's cache, read but never written (an xdist worker's: the controller writes)."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache

    def get(self, key: str, default: Any) -> Any:
        return self.cache.get(key, default)


def _save_index(cache: Any, registry: Registry, root: Path) -> None:
    """Record what this run imported, for the next run's selection."""
    from ..engine.checkout import project_folder
    from ..engine.module_index import ModuleIndex, environment_key, updated

    index = ModuleIndex.from_json(cache.get(INDEX_KEY, None))
    fresh = updated(index, registry, project_folder(root), environment_key())
    if fresh.records != index.records:
        cache.set(INDEX_KEY, fresh.to_json())


def listed_names(selector: str) -> list[str] | None:
    """The names (or prefixes) `--evaltasks-list FILTER` asks for; None: every module."""
    from ..engine.task_string import parse_task_string

    if not selector.strip():
        return None
    try:
        return [request.name for request in parse_task_string(selector)]
    except EvalTaskError:
        return [selector.strip()]


def wanted_names(options: Options) -> list[str] | None:
    """The task names a run's task strings ask for; None when it needs every module (`all`,
    a changed-only run, node ids alone, or a string that does not parse)."""
    from ..engine.ports import split_port_specs
    from ..engine.task_string import ALL_TASKS, parse_task_string

    if not options.specs or options.changed is not None:
        return None
    specs, ports = split_port_specs(options.specs)
    names: list[str] = []
    if ports:
        sides = _port_sides(options, ports)
        if sides is None:
            return None
        specs = [*specs, *sides]
    for spec in specs:
        if spec.strip() == ALL_TASKS:
            return None
        try:
            names += [request.name for request in parse_task_string(spec)]
        except EvalTaskError:
            return None
    return names


def _port_sides(options: Options, wanted: list[str]) -> list[str] | None:
    """The task strings of the asked-for ports' sides that the run's own folders define (a
    side with a folder of its own is built by a registry of its own); None when the
    declaration cannot be read here (the plan then says why)."""
    from ..engine.ports import read_ports, select_ports

    if options.ports_file is None:
        return []
    try:
        ports = select_ports(read_ports(options.ports_file.parent), wanted, False)
    except EvalTaskError:
        return None
    return [side.task for port in ports for side in (port.a, port.b) if side.folder is None]


def plan_of(
    registry: Registry, options: Options, labels: dict[Path, str | None] | None = None
) -> RunPlan:
    """The items of this run, with task-string errors as usage errors."""
    from ..engine.ports import split_port_specs
    from ..engine.task_string import ALL_TASKS, PORT_PREFIX
    from .plan import plan_run, rerun_specs

    specs = rerun_specs(registry, options.specs) if options.last_failed else options.specs
    specs, wanted = split_port_specs(specs)
    node_ids = [n for n in options.node_ids if not n.startswith(PORT_PREFIX)]
    wanted += [n[len(PORT_PREFIX) :] for n in options.node_ids if n.startswith(PORT_PREFIX)]
    try:
        plan = plan_run(registry, specs, options.snapshot_dir, node_ids, labels)
        everything = any(spec.strip() == ALL_TASKS for spec in specs)
        return replace(plan, ports=_ports(options, wanted, everything))
    except EvalTaskError as exc:
        what = f"--evaltasks {options.spec!r}" if options.specs else "node ids"
        raise pytest.UsageError(f"{what}: {exc}") from None


def _ports(options: Options, wanted: list[str], everything: bool) -> list[Port]:
    """The declared ports the run checks: none unless asked for by name, `ports` or `all`."""
    from ..engine.ports import read_ports, select_ports

    if (not wanted and not everything) or options.ports_file is None:
        return []
    return select_ports(read_ports(options.ports_file.parent), wanted, everything)


def renderings_of(options: Options, root: Path, cwd: Path) -> list[Rendering]:
    """The run's renderings, each template loaded once: the listed profiles, or the one the
    chat template and system prompt options describe; a bad one is a usage error."""
    from .profiles import base_rendering, resolve

    try:
        if options.renderings is None:
            return [base_rendering(options.run, root, cwd, options.tokens)]
        return resolve(options.renderings, options.run, root, cwd, options.tokens)
    except EvalTaskError as exc:
        what = "--evaltasks-chat-template" if options.renderings is None else "renderings"
        raise pytest.UsageError(f"{what}: {exc}") from None


def shown(path: Path) -> str:
    """A path as messages show it: relative to the working directory when it is inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
