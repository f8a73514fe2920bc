"""Register the task configs of task modules, and turn task strings into `Task` objects.

The configs in each module's `TASKS_TABLE` are registered under their names: our `TaskConfig`,
or lighteval's `LightevalTaskConfig` (and its subclasses), which `lighteval_adapter` converts
when a task is first used, so listing tens of thousands of tasks stays cheap. Problems stay
with what caused them: a module that fails to import is recorded as broken, a name defined
twice (or that no task string can express) is unusable, and everything else stays usable.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RegistryError, TaskConfigError, TaskStringError, did_you_mean
from .config import TaskConfig
from .lighteval_adapter import convert_config, is_task_config_like, line_naming
from .task_modules import LoadedModule, discover, installed, load_module, module_name_for
from .task_string import ACCEPTED_FORMS, ALL_TASKS, TaskRequest, parse_task_string, unwritable

if TYPE_CHECKING:  # imported when a task is made: listing tasks never needs rows or sampling
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
class Entry:
    """One registered name: where it came from, and its config as the module made it."""

    name: str
    origin: Path
    raw: Any
    config: TaskConfig | None = None


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
    ) -> None:
        """Import the task modules now, so every problem is known before any work.

        `only` names the module files to import (the others are never imported): a build in a
        fresh process needs only the module of the tasks it builds.
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
        self._seen_files: set[Path] = set()
        wanted = None if only is None else {Path(path).resolve() for path in only}
        self.partial = wanted is not None
        """Only some modules were imported: a name not found may be in another."""
        for directory in self.task_dirs:
            if not directory.is_dir():
                raise RegistryError(
                    f"task directory {directory} does not exist; pass an existing directory "
                    f"(--evaltasks-dir) holding task modules with a TASKS_TABLE"
                )
            for path in discover(directory):
                if wanted is None or path.resolve() in wanted:
                    self._register_module(path, custom=False)
        for custom in custom_tasks:
            path = Path(custom)
            if not path.is_file():
                raise RegistryError(f"custom task file {path} does not exist")
            if wanted is None or path.resolve() in wanted:
                self._register_module(path, custom=True)

    # registration ---------------------------------------------------------------------------

    def _register_module(self, path: Path, custom: bool) -> None:
        """Import one module and register its TASKS_TABLE, or record it as broken."""
        if path.resolve() in self._seen_files:
            return
        self._seen_files.add(path.resolve())
        loaded = load_module(path, module_name_for(path))
        self.modules.append(loaded)
        if loaded.module is None:
            if custom:
                raise RegistryError(f"custom task file {path} failed to import:\n{loaded.error}")
            self.broken.append(BrokenModule(path, loaded.error or ""))
            return
        table: Any = getattr(loaded.module, "TASKS_TABLE", [])
        if isinstance(table, (str, bytes)) or not isinstance(table, Iterable):
            self.broken.append(BrokenModule(path, "TASKS_TABLE must be a list of task configs\n"))
            return
        names: dict[str, int] = {}
        for position, item in enumerate(table):
            if not isinstance(item, TaskConfig) and not is_task_config_like(item):
                self.broken.append(
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
                self.shadowed.append(
                    f"task {name!r} is defined twice in {path} (TASKS_TABLE[{names[name]}] and "
                    f"[{position}]); the last definition is used, as lighteval uses it"
                )
                self.entries[name] = Entry(name, path, item)
                names[name] = position
                continue
            if name in names:
                self._unusable(
                    name,
                    f"is defined twice in {path} (TASKS_TABLE[{names[name]}] "
                    f"and [{position}]); rename one",
                    path,
                )
                continue
            names[name] = position
            self._register(Entry(name, path, item), custom)

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

    def config(self, name: str) -> TaskConfig:
        """One task's config (lighteval's converted once, then kept)."""
        entry = self.entries[name]
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

    def location(self, name: str) -> tuple[Path, int]:
        """The file and line that define a task, without converting its config."""
        entry = self.entries[name]
        if isinstance(entry.raw, TaskConfig):
            source = Path(entry.raw.source_file)
            return (source if source.is_file() else entry.origin), entry.raw.source_line
        return entry.origin, line_naming(entry.origin, name)

    def origin_of(self, name: str) -> Path:
        """The module file that registered a task."""
        return self.entries[name].origin

    def loaded_of(self, name: str) -> LoadedModule | None:
        """The import record of the module that registered a task."""
        origin = self.entries[name].origin
        return next((m for m in self.modules if m.path == origin), None)

    def module_of(self, name: str) -> Any:
        """The imported module that registered a task."""
        origin = self.entries[name].origin
        return next((m.module for m in self.modules if m.path == origin), None)

    def version_of(self, name: str) -> Any:
        """A task's version, without converting its config."""
        return getattr(self.entries[name].raw, "version", 0)

    @property
    def names(self) -> list[str]:
        """Usable task names, sorted."""
        return sorted(self.entries)

    def supersets(self) -> dict[str, list[str]]:
        """Prefixes (before the first `:`) shared by more than one task, with sorted members."""
        groups: dict[str, list[str]] = {}
        for name in self.names:
            groups.setdefault(name.split(":")[0], []).append(name)
        return {prefix: members for prefix, members in groups.items() if len(members) > 1}

    def resolve(self, spec: str | Iterable[TaskRequest]) -> list[TaskRequest]:
        """Expand a task string to one request per concrete task; all problems at once."""
        if isinstance(spec, str) and spec.strip() == ALL_TASKS:
            requests = [TaskRequest(name) for name in self.names]
        else:
            requests = parse_task_string(spec) if isinstance(spec, str) else list(spec)
        supersets = self.supersets()
        unusable = [r.name for r in requests if r.name in self.unusable]
        unknown = [
            r.name
            for r in requests
            if r.name not in supersets and r.name not in self.entries and r.name not in unusable
        ]
        if unknown or unusable:
            raise TaskStringError(self._problem_message(unknown, unusable, list(supersets)))
        resolved: list[TaskRequest] = []
        seen: set[tuple[str, int, str]] = set()
        for request in requests:
            for name in supersets.get(request.name, [request.name]):
                member = request if name == request.name else request.for_task(name)
                if member.key not in seen:
                    seen.add(member.key)
                    resolved.append(member)
        return resolved

    def load(self, spec: str | Iterable[TaskRequest]) -> list[Task]:
        """Tasks for a task string: expanded, deduplicated, in the order requested."""
        return [self.make_task(request) for request in self.resolve(spec)]

    def make_task(self, request: TaskRequest) -> Task:
        """A `Task` for one resolved request; the registered config itself is never changed."""
        from .task import Task

        return Task(self.config(request.name), data_dir=self.data_dir, request=request)

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

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry.entries)

    def __len__(self) -> int:
        return len(self._registry.entries)

    def __contains__(self, name: object) -> bool:
        return name in self._registry.entries
