"""The boundary with lm-eval's own objects: its index of YAML tasks and its groups.

lm-eval's prompt rules (`doc_to_text`, `doc_to_target`, `doc_to_choice`, `description`, the
delimiters, `fewshot_config` and its samplers, `process_docs`, `gen_prefix`, chat templates with
`fewshot_as_multiturn`) live in its task objects and change between releases, so nothing here
reimplements them. A task is built and its requests collected by lm-eval itself:

- its YAML is read by lm-eval's loader (`_yaml_loader.load_yaml`) and indexed by lm-eval's own
  rules (`TaskIndex.process_cfg`, later folders overriding earlier ones, as `TaskManager` does
  with `include_path`), only for the files a run needs (`sources/lm_eval/index` says which);
- a task is built by `lm_eval.simple_evaluate` itself (`build`).

Groups are planned by lm-eval's `TaskFactory` with tasks that are configured but not built (no
data is loaded), so a group's members, their order and their overrides are lm-eval's.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import EvalTaskError

SHORTCUT = "lm_eval:tasks"
"""`--evaltasks-dir=lm_eval:tasks`: lm-eval's installed task folder."""

KINDS = ("TASK", "PY_TASK", "GROUP", "TAG")
LEAF_KINDS = frozenset({"TASK", "PY_TASK"})

IGNORED_IN_PLAN = ("task_alias",)
"""Config keys a group may set on a member without changing what is sent (display only)."""


class LmEvalError(EvalTaskError):
    """lm-eval could not load or build a task (its message says why)."""


def installed_tasks_folder() -> Path | None:
    """lm-eval's installed task folder, found without importing lm-eval."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("lm_eval")
    except (ImportError, ValueError):
        return None
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    if not locations:
        return None
    folder = Path(locations[0]) / "tasks"
    return folder if folder.is_dir() else None


def lm_eval_version() -> str | None:
    """The installed lm-eval's version, without importing it."""
    from importlib.metadata import PackageNotFoundError, version

    for name in ("lm_eval", "lm-eval"):
        try:
            return version(name)
        except PackageNotFoundError:
            continue
    return None


def require() -> None:
    """lm-eval must be importable; else an error that says how to install it."""
    try:
        import lm_eval  # noqa: F401
    except ImportError as exc:
        raise LmEvalError(
            f"lm-eval's YAML tasks need lm-eval, which does not import here ({exc}); install "
            f"it: pip install -e '.[lm-eval]' from this package's clone (lm-eval 0.4.13)"
        ) from None


# --- the index ------------------------------------------------------------------------------


def yaml_files(root: Path) -> list[Path]:
    """The YAML files lm-eval indexes under `root`, in its order."""
    from lm_eval.tasks._index import TaskIndex

    return list(TaskIndex._iter_yaml_files(root))


def index_config(path: Path) -> tuple[dict[str, Any] | None, str | None, list[str]]:
    """One YAML file as lm-eval's index reads it (functions unresolved, includes merged): the
    merged config, or None with why lm-eval skips the file; and every other file lm-eval's
    loader opened for it (its includes, recursively), whose bytes the merged config depends on."""
    from lm_eval.tasks._yaml_loader import load_yaml

    from ...engine.inputs import files_opened

    own = os.path.abspath(path)
    config: dict[str, Any] | None = None
    error: str | None = None
    with files_opened() as opened:
        try:
            config = load_yaml(path, resolve_func=False, recursive=True)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
    real = os.path.realpath(own)
    includes = [item for item in dict.fromkeys(opened) if item not in (own, real)]
    return config, error, includes


def replay(roots: list[list[tuple[Path, dict[str, Any]]]]) -> tuple[dict[str, Any], list[str]]:
    """lm-eval's index over the configs of each root folder, in its order: within a folder the
    first definition of a name wins, a later folder overrides an earlier one (the warnings of
    such overrides are returned)."""
    from lm_eval.tasks._index import TaskIndex

    index: dict[str, Any] = {}
    overrides: list[str] = []
    for files in roots:
        path_index: dict[str, Any] = {}
        for path, config in files:
            try:
                TaskIndex.process_cfg(config, path, path_index)
            except Exception:
                continue
        for name, entry in path_index.items():
            if name in index and index[name].yaml_path != entry.yaml_path:
                overrides.append(
                    f"lm-eval task {name!r} from {entry.yaml_path} overrides the one from "
                    f"{index[name].yaml_path}, as lm-eval's include_path does"
                )
            index[name] = entry
    return index, overrides


def kind_of(entry: Any) -> str:
    """An index entry's kind: TASK, PY_TASK, GROUP or TAG."""
    return str(entry.kind.name)


# --- groups ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedLeaf:
    """One task a group (or tag) stands for, as lm-eval would build it."""

    task: str
    """lm-eval's name for it (inline tasks: `group::name`)."""
    variant: bool
    """The group changes its config (or it is defined inline): it is not the task by name."""
    num_fewshot: Any
    config: dict[str, Any] | None = None
    """Its config in the group's context (only when planned with `resolve`)."""


def members(index: dict[str, Any], name: str) -> list[PlannedLeaf]:
    """The tasks a group or tag stands for, in lm-eval's order, each marked as a variant when
    the group's context changes its config. Planned without importing any hook."""
    entry = index[name]
    if kind_of(entry) == "TAG":
        return [
            PlannedLeaf(task, False, None)
            for task in sorted(entry.tags)
            if task in index and kind_of(index[task]) in LEAF_KINDS
        ]
    factory = _PlanningFactory(resolve=False)
    with _planning():
        group = factory.build(entry, registry=dict(index))
        leaves: list[PlannedLeaf] = []
        for task in group.get_all_tasks():
            config = task._config
            lm_name = str(config.get("task"))
            own = index.get(lm_name)
            standalone = None
            if own is not None and kind_of(own) in LEAF_KINDS:
                standalone = factory._build_task(own, None)._config
            leaves.append(
                PlannedLeaf(
                    lm_name,
                    standalone is None or _comparable(config) != _comparable(standalone),
                    config.get("num_fewshot"),
                )
            )
    return leaves


def variant_config(index: dict[str, Any], group: str, task: str) -> dict[str, Any]:
    """The config lm-eval gives `task` inside `group` (functions resolved): what the task is
    built from when the group's context changes it."""
    factory = _PlanningFactory(resolve=True, target=task)
    with _planning():
        built = factory.build(index[group], registry=dict(index))
        for leaf in built.get_all_tasks():
            if leaf._config.get("task") == task:
                config: dict[str, Any] = leaf._config
                return config
    raise LmEvalError(f"lm-eval's group {group!r} no longer holds a task {task!r}")


def _comparable(config: dict[str, Any]) -> dict[str, Any]:
    """A planned config without what does not change what is sent."""
    plain = {key: value for key, value in config.items() if key not in IGNORED_IN_PLAN}
    metadata = plain.get("metadata")
    if isinstance(metadata, dict):
        plain["metadata"] = {k: v for k, v in metadata.items() if k != "config_source"}
    return plain


def _factory_classes() -> tuple[Any, Any]:
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks._factory import TaskFactory

    return TaskFactory, ConfigurableTask


@contextlib.contextmanager
def _planning() -> Iterator[None]:
    """lm-eval's factory builds inline group members with `ConfigurableTask(config=...)`,
    which loads their data: while a group is planned, it makes a configured, unbuilt task."""
    import lm_eval.tasks._factory as factory_module

    saved = factory_module.ConfigurableTask
    factory_module.ConfigurableTask = _deferred_class()
    try:
        with quiet_lm_eval():
            yield
    finally:
        factory_module.ConfigurableTask = saved


_DEFERRED: Any = None


def _deferred_class() -> Any:
    """A `ConfigurableTask` that keeps its config and builds nothing (made once)."""
    global _DEFERRED
    if _DEFERRED is None:
        _, configurable = _factory_classes()

        class Deferred(configurable):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, config: dict[str, Any] | None = None, **kw: Any):
                self._config = dict(config or {})

            @property
            def task_name(self) -> str:
                return str(self._config.get("task"))

        _DEFERRED = Deferred
    return _DEFERRED


class _PlanningFactory:
    """lm-eval's `TaskFactory`, building configured tasks instead of loaded ones."""

    def __new__(cls, resolve: bool, target: str | None = None) -> Any:
        factory_class, _ = _factory_classes()
        deferred = _deferred_class()

        class Planning(factory_class):  # type: ignore[misc, valid-type]
            def _load_full_config(self, entry: Any, overrides: Any = None) -> dict[str, Any]:
                if resolve:
                    loaded: dict[str, Any] = super()._load_full_config(entry, overrides)
                    return loaded
                return _unresolved_config(entry, overrides, self._meta)

            def _build_task(self, entry: Any, overrides: Any) -> Any:
                try:
                    config = self._load_full_config(entry, overrides)
                except BaseException:
                    if target is None or entry.name == target:
                        raise
                    config = {"task": entry.name}  # a sibling that cannot load: not needed
                for key in ("tag", "group", "task_list"):
                    config.pop(key, None)
                return deferred(config=config)

        return Planning(meta=None)


def _unresolved_config(entry: Any, overrides: Any, meta: dict[str, Any]) -> dict[str, Any]:
    """lm-eval's `_load_full_config` with its hooks left as names (nothing is imported)."""
    from copy import deepcopy

    from lm_eval.tasks._yaml_loader import load_yaml

    if entry.yaml_path:
        config: dict[str, Any] = deepcopy(load_yaml(entry.yaml_path, resolve_func=False))
    elif entry.cfg:
        config = deepcopy(entry.cfg)
    else:
        config = {"metadata": {"config": "unknown"}}
    if overrides:
        config = {**config, **overrides}
    metadata = config.get("metadata", {})
    config["metadata"] = (metadata if isinstance(metadata, dict) else {"_metadata": metadata}) | (
        meta or {}
    )
    config["metadata"]["config_source"] = str(entry.yaml_path) if entry.yaml_path else "inline"
    return config


def unresolved_config(index: dict[str, Any], name: str) -> dict[str, Any]:
    """A task's full config as lm-eval merges it, its hooks left as file paths."""
    with quiet_lm_eval():
        return _unresolved_config(index[name], None, {})


@contextlib.contextmanager
def quiet_lm_eval(output: io.StringIO | None = None) -> Iterator[None]:
    """What lm-eval logs, prints and shows as progress bars while a task is built is kept
    (shown only when the build fails)."""
    import warnings

    output = output if output is not None else io.StringIO()
    handler = logging.StreamHandler(output)
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = [handler]
    with (
        contextlib.redirect_stdout(output),
        contextlib.redirect_stderr(output),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        try:
            yield
        finally:
            root.handlers = saved
