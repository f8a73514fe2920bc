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


def plan_run(registry: Registry, spec: str, snapshot_dir: Path) -> RunPlan:
    """The plan for a task string; `all` also checks modules and snapshot files."""
    if spec.strip() != ALL_TASKS:
        return RunPlan(registry.resolve(spec))
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
