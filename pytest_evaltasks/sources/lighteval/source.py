"""lighteval-style task modules as a task source: `*.py` files with a `TASKS_TABLE`.

Each module is imported quietly (`task_modules`), and each config of its table registered under
its name: our `TaskConfig`s, or lighteval's own `LightevalTaskConfig`s (converted by
`sources/lighteval/adapter` when a task is first used). A task renders through our own `Task` into
`rendered.DocsRendered`: its docs, with their few-shot examples, in lighteval's order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ...engine.sources import Entry, SourceKind, holds_task_modules
from ...errors import RegistryError, TaskConfigError

if TYPE_CHECKING:
    from ...engine.chat_template import ChatTemplate
    from ...engine.config import TaskConfig
    from ...engine.data_slices import SliceSource
    from ...engine.rendered import DocsRendered
    from ...engine.run_settings import RunSettings
    from ...engine.sources import Registrar, SourceSetup
    from ...engine.task_modules import LoadedModule
    from ...engine.task_string import TaskRequest

LIGHTEVAL = "lighteval"
"""The kind's name, for messages and listings."""

IDS = "ids run from 0; labels are split/id when a task has several evaluation splits"


class LightevalModules:
    """The task modules of a registry's lighteval-style folders and custom task files."""

    kind = LIGHTEVAL

    def __init__(self, folders: list[Path], setup: SourceSetup) -> None:
        self.folders = folders
        self.custom_tasks = list(setup.custom_tasks)
        self.only = setup.only
        self.data_dir = setup.data_dir
        self.modules: list[LoadedModule] = []
        """Every module imported, in order (broken ones included)."""
        self._seen_files: set[Path] = set()
        self._sources: dict[str, Path | None] = {}
        """A config's `source_file` as a path, None when it is no file (one stat per file,
        not per task: a module of thousands of tasks has one source file)."""

    @property
    def partial(self) -> bool:
        return self.only is not None

    # registration -------------------------------------------------------------------------

    def register(self, registrar: Registrar) -> None:
        from ...engine.task_modules import discover

        for directory in self.folders:
            for path in discover(directory):
                if self.only is None or path.resolve() in self.only:
                    self._register_module(registrar, path, custom=False)
        for custom in self.custom_tasks:
            path = Path(custom)
            if not path.is_file():
                raise RegistryError(f"custom task file {path} does not exist")
            if self.only is None or path.resolve() in self.only:
                self._register_module(registrar, path, custom=True)

    def _register_module(self, registrar: Registrar, path: Path, custom: bool) -> None:
        """Import one module and register its TASKS_TABLE, or record it as broken."""
        from ...engine.task_modules import load_module, module_name_for

        if path.resolve() in self._seen_files:
            return
        self._seen_files.add(path.resolve())
        loaded = load_module(path, module_name_for(path))
        self.modules.append(loaded)
        registrar.imported(loaded)
        if loaded.module is None:
            if custom:
                raise RegistryError(f"custom task file {path} failed to import:\n{loaded.error}")
            registrar.mark_broken(path, loaded.error or "")
            return
        if not hasattr(loaded.module, TABLE):
            near = _near_table(loaded.module)
            if near is not None:
                registrar.mark_broken(
                    path,
                    f"it defines {near}, not {TABLE}: rename it to {TABLE} (the only name a "
                    f"task module's table is read from), or start the file's name with '_' if "
                    f"it holds no tasks\n",
                )
            return
        table: Any = getattr(loaded.module, TABLE)
        if isinstance(table, (str, bytes)) or not isinstance(table, Iterable):
            registrar.mark_broken(path, "TASKS_TABLE must be a list of task configs\n")
            return
        self._register_table(registrar, path, table, custom)

    def _register_table(
        self, registrar: Registrar, path: Path, table: Iterable[Any], custom: bool
    ) -> None:
        """Register each config of a module's table; a name defined twice in one module is
        unusable, unless the module is installed (the last definition wins, as in
        lighteval)."""
        from ...engine.config import TaskConfig
        from ...engine.task_modules import installed
        from .adapter import is_task_config_like

        names: dict[str, int] = {}
        for position, item in enumerate(table):
            if not isinstance(item, TaskConfig) and not is_task_config_like(item):
                registrar.mark_broken(
                    path,
                    f"TASKS_TABLE[{position}] is a {type(item).__module__}."
                    f"{type(item).__name__}, not a task config (a pytest_evaltasks "
                    f"TaskConfig or a lighteval LightevalTaskConfig)\n",
                )
                continue
            name = str(item.name)
            if name in names and installed(path):
                registrar.warn(
                    f"task {name!r} is defined twice in {path} (TASKS_TABLE[{names[name]}] and "
                    f"[{position}]); the last definition is used, as lighteval uses it"
                )
                registrar.put(Entry(name, path, item, source=self))
                names[name] = position
                continue
            if name in names:
                registrar.mark_unusable(
                    name,
                    f"is defined twice in {path} (TASKS_TABLE[{names[name]}] "
                    f"and [{position}]); rename one",
                    path,
                )
                continue
            names[name] = position
            registrar.add(Entry(name, path, item, source=self), custom)

    def ensure(self, registrar: Registrar, names: Iterable[str]) -> None:
        return None

    def members(self, registrar: Registrar, request: TaskRequest) -> list[TaskRequest] | None:
        return None

    def prepare_all(self, registrar: Registrar) -> None:
        return None

    def partial_note(self) -> str | None:
        """What a run over some tasks imported, for the header."""
        if self.only is None:
            return None
        count = len(self.modules)
        return (
            f"imported {count} task module{'s' if count != 1 else ''} that can define the tasks "
            f"asked for; the others were skipped, unchanged since an earlier run listed their "
            f"tasks (--cache-clear imports them all)"
        )

    def suggestions(self) -> list[str]:
        return []  # every name it defines is registered already

    # one task -----------------------------------------------------------------------------

    def task_config(self, entry: Entry) -> TaskConfig:
        """The task's config as ours (lighteval's converted once, then kept)."""
        from ...engine.config import TaskConfig
        from .adapter import convert_config

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

    def default_shots(self, entry: Entry) -> int:
        return 0

    def version(self, entry: Entry) -> object:
        return getattr(entry.raw, "version", 0)

    def location(self, entry: Entry) -> tuple[Path, int]:
        from ...engine.config import TaskConfig
        from .adapter import line_naming

        if isinstance(entry.raw, TaskConfig):
            named = entry.raw.source_file
            if named not in self._sources:
                path = Path(named)
                self._sources[named] = path if path.is_file() else None
            return self._sources[named] or entry.origin, entry.raw.source_line
        return entry.origin, line_naming(entry.origin, entry.name)

    def dependencies(self, entry: Entry) -> dict[str, str]:
        """The module's own file, and the task's data: its local data folder, its
        `hf_data_files` and a local `hf_repo`. What the module imports and reads is worked out
        per module by the changed-only selection (`plugin.changes`), from the import records."""
        from ...engine.rows import local_dataset_dir

        found = {os.path.abspath(entry.origin): ""}
        raw = entry.raw
        repo = getattr(raw, "hf_repo", None)
        subset = getattr(raw, "hf_subset", None)
        data: list[str] = []
        data_dir = self.data_dir
        if data_dir is not None and isinstance(repo, str):
            folder = local_dataset_dir(data_dir, repo, subset if isinstance(subset, str) else None)
            data.append(str(folder.resolve()))
        if isinstance(repo, str) and (os.path.isabs(repo) or os.path.isdir(repo)):
            data.append(os.path.abspath(repo))
        from ...engine.rows import data_file_strings

        files = data_file_strings(getattr(raw, "hf_data_files", None))
        data += [os.path.abspath(path) for path in files]
        for path in data:
            found.setdefault(path, " (its data)")
        return found

    def lint_ignores(self, entry: Entry) -> tuple[list[str], str]:
        from ...lint.rules import IGNORE_VARIABLE, ignored_rules

        return ignored_rules(self.module_of(entry), entry.name), IGNORE_VARIABLE

    def has_local_data(self, entry: Entry, data_dir: Path | None) -> bool:
        from ...engine.rows import RowSource

        return RowSource.for_config(self.task_config(entry), data_dir).local_dir is not None

    def render(
        self,
        entry: Entry,
        request: TaskRequest,
        run: RunSettings,
        template: ChatTemplate | None,
        data_dir: Path | None,
    ) -> DocsRendered:
        """The task's docs, built by our `Task` (at most `run.max_samples` of them)."""
        from ...engine.rendered import DocsRendered
        from ...engine.rows import dataset_caches
        from ...engine.task import Task

        task = Task(self.task_config(entry), data_dir=data_dir, request=request)
        rendered = DocsRendered.of(task, task.build(run.max_samples), IDS)
        rendered.inputs = task.source.declared_inputs() | self.declared_inputs(entry)
        if rendered.inputs or task.source.local_dir is None:
            rendered.caches = dataset_caches()
        return rendered

    # what only module-backed sources can say ---------------------------------------------------

    def loaded_of(self, entry: Entry) -> LoadedModule | None:
        """The import record of the module that registered a task."""
        return next((m for m in self.modules if m.path == entry.origin), None)

    def module_of(self, entry: Entry) -> ModuleType | None:
        """The imported module that registered a task."""
        loaded = self.loaded_of(entry)
        return loaded.module if loaded is not None else None

    def imported_inputs(
        self, entry: Entry, within: Path, follow_opened: bool = True
    ) -> frozenset[str]:
        """The project files a task module's import read (its own file, its project imports,
        files it opened; with `follow_opened`, every file their code opened since, see
        `inputs.inputs_of`): the same for all of a module's tasks, so worked out once for as
        long as no code is seen opening a new file."""
        from ...engine.inputs import attributed, inputs_of

        loaded = self.loaded_of(entry)
        if loaded is None:
            return frozenset()
        key = (str(within), follow_opened, attributed() if follow_opened else 0)
        known = loaded.read.get(key)
        if known is None:
            modules = {
                loaded.name,
                *(target for targets in loaded.edges.values() for target in targets),
            }
            files = {*loaded.opened, str(loaded.path.resolve())}
            known = frozenset(inputs_of(modules, files, within, follow_opened))
            loaded.read = {key: known}
        return known

    def declared_inputs(self, entry: Entry) -> set[str]:
        """The files the task's module declares it reads where no file open can be seen (a
        C reader such as pyarrow's, another process): `evaltasks_inputs = ["data/*.parquet"]`,
        paths or patterns relative to the module's folder."""
        from ...engine.inputs import DECLARED_INPUTS
        from ...engine.rows import declared_inputs

        declared = getattr(self.module_of(entry), DECLARED_INPUTS, None)
        if declared is None:
            return set()
        if isinstance(declared, str):
            declared = [declared]
        if not isinstance(declared, (list, tuple)) or not all(isinstance(p, str) for p in declared):
            raise TaskConfigError(
                f"task {entry.name!r}: {DECLARED_INPUTS} in {entry.origin} must be a list of "
                f"paths or glob patterns relative to the module's folder, not {declared!r}"
            )
        return declared_inputs(str(Path(entry.origin).parent), list(declared))

    def slice_plan(self, entry: Entry, request: TaskRequest, data_dir: Path) -> SliceSource:
        """The slice folder of the task's data source, holding nothing yet."""
        from ...engine.data_slices import SliceSource
        from ...engine.task import Task

        task = Task(self.task_config(entry), data_dir=self.data_dir, request=request)
        return SliceSource.for_task(task, data_dir)


TABLE = "TASKS_TABLE"
"""The module-level name a task module's configs are read from."""


def _near_table(module: ModuleType) -> str | None:
    """A module-level name that looks like a misspelt `TASKS_TABLE` (`TASK_TABLE`,
    `tasks_table`, `TASKS_TABEL`) holding a list or tuple, or None."""
    import difflib

    names = [
        name
        for name, value in vars(module).items()
        if isinstance(value, (list, tuple)) and not name.startswith("__")
    ]
    upper = {name.upper(): name for name in names}
    found = difflib.get_close_matches(TABLE, list(upper), n=1, cutoff=0.8)
    return upper[found[0]] if found else None


SOURCE_KIND = SourceKind(LIGHTEVAL, holds_task_modules, LightevalModules)
"""lighteval-style task folders as a kind of task source (`sources.SOURCE_KINDS`): a folder
holding a task module is theirs."""
