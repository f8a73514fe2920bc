"""Register the tasks of every task source, and turn task strings into tasks to build.

Each task folder belongs to a source (`sources`): lighteval-style modules, whose `TASKS_TABLE`
configs (ours, or lighteval's `LightevalTaskConfig`, converted by `sources/lighteval/adapter` when a
task is first used) are built by our `Task`; or lm-eval's YAML configs (`sources/lm_eval/source`),
rendered by lm-eval's own task objects. The registry holds every name with the source that
registered it and asks that source for everything else. Problems stay with what caused them: a
module that fails to import is recorded as broken, a name defined twice (or that no task string
can express) is unusable, and everything else stays usable.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RegistryError, TaskStringError, did_you_mean
from .config import TaskConfig
from .sources import (
    Entry,
    HasTaskConfigs,
    ImportsModules,
    SavesData,
    SourceSetup,
    TaskSource,
    make_sources,
)
from .task_modules import LoadedModule, installed
from .task_string import ACCEPTED_FORMS, ALL_TASKS, TaskRequest, parse_task_string, unwritable

if TYPE_CHECKING:  # imported when a task is made: listing tasks never needs rows or sampling
    from types import ModuleType

    from .chat_template import ChatTemplate
    from .data_slices import SlicePlan
    from .rendered import RenderedTask
    from .run_settings import RunSettings
    from .task import Task

DEFAULT = object()
"""`data_dir` not given: `<first task dir>/data`, as the plugin uses."""


@dataclass(frozen=True)
class BrokenModule:
    """A task module that could not be imported or whose TASKS_TABLE is unusable."""

    path: Path
    error: str

    def describe(self) -> str:
        """File and the last lines of the traceback, for error messages."""
        return f"{self.path}:\n{self.error.rstrip()}"

    @property
    def exception(self) -> str:
        """The exception, with the detail lines of its message (hints and captured output
        aside), on one line."""
        lines = [line for line in self.error.strip().split("\n") if line.strip()]
        start = next(
            (i for i in range(len(lines) - 1, -1, -1) if not lines[i].startswith(("hint:", " "))),
            None,
        )
        if start is None:
            return ""
        detail = []
        for line in lines[start + 1 :]:
            if not line.startswith(" "):
                break
            detail.append(line.strip())
        return "; ".join([lines[start], *detail])

    def summary(self) -> str:
        """File and exception, on one line."""
        return f"{self.path}: {self.exception}"


@dataclass
class Unusable:
    """A name no request may use, and why (defined twice, or not expressible)."""

    name: str
    reason: str
    paths: list[Path] = field(default_factory=list)


class Registry:
    """All registered task configs, with the file each came from."""

    def __init__(
        self,
        task_dirs: Sequence[str | Path] = ("tasks",),
        custom_tasks: Sequence[str | Path] = (),
        data_dir: str | Path | object | None = DEFAULT,
        only: Iterable[str | Path] | None = None,
        wanted: Sequence[str] | None = None,
        cache: Any = None,
        root: Path | None = None,
    ) -> None:
        """Read every task source now, so every problem is known before any work.

        `only` names the module files to import (the others are never imported): a build in a
        fresh process needs only the module of the tasks it builds. `wanted` names the tasks
        (or name prefixes) a run needs, so a source that can index only what defines them does
        (lm-eval's YAML folders); `cache` (pytest's, `get`/`set`) keeps such an index, verified
        against the files on every read. `root` is the project's root, as records name paths.
        """
        self.task_dirs = [Path(d) for d in task_dirs]
        if data_dir is DEFAULT:
            data_dir = self.task_dirs[0] / "data" if self.task_dirs else None
        self.data_dir = Path(data_dir) if isinstance(data_dir, (str, Path)) else None
        self.entries: dict[str, Entry] = {}
        self.broken: list[BrokenModule] = []
        self.unusable: dict[str, Unusable] = {}
        self.modules: list[LoadedModule] = []
        self.shadowed: list[str] = []
        """Warnings for names defined twice in installed packages' task files, where (as in
        lighteval) the last definition wins: the user cannot edit those files."""
        selected = None if only is None else {Path(path).resolve() for path in only}
        self.partial = selected is not None
        """Only some files were read: a name not found may be in another."""
        for directory in self.task_dirs:
            if not directory.is_dir():
                raise RegistryError(
                    f"task directory {directory} does not exist; pass an existing directory "
                    f"(--evaltasks-dir) holding task modules with a TASKS_TABLE, or lm-eval "
                    f"YAML task configs"
                )
        custom = [Path(c) for c in custom_tasks]
        setup = SourceSetup(custom, self.data_dir, selected, wanted, cache, root)
        self.sources: list[TaskSource] = make_sources(self.task_dirs, setup)
        for source in self.sources:
            source.register(self)
            self.partial = self.partial or source.partial

    # registration: what sources call (`sources.Registrar`) ------------------------------------

    def add(self, entry: Entry, custom: bool = False) -> None:
        """Register one name; a name defined in two files is unusable, naming both."""
        self._register(entry, custom)

    def put(self, entry: Entry) -> None:
        """Register a name its source has checked (a later definition wins)."""
        self.entries[entry.name] = entry

    def mark_unusable(self, name: str, reason: str, *paths: Path) -> None:
        """Make `name` unusable, keeping the first reason."""
        self._unusable(name, reason, *paths)

    def mark_broken(self, path: Path, error: str) -> None:
        """A task file that could not be read."""
        self.broken.append(BrokenModule(path, error))

    def warn(self, warning: str) -> None:
        """A problem in files the user cannot edit, said once."""
        if warning not in self.shadowed:
            self.shadowed.append(warning)

    def imported(self, loaded: LoadedModule) -> None:
        """A task module's import record."""
        self.modules.append(loaded)

    def registered(self, name: str) -> bool:
        """The name is registered."""
        return name in self.entries

    def known(self, name: str) -> bool:
        """The name is registered, or known to be unusable."""
        return name in self.entries or name in self.unusable

    def owner(self, name: str) -> Entry | None:
        """The entry that registered a name (None: not registered)."""
        return self.entries.get(name)

    def _register(self, entry: Entry, custom: bool) -> None:
        """Add one name; a name defined in two files is unusable, naming both."""
        name = entry.name
        if name in self.unusable:
            self.unusable[name].paths.append(entry.origin)
            return
        problem = unwritable(name)
        if problem is not None:
            self._unusable(
                name, f"cannot be requested: its name {problem}; rename it", entry.origin
            )
            return
        previous = self.entries.get(name)
        if previous is not None and installed(previous.origin) and installed(entry.origin):
            self.shadowed.append(
                f"task {name!r} is defined in {previous.origin} and in {entry.origin}; the "
                f"last one is used, as lighteval uses it"
            )
            self.entries[name] = entry
            return
        if previous is not None:
            kind = "custom task" if custom else "task"
            del self.entries[name]
            self._unusable(
                name,
                f"is defined by more than one {kind} file ({previous.origin} and "
                f"{entry.origin}); rename one of them (task names must be unique)",
                previous.origin,
                entry.origin,
            )
            return
        self.entries[name] = entry

    def _unusable(self, name: str, reason: str, *paths: Path) -> None:
        """Make `name` unusable, keeping the first reason."""
        self.entries.pop(name, None)
        known = self.unusable.setdefault(name, Unusable(name, reason))
        known.paths.extend(paths)

    # lookup ---------------------------------------------------------------------------------

    @property
    def configs(self) -> Mapping[str, TaskConfig]:
        """Registered configs by name, converted from lighteval's on first access."""
        return _Configs(self)

    @property
    def origins(self) -> dict[str, Path]:
        """The module file of each registered name."""
        return {name: entry.origin for name, entry in self.entries.items()}

    def source_of(self, name: str) -> TaskSource:
        """The source that registered a task."""
        source = self.entries[name].source
        assert source is not None, f"task {name!r} has no source"
        return source

    def config(self, name: str) -> TaskConfig:
        """One lighteval-style task's config (lighteval's converted once, then kept)."""
        source = self.source_of(name)
        if not isinstance(source, HasTaskConfigs):
            raise RegistryError(
                f"task {name!r} is an {source.kind} task: it has no lighteval-style config "
                f"(render it with Registry.render)"
            )
        return source.task_config(self.entries[name])

    def has_config(self, name: str) -> bool:
        """The task has a lighteval-style config (`config`)."""
        return isinstance(self.source_of(name), HasTaskConfigs)

    def location(self, name: str) -> tuple[Path, int]:
        """The file and line that define a task, without converting its config."""
        return self.source_of(name).location(self.entries[name])

    def origin_of(self, name: str) -> Path:
        """The file that registered a task."""
        return self.entries[name].origin

    def module_of(self, name: str) -> ModuleType | None:
        """The imported module that registered a task (None: not a module's)."""
        source = self.source_of(name)
        return source.module_of(self.entries[name]) if isinstance(source, ImportsModules) else None

    def imported_inputs(
        self, name: str, within: Path, follow_opened: bool = True
    ) -> frozenset[str]:
        """The project files a task's module read as it was imported (none: not a module's);
        with `follow_opened`, also what its code opened since (`inputs.inputs_of`)."""
        source = self.source_of(name)
        if not isinstance(source, ImportsModules):
            return frozenset()
        return source.imported_inputs(self.entries[name], within, follow_opened)

    def version_of(self, name: str) -> object:
        """A task's version, without converting its config."""
        return self.source_of(name).version(self.entries[name])

    def dependencies(self, name: str) -> dict[str, str]:
        """Files (absolute) whose change can change the task, as its source knows them, each
        with what it is to the task."""
        return self.source_of(name).dependencies(self.entries[name])

    def lint_ignores(self, name: str) -> tuple[list[str], str]:
        """The lint rules the task's own files silence for it, and where they are set."""
        return self.source_of(name).lint_ignores(self.entries[name])

    def has_local_data(self, name: str) -> bool:
        """Whether the task's rows are in the local data root."""
        return self.source_of(name).has_local_data(self.entries[name], self.data_dir)

    def ensure(self, names: Iterable[str]) -> None:
        """Let every source register the names it can define lazily (lm-eval tasks indexed only
        when named, the members of a group)."""
        wanted = [name for name in dict.fromkeys(names) if name not in self.entries]
        if wanted:
            for source in self.sources:
                source.ensure(self, wanted)

    def partial_notes(self) -> list[str]:
        """What a partial registry read, source by source (for the run's header)."""
        return [note for source in self.sources if (note := source.partial_note())]

    def prepare_all(self) -> None:
        """Register what `all` checks that sources register lazily (the variants the groups of
        a listed lm-eval folder make)."""
        for source in self.sources:
            source.prepare_all(self)

    @property
    def names(self) -> list[str]:
        """Usable task names, sorted (those of the folders the run lists)."""
        return sorted(name for name, entry in self.entries.items() if entry.listed)

    def supersets(self) -> dict[str, list[str]]:
        """Prefixes (before the first `:`) shared by more than one lighteval-style task, with
        sorted members."""
        groups: dict[str, list[str]] = {}
        for name in self.names:
            if self.has_config(name):
                groups.setdefault(name.split(":")[0], []).append(name)
        return {prefix: members for prefix, members in groups.items() if len(members) > 1}

    def with_default_shots(self, request: TaskRequest) -> TaskRequest:
        """A request that named no shot count, at its task's default (lm-eval's
        `num_fewshot`; 0 for lighteval-style tasks); any other request as it is."""
        if not request.default_shots or request.name not in self.entries:
            return request
        shots = self.source_of(request.name).default_shots(self.entries[request.name])
        return request.with_shots(shots)

    def resolve(self, spec: str | Iterable[TaskRequest]) -> list[TaskRequest]:
        """Expand a task string to one request per concrete task; all problems at once."""
        if isinstance(spec, str) and spec.strip() == ALL_TASKS:
            requests = [TaskRequest(name, default_shots=True) for name in self.names]
        else:
            requests = parse_task_string(spec) if isinstance(spec, str) else list(spec)
        self.ensure(request.name for request in requests)
        supersets = self.supersets()
        members: dict[tuple[str, int, str], list[TaskRequest]] = {}
        for request in requests:
            if request.name in self.entries or request.key in members:
                continue
            for source in self.sources:
                found = source.members(self, request)
                if found is not None:
                    members[request.key] = found
                    break
        grouped = {key[0] for key in members}
        unusable = [r.name for r in requests if r.name in self.unusable]
        unknown = [
            r.name
            for r in requests
            if r.name not in supersets
            and r.name not in self.entries
            and r.name not in grouped
            and r.name not in unusable
        ]
        if unknown or unusable:
            raise TaskStringError(self._problem_message(unknown, unusable, list(supersets)))
        resolved: list[TaskRequest] = []
        seen: set[tuple[str, int, str]] = set()
        for request in requests:
            if request.name not in self.entries and request.key in members:
                expanded = members[request.key]
            else:
                expanded = [
                    request if name == request.name else request.for_task(name)
                    for name in supersets.get(request.name, [request.name])
                ]
            for member in expanded:
                member = self.with_default_shots(member)
                if member.key not in seen:
                    seen.add(member.key)
                    resolved.append(member)
        return resolved

    def load(self, spec: str | Iterable[TaskRequest]) -> list[Task]:
        """Tasks for a task string: expanded, deduplicated, in the order requested
        (lighteval-style tasks; lm-eval's are rendered with `render`)."""
        return [self.make_task(request) for request in self.resolve(spec)]

    def make_task(self, request: TaskRequest) -> Task:
        """A `Task` for one resolved request; the registered config itself is never changed."""
        from .task import Task

        return Task(self.config(request.name), data_dir=self.data_dir, request=request)

    def slice_plan(self, request: TaskRequest, data_dir: Path) -> SlicePlan:
        """`--evaltasks-save-data`: where a task's slice goes and what it must hold (nothing
        loaded yet)."""
        source = self.source_of(request.name)
        if not isinstance(source, SavesData):
            raise RegistryError(f"task {request.name!r}: its source cannot save data slices")
        return source.slice_plan(self.entries[request.name], request, data_dir)

    def render(
        self,
        request: TaskRequest,
        run: RunSettings | None = None,
        template: ChatTemplate | None = None,
    ) -> RenderedTask:
        """One resolved request rendered by its source: every evaluated doc, in order.

        Its caches are its own (`private_caches`): what it reads is the same on a cold or a warm
        cache, and no build reuses another's results. A hook whose own state moves between two
        transformations of one dataset is rendered again over those caches, warm: as its
        harness renders it on every run but the first."""
        from .private_caches import private_caches
        from .run_settings import RunSettings

        source = self.source_of(request.name)
        entry, settings = self.entries[request.name], run or RunSettings()
        with private_caches() as caches:
            rendered = source.render(entry, request, settings, template, self.data_dir)
            if caches.state_dependent:
                rendered = source.render(entry, request, settings, template, self.data_dir)
        return rendered

    def all_tasks(self) -> list[Task]:
        """Every registered task at 0 shots."""
        return self.load(ALL_TASKS)

    def _problem_message(
        self, unknown: list[str], unusable: list[str], supersets: list[str]
    ) -> str:
        """Every unknown name with its closest matches, every unusable one with why."""
        lines: list[str] = []
        if unknown:
            candidates = [*self.entries, *supersets]
            for source in self.sources:
                candidates += source.suggestions()
            candidates = list(dict.fromkeys(candidates))
            lines.append(f"unknown task{'s' if len(unknown) > 1 else ''}:")
            lines += [f"  {name!r}{did_you_mean(name, candidates, n=3)}" for name in unknown]
        for name in unusable:
            lines.append(f"task {name!r} {self.unusable[name].reason}")
        if unknown and self.broken:
            lines.append(
                f"{len(self.broken)} task module(s) failed to import, so their tasks are missing "
                f"(fix the error and rerun; pytest --evaltasks-list shows them all):"
            )
            lines += [f"  {module.summary()}" for module in self.broken[:5]]
            if len(self.broken) > 5:
                lines.append(f"  ... and {len(self.broken) - 5} more")
        if unknown:
            lines.append(ACCEPTED_FORMS)
            lines.append("list the registered tasks with: pytest --evaltasks-list")
        return "\n".join(lines)


class _Configs(Mapping[str, TaskConfig]):
    """The registry's configs as a mapping, converting lazily."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    def __getitem__(self, name: str) -> TaskConfig:
        if name not in self._registry.entries:
            raise KeyError(name)
        return self._registry.config(name)

    def _names(self) -> list[str]:
        registry = self._registry
        return [name for name in registry.entries if registry.has_config(name)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._registry.entries and self._registry.has_config(str(name))
