"""The run's shared state, `RunContext`: what a session that asks for tasks works out once,
before collection, and every item reads.

`start_context` makes it from the options: the registry, the plan (narrowed by node ids, by
`--evaltasks-local-only` and by `--evaltasks-changed`, widened by `--evaltasks-base`), the
renderings, the base record and the fresh-process builder. Every mistake found here is a usage
error (exit code 4).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..engine.checkout import project_folder
from ..errors import EvalTaskError
from .destinations import check_destinations
from .startup import build_registry, plan_of, renderings_of, wanted_names

if TYPE_CHECKING:
    from ..engine.registry import Registry
    from .builds import FreshBuilds
    from .changes import Changes, RunConfiguration
    from .git import FilesAt
    from .options import Options
    from .plan import RunPlan
    from .profiles import Rendering


@dataclass(frozen=True)
class RunContext:
    """Session-wide state the items share."""

    options: Options
    registry: Registry
    plan: RunPlan
    renderings: list[Rendering]
    """The run's renderings, in order: every task is checked under each."""
    root: Path
    within: Path
    """The folder project files live in: the git checkout holding the root, else the root."""
    fresh: FreshBuilds
    changes: Changes | None = None
    base: FilesAt | None = None
    """The snapshot folder at `--evaltasks-base`, when given."""
    left_out: list[str] = field(default_factory=list)
    """`--evaltasks-local-only`: the labels of the tasks left out (their data is not local)."""
    labels: list[tuple[str, str | None]] | None = None
    """Under `all`, on an xdist controller: the snapshot folder's files (by name) and the
    labels they record, as this process read them, for its workers."""
    _extra_renderings: dict[str, Rendering] = field(default_factory=dict)
    port_registries: dict[Path, Registry] = field(default_factory=dict)
    """The registries of port sides' own folders, made once each (`port_items`)."""

    @functools.cached_property
    def snapshot_folder_shown(self) -> str:
        """The snapshot folder as messages name it: relative to the root when inside it."""
        folder = self.options.snapshot_dir
        try:
            return folder.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return folder.as_posix()

    @property
    def nothing_changed(self) -> bool:
        """A changed-only run whose change touches no task: a success with no items."""
        return self.changes is not None and self.plan.size == 0

    def rendering(self, key: str) -> Rendering:
        """A rendering by key: one of the run's, or one a recorded snapshot names (checked
        under `all` though the run does not list it), loaded on first use; one that cannot be
        loaded raises `RenderingError`, which fails the item that needs it."""
        for rendering in self.renderings:
            if rendering.key == key:
                return rendering
        if key not in self._extra_renderings:
            from .profiles import resolve

            base = self.options.run
            loaded = resolve([key], base, self.root, self.root, self.options.tokens)
            self._extra_renderings[key] = loaded[0]
        return self._extra_renderings[key]


LABELS_INPUT = "evaltasks_snapshot_labels"
"""The xdist `workerinput` entry that carries the controller's snapshot labels."""


def start_context(config: pytest.Config, options: Options) -> RunContext:
    """Everything the run's items share, worked out once; a mistake is a usage error."""
    check_destinations(options)
    registry = build_registry(options, config, wanted_names(options))
    labels = _snapshot_labels(config, options)
    try:
        plan = plan_of(registry, options, labels)
    except pytest.UsageError:
        if not registry.partial:
            raise
        registry = build_registry(options, config)  # every module: the full error message
        plan = plan_of(registry, options, labels)
    if options.disable_unused:  # syrupy's `--snapshot-disable-unused`: no orphan is looked for
        plan = replace(plan, orphans=[], held=[])
    renderings = renderings_of(options, options.root, config.invocation_params.dir)
    _check_node_ids(options, plan, renderings)
    left_out: list[str] = []
    if options.local_only:
        plan, left_out = _local_only(plan, registry)
    changes = None
    if options.changed is not None:
        plan, changes = _only_changed(config, plan, registry, options, renderings)
    base = _base_records(options)
    if base is not None:
        plan = _with_base_labels(plan, registry, options, base)
    from ..snapshot.storage import remove_stale_temp_files

    remove_stale_temp_files(options.snapshot_dir)
    within = project_folder(options.root)
    from ..engine.inputs import set_project

    set_project(within)
    controller = getattr(config.option, "dist", "no") != "no"  # kept only to hand them on
    return RunContext(
        options=options,
        registry=registry,
        plan=plan,
        renderings=renderings,
        root=options.root,
        within=within,
        fresh=_fresh_builds(options, options.root, within),
        changes=changes,
        base=base,
        left_out=left_out,
        labels=[(path.name, label) for path, label in labels.items()]
        if controller and labels is not None
        else None,
    )


def _snapshot_labels(config: pytest.Config, options: Options) -> dict[Path, str | None] | None:
    """Under `all`, the snapshot folder's files and the labels they record: an xdist worker's
    are its controller's (one reading of the folder for the whole run: every worker plans, and
    so collects, the same items, without reading a header of every file again); None when the
    run does not need them."""
    from ..engine.task_string import ALL_TASKS

    if not any(spec.strip() == ALL_TASKS for spec in options.specs):
        return None
    folder = options.snapshot_dir
    given = getattr(config, "workerinput", {}).get(LABELS_INPUT)
    if given is not None:
        return {folder / name: label for name, label in given}
    from ..snapshot.storage import recorded_labels

    return recorded_labels(folder)


def _only_changed(
    config: pytest.Config,
    plan: RunPlan,
    registry: Registry,
    options: Options,
    renderings: list[Rendering],
) -> tuple[RunPlan, Changes]:
    """The plan narrowed to the tasks a change since the revision can affect."""
    from .changes import changed_files, select_changed

    in_ci = os.environ.get("CI", "").lower() in ("true", "1", "yes")
    try:
        changed = changed_files(options.root, options.changed or "", in_ci)
    except EvalTaskError as exc:
        raise pytest.UsageError(f"--evaltasks-changed: {exc}") from None
    # a task string filters: what it does not name is neither checked nor said to have changed
    planned = [n for n in dict.fromkeys(r.name for r in plan.requests) if n in registry.entries]
    configuration = run_configuration(config, options, renderings)
    changes = select_changed(
        registry,
        changed,
        options.root,
        options.snapshot_dir,
        configuration,
        options.changed_ignore,
        planned,
    )
    requests = [request for request in plan.requests if request.name in changes.selected]
    return replace(plan, requests=requests), changes


def run_configuration(
    config: pytest.Config, options: Options, renderings: list[Rendering]
) -> RunConfiguration:
    """The files that configure this run (a change to one checks every task): the ini file
    pytest loaded, the files of every chat template in use, the task-list files the task
    strings name; and the folders pytest takes its configuration from."""
    from .changes import RunConfiguration

    cwd = config.invocation_params.dir
    files: list[str | Path] = [config.inipath] if config.inipath is not None else []
    for rendering in renderings:
        if rendering.template is not None:
            files += rendering.template.files
    files += [cwd / spec for spec in options.specs if spec.strip() and (cwd / spec).is_file()]
    return RunConfiguration.of(files, [options.root, cwd, config.rootpath])


def _local_only(plan: RunPlan, registry: Registry) -> tuple[RunPlan, list[str]]:
    """`--evaltasks-local-only`: the plan without the tasks whose data is not in the local data
    root, and their labels (said in the header and the summary: they are not checked)."""
    local: dict[str, bool] = {}
    for request in plan.requests:
        if request.name not in local:
            try:
                local[request.name] = registry.has_local_data(request.name)
            except EvalTaskError:
                local[request.name] = True  # its error is the item's to report
    kept = [request for request in plan.requests if local[request.name]]
    left = [request.label for request in plan.requests if not local[request.name]]
    return replace(plan, requests=kept), left


def _check_node_ids(options: Options, plan: RunPlan, renderings: list[Rendering]) -> None:
    """Node ids that narrow a task string must name its items: an empty run is a mistake."""
    if not options.node_ids or not options.specs:
        return
    from ..errors import did_you_mean
    from .profiles import item_name

    names = [
        item_name(request.label, key)
        for request in plan.requests
        for key in dict.fromkeys(
            [*(r.key for r in renderings), *plan.recorded.get(request.key, [])]
        )
    ]
    known = set(names)
    missing = [node for node in options.node_ids if node not in known]
    if missing:
        lines = [f"--evaltasks {options.spec!r} has no item for node id(s):"]
        lines += [f"  evaltasks::{node}{did_you_mean(node, names)}" for node in missing]
        raise pytest.UsageError("\n".join(lines))


def _base_records(options: Options) -> FilesAt | None:
    """The snapshot folder at `--evaltasks-base`; an unknown or unfetched revision is a usage
    error that says how to fetch it."""
    if options.base is None:
        return None
    from .git import GitError, files_at, toplevel

    try:
        return files_at(toplevel(options.snapshot_dir), options.base, options.snapshot_dir)
    except GitError as exc:
        raise pytest.UsageError(f"--evaltasks-base: {exc}") from None


def _with_base_labels(
    plan: RunPlan, registry: Registry, options: Options, base: FilesAt
) -> RunPlan:
    """Under `all`, a task still registered whose snapshot exists at the base but not in the
    working copy is checked at that shot count and rendering (deleting a snapshot must not
    quietly stop its check), instead of at the 0 shots `all` checks a task without snapshots
    at."""
    from .plan import base_requests

    if not any(spec.strip() == "all" for spec in options.specs):
        return plan
    extra = base_requests(registry, base.files, options.snapshot_dir)
    if not extra:
        return plan
    restored = {request.name for request, _ in extra}
    recorded = {key: list(keys) for key, keys in plan.recorded.items()}
    requests = [
        request
        for request in plan.requests
        if request.name not in restored or request.key in recorded
    ]
    for request, rendering in extra:
        keys = recorded.setdefault(request.key, [])
        if not keys:
            requests.append(request)
        if rendering not in keys:
            keys.append(rendering)
    return replace(plan, requests=requests, recorded=recorded)


def _fresh_builds(options: Options, root: Path, within: Path) -> FreshBuilds:
    """The fresh-process builder of this run (its processes start only when asked for)."""
    from .builds import FreshBuilds

    return FreshBuilds(
        task_dirs=options.task_dirs,
        custom_tasks=options.custom_tasks,
        data_dir=options.data_dir,
        root=root,
        within=within,
        lint=options.lint != "off",
        lint_ignore=options.lint_ignore,
    )
