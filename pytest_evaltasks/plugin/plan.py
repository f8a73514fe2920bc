"""Which items a run holds: the requested tasks, and for `all` also broken modules and orphans.

`--evaltasks all` is what a CI step runs: every registered task at every shot count that has a
snapshot (plus 0 shots for a task that has none), a failing item for each task module that
failed to import, and a failing item for each snapshot file that belongs to no registered task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.task_string import ALL_TASKS, TaskRequest, parse_label
from ..errors import EvalTaskError
from ..snapshot.storage import recorded_labels, snapshot_filename

if TYPE_CHECKING:
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

    @property
    def size(self) -> int:
        """Items in the run."""
        return len(self.requests) + len(self.broken) + len(self.orphans) + len(self.unusable)


def plan_run(
    registry: Registry, specs: list[str], snapshot_dir: Path, node_ids: list[str] | None = None
) -> RunPlan:
    """The plan for the task strings (`all` also checks modules and snapshot files).

    Without task strings, node ids given as arguments (`evaltasks::mmlu:anatomy|5`) name the
    tasks to run.
    """
    explicit = [spec for spec in specs if spec.strip() != ALL_TASKS]
    if not specs and node_ids:
        return RunPlan(registry.resolve([parse_label(label) for label in node_ids]))
    requests = _unique([request for spec in explicit for request in registry.resolve(spec)])
    if len(explicit) == len(specs):
        return RunPlan(requests)
    everything = _all_tasks(registry, snapshot_dir)
    everything.requests[:] = _unique([*everything.requests, *requests])
    return everything


def _all_tasks(registry: Registry, snapshot_dir: Path) -> RunPlan:
    """`all`: every registered task at its recorded shot counts, broken modules, orphans."""
    recorded: dict[str, list[TaskRequest]] = {}
    orphans: list[Orphan] = []
    for path, label in recorded_labels(snapshot_dir).items():
        request, reason = _owner(registry, path, label)
        if request is None:
            orphans.append(Orphan(path, label, reason))
        else:
            recorded.setdefault(request.name, []).append(request)
    requests: list[TaskRequest] = []
    for name in registry.names:
        found = sorted(recorded.get(name, []), key=lambda r: (r.num_fewshots, r.label))
        requests.extend(found or [TaskRequest(name)])
    unusable = [registry.unusable[name] for name in sorted(registry.unusable)]
    return RunPlan(requests, list(registry.broken), orphans, unusable)


def base_requests(
    registry: Registry,
    base_files: dict[str, bytes],
    snapshot_dir: Path,
    planned: list[TaskRequest],
) -> list[TaskRequest]:
    """Requests for the snapshots the base records for registered tasks that this run does not
    plan yet (their file was deleted in the working copy, or never checked out)."""
    from ..snapshot.parse import recorded_label

    have = {request.key for request in planned}
    extra: list[TaskRequest] = []
    for name, raw in sorted(base_files.items()):
        if (snapshot_dir / name).exists():
            continue
        request = request_of(recorded_label(raw[:4096].decode("utf-8", "replace")))
        if request is None:
            continue
        known = request.name in registry.entries and request.key not in have
        if known and snapshot_filename(request.label) == name:
            have.add(request.key)
            extra.append(request)
    return extra


def request_of(label: str | None) -> TaskRequest | None:
    """The request a recorded label names; None when there is none, or it is not valid."""
    if label is None:
        return None
    try:
        return parse_label(label)
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


def _owner(registry: Registry, path: Path, label: str | None) -> tuple[TaskRequest | None, str]:
    """The request a snapshot file belongs to, or why it belongs to none."""
    if label is None:
        return None, "not a readable pytest-evaltasks snapshot"
    try:
        request = parse_label(label)
    except EvalTaskError:
        return None, f"records task {label!r}, which is not a valid task string"
    if request.name in registry.unusable:
        reason = registry.unusable[request.name].reason
        return None, f"records task {request.name!r}, which {reason}"
    if request.name not in registry.entries:
        return None, f"records task {request.name!r}, which is not registered"
    if path.name != snapshot_filename(request.label):
        return (
            None,
            f"records {request.label!r}, whose snapshot is {snapshot_filename(request.label)}",
        )
    return request, ""
