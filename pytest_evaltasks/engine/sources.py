"""Task sources: where the registry's names come from, and how each kind is read.

The registry asks each source, in turn, to discover its files and register the names they
define; from then on it asks the source that registered a name for everything about it. A
source is one implementation of `TaskSource`:

- `LightevalModules` (here): `*.py` task modules with a `TASKS_TABLE` of lighteval-style
  configs (ours, or lighteval's own through `lighteval_adapter`), rendered by our `Task`;
- `lm_eval_source.LmEvalYaml`: lm-eval's YAML task configs (its installed task folder, and
  custom folders as its `--include_path`), rendered by lm-eval's own task objects into
  `rendered.RenderedUnit`s.

Adding a source: a module implementing `TaskSource` (rendering into `RenderedTask`), an entry in
`SOURCE_KINDS` whose `claims` says which task folders are its, and (if it has one) a shortcut
for its installed folder in `plugin/options.py`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..snapshot.settings import RunSettings
    from .chat_template import ChatTemplate
    from .registry import Entry, Registry
    from .rendered import RenderedTask
    from .task_modules import LoadedModule
    from .task_string import TaskRequest


class TaskSource(Protocol):
    """What the registry needs of a kind of task files."""

    kind: str
    """A short name for messages and listings (`lighteval`, `lm-eval`)."""
    renders_units: bool
    """Its tasks render into `RenderedTask` (else into our `Task`: lighteval-style configs)."""

    def register(self, registry: Registry) -> None:
        """Discover the source's files and register the names they define (`registry.add`),
        recording broken files and unusable names there."""
        ...

    def ensure(self, registry: Registry, names: Iterable[str]) -> None:
        """Register any of `names` the source can define that is not registered yet (a task
        indexed lazily, the members of a group)."""
        ...

    def members(self, registry: Registry, request: TaskRequest) -> list[TaskRequest] | None:
        """The requests a group-like name stands for, in the source's order; None when the
        name is not a group of this source."""
        ...

    def prepare_all(self, registry: Registry) -> None:
        """Register whatever `all` checks that `register` leaves for later."""
        ...

    def default_shots(self, entry: Entry) -> int:
        """The shot count of `name` alone (no `|N`)."""
        ...

    def config(self, entry: Entry) -> Any:
        """The task's config object, as the source reads it."""
        ...

    def version(self, entry: Entry) -> Any:
        """The task's version, without building anything."""
        ...

    def location(self, entry: Entry) -> tuple[Path, int]:
        """The file and line that define the task."""
        ...

    def dependencies(self, entry: Entry) -> set[str]:
        """Files (absolute paths) whose change can change the task: its configs, its code,
        its data. A changed-only run selects it when any of them changed."""
        ...

    def lint_ignores(self, entry: Entry) -> list[str]:
        """The lint rules the task's own files silence for it."""
        ...

    def has_local_data(self, entry: Entry, data_dir: Path | None) -> bool:
        """Whether the task's rows are in the local data root."""
        ...

    def suggestions(self, registry: Registry) -> list[str]:
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
        """The task rendered into units (sources with `renders_units` only)."""
        ...


def source_kind_of(directory: Path) -> str:
    """The kind of source a task folder is: a folder of lighteval-style modules when it holds
    one (asked first, so a run over task modules never imports another kind's code), else the
    first of `SOURCE_KINDS` that claims it, else lighteval-style modules."""
    if holds_task_modules(directory):
        return LightevalModules.kind
    for kind, claims in SOURCE_KINDS.items():
        if claims(directory):
            return kind
    return LightevalModules.kind


def holds_task_modules(directory: Path) -> bool:
    """The folder has a lighteval-style task module: a top-level `*.py` that names
    `TASKS_TABLE`. Such a folder is never another kind's, whatever else it holds."""
    try:
        top = list(directory.glob("*.py"))
    except OSError:
        return False
    for path in top:
        try:
            if b"TASKS_TABLE" in path.read_bytes():
                return True
        except OSError:
            continue
    return False


def _claims_lm_eval(directory: Path) -> bool:
    from .lm_eval_source import is_lm_eval_folder

    return is_lm_eval_folder(directory)


SOURCE_KINDS = {"lm-eval": _claims_lm_eval}
"""Source kinds other than lighteval-style modules, by kind, with what claims a folder."""


def make_sources(
    task_dirs: Sequence[Path],
    custom_tasks: Sequence[Path],
    data_dir: Path | None,
    only: set[Path] | None,
    wanted: Sequence[str] | None,
    cache: Any,
) -> list[TaskSource]:
    """The sources of a registry's folders: each folder goes to the kind that claims it,
    custom task files to lighteval-style modules; folders of one kind make one source."""
    by_kind: dict[str, list[Path]] = {}
    for directory in task_dirs:
        by_kind.setdefault(source_kind_of(directory), []).append(directory)
    sources: list[TaskSource] = []
    modules = by_kind.pop(LightevalModules.kind, [])
    if modules or custom_tasks:
        sources.append(LightevalModules(modules, list(custom_tasks), only))
    if "lm-eval" in by_kind:
        from .lm_eval_source import LmEvalYaml

        sources.append(LmEvalYaml(by_kind.pop("lm-eval"), data_dir, wanted, cache))
    return sources


class LightevalModules:
    """`*.py` task modules with a `TASKS_TABLE`: our configs or lighteval's (converted by
    `lighteval_adapter` when a task is first used), imported quietly (`task_modules`)."""

    kind = "lighteval"
    renders_units = False

    def __init__(
        self, folders: list[Path], custom_tasks: list[Path], only: set[Path] | None
    ) -> None:
        self.folders = folders
        self.custom_tasks = custom_tasks
        self.only = only
        self.modules: list[LoadedModule] = []
        """The registry's import records (the same list)."""
        self._seen_files: set[Path] = set()
        self._sources: dict[str, Path | None] = {}
        """A config's `source_file` as a path, None when it is no file (one stat per file,
        not per task: a module of thousands of tasks has one source file)."""

    def register(self, registry: Registry) -> None:
        from ..errors import RegistryError
        from .task_modules import discover

        self.modules = registry.modules
        for directory in self.folders:
            for path in discover(directory):
                if self.only is None or path.resolve() in self.only:
                    self._register_module(registry, path, custom=False)
        for custom in self.custom_tasks:
            path = Path(custom)
            if not path.is_file():
                raise RegistryError(f"custom task file {path} does not exist")
            if self.only is None or path.resolve() in self.only:
                self._register_module(registry, path, custom=True)

    def _register_module(self, registry: Registry, path: Path, custom: bool) -> None:
        """Import one module and register its TASKS_TABLE, or record it as broken."""
        from ..errors import RegistryError
        from .config import TaskConfig
        from .lighteval_adapter import is_task_config_like
        from .registry import BrokenModule, Entry
        from .task_modules import installed, load_module, module_name_for

        if path.resolve() in self._seen_files:
            return
        self._seen_files.add(path.resolve())
        loaded = load_module(path, module_name_for(path))
        registry.modules.append(loaded)
        if loaded.module is None:
            if custom:
                raise RegistryError(f"custom task file {path} failed to import:\n{loaded.error}")
            registry.broken.append(BrokenModule(path, loaded.error or ""))
            return
        table: Any = getattr(loaded.module, "TASKS_TABLE", [])
        if isinstance(table, (str, bytes)) or not isinstance(table, Iterable):
            registry.broken.append(
                BrokenModule(path, "TASKS_TABLE must be a list of task configs\n")
            )
            return
        names: dict[str, int] = {}
        for position, item in enumerate(table):
            if not isinstance(item, TaskConfig) and not is_task_config_like(item):
                registry.broken.append(
                    BrokenModule(
                        path,
                        f"TASKS_TABLE[{position}] is a {type(item).__module__}."
                        f"{type(item).__name__}, not a task config (a pytest_evaltasks "
                        f"TaskConfig or a lighteval LightevalTaskConfig)\n",
                    )
                )
                continue
            name = str(item.name)
            if name in names and installed(path):
                registry.shadowed.append(
                    f"task {name!r} is defined twice in {path} (TASKS_TABLE[{names[name]}] and "
                    f"[{position}]); the last definition is used, as lighteval uses it"
                )
                registry.entries[name] = Entry(name, path, item, source=self)
                names[name] = position
                continue
            if name in names:
                registry.mark_unusable(
                    name,
                    f"is defined twice in {path} (TASKS_TABLE[{names[name]}] "
                    f"and [{position}]); rename one",
                    path,
                )
                continue
            names[name] = position
            registry.add(Entry(name, path, item, source=self), custom)

    def ensure(self, registry: Registry, names: Iterable[str]) -> None:
        return None

    def partial_note(self, registry: Registry) -> str | None:
        """What a run over some tasks imported, for the header."""
        if self.only is None:
            return None
        count = len(self.modules)
        return (
            f"imported {count} task module{'s' if count != 1 else ''} that can define the tasks "
            f"asked for (the module index in pytest's cache, verified against the files; the "
            f"others are unchanged since they were indexed)"
        )

    def members(self, registry: Registry, request: TaskRequest) -> list[TaskRequest] | None:
        return None

    def prepare_all(self, registry: Registry) -> None:
        return None

    def default_shots(self, entry: Entry) -> int:
        return 0

    def config(self, entry: Entry) -> Any:
        from ..errors import TaskConfigError
        from .config import TaskConfig
        from .lighteval_adapter import convert_config

        if entry.config is None:
            raw = entry.raw
            if isinstance(raw, TaskConfig):
                entry.config = raw
            else:
                try:
                    entry.config = convert_config(raw, entry.origin)
                except TaskConfigError as exc:
                    raise TaskConfigError(f"{exc} (in {entry.origin})") from None
        return entry.config

    def version(self, entry: Entry) -> Any:
        return getattr(entry.raw, "version", 0)

    def location(self, entry: Entry) -> tuple[Path, int]:
        from .config import TaskConfig
        from .lighteval_adapter import line_naming

        if isinstance(entry.raw, TaskConfig):
            named = entry.raw.source_file
            if named not in self._sources:
                path = Path(named)
                self._sources[named] = path if path.is_file() else None
            return self._sources[named] or entry.origin, entry.raw.source_line
        return entry.origin, line_naming(entry.origin, entry.name)

    def dependencies(self, entry: Entry) -> set[str]:
        """The module's own file; what it imports and reads is worked out per module by the
        changed-only selection (`plugin.changes`), from the import records."""
        return {os.path.abspath(entry.origin)}

    def lint_ignores(self, entry: Entry) -> list[str]:
        from ..lint.rules import ignored_rules

        return ignored_rules(self.module_of(entry), entry.name)

    def has_local_data(self, entry: Entry, data_dir: Path | None) -> bool:
        from .rows import RowSource

        config = self.config(entry)
        return RowSource.for_config(config, data_dir).local_dir is not None

    def suggestions(self, registry: Registry) -> list[str]:
        return [name for name, entry in registry.entries.items() if entry.source is self]

    def render(
        self,
        entry: Entry,
        request: TaskRequest,
        run: RunSettings,
        template: ChatTemplate | None,
        data_dir: Path | None,
    ) -> RenderedTask:
        raise NotImplementedError("lighteval-style tasks render through engine.task.Task")

    def loaded_of(self, entry: Entry) -> LoadedModule | None:
        """The import record of the module that registered a task."""
        return next((m for m in self.modules if m.path == entry.origin), None)

    def module_of(self, entry: Entry) -> Any:
        """The imported module that registered a task."""
        loaded = self.loaded_of(entry)
        return loaded.module if loaded is not None else None
