"""Discover task configs and turn task strings into `Task` objects.

Every `*.py` directly in a task directory and every subdirectory's `main.py` is imported, and
the configs in its module-level `TASKS_TABLE` are registered under their names. A module that
fails to import is recorded and reported; the others stay usable.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import RegistryError, TaskStringError, did_you_mean
from .config import TaskConfig
from .task import Task
from .task_string import ACCEPTED_FORMS, ALL_TASKS, TaskRequest, parse_task_string


@dataclass(frozen=True)
class BrokenModule:
    """A task module that could not be imported or whose TASKS_TABLE is unusable."""

    path: Path
    error: str

    def describe(self) -> str:
        """File and the last lines of the traceback, for error messages."""
        return f"{self.path}:\n{self.error.rstrip()}"


class Registry:
    """All registered task configs, with the file each came from."""

    def __init__(
        self,
        task_dirs: Sequence[str | Path] = ("tasks",),
        custom_tasks: Sequence[str | Path] = (),
        data_dir: str | Path | None = None,
    ) -> None:
        """Import the task modules now, so every collision is reported before any work."""
        self.task_dirs = [Path(d) for d in task_dirs]
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.configs: dict[str, TaskConfig] = {}
        self.origins: dict[str, Path] = {}
        self.broken: list[BrokenModule] = []
        self._loaded_files: set[Path] = set()
        for directory in self.task_dirs:
            self._load_directory(directory)
        for custom in custom_tasks:
            self._load_custom(Path(custom))

    # discovery -------------------------------------------------------------------------

    def _load_directory(self, directory: Path) -> None:
        """Import `*.py` and `*/main.py` of one task directory, in sorted order."""
        if not directory.is_dir():
            raise RegistryError(
                f"task directory {directory} does not exist; pass an existing directory "
                f"(--evaltasks-dir) holding task modules with a TASKS_TABLE"
            )
        package = _namespace_package(directory)
        files = sorted(p for p in directory.glob("*.py") if p.name != "__init__.py")
        subdirs = sorted(d for d in directory.iterdir() if (d / "main.py").is_file())
        for path in files:
            self._register_module(path, f"{package}.{path.stem}", custom=False)
        for subdir in subdirs:
            # `__dir` keeps `family/` apart from a sibling `family.py` module.
            subpackage = _namespace_package(subdir, f"{package}.{subdir.name}__dir")
            self._register_module(subdir / "main.py", f"{subpackage}.main", custom=False)

    def _load_custom(self, path: Path) -> None:
        """A custom task file: loaded like a built-in module, but must not reuse a name."""
        if not path.is_file():
            raise RegistryError(f"custom task file {path} does not exist")
        package = _namespace_package(path.parent)
        self._register_module(path, f"{package}.{path.stem}", custom=True)

    def _register_module(self, path: Path, module_name: str, custom: bool) -> None:
        """Import one module and register its TASKS_TABLE, or record it as broken."""
        if path.resolve() in self._loaded_files:
            return
        self._loaded_files.add(path.resolve())
        try:
            table = _tasks_table(_import_file(path, module_name), path)
        except Exception as exc:
            hint = _porting_hint(exc)
            if custom:
                raise RegistryError(
                    f"custom task file {path} failed to import:\n{traceback.format_exc()}{hint}"
                ) from None
            self.broken.append(BrokenModule(path, traceback.format_exc(limit=-3) + hint))
            return
        for config in table:
            self._register(config, path, custom)

    def _register(self, config: TaskConfig, path: Path, custom: bool) -> None:
        """Add one config; a name defined twice is an error naming both files."""
        previous = self.origins.get(config.name)
        if previous is not None:
            kind = "custom task" if custom else "task"
            raise RegistryError(
                f"{kind} {config.name!r} is defined in {path} and already in {previous}; "
                f"rename one of them (task names must be unique)"
            )
        self.configs[config.name] = config
        self.origins[config.name] = path

    # lookup ----------------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """Registered task names, sorted."""
        return sorted(self.configs)

    def supersets(self) -> dict[str, list[str]]:
        """Prefixes (before the first `:`) shared by more than one task, with sorted members."""
        groups: dict[str, list[str]] = {}
        for name in sorted(self.configs):
            groups.setdefault(name.split(":")[0], []).append(name)
        return {prefix: members for prefix, members in groups.items() if len(members) > 1}

    def resolve(self, spec: str | Iterable[TaskRequest]) -> list[TaskRequest]:
        """Expand a task string to one request per concrete task; all unknown names at once."""
        if isinstance(spec, str) and spec.strip() == ALL_TASKS:
            requests = [TaskRequest(name) for name in self.names]
        else:
            requests = parse_task_string(spec) if isinstance(spec, str) else list(spec)
        supersets = self.supersets()
        unknown = [
            r.name for r in requests if r.name not in supersets and r.name not in self.configs
        ]
        if unknown:
            raise TaskStringError(self._unknown_message(unknown, list(supersets)))
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
        return Task(self.configs[request.name], data_dir=self.data_dir, request=request)

    def all_tasks(self) -> list[Task]:
        """Every registered task at 0 shots."""
        return self.load(ALL_TASKS)

    def _unknown_message(self, unknown: list[str], supersets: list[str]) -> str:
        """List every unknown name with its closest matches, and any broken modules."""
        candidates = [*self.configs, *supersets]
        lines = [f"unknown task{'s' if len(unknown) > 1 else ''}:"]
        lines += [f"  {name!r}{did_you_mean(name, candidates, n=3)}" for name in unknown]
        if self.broken:
            lines.append(
                "these task modules failed to import, so their tasks are missing "
                "(fix the error and rerun):"
            )
            lines += [f"  {module.describe()}" for module in self.broken]
        lines.append(ACCEPTED_FORMS)
        lines.append("list the registered tasks with: pytest --evaltasks-list")
        return "\n".join(lines)


def _porting_hint(exc: Exception) -> str:
    """A line of advice when a task file still imports lighteval without it installed."""
    if isinstance(exc, ImportError) and (exc.name or "").split(".")[0] == "lighteval":
        return (
            "hint: lighteval is not installed. A ported task file needs only pytest_evaltasks: "
            "`from pytest_evaltasks import LightevalTaskConfig, Doc, Metrics`\n"
        )
    return ""


def _namespace_package(directory: Path, name: str | None = None) -> str:
    """Register a package for a task directory so its modules can use relative imports.

    The name is derived from the absolute path: two directories never share a package, and
    a task file called `json.py` never shadows the standard library.
    """
    resolved = directory.resolve()
    if name is None:
        digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:10]
        name = f"_evaltasks_{digest}"
    if name not in sys.modules:
        package = types.ModuleType(name)
        package.__path__ = [str(resolved)]
        sys.modules[name] = package
    return name


def _import_file(path: Path, module_name: str) -> types.ModuleType:
    """Import a file under `module_name`, afresh: an edited task file is always re-read."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        # Compiled from the source every time: a cached .pyc is trusted on mtime and size
        # alone, so an edit within the same second could otherwise run stale code.
        code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def _tasks_table(module: types.ModuleType, path: Path) -> list[TaskConfig]:
    """The module's TASKS_TABLE, checked to hold only task configs."""
    table: Any = getattr(module, "TASKS_TABLE", [])
    if isinstance(table, (str, bytes)) or not isinstance(table, Iterable):
        raise TypeError(f"{path}: TASKS_TABLE must be a list of task configs")
    configs = list(table)
    for position, item in enumerate(configs):
        if not isinstance(item, TaskConfig):
            raise TypeError(
                f"{path}: TASKS_TABLE[{position}] is a {type(item).__module__}."
                f"{type(item).__name__}, not a pytest_evaltasks TaskConfig; import "
                f"LightevalTaskConfig and Doc from pytest_evaltasks instead of lighteval"
            )
    return configs
