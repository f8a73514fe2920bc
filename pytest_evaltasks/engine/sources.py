"""Task sources: where the registry's names come from, and how each kind is read.

The registry asks each source, in turn, to discover its files and register the names they
define; from then on it asks the source that registered a name for everything about it. A
source is one implementation of `TaskSource`:

- `sources/lighteval/source.LightevalModules`: `*.py` task modules with a `TASKS_TABLE` of
  lighteval-style configs (ours, or lighteval's own through `sources/lighteval/adapter`), rendered
  by our `Task` into `rendered.DocsRendered`;
- `sources/lm_eval/source.LmEvalYaml`: lm-eval's YAML task configs (its installed task folder, and
  custom folders as its `--include_path`), rendered by lm-eval's own task objects into
  `rendered.UnitsRendered`;
- `sources/inspect/source.InspectTasks`: Inspect AI tasks (inspect_evals' own, and a user's `@task`
  files), each sample rendered by the task's own solver chain into `rendered.UnitsRendered`.

A source registers names through a `Registrar` and renders a `RenderedTask`; what only some
sources can do is a protocol of its own (`ImportsModules`, `SavesData`). Adding a source: a
module implementing `TaskSource` that defines its `SOURCE_KIND` (which folders are its, how its
source is made), its line in `SOURCE_KINDS`, and (if it has one) a shortcut for its installed
folder in `plugin/options.py`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .chat_template import ChatTemplate
    from .config import TaskConfig
    from .data_slices import SlicePlan
    from .rendered import RenderedTask
    from .run_settings import RunSettings
    from .task_modules import LoadedModule
    from .task_string import TaskRequest


@dataclass
class Entry:
    """One registered name: where it came from, and its config as its file made it."""

    name: str
    origin: Path
    raw: Any
    config: TaskConfig | None = None
    source: TaskSource | None = None
    """The source that registered it (None: set by the registry to the first one)."""
    listed: bool = True
    """Part of `names` (`all`, `--evaltasks-list`); False for a task registered only because a
    run named it, from a folder the run did not list (lm-eval's own, under a custom folder)."""


class Registrar(Protocol):
    """What a source registers its names through (the registry implements it): nothing else
    of the registry's state is a source's to change."""

    def add(self, entry: Entry, custom: bool = False) -> None:
        """Register a name; one defined by two files becomes unusable, naming both."""
        ...

    def put(self, entry: Entry) -> None:
        """Register a name the source has already checked (a later definition in an
        installed package's files wins, as the harness itself lets it)."""
        ...

    def mark_unusable(self, name: str, reason: str, *paths: Path) -> None:
        """Make a name unusable, keeping the first reason."""
        ...

    def mark_broken(self, path: Path, error: str) -> None:
        """A task file that could not be read: its tasks are unknown."""
        ...

    def warn(self, warning: str) -> None:
        """A problem in files the user cannot edit (said once in the run's header)."""
        ...

    def imported(self, loaded: LoadedModule) -> None:
        """A task module's import record (what the module index keeps)."""
        ...

    def registered(self, name: str) -> bool:
        """The name is registered."""
        ...

    def known(self, name: str) -> bool:
        """The name is registered, or known to be unusable."""
        ...

    def owner(self, name: str) -> Entry | None:
        """The entry that registered a name (None: not registered)."""
        ...


class TaskSource(Protocol):
    """What the registry needs of a kind of task files.

    Each method that takes an `Entry` answers for a name the source registered. What only some
    sources can do is a protocol of its own below (`ImportsModules`, `SavesData`), checked with
    `isinstance` by the registry, which answers for the others.
    """

    kind: str
    """A short name for messages and listings (`lighteval`, `lm-eval`)."""

    @property
    def partial(self) -> bool:
        """Only some of its files were read: a name not found may be in another."""
        ...

    def register(self, registrar: Registrar) -> None:
        """Discover the source's files and register the names they define, recording broken
        files and unusable names through `registrar`."""
        ...

    def ensure(self, registrar: Registrar, names: Iterable[str]) -> None:
        """Register any of `names` the source can define that is not registered yet (a task
        indexed lazily, the members of a group)."""
        ...

    def members(self, registrar: Registrar, request: TaskRequest) -> list[TaskRequest] | None:
        """The requests a group-like name stands for, in the source's order; None when the
        name is not a group of this source."""
        ...

    def prepare_all(self, registrar: Registrar) -> None:
        """Register whatever `all` checks that `register` leaves for later."""
        ...

    def partial_note(self) -> str | None:
        """What a partial read covered, for the run's header; None when it read everything."""
        ...

    def default_shots(self, entry: Entry) -> int:
        """The shot count of `name` alone (no `|N`)."""
        ...

    def version(self, entry: Entry) -> object:
        """The task's version, without building anything."""
        ...

    def location(self, entry: Entry) -> tuple[Path, int]:
        """The file and line that define the task."""
        ...

    def dependencies(self, entry: Entry) -> dict[str, str]:
        """Files and folders (absolute paths) whose change can change the task, each with what
        it is to the task (`""`, or ` (its data)`): what `--evaltasks-changed` follows, beside
        the project files its code was seen to read."""
        ...

    def lint_ignores(self, entry: Entry) -> tuple[list[str], str]:
        """The lint rules the task's own files silence for it, and where they are set."""
        ...

    def has_local_data(self, entry: Entry, data_dir: Path | None) -> bool:
        """Whether the task's rows are in the local data root."""
        ...

    def suggestions(self) -> list[str]:
        """Every name the source could define, for did-you-mean (may index everything)."""
        ...

    def render(
        self,
        entry: Entry,
        request: TaskRequest,
        run: RunSettings,
        template: ChatTemplate | None,
        data_dir: Path | None,
    ) -> RenderedTask:
        """The task rendered for one resolved request: every evaluated doc, in order."""
        ...


@runtime_checkable
class ImportsModules(Protocol):
    """A source whose tasks live in Python modules it imports."""

    def module_of(self, entry: Entry) -> ModuleType | None:
        """The imported module that registered a task."""
        ...

    def imported_inputs(
        self, entry: Entry, within: Path, follow_opened: bool = True
    ) -> frozenset[str]:
        """The project files (under `within`) the task's module read as it was imported: its
        own file, the project modules it imports, the files it opened (with `follow_opened`,
        also those its code opened since: `inputs.inputs_of`)."""
        ...


@runtime_checkable
class HasTaskConfigs(Protocol):
    """A source whose tasks are our `TaskConfig`s (lighteval-style), usable as a library
    (`Registry.load`, `Registry.configs`)."""

    def task_config(self, entry: Entry) -> TaskConfig:
        """The task's config as ours."""
        ...


@runtime_checkable
class SavesData(Protocol):
    """A source that can save slices of its tasks' real rows (`--evaltasks-save-data`)."""

    def slice_plan(self, entry: Entry, request: TaskRequest, data_dir: Path) -> SlicePlan:
        """Where the task's slice goes and what it must hold; nothing is loaded yet."""
        ...


@dataclass(frozen=True)
class SourceSetup:
    """What every source of a registry is made with."""

    custom_tasks: Sequence[Path]
    """Extra task files (lighteval's `--custom-tasks`): the first kind's."""
    data_dir: Path | None
    only: set[Path] | None
    """The module files to import (None: all); a fresh process imports one module only."""
    wanted: Sequence[str] | None
    """The names (or prefixes) the run needs, for a source that can index only those."""
    cache: Any
    """pytest's cache (`get`/`set`), for a source that keeps an index; None without one."""
    root: Path | None = None
    """The project's root, for a source whose builds show absolute paths (records write them
    relative to it); None: paths as the build shows them."""


@dataclass(frozen=True)
class SourceKind:
    """A kind of task folder: what claims a folder for it, and how its source is made."""

    name: str
    claims: Callable[[Path], bool]
    make: Callable[[list[Path], SourceSetup], TaskSource]


SOURCE_KINDS = {
    "lighteval": "pytest_evaltasks.sources.lighteval.source",
    "inspect": "pytest_evaltasks.sources.inspect.source",
    "lm-eval": "pytest_evaltasks.sources.lm_eval.source",
}
"""Every kind of task source, by name, with the module that defines its `SOURCE_KIND`, in the
order they are asked to claim a folder. A kind's module is imported only when a folder is
asked about it: lighteval-style modules are asked first, so a run over task modules never
imports another kind's code; Inspect's claim is narrow (its installed folder, or `@task` files
importing `inspect_ai`), so it is asked before lm-eval's (inspect_evals' folders hold YAML
metadata). A folder no kind claims is the first kind's."""

DEFAULT_KIND = next(iter(SOURCE_KINDS))
"""The kind custom task files (`--evaltasks-custom`) and unclaimed folders are."""


def kind_named(name: str) -> SourceKind:
    """A source kind by name, its module imported."""
    kind: SourceKind = importlib.import_module(SOURCE_KINDS[name]).SOURCE_KIND
    return kind


def source_kind_of(directory: Path) -> str:
    """The kind of source a task folder is: the first of `SOURCE_KINDS` that claims it, else
    the first kind."""
    claimed = (name for name in SOURCE_KINDS if kind_named(name).claims(directory))
    return next(claimed, DEFAULT_KIND)


def holds_task_modules(directory: Path) -> bool:
    """The folder has a lighteval-style task module: a top-level `*.py` that names
    `TASKS_TABLE`. Such a folder is never another kind's, whatever else it holds."""
    return top_module_holds(directory, b"TASKS_TABLE")


def top_module_holds(directory: Path, *words: bytes) -> bool:
    """Some top-level `*.py` of the folder holds every one of `words`: how a kind tells its
    folders without importing anything."""
    try:
        top = list(directory.glob("*.py"))
    except OSError:
        return False
    for path in top:
        try:
            text = path.read_bytes()
        except OSError:
            continue
        if all(word in text for word in words):
            return True
    return False


def make_sources(task_dirs: Sequence[Path], setup: SourceSetup) -> list[TaskSource]:
    """The sources of a registry's folders, in the order of `SOURCE_KINDS`: each folder goes
    to the kind that claims it, custom task files to the first kind; folders of one kind make
    one source."""
    by_kind: dict[str, list[Path]] = {}
    for directory in task_dirs:
        by_kind.setdefault(source_kind_of(directory), []).append(directory)
    if setup.custom_tasks:
        by_kind.setdefault(DEFAULT_KIND, [])
    return [kind_named(name).make(by_kind[name], setup) for name in SOURCE_KINDS if name in by_kind]
