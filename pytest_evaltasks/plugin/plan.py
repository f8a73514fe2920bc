"""Which items a run holds: the requested tasks, and for `all` also broken modules and orphans.

`--evaltasks all` is what a CI step runs: every registered task at every shot count that has a
snapshot (plus 0 shots for a task that has none), a failing item for each task module that
failed to import, and a failing item for each snapshot file that belongs to no registered task.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.task_string import ALL_TASKS, TaskRequest, parse_label
from ..errors import EvalTaskError
from ..snapshot.storage import recorded_labels, snapshot_filename
from .profiles import split_item_name

if TYPE_CHECKING:
    from ..engine.ports import Port
    from ..engine.registry import BrokenModule, Registry, Unusable


@dataclass(frozen=True)
class Orphan:
    """A snapshot file no item of this run owns, and why."""

    path: Path
    label: str | None
    reason: str


@dataclass(frozen=True)
class RunPlan:
    """The items of one run, in order."""

    requests: list[TaskRequest]
    broken: list[BrokenModule] = field(default_factory=list)
    orphans: list[Orphan] = field(default_factory=list)
    unusable: list[Unusable] = field(default_factory=list)
    held: list[Orphan] = field(default_factory=list)
    """Snapshots of tasks that are not registered while a task module is broken: they may be
    its tasks', so they are named with the broken module, never offered for deletion."""
    recorded: dict[tuple[str, int, str], list[str]] = field(default_factory=dict)
    """Under `all`: the renderings each request has a snapshot of (`plain` for the task's own
    file), which are checked whatever the run's renderings."""
    ports: list[Port] = field(default_factory=list)
    """The declared ports the run checks (`port:NAME`, `ports`, or `all`)."""

    @property
    def size(self) -> int:
        """Items in the run."""
        planned = len(self.requests) + len(self.broken) + len(self.orphans)
        return planned + len(self.unusable) + len(self.ports)


def last_failed_specs(lastfailed: Mapping[str, object], prefix: str) -> list[str]:
    """`pytest --lf` with no task string: the task strings whose items include every evaltasks
    item that failed last (pytest's own last-failed filter then keeps only those). A failed
    broken module or orphan snapshot (its item is named by its file, `.py` or `.txt`) is an item
    of `all` only, which is then asked for too. Empty when no evaltasks item failed."""
    tasks: list[str] = []
    other = False
    for node in lastfailed:
        if not node.startswith(prefix):
            continue
        name = split_item_name(node[len(prefix) :])[0]
        if name.endswith((".py", ".txt")) and "|" not in name:
            other = True  # tasks/broken.py, tasks/__snapshots__/gone-0--1234.txt
            continue
        tasks.append(name)
    specs = [ALL_TASKS] if other else []
    if tasks:
        specs.append(",".join(dict.fromkeys(sorted(tasks))))
    return specs


def rerun_specs(registry: Registry, specs: list[str]) -> list[str]:
    """The task strings `--lf` chose, without the names that no longer resolve, and with `all`
    when one did not: a failed item this run cannot name (a task renamed since, an unusable
    name) is checked among every item, never skipped (pytest's own filter then keeps the
    failed ones, or runs everything when none is left)."""
    kept: list[str] = []
    unsure = False
    for spec in specs:
        if spec.strip() == ALL_TASKS:
            kept.append(spec)
            continue
        names = []
        for name in spec.split(","):
            try:
                registry.resolve(name)
            except EvalTaskError:
                unsure = True
                continue
            names.append(name)
        if names:
            kept.append(",".join(names))
    if unsure and ALL_TASKS not in kept:
        kept.insert(0, ALL_TASKS)
    return kept


def plan_run(
    registry: Registry,
    specs: list[str],
    snapshot_dir: Path,
    node_ids: list[str] | None = None,
    labels: dict[Path, str | None] | None = None,
) -> RunPlan:
    """The plan for the task strings (`all` also checks modules and snapshot files).

    Without task strings, node ids given as arguments (`evaltasks::mmlu:anatomy|5`) name the
    tasks to run. `labels` are the snapshot folder's files and the labels they record, as
    `recorded_labels` reads them (an xdist worker is given the controller's, so every process
    plans from the same reading); None: read here when `all` needs them.
    """
    explicit = [spec for spec in specs if spec.strip() != ALL_TASKS]
    if not specs and node_ids:
        return RunPlan(registry.resolve([parse_label(split_item_name(n)[0]) for n in node_ids]))
    requests = _unique([request for spec in explicit for request in registry.resolve(spec)])
    if len(explicit) == len(specs):
        return RunPlan(requests)
    everything = _all_tasks(registry, snapshot_dir if labels is None else labels)
    everything.requests[:] = _unique([*everything.requests, *requests])
    return everything


def _all_tasks(registry: Registry, snapshots: Path | dict[Path, str | None]) -> RunPlan:
    """`all`: every registered task at its recorded shot counts (at its default when it has no
    snapshot), broken modules, orphans; `snapshots` is the snapshot folder, or its labels."""
    recorded: dict[str, list[TaskRequest]] = {}
    renderings: dict[tuple[str, int, str], list[str]] = {}
    orphans: list[Orphan] = []
    labels = recorded_labels(snapshots) if isinstance(snapshots, Path) else snapshots
    registry.prepare_all()
    registry.ensure(
        request.name for name in labels.values() if (request := request_of(name)) is not None
    )
    for path, name in labels.items():
        request, reason = _owner(registry, path, name)
        if request is None:
            orphans.append(Orphan(path, name, reason))
            continue
        assert name is not None
        keys = renderings.setdefault(request.key, [])
        if not keys:
            recorded.setdefault(request.name, []).append(request)
        keys.append(split_item_name(name)[1])
    requests: list[TaskRequest] = []
    # a snapshot of a registered task the listed folders do not define (lm-eval's own task, a
    # member of a custom folder's group) is checked too: it is this project's record
    for task in sorted({*registry.names, *recorded}):
        found = sorted(recorded.get(task, []), key=lambda r: (r.num_fewshots, r.label))
        default = registry.with_default_shots(TaskRequest(task, default_shots=True))
        requests.extend(found or [default])
    unusable = [registry.unusable[name] for name in sorted(registry.unusable)]
    held: list[Orphan] = []
    if registry.broken:
        held = [orphan for orphan in orphans if orphan.reason.endswith("is not registered")]
        orphans = [orphan for orphan in orphans if orphan not in held]
    return RunPlan(requests, list(registry.broken), orphans, unusable, held, renderings)


def base_requests(
    registry: Registry,
    base_files: dict[str, bytes],
    snapshot_dir: Path,
) -> list[tuple[TaskRequest, str]]:
    """The (request, rendering) of each snapshot the base records for a registered task that
    the working copy has no file for (deleted, or never checked out)."""
    from ..snapshot.parse import recorded_label

    found: list[tuple[TaskRequest, str]] = []
    for name, raw in sorted(base_files.items()):
        if (snapshot_dir / name).exists():
            continue
        item = recorded_label(raw[:4096].decode("utf-8", "replace"))
        request = request_of(item)
        if request is None or item is None or request.name not in registry.entries:
            continue
        if snapshot_filename(item) == name:
            found.append((request, split_item_name(item)[1]))
    return found


def request_of(name: str | None) -> TaskRequest | None:
    """The request a recorded item name names (its rendering aside); None when there is none,
    or it is not valid."""
    if name is None:
        return None
    try:
        return parse_label(split_item_name(name)[0])
    except EvalTaskError:
        return None


def _unique(requests: list[TaskRequest]) -> list[TaskRequest]:
    """Requests without repeats, in order."""
    seen: set[tuple[str, int, str]] = set()
    kept: list[TaskRequest] = []
    for request in requests:
        if request.key not in seen:
            seen.add(request.key)
            kept.append(request)
    return kept


def _owner(registry: Registry, path: Path, name: str | None) -> tuple[TaskRequest | None, str]:
    """The request a snapshot file belongs to (its rendering aside), or why it belongs to
    none."""
    if name is None:
        return None, "not a readable pytest-evaltasks snapshot"
    label = split_item_name(name)[0]
    try:
        request = parse_label(label)
    except EvalTaskError:
        return None, f"records task {label!r}, which is not a valid task string"
    if request.name in registry.unusable:
        reason = registry.unusable[request.name].reason
        return None, f"records task {request.name!r}, which {reason}"
    if request.name not in registry.entries:
        return None, f"records task {request.name!r}, which is not registered"
    if path.name != snapshot_filename(name):
        return None, f"records {name!r}, whose snapshot is {snapshot_filename(name)}"
    return request, ""
