"""`--evaltasks-list [FILTER]`: the registry as a task author needs to see it.

Tasks grouped by module (paths relative to the root directory), each with its version and the
shot counts that have snapshots; for large selections, a count per module instead. Broken
modules and unusable names are listed last, and make the command exit non-zero.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EvalTaskError
from ..snapshot.storage import recorded_labels
from .plan import request_of
from .summary import count

if TYPE_CHECKING:
    from ..engine.registry import Registry

FULL_LISTING_LIMIT = 300
"""Above this many tasks, modules are listed with a count (a filter shows the tasks)."""


@dataclass(frozen=True)
class Listing:
    """The lines to print, with a colour each, and the exit status."""

    lines: list[tuple[str, str | None]]
    status: int
    names: list[str] = field(default_factory=list)
    """The task names listed."""


def list_tasks(registry: Registry, selector: str, root: Path, snapshot_dir: Path) -> Listing:
    """The listing of the tasks `selector` names (a task string or a name prefix; '' = all)."""
    names = select(registry, selector)
    shots = _recorded_shots(snapshot_dir)
    by_module: dict[Path, list[str]] = defaultdict(list)
    for name in names:
        by_module[registry.entries[name].origin].append(name)
    modules = len({entry.origin for entry in registry.entries.values()})
    lines: list[tuple[str, str | None]] = [
        (
            f"{count(len(names), 'task')} in {count(len(by_module), 'module')}"
            + (f" matching {selector!r}" if selector else "")
            + f" ({count(len(registry.entries), 'task')} registered in "
            f"{count(modules, 'module')})",
            None,
        )
    ]
    if len(names) > FULL_LISTING_LIMIT:
        width = max(len(_shown(path, root)) for path in by_module)
        for path, members in sorted(by_module.items()):
            lines.append((f"  {_shown(path, root):<{width}}  {count(len(members), 'task')}", None))
        lines.append(("list one module's tasks with a filter: --evaltasks-list PREFIX", None))
    else:
        for path, members in sorted(by_module.items()):
            lines.append((f"{_shown(path, root)}:", None))
            width = max(len(name) for name in members)
            for name in members:
                version = str(registry.version_of(name))
                recorded = ", ".join(str(n) for n in sorted(shots.get(name, ()))) or "-"
                line = f"  {name:<{width}}  version {version:<5} snapshots: {recorded}"
                lines.append((line, None))
    for warning in registry.shadowed:
        lines.append((f"warning: {warning}", "yellow"))
    for unusable in registry.unusable.values():
        lines.append((f"unusable task name {unusable.name!r}: {unusable.reason}", "red"))
    for broken in registry.broken:
        lines.append((f"failed to import: {_shown(broken.path, root)}: {broken.exception}", "red"))
    status = 1 if registry.broken or registry.unusable else 0
    return Listing(lines, status, names)


def select(registry: Registry, selector: str) -> list[str]:
    """Task names a selector names: a task string's tasks, else the names with that prefix."""
    if not selector:
        return registry.names
    try:
        return list(dict.fromkeys(request.name for request in registry.resolve(selector)))
    except EvalTaskError:
        return [name for name in registry.names if name.startswith(selector)]


def _recorded_shots(snapshot_dir: Path) -> dict[str, set[int]]:
    """Shot counts with a snapshot, by task name."""
    shots: dict[str, set[int]] = defaultdict(set)
    for label in recorded_labels(snapshot_dir).values():
        request = request_of(label)
        if request is not None:
            shots[request.name].add(request.num_fewshots)
    return shots


def _shown(path: Path, root: Path) -> str:
    """A path relative to the root directory when inside it."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
