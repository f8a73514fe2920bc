"""The one virtual collector under the session: an item per planned check, in the plan's order
(tasks, unusable names, broken modules, orphan snapshots, ports)."""

from __future__ import annotations

from typing import Any

import pytest

from ..snapshot.storage import snapshot_filename
from .context import RunContext
from .items import ModuleItem, OrphanItem, TaskItem, UnusableItem
from .plan import Orphan
from .port_items import PortItem
from .profiles import MODULE_VARIABLE, allowed, item_name
from .root import relative_name

COLLECTOR_NAME = "evaltasks"


class EvalTasksCollector(pytest.Collector):
    """The one virtual collector that yields an item per planned check."""

    def __init__(self, *, context: RunContext, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.context = context

    def collect(self) -> list[pytest.Item]:
        """Tasks in the order the task string asked for them, then modules, then orphans."""
        context = self.context
        root = context.root
        items: list[pytest.Item] = []
        registry = context.registry
        for request in context.plan.requests:
            source, line = registry.location(request.name)
            wanted_keys = [rendering.key for rendering in context.renderings]
            task_module = registry.module_of(request.name)
            allowed_keys = allowed(task_module, request.name, wanted_keys)
            recorded = context.plan.recorded.get(request.key, [])
            for key in [*allowed_keys, *(k for k in recorded if k not in allowed_keys)]:
                name = item_name(request.label, key)
                filename = snapshot_filename(name)
                if key in recorded and key not in allowed(task_module, request.name, [key]):
                    path = context.options.snapshot_dir / filename
                    reason = (
                        f"records the rendering {key!r} of {request.label!r}, which its task "
                        f"module's {MODULE_VARIABLE} no longer allows"
                    )
                    orphan = Orphan(path, name, reason)
                    items.append(
                        OrphanItem.from_parent(self, name=relative_name(path, root), orphan=orphan)
                    )
                    continue
                items.append(
                    TaskItem.from_parent(
                        self,
                        name=name,
                        request=request,
                        rendering=key,
                        source=source,
                        line=line,
                        snapshot_dir=context.options.snapshot_dir,
                        snapshot_name=filename,
                    )
                )
        for unusable in context.plan.unusable:
            items.append(UnusableItem.from_parent(self, name=unusable.name, unusable=unusable))
        for module in context.plan.broken:
            items.append(
                ModuleItem.from_parent(self, name=relative_name(module.path, root), module=module)
            )
        for orphan in context.plan.orphans:
            items.append(
                OrphanItem.from_parent(self, name=relative_name(orphan.path, root), orphan=orphan)
            )
        declared = context.options.ports_file or root
        for port in context.plan.ports:
            items.append(
                PortItem.from_parent(self, name=port.item_name, port=port, declared_in=declared)
            )
        wanted = set(context.options.node_ids)
        if wanted:
            items = [item for item in items if item.name in wanted]
        self.add_marker("evaltask")  # once: every item below has it (`-m evaltask`)
        for item in items:
            item.extra_keyword_matches.add(item.name.replace("|", "/"))
        return items
